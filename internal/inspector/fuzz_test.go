package inspector_test

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/ferrometal/ferro/internal/baremetal"
	"github.com/ferrometal/ferro/internal/inspector"
	"github.com/ferrometal/ferro/internal/store"
)

// rejections are the messages of reports refused before processing; such a
// report must change nothing.
var rejections = []string{
	"Invalid introspection data",
	"No lookup attributes were found",
	"Could not find a node",
	"Multiple nodes match",
	"Invalid or missing inspection token",
}

func rejected(msg string) bool {
	for _, p := range rejections {
		if strings.HasPrefix(msg, p) {
			return true
		}
	}
	return strings.Contains(msg, "is not waiting for introspection")
}

// fuzzing reports whether the test binary runs with -fuzz.
func fuzzing() bool {
	f := flag.Lookup("test.fuzz")
	return f != nil && f.Value.String() != ""
}

// writeCounter is a store that counts the writes made through it,
// transactions included.
type writeCounter struct {
	store.Store
	log *writeLog
}

type writeLog struct {
	mu     sync.Mutex
	writes []string
}

func newWriteCounter(s store.Store) *writeCounter { return &writeCounter{Store: s, log: &writeLog{}} }

func (w *writeCounter) count(what string) {
	w.log.mu.Lock()
	w.log.writes = append(w.log.writes, what)
	w.log.mu.Unlock()
}

func (w *writeCounter) snapshot() []string {
	w.log.mu.Lock()
	defer w.log.mu.Unlock()
	return slices.Clone(w.log.writes)
}

// InTx counts the writes made through the transaction's store too.
func (w *writeCounter) InTx(ctx context.Context, fn func(store.Store) error) error {
	return w.Store.InTx(ctx, func(tx store.Store) error {
		return fn(&writeCounter{Store: tx, log: w.log})
	})
}

func (w *writeCounter) SaveIntrospection(ctx context.Context, in *store.Introspection, reports ...store.IntrospectionData) error {
	w.count("introspection " + in.NodeUUID + " " + in.State)
	for _, r := range reports {
		w.count(r.Kind + " data " + in.NodeUUID)
	}
	return w.Store.SaveIntrospection(ctx, in, reports...)
}

func (w *writeCounter) SaveIntrospectionFrom(ctx context.Context, in *store.Introspection, from []string, reports ...store.IntrospectionData) error {
	w.count("introspection " + in.NodeUUID + " " + in.State)
	for _, r := range reports {
		w.count(r.Kind + " data " + in.NodeUUID)
	}
	return w.Store.SaveIntrospectionFrom(ctx, in, from, reports...)
}

func (w *writeCounter) SaveInventory(ctx context.Context, inv *baremetal.Inventory) error {
	w.count("inventory " + inv.NodeUUID)
	return w.Store.SaveInventory(ctx, inv)
}

func (w *writeCounter) UpdateNode(ctx context.Context, n *baremetal.Node) error {
	w.count("node " + n.UUID)
	return w.Store.UpdateNode(ctx, n)
}

// FuzzContinue posts arbitrary reports to the service, with three nodes
// waiting for the testdata fixtures. No report may panic or fail with an
// unexpected (500) error, and a refused report writes nothing: no store
// write, no bare metal API call.
//
// Each execution costs a few SQLite statements, so give the fuzzer's
// minimisation a bound: go test -run '^$' -fuzz FuzzContinue -fuzztime 60s
// -fuzzminimizetime 10s ./internal/inspector
func FuzzContinue(f *testing.F) {
	for _, pattern := range []string{"*.json", "bad/*.json"} {
		files, err := filepath.Glob(filepath.Join("..", "..", "testdata", "ipa", pattern))
		if err != nil {
			f.Fatal(err)
		}
		for _, file := range files {
			// Every mutation of the 40-NIC report that still parses costs
			// a full processing, and minimising one would take a smoke
			// run's whole budget; it is a seed of plain test runs only.
			if fuzzing() && strings.Contains(file, "large-") {
				continue
			}
			b, err := os.ReadFile(file)
			if err != nil {
				f.Fatal(err)
			}
			f.Add(b)
		}
	}
	f.Add([]byte(`{"inventory":{"interfaces":[{"name":"eth0","mac_address":"52:54:00:12:34:56"}]},"inspection_token":"x"}`))
	f.Add([]byte(`{"inventory":{"interfaces":[],"bmc_address":"10.30.0.57"},"error":null}`))

	r := newSvcRig(f)
	counter := newWriteCounter(r.store)
	svc, err := inspector.New(options(counter, r.bm))
	if err != nil {
		f.Fatal(err)
	}
	f.Cleanup(svc.Close)
	ctx := context.Background()
	var ids []string
	for _, mac := range []string{"3c:fd:fe:11:22:30", "52:54:00:12:34:56", "3c:fd:fe:a0:00:00"} {
		n := r.node(mac)
		ids = append(ids, n.UUID)
		if err := svc.Start(ctx, n.UUID, false, ""); err != nil {
			f.Fatal(err)
		}
	}
	bareMetalCalls := func() string {
		var b strings.Builder
		for _, id := range ids {
			fmt.Fprintf(&b, "%s applied %d; ", id, r.bm.appliedTo(id))
		}
		return b.String() + strings.Join(r.bm.callLog(), "; ")
	}

	f.Fuzz(func(t *testing.T, body []byte) {
		writes, calls := counter.snapshot(), bareMetalCalls()
		_, err := svc.Continue(ctx, body, "")
		if err != nil {
			var e *inspector.Error
			if !errors.As(err, &e) {
				t.Fatalf("report failed with an internal error (a 500): %v", err)
			}
			if e.Status < 400 || e.Status > 499 {
				t.Fatalf("report refused with status %d: %v", e.Status, err)
			}
			if rejected(e.Msg) {
				if diff := cmp.Diff(writes, counter.snapshot()); diff != "" {
					t.Fatalf("refused report (%s) wrote to the store (-before +after):\n%s", e.Msg, diff)
				}
				if after := bareMetalCalls(); after != calls {
					t.Fatalf("refused report (%s) called the bare metal API:\n%s\nthen\n%s", e.Msg, calls, after)
				}
				return
			}
		}
		// Processed (successfully or not): wait for the next report again.
		for _, id := range ids {
			in, err := r.store.GetIntrospection(ctx, id)
			if err != nil {
				t.Fatal(err)
			}
			if in.State != inspector.StateWaiting {
				if err := svc.Start(ctx, id, false, ""); err != nil {
					t.Fatal(err)
				}
			}
		}
	})
}
