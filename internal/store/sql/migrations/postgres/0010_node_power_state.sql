-- The power state as a column, so that counting nodes by provision and
-- power state (the metrics' ferro_nodes, at every scrape) reads one index
-- instead of every node's body. The index replaces nodes_provision_state,
-- whose lookups it serves as well, so a write maintains no extra index.
ALTER TABLE nodes ADD COLUMN power_state TEXT NOT NULL DEFAULT '';
UPDATE nodes SET power_state = COALESCE(body->>'power_state', '');
DROP INDEX nodes_provision_state;
CREATE INDEX nodes_states ON nodes (provision_state, power_state);
