package sql

import (
	"errors"
	"fmt"
	"net/url"
	"path/filepath"
	"strings"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"
)

// dialect is the one place where SQLite and PostgreSQL differ. Everything
// else, queries included, is shared: both engines accept $N placeholders,
// ON CONFLICT … DO UPDATE, RETURNING and row-value comparisons.
type dialect struct {
	name string // "sqlite" or "postgres"
	// driver is the database/sql driver name.
	driver string
	// migrations is the directory of migrations under migrationsFS.
	migrations string
	// minTime is an SQL literal that sorts before every timestamp; it
	// stands in for NULL in sort keys so both engines order NULLs alike.
	minTime string
	// cacheStmts says whether to keep prepared statements. pgx has its own
	// per-connection statement cache; modernc.org/sqlite does not.
	cacheStmts bool
	// nodeChassis is the SQL expression of a nodes row's chassis UUID
	// (kept in its JSON body).
	nodeChassis string
}

var (
	sqliteDialect = &dialect{
		name:        "sqlite",
		driver:      "sqlite",
		migrations:  "migrations/sqlite",
		minTime:     "''",
		cacheStmts:  true,
		nodeChassis: "json_extract(body, '$.chassis_uuid')",
	}
	postgresDialect = &dialect{
		name:        "postgres",
		driver:      "pgx",
		migrations:  "migrations/postgres",
		minTime:     "'-infinity'::timestamptz",
		nodeChassis: "(body->>'chassis_uuid')",
	}
)

// sqliteTimeLayout is how SQLite stores timestamps: fixed width, so text
// order is time order, and readable in the sqlite3 shell.
const sqliteTimeLayout = "2006-01-02T15:04:05.000000Z"

// timeArg is the query argument for a timestamp column.
func (d *dialect) timeArg(t time.Time) any {
	if d == sqliteDialect {
		return t.UTC().Format(sqliteTimeLayout)
	}
	return t.UTC()
}

// nullTimeArg is timeArg for a nullable column.
func (d *dialect) nullTimeArg(t *time.Time) any {
	if t == nil {
		return nil
	}
	return d.timeArg(*t)
}

// parseConnection maps a [database]connection URL to a dialect and a
// driver data source name.
//
//	sqlite:///var/lib/ferro/ferro.db   (also sqlite:////var/lib/…)
//	postgresql://user:pass@host:5432/ferro?sslmode=disable
//	postgres://…, postgresql+psycopg2://… (the SQLAlchemy driver suffix is ignored)
func parseConnection(conn string) (*dialect, string, error) {
	scheme, rest, ok := strings.Cut(conn, "://")
	if !ok {
		return nil, "", fmt.Errorf("database connection %q: not a URL (want sqlite:///path or postgresql://…)", redact(conn))
	}
	scheme = strings.ToLower(scheme)
	if base, _, ok := strings.Cut(scheme, "+"); ok {
		scheme = base
	}
	switch scheme {
	case "sqlite":
		path := rest
		if !strings.HasPrefix(path, "/") {
			return nil, "", fmt.Errorf("database connection %q: the SQLite path must be absolute (sqlite:///abs/path/ferro.db)", conn)
		}
		if strings.ContainsAny(path, "?#") {
			return nil, "", fmt.Errorf("database connection %q: SQLite connection parameters are not supported", conn)
		}
		// sqlite:////abs/path is SQLAlchemy's spelling of an absolute path.
		path = filepath.Clean("/" + strings.TrimLeft(path, "/"))
		return sqliteDialect, path, nil
	case "postgres", "postgresql":
		return postgresDialect, "postgres://" + rest, nil
	default:
		return nil, "", fmt.Errorf("database connection %q: unsupported engine %q (want sqlite or postgresql)", redact(conn), scheme)
	}
}

// sqliteBusyTimeout is how long an SQLite connection waits for a lock
// another process holds.
const sqliteBusyTimeout = 10 * time.Second

// sqliteDSN is the modernc.org/sqlite data source for a database file.
// Writers take the lock when their transaction begins (BEGIN IMMEDIATE), so
// a transaction never fails with SQLITE_BUSY halfway through; the busy
// timeout covers waits for another process.
func sqliteDSN(path string, readOnly bool) string {
	q := url.Values{}
	q.Add("_pragma", fmt.Sprintf("busy_timeout(%d)", sqliteBusyTimeout.Milliseconds()))
	q.Add("_pragma", "journal_mode(WAL)")
	q.Add("_pragma", "synchronous(NORMAL)")
	q.Add("_pragma", "foreign_keys(ON)")
	// No memory map: a reader drops its whole mapping (munmap, then page
	// faults) each time it begins after a commit, which costs more than
	// reading the pages it needs. Keep more pages per connection than the
	// 2 MB default.
	q.Add("_pragma", "mmap_size(0)")
	q.Add("_pragma", "cache_size(-16384)")
	if readOnly {
		q.Add("_pragma", "query_only(ON)")
	} else {
		q.Set("_txlock", "immediate")
		// Checkpoints run in the background (checkpoint.go), not in commits;
		// when the WAL starts over, its file is cut back to 64 MiB.
		q.Add("_pragma", "wal_autocheckpoint(0)")
		q.Add("_pragma", "journal_size_limit(67108864)")
	}
	return path + "?" + q.Encode()
}

// redact hides the password of a connection URL for error messages.
func redact(conn string) string {
	u, err := url.Parse(conn)
	if err != nil || u.User == nil {
		return conn
	}
	return u.Redacted()
}

// violation is a constraint violation reported by the engine.
type violation int

const (
	noViolation violation = iota
	uniqueViolation
	foreignKeyViolation
)

// constraintError classifies err. For a unique violation it also names the
// column that collided ("name", "address", …) when the engine says.
func (d *dialect) constraintError(err error) (violation, string) {
	var se *sqlite.Error
	if errors.As(err, &se) {
		switch se.Code() {
		case sqlite3.SQLITE_CONSTRAINT_UNIQUE, sqlite3.SQLITE_CONSTRAINT_PRIMARYKEY:
			// "UNIQUE constraint failed: ports.address (2067)"
			msg := se.Error()
			if i := strings.LastIndex(msg, "constraint failed: "); i >= 0 {
				cols := msg[i+len("constraint failed: "):]
				cols, _, _ = strings.Cut(cols, " (")
				cols, _, _ = strings.Cut(cols, ",")
				if _, col, ok := strings.Cut(cols, "."); ok {
					return uniqueViolation, col
				}
			}
			return uniqueViolation, ""
		case sqlite3.SQLITE_CONSTRAINT_FOREIGNKEY:
			return foreignKeyViolation, ""
		}
		return noViolation, ""
	}
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		switch pe.Code {
		case "23505": // unique_violation; Detail: Key (address)=(aa:bb) already exists.
			if _, cols, ok := strings.Cut(pe.Detail, "Key ("); ok {
				cols, _, _ = strings.Cut(cols, ")")
				cols, _, _ = strings.Cut(cols, ",")
				return uniqueViolation, cols
			}
			return uniqueViolation, ""
		case "23503": // foreign_key_violation
			return foreignKeyViolation, ""
		}
	}
	return noViolation, ""
}
