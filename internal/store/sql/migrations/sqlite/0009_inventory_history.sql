-- Previous inventories of each node, so that a re-inspection can say what
-- changed on the machine (internal/hardware). SaveInventory moves the
-- replaced inventory here and keeps the newest [inventory]keep_previous.
-- saved_at is when an inventory was stored; NULL for one stored before
-- this migration.
ALTER TABLE node_inventory ADD COLUMN saved_at TEXT;

CREATE TABLE node_inventory_history (
	id          INTEGER PRIMARY KEY,
	node_uuid   TEXT NOT NULL REFERENCES nodes (uuid) ON DELETE CASCADE,
	saved_at    TEXT,
	inventory   TEXT NOT NULL,
	plugin_data TEXT NOT NULL
);
CREATE INDEX node_inventory_history_node ON node_inventory_history (node_uuid, id);
