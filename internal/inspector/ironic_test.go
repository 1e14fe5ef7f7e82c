package inspector_test

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net/http/httptest"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/uuid"

	"github.com/ferrometal/ferro/internal/api/ironic"
	"github.com/ferrometal/ferro/internal/baremetal"
	"github.com/ferrometal/ferro/internal/conductor"
	"github.com/ferrometal/ferro/internal/driver"
	"github.com/ferrometal/ferro/internal/driver/fake"
	"github.com/ferrometal/ferro/internal/driver/network"
	"github.com/ferrometal/ferro/internal/inspection/plan"
	"github.com/ferrometal/ferro/internal/inspector"
	"github.com/ferrometal/ferro/internal/store"
	sqlstore "github.com/ferrometal/ferro/internal/store/sql"
)

// ironicEnv is ferro's bare metal API (SQLite, the real conductor with
// fake-hardware) behind an httptest.Server, for the HTTP client.
func ironicEnv(t *testing.T) (store.Store, *inspector.HTTPBareMetal) {
	t.Helper()
	ctx := context.Background()
	db, err := sqlstore.Open(ctx, "sqlite://"+filepath.Join(t.TempDir(), "ferro.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	types := []driver.HardwareType{fake.HardwareType}
	reg := driver.NewRegistry(types, driver.EnableAll(types))
	fake.Register(reg)
	reg.RegisterNetwork("noop", network.Noop{})
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	cond := conductor.New(conductor.Options{Store: db, Registry: reg, Log: log, Host: "c1", Workers: 100,
		PowerTimeout: time.Minute, HeartbeatTimeout: time.Minute, InspectWaitTimeout: 30 * time.Minute})
	if err := cond.Start(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		cond.Stop(ctx)
	})
	srv := httptest.NewServer(ironic.New(ironic.Options{Store: db, Conductor: cond, Log: log, MaxLimit: 1000, HeartbeatTimeout: time.Minute, Host: "c1"}))
	t.Cleanup(srv.Close)
	bm, err := inspector.NewHTTPBareMetal(inspector.HTTPOptions{Endpoint: srv.URL})
	if err != nil {
		t.Fatal(err)
	}
	return db, bm
}

func TestHTTPBareMetal_AgainstFerroAPI(t *testing.T) {
	db, bm := ironicEnv(t)
	ctx := context.Background()
	ifs := map[string]string{}
	for _, k := range driver.Kinds {
		ifs[k] = "fake"
	}
	ifs["network"] = "noop"
	n := &baremetal.Node{UUID: uuid.NewString(), Name: "n1", Driver: "fake-hardware", ProvisionState: "inspect wait",
		Interfaces: ifs, DriverInfo: baremetal.JSON{"ipmi_address": "192.0.2.10"}, DriverInternalInfo: baremetal.JSON{},
		Properties: baremetal.JSON{"cpus": "1", "memory_mb": 1024}, Extra: baremetal.JSON{}, InstanceInfo: baremetal.JSON{}}
	if err := db.CreateNode(ctx, n); err != nil {
		t.Fatal(err)
	}
	p1 := &baremetal.Port{UUID: uuid.NewString(), Address: "52:54:00:00:00:01", NodeUUID: n.UUID, PXEEnabled: true,
		LocalLinkConnection: baremetal.JSON{"port_id": "Te1/1"}, Extra: baremetal.JSON{}, InternalInfo: baremetal.JSON{}}
	if err := db.CreatePort(ctx, p1); err != nil {
		t.Fatal(err)
	}

	got, ports, err := bm.Node(ctx, "n1")
	if err != nil {
		t.Fatalf("node by name: %v", err)
	}
	if got.UUID != n.UUID || got.ProvisionState != "inspect wait" || got.DriverInfo["ipmi_address"] != "192.0.2.10" ||
		got.Interfaces["boot"] != "fake" || got.Interfaces["network"] != "noop" {
		t.Errorf("node %+v", got)
	}
	if len(ports) != 1 || ports[0].UUID != p1.UUID || ports[0].Address != p1.Address || ports[0].LocalLinkConnection["port_id"] != "Te1/1" {
		t.Errorf("ports %+v", ports)
	}
	if _, _, err := bm.Node(ctx, uuid.NewString()); !errors.Is(err, inspector.ErrNodeNotFound) {
		t.Errorf("unknown node: %v", err)
	}

	ch := plan.Changes{
		CreatePorts: []plan.PortCreate{{Address: "52:54:00:00:00:02", PXEEnabled: false,
			LocalLinkConnection: map[string]any{"switch_id": "00:11:22:33:44:55", "port_id": "Eth2"}}},
		PatchPorts: []plan.PortPatch{{PortRef: plan.PortRef{UUID: p1.UUID, Address: p1.Address},
			Ops: []plan.PatchOp{{Op: "add", Path: "/local_link_connection/switch_id", Value: "00:11:22:33:44:55"}}}},
		NodePatch: []plan.PatchOp{{Op: "add", Path: "/properties/cpus", Value: "32"},
			{Op: "add", Path: "/properties/capabilities", Value: "cpu_vt:true"}},
		AddTraits: []string{"CUSTOM_INSPECTED"},
	}
	// The node is locked by a conductor task for a moment: the API answers
	// 409 and the client tries again.
	if _, err := db.ReserveNode(ctx, n.UUID, "other-conductor"); err != nil {
		t.Fatal(err)
	}
	go func() {
		time.Sleep(100 * time.Millisecond)
		db.ReleaseNode(context.Background(), n.UUID, "other-conductor")
	}()
	if err := bm.Apply(ctx, n.UUID, ch); err != nil {
		t.Fatalf("apply: %v", err)
	}
	after, err := db.GetNode(ctx, n.UUID)
	if err != nil {
		t.Fatal(err)
	}
	if after.Properties["cpus"] != "32" || after.Properties["capabilities"] != "cpu_vt:true" || !slices.Contains(after.Traits, "CUSTOM_INSPECTED") {
		t.Errorf("node after apply: properties %v traits %v", after.Properties, after.Traits)
	}
	// JSON number types survive the round trip through the API.
	if v, ok := after.Properties["memory_mb"]; !ok || v == "1024" {
		t.Errorf("memory_mb %#v", v)
	}
	all, err := db.ListPorts(ctx, store.PortFilter{NodeUUID: n.UUID})
	if err != nil {
		t.Fatal(err)
	}
	llc := map[string]baremetal.JSON{}
	for _, p := range all {
		llc[p.Address] = p.LocalLinkConnection
	}
	want := map[string]baremetal.JSON{
		"52:54:00:00:00:01": {"port_id": "Te1/1", "switch_id": "00:11:22:33:44:55"},
		"52:54:00:00:00:02": {"port_id": "Eth2", "switch_id": "00:11:22:33:44:55"},
	}
	if diff := cmp.Diff(want, llc); diff != "" {
		t.Errorf("local_link_connection by port (-want +got):\n%s", diff)
	}

	if err := bm.SetBootDevice(ctx, n.UUID, baremetal.BootDevicePXE, false); err != nil {
		t.Errorf("set boot device: %v", err)
	}
	if err := bm.SetPowerState(ctx, n.UUID, baremetal.PowerOn); err != nil {
		t.Errorf("set power state: %v", err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		cur, err := db.GetNode(ctx, n.UUID)
		if err != nil {
			t.Fatal(err)
		}
		if cur.PowerState == baremetal.PowerOn && cur.Reservation == "" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("power state %q", cur.PowerState)
		}
		time.Sleep(5 * time.Millisecond)
	}
}
