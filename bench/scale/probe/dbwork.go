package probe

import (
	"context"
	"regexp"
	"strings"

	"github.com/jackc/pgx/v5"
)

// DBWork is what the ferro processes asked of PostgreSQL, as its
// pg_stat_statements extension counts it: each statement as it ends, by
// its normalised text. The bench's own statements are left out.
type DBWork struct {
	// Refs is the calls of the power sync's list of node references
	// (uuid, conductor_group from the nodes_power_sync index: one a cycle),
	// RefRows the references they returned.
	Refs, RefRows float64
	// NodeQueries is the statements on the nodes table (Refs among them);
	// NodeRows the rows the others returned, NodeWrites the rows written;
	// NodePages the shared buffers all of them hit or read.
	NodeQueries, NodeRows, NodeWrites, NodePages float64
	// Other is the statements on other tables (heartbeats, the hash ring,
	// locks, history).
	Other float64
}

func (w DBWork) minus(o DBWork) DBWork {
	return DBWork{w.Refs - o.Refs, w.RefRows - o.RefRows, max(w.NodeQueries-o.NodeQueries, 0), max(w.NodeRows-o.NodeRows, 0),
		max(w.NodeWrites-o.NodeWrites, 0), max(w.NodePages-o.NodePages, 0), max(w.Other-o.Other, 0)}
}

func (w DBWork) times(f float64) DBWork {
	return DBWork{w.Refs * f, w.RefRows * f, w.NodeQueries * f, w.NodeRows * f, w.NodeWrites * f, w.NodePages * f, w.Other * f}
}

// pgSettings load pg_stat_statements into the bench's cluster; utility
// statements (BEGIN, COMMIT, VACUUM) are not counted.
var pgSettings = []string{"shared_preload_libraries=pg_stat_statements", "pg_stat_statements.track_utility=off", "pg_stat_statements.max=10000"}

var (
	nodesTableRef = regexp.MustCompile(`(?i)\b(from|update|into|join)\s+nodes\b`)
	writeStmt     = regexp.MustCompile(`(?i)^\s*(update|insert|delete)\b`)
)

// refsStmt is how the power sync's list of node references begins
// (internal/store/sql ListNodeRefs).
const refsStmt = "SELECT uuid, conductor_group FROM nodes"

// resetWork forgets what pg_stat_statements counted so far.
func resetWork(ctx context.Context, conn *pgx.Conn) error {
	_, err := conn.Exec(ctx, "SELECT pg_stat_statements_reset()")
	return err
}

// readWork returns what pg_stat_statements counted since resetWork.
func readWork(ctx context.Context, conn *pgx.Conn) (DBWork, error) {
	rows, err := conn.Query(ctx, `SELECT query, calls, rows, shared_blks_hit + shared_blks_read FROM pg_stat_statements
		WHERE dbid = (SELECT oid FROM pg_database WHERE datname = current_database())`)
	if err != nil {
		return DBWork{}, err
	}
	defer rows.Close()
	var w DBWork
	for rows.Next() {
		var q string
		var calls, n, pages int64
		if err := rows.Scan(&q, &calls, &n, &pages); err != nil {
			return DBWork{}, err
		}
		switch {
		case strings.Contains(q, "pg_stat_statements"), strings.Contains(q, "pg_stat_user_"), strings.Contains(q, "pg_stat_database"):
			// the bench's own
		case strings.HasPrefix(q, refsStmt):
			w.Refs += float64(calls)
			w.RefRows += float64(n)
			w.NodeQueries += float64(calls)
			w.NodePages += float64(pages)
		case nodesTableRef.MatchString(q):
			w.NodeQueries += float64(calls)
			w.NodePages += float64(pages)
			if writeStmt.MatchString(q) {
				w.NodeWrites += float64(n)
			} else {
				w.NodeRows += float64(n)
			}
		default:
			w.Other += float64(calls)
		}
	}
	return w, rows.Err()
}
