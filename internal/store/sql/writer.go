package sql

import (
	"context"
	stdsql "database/sql"
	"errors"
	"sync"
)

// writer commits SQLite writes in groups. SQLite has one writer at a time
// and a commit costs a dozen system calls and a WAL frame for every page it
// changed, so the writes that callers make at the same time — single
// statements and InTx functions — are run in one transaction, each in its
// own savepoint so that one failing does not undo the others. A statement
// waiting alone runs by itself, with no added latency.
type writer struct {
	pool  *stdsql.DB // the write pool: one connection
	stmts *stmtCache // statements prepared on pool
	ops   chan *writeOp
	quit  chan struct{}
	done  chan struct{}
	ckpt  *checkpointer

	closeOnce sync.Once
}

// maxWriteBatch bounds how many writes share a commit, and so how long the
// first of them waits for the others.
const maxWriteBatch = 64

// writeOp is one statement for the writer: an Exec, or a query returning
// one row when scan is set.
type writeOp struct {
	ctx  context.Context
	q    string
	args []any
	scan []any

	// fn, when set, is an InTx function to run instead of q.
	fn func(tx *stdsql.Tx) error

	stmt     *stdsql.Stmt // prepared q, or nil when q runs unprepared
	rows     int64        // rows affected, for an Exec
	err      error
	panicked any // what fn panicked with, re-raised in the caller
	done     chan struct{}
}

// errPanicked is the error of a transaction function that panicked.
var errPanicked = errors.New("transaction function panicked")

var errClosed = errors.New("database is closed")

// newWriter starts the writer, which tells ckpt of every group it wrote.
func newWriter(pool *stdsql.DB, stmts *stmtCache, ckpt *checkpointer) *writer {
	w := &writer{
		pool:  pool,
		stmts: stmts,
		ckpt:  ckpt,
		ops:   make(chan *writeOp),
		quit:  make(chan struct{}),
		done:  make(chan struct{}),
	}
	go w.loop()
	return w
}

// close stops the writer once the current group is committed; later
// writes fail with errClosed.
func (w *writer) close() {
	w.closeOnce.Do(func() { close(w.quit) })
	<-w.done
}

// exec runs a statement and returns how many rows it changed.
func (w *writer) exec(ctx context.Context, q string, args []any) (int64, error) {
	op := &writeOp{ctx: ctx, q: q, args: args}
	err := w.do(op)
	return op.rows, err
}

// queryRow runs a statement that returns one row and scans it into dest;
// stdsql.ErrNoRows when there is none.
func (w *writer) queryRow(ctx context.Context, q string, args []any, dest []any) error {
	return w.do(&writeOp{ctx: ctx, q: q, args: args, scan: dest})
}

// inTx runs fn in a transaction of the writer's and returns fn's error or
// the commit's; a panic in fn is raised again here.
func (w *writer) inTx(ctx context.Context, fn func(tx *stdsql.Tx) error) error {
	op := &writeOp{ctx: ctx, fn: fn}
	err := w.do(op)
	if op.panicked != nil {
		panic(op.panicked)
	}
	return err
}

func (w *writer) do(op *writeOp) error {
	op.done = make(chan struct{})
	select {
	case w.ops <- op:
	case <-op.ctx.Done():
		return op.ctx.Err()
	case <-w.quit:
		return errClosed
	}
	// Once handed over, the outcome is awaited even if ctx ends: the
	// statement may commit, and the caller must not be told otherwise.
	<-op.done
	return op.err
}

func (w *writer) loop() {
	defer close(w.done)
	batch := make([]*writeOp, 0, maxWriteBatch)
	for {
		select {
		case op := <-w.ops:
			batch = append(batch[:0], op)
		case <-w.quit:
			return
		}
	gather:
		for len(batch) < maxWriteBatch {
			select {
			case op := <-w.ops:
				batch = append(batch, op)
			default:
				break gather
			}
		}
		w.run(batch)
		for _, op := range batch {
			close(op.done)
		}
		w.ckpt.poke()
		// Now that the connection is free: prepare the statements that
		// transactions ran unprepared, catch up with the checkpointer.
		w.stmts.preparePending()
		w.ckpt.writerIdle(w.pool)
	}
}

func (w *writer) run(batch []*writeOp) {
	live := batch[:0:0]
	for _, op := range batch {
		if op.err = op.ctx.Err(); op.err != nil {
			continue
		}
		// Prepare before the transaction begins: preparing on the pool
		// needs the connection the transaction is about to hold.
		if op.fn == nil {
			if op.stmt, op.err = w.stmts.get(op.ctx, op.q); op.err != nil {
				continue
			}
		}
		live = append(live, op)
	}
	switch len(live) {
	case 0:
		return
	case 1:
		if live[0].fn == nil {
			// Alone: autocommit, as if there were no writer.
			live[0].err = live[0].run(w.pool, nil)
			return
		}
	}
	tx, err := w.pool.BeginTx(context.Background(), nil)
	if err != nil {
		for _, op := range live {
			op.err = err
		}
		return
	}
	for _, op := range live {
		var broken error
		op.err, broken = inSavepoint(tx, op)
		if broken != nil {
			// The transaction failed, not just the statement: every write
			// in it is lost.
			tx.Rollback()
			for _, op := range live {
				if op.err == nil {
					op.err = broken
				}
			}
			return
		}
	}
	if err := tx.Commit(); err != nil {
		for _, op := range live {
			if op.err == nil {
				op.err = err
			}
		}
	}
}

// inSavepoint runs op in tx so that its failure undoes only its own
// changes. broken reports a failure of the transaction itself.
func inSavepoint(tx *stdsql.Tx, op *writeOp) (err, broken error) {
	if _, broken = tx.Exec("SAVEPOINT op"); broken != nil {
		return broken, broken
	}
	if err = op.run(nil, tx); err != nil {
		if _, broken = tx.Exec("ROLLBACK TO op"); broken != nil {
			return err, broken
		}
	}
	if _, broken = tx.Exec("RELEASE op"); broken != nil {
		return err, broken
	}
	return err, nil
}

// run runs op's function in tx, or its statement in tx when tx is set and
// on pool otherwise. A statement runs on a context that cannot be
// cancelled: the writer checked op's context before starting, a write takes
// microseconds, and a cancellable context costs database/sql and the driver
// a watching goroutine each.
func (op *writeOp) run(pool *stdsql.DB, tx *stdsql.Tx) (err error) {
	if op.fn != nil {
		defer func() {
			if r := recover(); r != nil {
				op.panicked, err = r, errPanicked
			}
		}()
		return op.fn(tx)
	}
	ctx := context.WithoutCancel(op.ctx)
	stmt := op.stmt
	if stmt != nil && tx != nil {
		stmt = tx.StmtContext(ctx, stmt)
		defer stmt.Close()
	}
	if op.scan != nil {
		var row *stdsql.Row
		switch {
		case stmt != nil:
			row = stmt.QueryRowContext(ctx, op.args...)
		case tx != nil:
			row = tx.QueryRowContext(ctx, op.q, op.args...)
		default:
			row = pool.QueryRowContext(ctx, op.q, op.args...)
		}
		return row.Scan(op.scan...)
	}
	var res stdsql.Result
	switch {
	case stmt != nil:
		res, err = stmt.ExecContext(ctx, op.args...)
	case tx != nil:
		res, err = tx.ExecContext(ctx, op.q, op.args...)
	default:
		res, err = pool.ExecContext(ctx, op.q, op.args...)
	}
	if err != nil {
		return err
	}
	op.rows, err = res.RowsAffected()
	return err
}
