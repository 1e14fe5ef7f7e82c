package sql

import (
	"context"
	"errors"
	"path/filepath"
	"sync"
	"testing"

	"github.com/ferrometal/ferro/internal/baremetal"
)

func openTestSQLite(t *testing.T) *DB {
	t.Helper()
	db, err := Open(context.Background(), "sqlite://"+filepath.Join(t.TempDir(), "ferro.db"))
	if err != nil {
		t.Fatal(err)
	}
	return db
}

func TestWriter_CanceledContextWritesNothing(t *testing.T) {
	db := openTestSQLite(t)
	defer db.Close()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	n := &baremetal.Node{Name: "never"}
	if err := db.CreateNode(ctx, n); !errors.Is(err, context.Canceled) {
		t.Errorf("CreateNode with a canceled context: %v, want context.Canceled", err)
	}
	if _, err := db.GetNode(context.Background(), "never"); err == nil {
		t.Error("the canceled write was stored")
	}
}

func TestWriter_WritesAfterCloseFail(t *testing.T) {
	db := openTestSQLite(t)
	ctx := context.Background()
	var wg sync.WaitGroup
	for range 20 {
		wg.Go(func() {
			// Before or after Close, each write returns; none hangs.
			db.CreateNode(ctx, &baremetal.Node{})
		})
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	wg.Wait()
	if err := db.CreateNode(ctx, &baremetal.Node{}); err == nil {
		t.Error("CreateNode after Close succeeded")
	}
	db.Close() // closing again is harmless
}
