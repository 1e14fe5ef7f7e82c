// Package sql implements store.Store once for SQLite (modernc.org/sqlite)
// and PostgreSQL (pgx through database/sql).
//
// Each table keeps the columns ferro filters, sorts or enforces uniqueness
// on as real columns, and the whole object as JSON in a body column, so a new
// field needs no migration unless it must be queried. The schema is created
// and upgraded by embedded, numbered migrations (migrations/sqlite and
// migrations/postgres, one file per version in each) when the database is
// opened. What differs between the engines is in dialect.go.
//
// On SQLite, writes go through a single connection whose transactions begin
// with BEGIN IMMEDIATE, and reads through a pool of read-only connections; in
// WAL mode readers never wait for the writer. Concurrent writers therefore
// queue in the process instead of failing with SQLITE_BUSY, and the writes
// that queue together — statements and InTx functions — share one commit
// (writer.go). The WAL is checkpointed in the background (checkpoint.go).
//
// On SQLite a function passed to InTx runs on the writer, holding the only
// write connection until it returns: it must use the Store it is given,
// never the outer one, for writes, or it waits for itself; and it should do
// its slow work before InTx, since every other write waits for it.
package sql

import (
	"context"
	stdsql "database/sql"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
	_ "github.com/jackc/pgx/v5/stdlib" // registers the "pgx" driver
	"modernc.org/sqlite"               // registers the "sqlite" driver
	sqlite3 "modernc.org/sqlite/lib"

	"github.com/ferrometal/ferro/internal/store"
)

// DB is a store.Store on an SQL database. The Store that InTx hands to its
// function is a *DB bound to the transaction.
type DB struct {
	d     *dialect
	read  *stdsql.DB // the read-only pool on SQLite; the same as write on PostgreSQL
	write *stdsql.DB
	now   func() time.Time
	log   *slog.Logger
	// keepInventories is how many replaced inventories per node are kept.
	keepInventories int
	// observe is told of every statement and transaction; nil for none.
	observe func(op string, d time.Duration, err error)

	// Prepared statements by query text, per pool; nil when the driver
	// caches statements itself.
	readStmts, writeStmts *stmtCache
	// writer groups concurrent single-statement writes into one commit on
	// SQLite; nil on PostgreSQL.
	writer *writer
	// ckpt folds the SQLite WAL into the database in the background; nil on
	// PostgreSQL.
	ckpt *checkpointer

	// keptNodes caches the node list's decoded nodes; nil when off.
	keptNodes *keptNodes

	// tx is set on the copy of DB that InTx passes to its function.
	tx *stdsql.Tx
}

var _ store.Store = (*DB)(nil)

type options struct {
	log             *slog.Logger
	now             func() time.Time
	maxOpenConns    int
	keepInventories int
	observe         func(op string, d time.Duration, err error)
	attempts        int // connection attempts to PostgreSQL; < 0: until ctx ends
	retryInterval   time.Duration
	nodeCacheBytes  int
}

// An Option configures Open.
type Option func(*options)

// WithLogger sets the logger; the default discards.
func WithLogger(l *slog.Logger) Option { return func(o *options) { o.log = l } }

// WithClock sets the clock used for created_at, updated_at and heartbeats;
// the default is time.Now.
func WithClock(now func() time.Time) Option { return func(o *options) { o.now = now } }

// WithMaxOpenConns caps the connection pool: the PostgreSQL pool, or the
// SQLite read pool (SQLite always has one write connection). The default is
// 16 on PostgreSQL and max(4, GOMAXPROCS) on SQLite.
func WithMaxOpenConns(n int) Option { return func(o *options) { o.maxOpenConns = n } }

// DefaultInventoryHistory is how many previous inventories per node are
// kept without WithInventoryHistory ([inventory]keep_previous's default).
const DefaultInventoryHistory = 5

// WithInventoryHistory sets how many previous inventories of each node
// SaveInventory keeps (0: none).
func WithInventoryHistory(n int) Option { return func(o *options) { o.keepInventories = max(n, 0) } }

// WithObserver has every statement and transaction timed: fn gets the
// operation ("exec", "query" — until its first row —, "query_row",
// "transaction"), how long it took and its error (sql.ErrNoRows is none).
// It must be quick; it runs on the caller's goroutine.
func WithObserver(fn func(op string, d time.Duration, err error)) Option {
	return func(o *options) { o.observe = fn }
}

