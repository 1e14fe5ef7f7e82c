-- What the power-state sync reads of every node it may sync: each
-- conductor lists the UUIDs and conductor groups of the unlocked nodes not
-- in maintenance in the states it syncs, keeps those the hash ring gives
-- it, and reads only those in full. This index answers the list alone
-- (an index-only scan on PostgreSQL, a covering index on SQLite), so a
-- cycle reads the rows of the conductor's own share, not of every node,
-- and a node in maintenance or locked is not in it at all.
CREATE INDEX nodes_power_sync ON nodes (provision_state, conductor_group, uuid)
	WHERE maintenance = FALSE AND reservation IS NULL;
