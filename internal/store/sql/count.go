package sql

import (
	"context"
	stdsql "database/sql"
	"fmt"

	"github.com/ferrometal/ferro/internal/store"
)

// CountNodes counts the nodes by provision state and power state in one
// query over the (provision_state, power_state) index (the metrics'
// ferro_nodes, at each scrape): no node body is read.
func (db *DB) CountNodes(ctx context.Context) ([]store.NodeCount, error) {
	rows, err := db.query(ctx, "SELECT provision_state, power_state, COUNT(*) FROM nodes GROUP BY provision_state, power_state")
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