// WithConnectRetries makes Open try to connect to PostgreSQL up to
// attempts times (forever when negative), waiting interval between two
// attempts and logging each failure, as oslo.db does at start
// ([database]max_retries, retry_interval). Only failures that a server
// coming up later mends are retried: no answer at the address (refused,
// unreachable, timed out) and PostgreSQL's "starting up" and connection
// exceptions; a wrong password or a missing database fails at once, and so
// does every SQLite error. ctx ending stops the retries. The default is one
// attempt.
func WithConnectRetries(attempts int, interval time.Duration) Option {
	return func(o *options) { o.attempts, o.retryInterval = attempts, interval }
}

// connectAttemptTimeout bounds one connection attempt, so that an address
// that swallows packets is retried too.
const connectAttemptTimeout = 30 * time.Second

// Open connects to the database named by connection, a [database]connection
// URL, and migrates its schema to the current version:
//
//	sqlite:///var/lib/ferro/ferro.db
//	postgresql://ferro:secret@db.example.com/ferro?sslmode=verify-full
func Open(ctx context.Context, connection string, opts ...Option) (*DB, error) {
	o := options{log: slog.New(slog.DiscardHandler), now: time.Now, keepInventories: DefaultInventoryHistory, attempts: 1,
		nodeCacheBytes: DefaultNodeCacheBytes}
	for _, opt := range opts {
		opt(&o)
	}
	d, dsn, err := parseConnection(connection)
	if err != nil {
		return nil, err
	}
	db := &DB{d: d, now: o.now, log: o.log, keepInventories: o.keepInventories, observe: o.observe,
		keptNodes: newKeptNodes(o.nodeCacheBytes)}
	switch d {
	case sqliteDialect:
		if db.write, err = stdsql.Open(d.driver, sqliteDSN(dsn, false)); err != nil {
			return nil, err
		}
		db.write.SetMaxOpenConns(1)
		db.write.SetMaxIdleConns(1)
		db.write.SetConnMaxLifetime(0)
		db.write.SetConnMaxIdleTime(0)
		// The first connection creates the file and switches it to WAL
		// before any reader opens it.
		if err := pingSQLite(ctx, db.write); err != nil {
			db.write.Close()
			return nil, fmt.Errorf("open %s: %w", dsn, err)
		}
		if db.read, err = stdsql.Open(d.driver, sqliteDSN(dsn, true)); err != nil {
			db.write.Close()
			return nil, err
		}
		n := o.maxOpenConns
		if n <= 0 {
			n = max(4, runtime.GOMAXPROCS(0))
		}
		db.read.SetMaxOpenConns(n)
		db.read.SetMaxIdleConns(n)
		ckconn, err := stdsql.Open(d.driver, sqliteDSN(dsn, true))
		if err != nil {
			db.read.Close()
			db.write.Close()
			return nil, err
		}
		db.ckpt = newCheckpointer(ckconn, o.log)
		db.readStmts = newStmtCache(db.read)
		db.writeStmts = newStmtCache(db.write)
		db.writer = newWriter(db.write, db.writeStmts, db.ckpt)
	case postgresDialect:
		if db.write, err = stdsql.Open(d.driver, dsn); err != nil {
			return nil, err
		}
		n := o.maxOpenConns
		if n <= 0 {
			n = 16
		}
		db.write.SetMaxOpenConns(n)
		db.write.SetMaxIdleConns(n)
		db.write.SetConnMaxIdleTime(5 * time.Minute)
		db.write.SetConnMaxLifetime(time.Hour)
		db.read = db.write
		if err := connectPostgres(ctx, db.write, redact(connection), o); err != nil {
			db.write.Close()
			return nil, err
		}
	}
	if err := db.migrate(ctx); err != nil {
		db.Close()
		return nil, fmt.Errorf("migrate %s database: %w", d.name, err)
	}
	return db, nil
}

// Engine returns "sqlite" or "postgres".
func (db *DB) Engine() string { return db.d.name }

