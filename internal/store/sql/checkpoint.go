package sql

import (
	"context"
	stdsql "database/sql"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"
)

// Checkpointing on SQLite. By default SQLite copies the WAL back into the
// database file inside the commit that pushes the WAL past 1,000 pages,
// with two fsyncs: under a steady write load every few dozen commits stall
// the only writer for a disk flush, and every queued write waits with it.
// The write connection therefore runs with wal_autocheckpoint(0), and a
// checkpointer of its own folds the WAL in the background.
//
// A PASSIVE checkpoint never blocks anyone, but under a steady load it
// never finishes either: the writer appends while it copies, and SQLite
// starts the WAL over only when a write begins with the WAL wholly copied,
// so the WAL would grow without end. Once the WAL is long, the checkpointer
// therefore asks the writer to catch up: between two groups of writes, on
// its own connection, the writer runs a RESTART checkpoint, which copies
// only what was appended since the background one (waiting for readers
// still on it) and lets the next write start the WAL from its beginning.
const (
	// checkpointDelay gathers the writes of a busy moment into one
	// checkpoint: at most one every delay, none while nothing is written.
	checkpointDelay = 200 * time.Millisecond
	// checkpointRestartFrames is the WAL length (4 KiB pages) from which the
	// writer catches up: SQLite's own autocheckpoint size.
	checkpointRestartFrames = 1000
	// checkpointCatchUpWait bounds how long the writer's catch-up waits for
	// readers, and so how long it can hold writes up.
	checkpointCatchUpWait = 100 * time.Millisecond
)

// checkpointer runs the WAL checkpoints of one SQLite database on a
// connection of its own.
type checkpointer struct {
	conn *stdsql.DB
	log  *slog.Logger
	// catchUp is set when the writer should run a RESTART checkpoint.
	catchUp atomic.Bool
	wake    chan struct{}
	quit    chan struct{}
	done    chan struct{}

	closeOnce sync.Once
	closeErr  error
}

func newCheckpointer(conn *stdsql.DB, log *slog.Logger) *checkpointer {
	conn.SetMaxOpenConns(1)
	conn.SetMaxIdleConns(1)
	c := &checkpointer{conn: conn, log: log,
		wake: make(chan struct{}, 1), quit: make(chan struct{}), done: make(chan struct{})}
	go c.loop()
	return c
}

// poke says the WAL grew; it never blocks.
func (c *checkpointer) poke() {
	select {
	case c.wake <- struct{}{}:
	default:
	}
}

func (c *checkpointer) loop() {
	defer close(c.done)
	for {
		select {
		case <-c.quit:
			return
		case <-c.wake:
		}
		select {
		case <-c.quit:
			return
		case <-time.After(checkpointDelay):
		}
		if c.checkpoint(c.conn, "PASSIVE") >= checkpointRestartFrames {
			c.catchUp.Store(true)
		}
	}
}

// writerIdle is called by the writer between two groups of writes, on
// the write connection (one connection, not in a transaction).
func (c *checkpointer) writerIdle(conn *stdsql.DB) {
	if !c.catchUp.Swap(false) {
		return
	}
	// Every write waits while the RESTART waits for readers: bound that
	// wait. A reader that holds its snapshot longer (a stuck client) makes
	// the catch-up give up, and the next one tries again.
	ctx := context.Background()
	if _, err := conn.ExecContext(ctx, fmt.Sprintf("PRAGMA busy_timeout = %d", checkpointCatchUpWait.Milliseconds())); err != nil {
		c.log.Warn("SQLite WAL catch-up skipped", "error", err)
		return
	}
	c.checkpoint(conn, "RESTART")
	if _, err := conn.ExecContext(ctx, fmt.Sprintf("PRAGMA busy_timeout = %d", sqliteBusyTimeout.Milliseconds())); err != nil {
		c.log.Error("cannot restore the SQLite busy timeout of the write connection", "error", err)
	}
}

// checkpoint runs one checkpoint of the given mode on conn and returns the
// WAL's length in frames as it was.
func (c *checkpointer) checkpoint(conn *stdsql.DB, mode string) int64 {
	var busy, frames, copied int64
	err := conn.QueryRowContext(context.Background(), "PRAGMA wal_checkpoint("+mode+")").Scan(&busy, &frames, &copied)
	if err != nil {
		c.log.Warn("SQLite WAL checkpoint failed; retrying after the next write", "mode", mode, "error", err)
		return 0
	}
	return frames
}

// close stops the checkpointer; SQLite checkpoints once more when the last
// connection closes. Closing again is harmless.
func (c *checkpointer) close() error {
	c.closeOnce.Do(func() {
		close(c.quit)
		<-c.done
		c.closeErr = c.conn.Close()
	})
	return c.closeErr
}
