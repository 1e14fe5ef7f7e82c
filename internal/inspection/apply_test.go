package inspection

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/ferrometal/ferro/internal/baremetal"
	"github.com/ferrometal/ferro/internal/inspection/plan"
	"github.com/ferrometal/ferro/internal/store"
	sqlstore "github.com/ferrometal/ferro/internal/store/sql"
)

func applyDB(t *testing.T) *sqlstore.DB {
	t.Helper()
	db, err := sqlstore.Open(context.Background(), "sqlite://"+filepath.Join(t.TempDir(), "f.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

func TestApply_SkipsMACOfAnotherNode(t *testing.T) {
	ctx := context.Background()
	db := applyDB(t)
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
	if err := db.InTx(ctx, func(tx store.Store) error { return Apply(ctx, tx, b, ch, ApplyOptions{}) }); err != nil {
		t.Fatalf("Apply: %v", err)
	}
	p, err := db.GetPortByAddress(ctx, "52:54:00:00:00:01")
	if err != nil || p.NodeUUID != a.UUID {
		t.Errorf("taken MAC now on %v (%v), want node A", p, err)
	}
	if p, err := db.GetPortByAddress(ctx, "52:54:00:00:00:02"); err != nil || p.NodeUUID != b.UUID {
		t.Errorf("free MAC: port %v, %v; want created on node B", p, err)
	}
}

// A removed key is gone from the stored node (decoding the patched
// document into the old value would have kept it), and a change of the
// driver resets the interfaces to the new type's, as a PATCH with
// reset_interfaces does; without the registry's answer it is refused and
// nothing is written.
func TestApply_RemovesKeysAndResetsInterfacesWithTheDriver(t *testing.T) {
	ctx := context.Background()
	db := applyDB(t)
	n := &baremetal.Node{UUID: "0f0b8a3e-8d0c-4f5e-9a53-1c7f2a9d0a03", Driver: "fake-hardware", ProvisionState: "enroll",
		Properties: baremetal.JSON{"cpus": 4, "stale": "x"}, Interfaces: map[string]string{"inspect": "agent", "power": "fake"}}
	if err := db.CreateNode(ctx, n); err != nil {
		t.Fatal(err)
	}
	ch := plan.Changes{NodePatch: []plan.PatchOp{
		{Op: "remove", Path: "/properties/stale"},
		{Op: "add", Path: "/driver", Value: "ipmi"},
		{Op: "add", Path: "/driver_info/ipmi_address", Value: "192.0.2.5"},
	}, ResetInterfaces: true}
	refused := *n
	err := db.InTx(ctx, func(tx store.Store) error { return Apply(ctx, tx, &refused, ch, ApplyOptions{}) })
	if err == nil {
		t.Fatal("a change of the driver without the registry was applied")
	}
	if got, _ := db.GetNode(ctx, n.UUID); got.Driver != "fake-hardware" {
		t.Errorf("refused plan wrote the node: driver %q", got.Driver)
	}
	ipmi := map[string]string{"inspect": "agent", "power": "ipmitool"}
	err = db.InTx(ctx, func(tx store.Store) error {
		return Apply(ctx, tx, n, ch, ApplyOptions{Interfaces: func(d string) (map[string]string, error) {
			if d != "ipmi" {
				t.Errorf("interfaces of %q asked", d)
			}
			return ipmi, nil
		}})
	})
	if err != nil {
		t.Fatal(err)
	}
	got, err := db.GetNode(ctx, n.UUID)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := got.Properties["stale"]; ok {
		t.Errorf("properties = %v: the removed key is still there", got.Properties)
	}
	if got.Driver != "ipmi" || got.DriverInfo["ipmi_address"] != "192.0.2.5" {
		t.Errorf("driver %q, driver_info %v", got.Driver, got.DriverInfo)
	}
	if diff := cmp.Diff(ipmi, got.Interfaces); diff != "" {
		t.Errorf("interfaces (-want +got):\n%s", diff)
	}
}
