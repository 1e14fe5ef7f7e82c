package sql

import (
	"context"
	stdsql "database/sql"
	"fmt"

	"github.com/ferrometal/ferro/internal/store"
)

// CountNodes counts the nodes by provision state and power state in one
// query (the metrics' ferro_nodes, at each scrape). The power state lives
// in the node's body only, so it is read from the JSON there: one pass
// over the table, no index, no write cost.
func (db *DB) CountNodes(ctx context.Context) ([]store.NodeCount, error) {
	power := "COALESCE(json_extract(body, '$.power_state'), '')"
	if db.d == postgresDialect {
		power = "COALESCE(body->>'power_state', '')"
	}
	rows, err := db.query(ctx, "SELECT provision_state, "+power+", COUNT(*) FROM nodes GROUP BY 1, 2")
	if err != nil {
		return nil, fmt.Errorf("count nodes: %w", err)
	}
	counts, err := scanAll(rows, func(rows *stdsql.Rows) (store.NodeCount, error) {
		var c store.NodeCount
		return c, rows.Scan(&c.ProvisionState, &c.PowerState, &c.Count)
	})
	if err != nil {
		return nil, fmt.Errorf("count nodes: %w", err)
	}
	return counts, nil
}
