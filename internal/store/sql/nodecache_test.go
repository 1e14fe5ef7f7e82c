package sql

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"

	"github.com/ferrometal/ferro/internal/baremetal"
	"github.com/ferrometal/ferro/internal/store"
)

// TestKeptNodes_SameRowSameNode: the node list hands out the same node for
// a row read unchanged, a new one once any of its columns read changed
// (the body, the reservation), and its cache stays within its bound.
func TestKeptNodes_SameRowSameNode(t *testing.T) {
	ctx := context.Background()
	db, err := Open(ctx, "sqlite://"+filepath.Join(t.TempDir(), "ferro.db"), WithNodeCache(64<<10))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	for i := range 100 {
		n := &baremetal.Node{Name: fmt.Sprintf("n%d", i), Driver: "fake-hardware", Extra: baremetal.JSON{"i": i}}
		if err := db.CreateNode(ctx, n); err != nil {
			t.Fatal(err)
		}
	}
	kept := store.NodeFilter{KeepJSON: true, Page: store.Page{Limit: 10}}
	first, err := db.ListNodes(ctx, kept)
	if err != nil {
		t.Fatal(err)
	}
	again, err := db.ListNodes(ctx, kept)
	if err != nil {
		t.Fatal(err)
	}
	for i := range first {
		if first[i] != again[i] || first[i].Memo == nil {
			t.Fatalf("node %d read twice unchanged: %p and %p (memo %v)", i, first[i], again[i], first[i].Memo)
		}
	}
	if plain, _ := db.ListNodes(ctx, store.NodeFilter{Page: store.Page{Limit: 1}}); plain[0] == first[0] || plain[0].Memo != nil {
		t.Fatal("a list without KeepJSON got a cached node")
	}

	n, err := db.GetNode(ctx, first[0].UUID)
	if err != nil {
		t.Fatal(err)
	}
	n.Extra["i"] = "changed"
	if err := db.UpdateNode(ctx, n); err != nil {
		t.Fatal(err)
	}
	if _, err := db.ReserveNode(ctx, first[1].UUID, "me"); err != nil {
		t.Fatal(err)
	}
	after, err := db.ListNodes(ctx, kept)
	if err != nil {
		t.Fatal(err)
	}
	if after[0] == first[0] || string(after[0].Stored.Text(baremetal.StoredExtra)) != `{"i":"changed"}` {
		t.Errorf("updated node: the cached one (%s)", after[0].Stored.Text(baremetal.StoredExtra))
	}
	if after[1] == first[1] || after[1].Reservation != "me" {
		t.Errorf("reserved node: the cached one (reservation %q)", after[1].Reservation)
	}
	if after[2] != first[2] {
		t.Error("an unchanged node was decoded again")
	}

	// Reading every node, more than the bound holds, keeps it bounded.
	for range 3 {
		if _, err := db.ListNodes(ctx, store.NodeFilter{KeepJSON: true}); err != nil {
			t.Fatal(err)
		}
	}
	c := db.keptNodes
	c.mu.Lock()
	defer c.mu.Unlock()
	var used int
	for k := range c.prev {
		used += nodeCacheCost * len(k)
	}
	if used+c.used > 2*c.half || c.used > c.half {
		t.Errorf("cache holds %d + %d bytes, bound %d", used, c.used, 2*c.half)
	}
	if len(c.cur)+len(c.prev) >= 100 {
		t.Errorf("cache holds %d + %d nodes of 100 with a bound of %d bytes", len(c.cur), len(c.prev), 2*c.half)
	}
}
