package sql

import (
	"context"
	"crypto/rand"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ferrometal/ferro/internal/store"
)

// The write connection never checkpoints (wal_autocheckpoint 0): the
// background checkpointer must fold the WAL into the database file, and
// under writes that never pause it must still let the WAL start over
// rather than grow with everything written.
func TestCheckpointer_KeepsTheWALShortUnderSteadyWrites(t *testing.T) {
	dir := t.TempDir()
	db, err := Open(context.Background(), "sqlite://"+dir+"/ferro.db")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	ctx := context.Background()
	size := func(name string) int64 {
		fi, err := os.Stat(dir + "/" + name)
		if err != nil {
			t.Fatal(err)
		}
		return fi.Size()
	}
	before := size("ferro.db")
	noise := make([]byte, 16<<10)
	rand.Read(noise) // incompressible, so every byte reaches the WAL
	// Writers until the WAL started over twice (the test ends there), or
	// for two minutes on a machine too busy to get there…
	var written atomic.Int64
	var wg sync.WaitGroup
	var stop atomic.Value
	stop.Store(time.Now().Add(2 * time.Minute))
	for w := range 8 {
		wg.Go(func() {
			for i := 0; time.Now().Before(stop.Load().(time.Time)); i++ {
				// A transaction that takes a moment, as the inspector's do:
				// the writer always has the next one queued.
				err := db.InTx(ctx, func(tx store.Store) error {
					time.Sleep(200 * time.Microsecond)
					return tx.(*DB).saveIntrospectionData(ctx, fmt.Sprint("n", w, "-", i%64), "raw", noise)
				})
				if err != nil {
					t.Error(err)
					return
				}
				written.Add(int64(len(noise)))
			}
		})
	}
	// and readers, whose snapshots keep a PASSIVE checkpoint from copying
	// the WAL's tail.
	for range 4 {
		wg.Go(func() {
			for time.Now().Before(stop.Load().(time.Time)) {
				if _, err := db.GetIntrospectionData(ctx, "n0-0", "raw"); err != nil && !errors.Is(err, store.ErrNotFound) {
					t.Error(err)
					return
				}
			}
		})
	}
	// The WAL header's checkpoint sequence number goes up each time the
	// WAL starts over: wait to see it twice.
	seqs := map[uint32]bool{}
	for len(seqs) < 3 && time.Now().Before(stop.Load().(time.Time)) {
		if h, err := os.ReadFile(dir + "/ferro.db-wal"); err == nil && len(h) >= 16 {
			seqs[binary.BigEndian.Uint32(h[12:16])] = true
		}
		time.Sleep(5 * time.Millisecond)
	}
	stop.Store(time.Now())
	wg.Wait()
	if len(seqs) < 3 {
		t.Errorf("the WAL started over %d times in two minutes of steady writes (%d bytes; WAL file %d bytes), want it to start over every few checkpoints",
			max(len(seqs)-1, 0), written.Load(), size("ferro.db-wal"))
	}
	deadline := time.Now().Add(time.Minute)
	for size("ferro.db") < before+64*16<<10 {
		if time.Now().After(deadline) {
			t.Fatalf("database file is %d bytes (%d before) a minute after the writes: the WAL was not checkpointed", size("ferro.db"), before)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// A reader that keeps its snapshot (a stuck client) must not hold writes
// up for the busy timeout when the writer catches up with the checkpointer.
func TestCheckpointer_StuckReaderDoesNotStallWrites(t *testing.T) {
	dir := t.TempDir()
	db, err := Open(context.Background(), "sqlite://"+dir+"/ferro.db")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	ctx := context.Background()
	noise := make([]byte, 64<<10)
	rand.Read(noise)
	// The reader's snapshot includes frames not yet checkpointed, so it
	// pins the WAL: the WAL cannot start over while the reader lives.
	if err := db.saveIntrospectionData(ctx, "n0", "raw", noise); err != nil {
		t.Fatal(err)
	}
	reader, err := db.read.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer reader.Rollback()
	var n int
	if err := reader.QueryRowContext(ctx, "SELECT count(*) FROM introspection_data").Scan(&n); err != nil {
		t.Fatal(err)
	}
	// Past checkpointRestartFrames, then writes through a few checkpoint
	// periods: each catch-up meets the stuck reader.
	var slowest time.Duration
	deadline := time.Now().Add(3 * time.Second)
	for i := 0; time.Now().Before(deadline); i++ {
		rand.Read(noise) // SQLite skips rewriting identical content
		start := time.Now()
		if err := db.saveIntrospectionData(ctx, fmt.Sprint("n", i%32), "raw", noise); err != nil {
			t.Fatal(err)
		}
		slowest = max(slowest, time.Since(start))
	}
	if slowest > 2*time.Second {
		t.Errorf("a write took %v while a reader held its snapshot: the catch-up waited the busy timeout", slowest)
	}
	var timeout int
	if err := db.write.QueryRowContext(ctx, "PRAGMA busy_timeout").Scan(&timeout); err != nil || timeout != int(sqliteBusyTimeout.Milliseconds()) {
		t.Errorf("write connection busy_timeout = %d, %v; want it restored to %d", timeout, err, sqliteBusyTimeout.Milliseconds())
	}
}