// Close closes the database. It is an error to call it on the Store given
// to an InTx function.
func (db *DB) Close() error {
	if db.tx != nil {
		return errors.New("close called inside a transaction")
	}
	if db.writer != nil {
		db.writer.close()
	}
	var errs []error
	if db.ckpt != nil {
		errs = append(errs, db.ckpt.close())
	}
	for _, c := range []*stmtCache{db.readStmts, db.writeStmts} {
		if c != nil {
			errs = append(errs, c.close())
		}
	}
	if db.read != db.write {
		errs = append(errs, db.read.Close())
	}
	errs = append(errs, db.write.Close())
	return errors.Join(errs...)
}

// InTx runs fn in one transaction. fn's error, or a panic, rolls it back.
// Called on the Store given to fn, InTx runs fn in the same transaction.
// PostgreSQL transactions are READ COMMITTED; on SQLite they are serialised.
// After a failed statement fn should give up and return the error: a
// PostgreSQL transaction cannot go on after one.
func (db *DB) InTx(ctx context.Context, fn func(store.Store) error) (err error) {
	if db.tx != nil {
		return fn(db)
	}
	if db.observe != nil {
		defer db.observed("transaction", time.Now(), &err)
	}
	if db.writer != nil {
		err := db.writer.inTx(ctx, func(tx *stdsql.Tx) error {
			txdb := *db
			txdb.tx = tx
			return fn(&txdb)
		})
		if err != nil && (errors.Is(err, errClosed) || (ctx.Err() != nil && errors.Is(err, ctx.Err()))) {
			return fmt.Errorf("begin transaction: %w", err)
		}
		return err
	}
	tx, err := db.write.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("begin transaction: %w", err)
	}
	txdb := *db
	txdb.tx = tx
	committed := false
	defer func() {
		if !committed {
			tx.Rollback()
		}
	}()
	if err := fn(&txdb); err != nil {
		return err
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("commit transaction: %w", err)
	}
	committed = true
	return nil
}

// stamp is the current time as the store keeps it.
func (db *DB) stamp() time.Time { return normTime(db.now()) }

// normTime is t as the store keeps it: UTC, to the microsecond (PostgreSQL's
// resolution), without a monotonic reading.
func normTime(t time.Time) time.Time {
	if t.IsZero() {
		return t
	}
	return t.UTC().Truncate(time.Microsecond)
}

func normTimePtr(t *time.Time) *time.Time {
	if t == nil {
		return nil
	}
	n := normTime(*t)
	return &n
}

// Query helpers. Reads outside a transaction go to the read pool, writes to
// the writer (SQLite) or the pool (PostgreSQL); inside InTx everything goes
// through the transaction.

func (db *DB) exec(ctx context.Context, q string, args ...any) (_ stdsql.Result, err error) {
	if db.observe != nil {
		defer db.observed("exec", time.Now(), &err)
	}
	if db.writer != nil && db.tx == nil {
		n, err := db.writer.exec(ctx, q, args)
		return rowsAffected(n), err
	}
	if stmt, err := db.prepared(ctx, db.writeStmts, q); err != nil {
		return nil, err
	} else if stmt != nil {
		defer db.closeTxStmt(stmt)
		return stmt.ExecContext(ctx, args...)
	}
	if db.tx != nil {
		return db.tx.ExecContext(ctx, q, args...)
	}
	return db.write.ExecContext(ctx, q, args...)
}

// writeRow runs a write that returns one row (INSERT/UPDATE … RETURNING)
// when its result is scanned.
func (db *DB) writeRow(ctx context.Context, q string, args ...any) scanner {
	var s scanner
	if db.writer != nil && db.tx == nil {
		s = scanFunc(func(dest ...any) error { return db.writer.queryRow(ctx, q, args, dest) })
	} else {
		s = db.row(ctx, db.writeStmts, db.write, q, args)
	}
	return db.observedScan("exec", s)
}

// observedScan times a one-row statement from now to the end of its Scan.
func (db *DB) observedScan(op string, s scanner) scanner {
	if db.observe == nil {
		return s
	}
	start := time.Now()
	return scanFunc(func(dest ...any) (err error) {
		defer db.observed(op, start, &err)
		return s.Scan(dest...)
	})
}

// observed reports an operation that started at start and ended now.
func (db *DB) observed(op string, start time.Time, errp *error) {
	err := *errp
	if errors.Is(err, stdsql.ErrNoRows) {
		err = nil
	}
	db.observe(op, time.Since(start), err)
}

