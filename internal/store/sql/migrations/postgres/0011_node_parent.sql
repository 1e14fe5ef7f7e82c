-- A child node's parent (API 1.83) as a column: every node list that does
-- not ask for children leaves them out, so the filter must be an index,
-- not a read of every body.
ALTER TABLE nodes ADD COLUMN parent_node TEXT NOT NULL DEFAULT '';
UPDATE nodes SET parent_node = COALESCE(body->>'parent_node', '');
CREATE INDEX nodes_parent_node ON nodes (parent_node);
