-- Volume connectors and targets (Ironic API 1.32), deleted with their node.
CREATE TABLE volume_connectors (
	id           INTEGER PRIMARY KEY,
	uuid         TEXT NOT NULL UNIQUE,
	node_uuid    TEXT NOT NULL REFERENCES nodes (uuid) ON DELETE CASCADE,
	type         TEXT NOT NULL,
	connector_id TEXT NOT NULL,
	created_at   TEXT NOT NULL,
	updated_at   TEXT,
	body         TEXT NOT NULL,
	UNIQUE (type, connector_id)
);
CREATE INDEX volume_connectors_node_uuid ON volume_connectors (node_uuid);

CREATE TABLE volume_targets (
	id         INTEGER PRIMARY KEY,
	uuid       TEXT NOT NULL UNIQUE,
	node_uuid  TEXT NOT NULL REFERENCES nodes (uuid) ON DELETE CASCADE,
	boot_index INTEGER NOT NULL,
	created_at TEXT NOT NULL,
	updated_at TEXT,
	body       TEXT NOT NULL,
	UNIQUE (node_uuid, boot_index)
);