// scanFunc is a scanner that runs its query when scanned.
type scanFunc func(dest ...any) error

func (f scanFunc) Scan(dest ...any) error { return f(dest...) }

// rowsAffected is the stdsql.Result of a write the writer ran.
type rowsAffected int64

func (n rowsAffected) LastInsertId() (int64, error) {
	return 0, errors.New("LastInsertId is not supported")
}
func (n rowsAffected) RowsAffected() (int64, error) { return int64(n), nil }

// queryRow runs a read that returns one row. Outside a transaction the
// statement runs on a context that cannot be cancelled: a point read takes
// microseconds, so stopping one halfway saves nothing, while a cancellable
// context costs two goroutines per statement (database/sql's and the
// driver's cancellation watchers), a fifth of the CPU of a GET of one node.
// A request that is already cancelled still fails at once.
func (db *DB) queryRow(ctx context.Context, q string, args ...any) scanner {
	if db.tx == nil {
		if err := ctx.Err(); err != nil {
			return &rowScanner{err: err}
		}
		ctx = context.WithoutCancel(ctx)
	}
	return db.observedScan("query_row", db.row(ctx, db.readStmts, db.read, q, args))
}

func (db *DB) query(ctx context.Context, q string, args ...any) (_ *stdsql.Rows, err error) {
	if db.observe != nil {
		defer db.observed("query", time.Now(), &err)
	}
	cache := db.readStmts
	if db.tx != nil {
		cache = db.writeStmts
	}
	if stmt, err := db.prepared(ctx, cache, q); err != nil {
		return nil, err
	} else if stmt != nil {
		// A transaction's statement closes with the transaction; rows stay
		// readable until then.
		return stmt.QueryContext(ctx, args...)
	}
	if db.tx != nil {
		return db.tx.QueryContext(ctx, q, args...)
	}
	return db.read.QueryContext(ctx, q, args...)
}

func (db *DB) row(ctx context.Context, cache *stmtCache, pool *stdsql.DB, q string, args []any) *rowScanner {
	if db.tx != nil {
		cache = db.writeStmts
	}
	stmt, err := db.prepared(ctx, cache, q)
	if err != nil {
		return &rowScanner{err: err}
	}
	if stmt != nil {
		return &rowScanner{row: stmt.QueryRowContext(ctx, args...), stmt: stmt, db: db}
	}
	if db.tx != nil {
		return &rowScanner{row: db.tx.QueryRowContext(ctx, q, args...)}
	}
	return &rowScanner{row: pool.QueryRowContext(ctx, q, args...)}
}

// rowScanner is a *sql.Row that releases a transaction's statement once scanned.
type rowScanner struct {
	row  *stdsql.Row
	err  error
	stmt *stdsql.Stmt
	db   *DB
}

func (r *rowScanner) Scan(dest ...any) error {
	if r.err != nil {
		return r.err
	}
	if r.db != nil {
		defer r.db.closeTxStmt(r.stmt)
	}
	return r.row.Scan(dest...)
}

// prepared returns the cached statement for q, bound to the transaction if
// there is one, or nil when q should run unprepared.
func (db *DB) prepared(ctx context.Context, cache *stmtCache, q string) (*stdsql.Stmt, error) {
	if cache == nil {
		return nil, nil
	}
	if db.tx != nil {
		// Never prepare on the pool here: on SQLite the transaction holds
		// the only write connection. A statement already prepared on that
		// connection is reused.
		stmt := db.writeStmts.lookup(q)
		if stmt == nil {
			db.writeStmts.wantPrepared(q)
			return nil, nil
		}
		return db.tx.StmtContext(ctx, stmt), nil
	}
	return cache.get(ctx, q)
}

func (db *DB) closeTxStmt(stmt *stdsql.Stmt) {
	if db.tx != nil {
		stmt.Close()
	}
}

// stmtCache keeps prepared statements by query text. List queries are
// built from filters, so the number of distinct texts is bounded but not
// tiny; past maxCachedStmts new queries simply run unprepared.
type stmtCache struct {
	db *stdsql.DB
	mu sync.RWMutex
	m  map[string]*stdsql.Stmt
	// pending are statements a transaction ran unprepared, to prepare once
	// the connection is free.
	pending map[string]bool
}

const maxCachedStmts = 512

