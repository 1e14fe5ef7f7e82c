-- Every node list that does not ask for children filters parent_node = ''
-- and sorts by (created_at, id) by default: with the index on parent_node
-- alone SQLite read every top-level node and sorted them all (bodies and
-- all, in a temporary B-tree) for each page. With the sort key after the
-- filter's column a page reads its own rows only, in order.
DROP INDEX nodes_parent_node;
CREATE INDEX nodes_parent_node ON nodes (parent_node, created_at, id);
