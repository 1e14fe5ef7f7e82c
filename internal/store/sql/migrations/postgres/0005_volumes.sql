-- Volume connectors and targets (Ironic API 1.32), deleted with their node.
CREATE TABLE volume_connectors (
	id           BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
	uuid         TEXT COLLATE "C" NOT NULL UNIQUE,
	node_uuid    TEXT NOT NULL REFERENCES nodes (uuid) ON DELETE CASCADE,
	type         TEXT COLLATE "C" NOT NULL,
	connector_id TEXT COLLATE "C" NOT NULL,
	created_at   TIMESTAMPTZ NOT NULL,
	updated_at   TIMESTAMPTZ,
	body         JSON NOT NULL,
	UNIQUE (type, connector_id)
);
CREATE INDEX volume_connectors_node_uuid ON volume_connectors (node_uuid);

CREATE TABLE volume_targets (
	id         BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
	uuid       TEXT COLLATE "C" NOT NULL UNIQUE,
	node_uuid  TEXT NOT NULL REFERENCES nodes (uuid) ON DELETE CASCADE,
	boot_index INTEGER NOT NULL,
	created_at TIMESTAMPTZ NOT NULL,
	updated_at TIMESTAMPTZ,
	body       JSON NOT NULL,
	UNIQUE (node_uuid, boot_index)
);
