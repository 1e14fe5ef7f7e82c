-- Previous inventories of each node, so that a re-inspection can say what
-- changed on the machine (internal/hardware). SaveInventory moves the
-- replaced inventory here and keeps the newest [inventory]keep_previous.
-- saved_at is when an inventory was stored; NULL for one stored before
-- this migration.
ALTER TABLE node_inventory ADD COLUMN saved_at TIMESTAMPTZ;

CREATE TABLE node_inventory_history (
	id          BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
	node_uuid   TEXT NOT NULL REFERENCES nodes (uuid) ON DELETE CASCADE,
	saved_at    TIMESTAMPTZ,
	inventory   JSON NOT NULL,
	plugin_data JSON NOT NULL
);
CREATE INDEX node_inventory_history_node ON node_inventory_history (node_uuid, id);
