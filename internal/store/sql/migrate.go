package sql

import (
	"context"
	stdsql "database/sql"
	"embed"
	"fmt"
	"io/fs"
	"path"
	"slices"
	"strconv"
	"strings"
)

//go:embed migrations
var migrationsFS embed.FS

// migrationLockKey is the PostgreSQL advisory lock that serialises
// migrations between processes starting at the same time.
const migrationLockKey = 0x6665_7272_6f6d_6967 // "ferromig"

// migration is one numbered schema change.
type migration struct {
	version int
	name    string // file name, for logs and schema_migrations
	sql     string
}

// migrations returns the dialect's migrations in version order.
func (d *dialect) loadMigrations() ([]migration, error) {
	entries, err := fs.ReadDir(migrationsFS, d.migrations)
	if err != nil {
		return nil, err
	}
	var ms []migration
	for _, e := range entries {
		if e.IsDir() || !strings.HasSuffix(e.Name(), ".sql") {
			continue
		}
		num, _, _ := strings.Cut(e.Name(), "_")
		v, err := strconv.Atoi(num)
		if err != nil || v <= 0 {
			return nil, fmt.Errorf("migration %s: name must start with a positive number", e.Name())
		}
		b, err := migrationsFS.ReadFile(path.Join(d.migrations, e.Name()))
		if err != nil {
			return nil, err
		}
		ms = append(ms, migration{version: v, name: e.Name(), sql: string(b)})
	}
	slices.SortFunc(ms, func(a, b migration) int { return a.version - b.version })
	for i := 1; i < len(ms); i++ {
		if ms[i].version == ms[i-1].version {
			return nil, fmt.Errorf("migrations %s and %s have the same version", ms[i-1].name, ms[i].name)
		}
	}
	return ms, nil
}

// migrate brings the schema up to date. Each migration runs in its own
// transaction together with its schema_migrations row, so a failed one
// leaves the schema at the previous version. Two processes migrating at once
// are serialised: by an advisory lock on PostgreSQL, by the write lock that
// BEGIN IMMEDIATE takes on SQLite.
func (db *DB) migrate(ctx context.Context) error {
	ms, err := db.d.loadMigrations()
	if err != nil {
		return fmt.Errorf("load migrations: %w", err)
	}
	conn, err := db.write.Conn(ctx)
	if err != nil {
		return err
	}
	defer conn.Close()

	if db.d == postgresDialect {
		if _, err := conn.ExecContext(ctx, "SELECT pg_advisory_lock($1)", int64(migrationLockKey)); err != nil {
			return fmt.Errorf("take migration lock: %w", err)
		}
		defer conn.ExecContext(context.WithoutCancel(ctx), "SELECT pg_advisory_unlock($1)", int64(migrationLockKey))
	}

	if _, err := conn.ExecContext(ctx, `CREATE TABLE IF NOT EXISTS schema_migrations (
	version    INTEGER PRIMARY KEY,
	name       TEXT NOT NULL,
	applied_at TEXT NOT NULL
)`); err != nil {
		return fmt.Errorf("create schema_migrations: %w", err)
	}

	for _, m := range ms {
		if err := db.applyMigration(ctx, conn, m); err != nil {
			return fmt.Errorf("migration %s: %w", m.name, err)
		}
	}
	return nil
}

func (db *DB) applyMigration(ctx context.Context, conn *stdsql.Conn, m migration) error {
	tx, err := conn.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	var n int
	if err := tx.QueryRowContext(ctx, "SELECT COUNT(*) FROM schema_migrations WHERE version = $1", m.version).Scan(&n); err != nil {
		return err
	}
	if n > 0 {
		return nil
	}
	if _, err := tx.ExecContext(ctx, m.sql); err != nil {
		return err
	}
	if _, err := tx.ExecContext(ctx, "INSERT INTO schema_migrations (version, name, applied_at) VALUES ($1, $2, $3)",
		m.version, m.name, db.stamp().Format(sqliteTimeLayout)); err != nil {
		return err
	}
	if err := tx.Commit(); err != nil {
		return err
	}
	db.log.Info("applied database migration", "engine", db.d.name, "migration", m.name)
	return nil
}
