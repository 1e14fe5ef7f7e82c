package inspector

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/ferrometal/ferro/internal/baremetal"
	"github.com/ferrometal/ferro/internal/inspection/plan"
	"github.com/ferrometal/ferro/internal/store"
	sqlstore "github.com/ferrometal/ferro/internal/store/sql"
)

func TestApplyChanges_SkipsMACOfAnotherNode(t *testing.T) {
	ctx := context.Background()
	db, err := sqlstore.Open(ctx, "sqlite://"+filepath.Join(t.TempDir(), "f.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	a := &baremetal.Node{UUID: "0f0b8a3e-8d0c-4f5e-9a53-1c7f2a9d0a01", Driver: "fake-hardware", ProvisionState: "manageable"}
	b := &baremetal.Node{UUID: "0f0b8a3e-8d0c-4f5e-9a53-1c7f2a9d0a02", Driver: "fake-hardware", ProvisionState: "inspect wait"}
	for _, n := range []*baremetal.Node{a, b} {
		if err := db.CreateNode(ctx, n); err != nil {
			t.Fatal(err)
		}
	}
	taken := &baremetal.Port{UUID: "0f0b8a3e-8d0c-4f5e-9a53-1c7f2a9d0b01", Address: "52:54:00:00:00:01", NodeUUID: a.UUID}
	if err := db.CreatePort(ctx, taken); err != nil {
		t.Fatal(err)
	}
	ch := plan.Changes{CreatePorts: []plan.PortCreate{{Address: "52:54:00:00:00:01", PXEEnabled: true}, {Address: "52:54:00:00:00:02", PXEEnabled: true}}}
	if err := db.InTx(ctx, func(tx store.Store) error { return applyChanges(ctx, tx, b, ch) }); err != nil {
		t.Fatalf("applyChanges: %v", err)
	}
	p, err := db.GetPortByAddress(ctx, "52:54:00:00:00:01")
	if err != nil || p.NodeUUID != a.UUID {
		t.Errorf("taken MAC now on %v (%v), want node A", p, err)
	}
	if p, err := db.GetPortByAddress(ctx, "52:54:00:00:00:02"); err != nil || p.NodeUUID != b.UUID {
		t.Errorf("free MAC: port %v, %v; want created on node B", p, err)
	}
}