func newStmtCache(db *stdsql.DB) *stmtCache {
	return &stmtCache{db: db, m: make(map[string]*stdsql.Stmt)}
}

func (c *stmtCache) lookup(q string) *stdsql.Stmt {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return c.m[q]
}

// wantPrepared notes that q ran unprepared in a transaction.
func (c *stmtCache) wantPrepared(q string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.m)+len(c.pending) >= maxCachedStmts {
		return
	}
	if c.pending == nil {
		c.pending = make(map[string]bool)
	}
	c.pending[q] = true
}

// preparePending prepares the statements transactions wanted; it must not
// run while a transaction holds the connection.
func (c *stmtCache) preparePending() {
	c.mu.Lock()
	pending := c.pending
	c.pending = nil
	c.mu.Unlock()
	for q := range pending {
		// A statement that does not prepare simply stays unprepared.
		_, _ = c.get(context.Background(), q)
	}
}

func (c *stmtCache) get(ctx context.Context, q string) (*stdsql.Stmt, error) {
	if stmt := c.lookup(q); stmt != nil {
		return stmt, nil
	}
	c.mu.RLock()
	full := len(c.m) >= maxCachedStmts
	c.mu.RUnlock()
	if full {
		return nil, nil
	}
	// Prepare without holding the lock: preparing may wait for a
	// connection that a transaction holds.
	stmt, err := c.db.PrepareContext(ctx, q)
	if err != nil {
		return nil, err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if prev, ok := c.m[q]; ok {
		stmt.Close()
		return prev, nil
	}
	c.m[q] = stmt
	return stmt, nil
}

func (c *stmtCache) close() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	var errs []error
	for q, stmt := range c.m {
		errs = append(errs, stmt.Close())
		delete(c.m, q)
	}
	return errors.Join(errs...)
}

// pingSQLite opens the first connection. Two processes opening a new
// database at once race to switch it to WAL, and SQLite answers the loser
// SQLITE_BUSY at once, without its busy timeout (waiting could deadlock):
// the loser tries again, for as long as the busy timeout would have waited.
func pingSQLite(ctx context.Context, db *stdsql.DB) error {
	deadline := time.Now().Add(sqliteBusyTimeout)
	for delay := time.Millisecond; ; delay = min(2*delay, 100*time.Millisecond) {
		err := db.PingContext(ctx)
		var se *sqlite.Error
		if err == nil || !errors.As(err, &se) || se.Code()&0xff != sqlite3.SQLITE_BUSY || time.Now().After(deadline) {
			return err
		}
		select {
		case <-ctx.Done():
			return err
		case <-time.After(delay):
		}
	}
}

// connectPostgres pings the server until it answers, as WithConnectRetries says.
func connectPostgres(ctx context.Context, db *stdsql.DB, name string, o options) error {
	for attempt := 1; ; attempt++ {
		actx, cancel := context.WithTimeout(ctx, connectAttemptTimeout)
		err := db.PingContext(actx)
		cancel()
		if err == nil {
			if attempt > 1 {
				o.log.Info("database connected", "database", name, "attempts", attempt)
			}
			return nil
		}
		err = fmt.Errorf("connect to %s: %w", name, err)
		if ctx.Err() != nil {
			return fmt.Errorf("%w (gave up: %w)", err, context.Cause(ctx))
		}
		if !retryableConnect(err) || (o.attempts >= 0 && attempt >= o.attempts) {
			return err
		}
		left := "unlimited"
		if o.attempts >= 0 {
			left = strconv.Itoa(o.attempts - attempt)
		}
		o.log.Warn("database connection failed, retrying", "database", name, "attempt", attempt,
			"attempts_left", left, "retry_in", o.retryInterval.String(), "error", err)
		t := time.NewTimer(o.retryInterval)
		select {
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
			return fmt.Errorf("%w (gave up: %w)", err, context.Cause(ctx))
		}
	}
}

// retryableConnect reports a connection failure that a server starting
// later mends: the address did not answer, or PostgreSQL answered that it
// is starting up (57P03) or with a connection exception (class 08). The
// rest (authentication, a missing database, TLS) would fail again.
func retryableConnect(err error) bool {
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		return pe.Code == "57P03" || strings.HasPrefix(pe.Code, "08")
	}
	var ne *net.OpError
	return errors.As(err, &ne)
}
