-- ferro's initial schema, PostgreSQL flavour. Keep in step with
-- ../sqlite/0001_init.sql: same tables, columns and index names.
--
-- Each main table has the columns ferro filters, sorts or enforces
-- uniqueness on, plus body: the whole object as JSON. Text columns that lists
-- sort on use the "C" collation so that PostgreSQL orders them byte-wise, as
-- SQLite does, whatever the cluster's locale. Empty optional unique values
-- (name, address, instance_uuid) are NULL.
--
-- JSON is stored as json, not jsonb: json keeps the text as written, and
-- jsonb cannot hold "\u0000", which is valid JSON that clients may send.
-- Queries into a body can still cast it to jsonb.
--
-- Indexes are limited to lookups, paging, uniqueness and frequent filters:
-- each one costs every write. Rarer filters (owner, lessee, shard, …) scan;
-- a later migration can index them when fleets grow.

CREATE TABLE nodes (
	id              BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
	uuid            TEXT COLLATE "C" NOT NULL UNIQUE,
	name            TEXT COLLATE "C",
	provision_state TEXT COLLATE "C" NOT NULL DEFAULT '',
	driver          TEXT COLLATE "C" NOT NULL DEFAULT '',
	maintenance     BOOLEAN NOT NULL DEFAULT FALSE,
	instance_uuid   TEXT,
	resource_class  TEXT NOT NULL DEFAULT '',
	conductor_group TEXT NOT NULL DEFAULT '',
	fault           TEXT NOT NULL DEFAULT '',
	owner           TEXT NOT NULL DEFAULT '',
	lessee          TEXT NOT NULL DEFAULT '',
	retired         BOOLEAN NOT NULL DEFAULT FALSE,
	shard           TEXT NOT NULL DEFAULT '',
	reservation     TEXT,
	created_at      TIMESTAMPTZ NOT NULL,
	updated_at      TIMESTAMPTZ,
	body            JSON NOT NULL
);
CREATE UNIQUE INDEX nodes_name ON nodes (name) WHERE name IS NOT NULL;
CREATE UNIQUE INDEX nodes_instance_uuid ON nodes (instance_uuid) WHERE instance_uuid IS NOT NULL;
CREATE INDEX nodes_provision_state ON nodes (provision_state);
CREATE INDEX nodes_reservation ON nodes (reservation) WHERE reservation IS NOT NULL;
CREATE INDEX nodes_created_at ON nodes (created_at, id);

CREATE TABLE portgroups (
	id         BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
	uuid       TEXT COLLATE "C" NOT NULL UNIQUE,
	name       TEXT COLLATE "C" UNIQUE,
	address    TEXT COLLATE "C" UNIQUE,
	node_uuid  TEXT NOT NULL REFERENCES nodes (uuid) ON DELETE CASCADE,
	created_at TIMESTAMPTZ NOT NULL,
	updated_at TIMESTAMPTZ,
	body       JSON NOT NULL
);
CREATE INDEX portgroups_node_uuid ON portgroups (node_uuid);

CREATE TABLE ports (
	id             BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
	uuid           TEXT COLLATE "C" NOT NULL UNIQUE,
	address        TEXT COLLATE "C" UNIQUE,
	node_uuid      TEXT NOT NULL REFERENCES nodes (uuid) ON DELETE CASCADE,
	portgroup_uuid TEXT,
	created_at     TIMESTAMPTZ NOT NULL,
	updated_at     TIMESTAMPTZ,
	body           JSON NOT NULL
);
CREATE INDEX ports_node_uuid ON ports (node_uuid);
CREATE INDEX ports_portgroup_uuid ON ports (portgroup_uuid) WHERE portgroup_uuid IS NOT NULL;

CREATE TABLE allocations (
	id             BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
	uuid           TEXT COLLATE "C" NOT NULL UNIQUE,
	name           TEXT COLLATE "C" UNIQUE,
	node_uuid      TEXT REFERENCES nodes (uuid) ON DELETE CASCADE,
	resource_class TEXT NOT NULL DEFAULT '',
	state          TEXT COLLATE "C" NOT NULL DEFAULT '',
	owner          TEXT NOT NULL DEFAULT '',
	created_at     TIMESTAMPTZ NOT NULL,
	updated_at     TIMESTAMPTZ,
	body           JSON NOT NULL
);
CREATE INDEX allocations_node_uuid ON allocations (node_uuid);

CREATE TABLE node_history (
	id         BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
	uuid       TEXT NOT NULL UNIQUE,
	node_uuid  TEXT NOT NULL REFERENCES nodes (uuid) ON DELETE CASCADE,
	created_at TIMESTAMPTZ NOT NULL,
	body       JSON NOT NULL
);
CREATE INDEX node_history_node_uuid ON node_history (node_uuid, created_at, id);

CREATE TABLE node_inventory (
	node_uuid   TEXT PRIMARY KEY REFERENCES nodes (uuid) ON DELETE CASCADE,
	inventory   JSON NOT NULL,
	plugin_data JSON NOT NULL
);

CREATE TABLE conductors (
	hostname        TEXT PRIMARY KEY,
	conductor_group TEXT NOT NULL DEFAULT '',
	online          BOOLEAN NOT NULL,
	drivers         TEXT NOT NULL,
	created_at      TIMESTAMPTZ NOT NULL,
	last_heartbeat  TIMESTAMPTZ NOT NULL
);

-- Introspections are not tied to nodes: the inspector may serve a remote
-- Ironic whose nodes are not in this database.
CREATE TABLE introspections (
	id          BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
	node_uuid   TEXT COLLATE "C" NOT NULL UNIQUE,
	state       TEXT COLLATE "C" NOT NULL,
	started_at  TIMESTAMPTZ NOT NULL,
	finished_at TIMESTAMPTZ,
	updated_at  TIMESTAMPTZ NOT NULL,
	body        JSON NOT NULL
);
CREATE INDEX introspections_started_at ON introspections (started_at, id);

CREATE TABLE introspection_data (
	node_uuid TEXT NOT NULL,
	kind      TEXT NOT NULL,
	data      BYTEA NOT NULL,
	PRIMARY KEY (node_uuid, kind)
);

CREATE TABLE rules (
	id          BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
	uuid        TEXT NOT NULL UNIQUE,
	description TEXT NOT NULL DEFAULT '',
	scope       TEXT NOT NULL DEFAULT '',
	created_at  TIMESTAMPTZ NOT NULL,
	body        TEXT NOT NULL
);
