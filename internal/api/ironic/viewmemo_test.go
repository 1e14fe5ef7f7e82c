package ironic

import (
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ferrometal/ferro/internal/store"
	"github.com/ferrometal/ferro/internal/store/sql"
)

// TestNodeList_TwoServersOneStore: two API processes on one database
// (each its own store handle, its own cache of decoded nodes and kept
// views): a write through one is in the other's next list, however often
// that one listed the node before — a PATCH, a lock taken and released,
// a conductor joining the ring (the one field of a kept view rendered
// anew).
func TestNodeList_TwoServersOneStore(t *testing.T) {
	path := filepath.Join(t.TempDir(), "ferro.db")
	open := func() *env {
		db, err := sql.Open(t.Context(), "sqlite://"+path)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { db.Close() })
		fc := newFakeConductor(db, testRegistry())
		o := Options{Store: db, Conductor: fc, MaxLimit: 1000, PublicEndpoint: "http://ferro.test:6385",
			HeartbeatTimeout: time.Minute, Host: "test-host", DefaultResourceClass: "baremetal"}
		return &env{t: t, h: New(o), store: db, cond: fc, opts: o}
	}
	a, b := open(), open()

	created := a.do("POST", "/v1/nodes", latest, `{"driver": "fake-hardware", "extra": {"rev": 1}}`)
	if created.code != 201 {
		t.Fatalf("create: %d %s", created.code, created.body)
	}
	id := created.json(t)["uuid"].(string)
	list := func(want string) {
		t.Helper()
		for range 3 { // the first lists fill the cache, the later ones read it
			r := b.do("GET", "/v1/nodes?detail=True", latest, nil)
			if r.code != 200 || !strings.Contains(string(r.body), want) {
				t.Fatalf("list: %d, want %s in %s", r.code, want, r.body)
			}
		}
	}
	list(`"extra": {"rev": 1}`)

	if r := a.do("PATCH", "/v1/nodes/"+id, latest, `[{"op": "replace", "path": "/extra/rev", "value": 2}]`); r.code != 200 {
		t.Fatalf("patch: %d %s", r.code, r.body)
	}
	list(`"extra": {"rev": 2}`)

	if _, err := a.store.ReserveNode(t.Context(), id, "host-a"); err != nil {
		t.Fatal(err)
	}
	list(`"reservation": "host-a"`)
	if err := a.store.ReleaseNode(t.Context(), id, "host-a"); err != nil {
		t.Fatal(err)
	}
	list(`"reservation": null`)

	list(`"conductor": null`)
	if err := a.store.RegisterConductor(t.Context(), &store.Conductor{Hostname: "cond-1", Drivers: []string{"fake-hardware"}}); err != nil {
		t.Fatal(err)
	}
	b.h.(*server).conductors.Store(nil) // past the snapshot's two seconds
	list(`"conductor": "cond-1"`)
}
