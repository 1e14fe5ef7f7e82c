-- Addresses the built-in DHCP server (internal/netboot) gave nodes' ports,
-- so that a restarted server answers a node with the address it had. A
-- lease is removed when its node leaves inspection.
CREATE TABLE dhcp_leases (
	mac        TEXT PRIMARY KEY,
	ip         TEXT NOT NULL UNIQUE,
	node_uuid  TEXT NOT NULL REFERENCES nodes (uuid) ON DELETE CASCADE,
	expires_at TEXT NOT NULL,
	updated_at TEXT NOT NULL
);
CREATE INDEX dhcp_leases_node ON dhcp_leases (node_uuid);
