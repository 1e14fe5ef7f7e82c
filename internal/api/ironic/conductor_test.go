package ironic

import (
	"context"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/gophercloud/gophercloud/v2"
	"github.com/gophercloud/gophercloud/v2/openstack/baremetal/v1/allocations"
	"github.com/gophercloud/gophercloud/v2/openstack/baremetal/v1/nodes"
	"github.com/gophercloud/gophercloud/v2/openstack/baremetal/v1/ports"

	"github.com/ferrometal/ferro/internal/conductor"
	"github.com/ferrometal/ferro/internal/driver/fake"
	"github.com/ferrometal/ferro/internal/driver/network"
	"github.com/ferrometal/ferro/internal/store/sql"
)

// realConductorClient serves the API with ferro's conductor and fake
// drivers over SQLite, as `ferro serve` wires them.
func realConductorClient(t *testing.T) (*gophercloud.ServiceClient, *sql.DB) {
	t.Helper()
	db := testStore(t)
	reg := testRegistry()
	fake.Register(reg)
	reg.RegisterNetwork("noop", network.Noop{})
	// [conductor]'s defaults.
	cond := conductor.New(conductor.Options{Store: db, Registry: reg, Host: "conductor-under-test", Workers: 100,
		PowerTimeout: time.Minute, HeartbeatInterval: 10 * time.Second, StatusCheckPeriod: time.Minute,
		CheckProvisionStateInterval: time.Minute, HeartbeatTimeout: time.Minute, InspectWaitTimeout: 30 * time.Minute})
	if err := cond.Start(t.Context()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { // after the server's, which gopherClient registers later
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := cond.Stop(ctx); err != nil {
			t.Errorf("stop conductor: %v", err)
		}
	})
	return gopherClient(t, New(Options{Store: db, Conductor: cond, MaxLimit: 1000, HeartbeatTimeout: time.Minute, Host: "conductor-under-test"})), db
}

// waitState polls a node until it reaches a provision state and its lock
// is released, as a client waits before the next action.
func waitState(t *testing.T, client *gophercloud.ServiceClient, db *sql.DB, id, want string) *nodes.Node {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		n, err := nodes.Get(t.Context(), client, id).Extract()
		if err != nil {
			t.Fatal(err)
		}
		stored, err := db.GetNode(t.Context(), id)
		if err != nil {
			t.Fatal(err)
		}
		if n.ProvisionState == want && n.TargetProvisionState == "" && stored.Reservation == "" {
			return n
		}
		if time.Now().After(deadline) {
			t.Fatalf("node %s stuck in %s (target %s, last_error %q), want %s", id, n.ProvisionState, n.TargetProvisionState, n.LastError, want)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func TestRealConductor_ManageInspectProvideAllocate(t *testing.T) {
	client, db := realConductorClient(t)
	ctx := t.Context()
	n, err := nodes.Create(ctx, client, nodes.CreateOpts{Name: "real-1", Driver: "fake-hardware", ResourceClass: "gold"}).Extract()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ports.Create(ctx, client, ports.CreateOpts{NodeUUID: n.UUID, Address: "52:54:00:20:00:01"}).Extract(); err != nil {
		t.Fatal(err)
	}
	for _, step := range []struct {
		target nodes.TargetProvisionState
		state  string
	}{{nodes.TargetManage, "manageable"}, {nodes.TargetInspect, "manageable"}, {nodes.TargetProvide, "available"}} {
		if err := nodes.ChangeProvisionState(ctx, client, n.UUID, nodes.ProvisionStateOpts{Target: step.target}).ExtractErr(); err != nil {
			t.Fatalf("%s: %v", step.target, err)
		}
		waitState(t, client, db, n.UUID, step.state)
	}
	a, err := allocations.Create(ctx, client, allocations.CreateOpts{ResourceClass: "gold"}).Extract()
	if err != nil {
		t.Fatal(err)
	}
	if a.State != "allocating" {
		t.Errorf("new allocation answered %q, want allocating as Ironic", a.State)
	}
	a = waitAllocation(t, client, a.UUID)
	if a.State != "active" || a.NodeUUID != n.UUID {
		t.Fatalf("allocation %+v", a)
	}
	got, _ := nodes.Get(ctx, client, n.UUID).Extract()
	if got.AllocationUUID != a.UUID || got.InstanceUUID != a.UUID {
		t.Errorf("node allocation %q instance %q", got.AllocationUUID, got.InstanceUUID)
	}
	if err := allocations.Delete(ctx, client, a.UUID).ExtractErr(); err != nil {
		t.Fatal(err)
	}
	got, _ = nodes.Get(ctx, client, n.UUID).Extract()
	if got.AllocationUUID != "" || got.InstanceUUID != "" {
		t.Errorf("after delete: allocation %q instance %q", got.AllocationUUID, got.InstanceUUID)
	}
	stored, err := db.GetNode(ctx, n.UUID)
	if err != nil || stored.Reservation != "" {
		t.Errorf("lock left behind: %q %v", stored.Reservation, err)
	}
}

func TestRealConductor_ParallelRequestsOnOneNode(t *testing.T) {
	client, db := realConductorClient(t)
	ctx := t.Context()
	n, err := nodes.Create(ctx, client, nodes.CreateOpts{Name: "busy", Driver: "fake-hardware"}).Extract()
	if err != nil {
		t.Fatal(err)
	}
	const parallel = 30
	var wg sync.WaitGroup
	start := make(chan struct{})
	codes := make(chan int, parallel)
	for i := range parallel {
		wg.Go(func() {
			<-start
			var err error
			if i%2 == 0 {
				err = nodes.ChangeProvisionState(ctx, client, n.UUID, nodes.ProvisionStateOpts{Target: nodes.TargetManage}).ExtractErr()
			} else {
				_, err = nodes.Update(ctx, client, n.UUID, nodes.UpdateOpts{
					nodes.UpdateOperation{Op: nodes.AddOp, Path: "/extra/k", Value: "v"},
				}).Extract()
			}
			var ue gophercloud.ErrUnexpectedResponseCode
			switch {
			case err == nil:
				codes <- 200
			case errorsAs(err, &ue):
				codes <- ue.Actual
			default:
				t.Errorf("request: %v", err)
			}
		})
	}
	close(start)
	wg.Wait()
	close(codes)
	count := map[int]int{}
	for c := range codes {
		count[c]++
	}
	for c := range count {
		if c != 200 && c != 409 && c != 400 {
			t.Errorf("unexpected status %d (%v)", c, count)
		}
	}
	if count[200] == 0 {
		t.Errorf("no request succeeded: %v", count)
	}
	waitState(t, client, db, n.UUID, "manageable")
	stored, err := db.GetNode(ctx, n.UUID)
	if err != nil || stored.Reservation != "" {
		t.Errorf("lock left behind: %q %v", stored.Reservation, err)
	}
}

func errorsAs(err error, target *gophercloud.ErrUnexpectedResponseCode) bool {
	if e, ok := err.(gophercloud.ErrUnexpectedResponseCode); ok {
		*target = e
		return true
	}
	type coder interface{ GetStatusCode() int }
	if c, ok := err.(coder); ok {
		target.Actual = c.GetStatusCode()
		return true
	}
	return false
}

// The deployment verbs run with the fake deploy and rescue interfaces, as
// Ironic's state machine has them; a node with the direct deploy interface
// is refused with nothing changed.
func TestRealConductor_FakeDeployRescueUndeploy(t *testing.T) {
	client, db := realConductorClient(t)
	ctx := t.Context()
	n, err := nodes.Create(ctx, client, nodes.CreateOpts{Name: "deploy-me", Driver: "fake-hardware",
		DeployInterface: "fake", RescueInterface: "fake"}).Extract()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := nodes.Update(ctx, client, n.UUID, nodes.UpdateOpts{nodes.UpdateOperation{
		Op: nodes.AddOp, Path: "/instance_uuid", Value: "7b2a7f8e-4c1d-4a55-9c1e-6f0d2b6c9a01",
	}}).Extract(); err != nil {
		t.Fatal(err)
	}
	direct, err := nodes.Create(ctx, client, nodes.CreateOpts{Name: "direct", Driver: "fake-hardware", DeployInterface: "direct"}).Extract()
	if err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{n.UUID, direct.UUID} {
		// Each verb runs in the background: wait for it, as a client must
		// before the next one (the node is locked until then).
		for _, step := range []struct {
			target nodes.TargetProvisionState
			state  string
		}{{nodes.TargetManage, "manageable"}, {nodes.TargetProvide, "available"}} {
			if err := nodes.ChangeProvisionState(ctx, client, id, nodes.ProvisionStateOpts{Target: step.target}).ExtractErr(); err != nil {
				t.Fatalf("%s: %v", step.target, err)
			}
			waitState(t, client, db, id, step.state)
		}
	}
	steps := []struct {
		opts  nodes.ProvisionStateOpts
		state string
	}{
		{nodes.ProvisionStateOpts{Target: nodes.TargetActive, ConfigDrive: "H4sI"}, "active"},
		{nodes.ProvisionStateOpts{Target: nodes.TargetRescue, RescuePassword: "s3cret"}, "rescue"},
		{nodes.ProvisionStateOpts{Target: nodes.TargetUnrescue}, "active"},
		{nodes.ProvisionStateOpts{Target: nodes.TargetRebuild}, "active"},
	}
	for _, step := range steps {
		if err := nodes.ChangeProvisionState(ctx, client, n.UUID, step.opts).ExtractErr(); err != nil {
			t.Fatalf("%s: %v", step.opts.Target, err)
		}
		waitState(t, client, db, n.UUID, step.state)
	}
	// A protected node is neither rebuilt nor undeployed (403).
	if _, err := nodes.Update(ctx, client, n.UUID, nodes.UpdateOpts{nodes.UpdateOperation{
		Op: nodes.ReplaceOp, Path: "/protected", Value: true,
	}}).Extract(); err != nil {
		t.Fatal(err)
	}
	for _, target := range []nodes.TargetProvisionState{nodes.TargetRebuild, nodes.TargetDeleted} {
		err := nodes.ChangeProvisionState(ctx, client, n.UUID, nodes.ProvisionStateOpts{Target: target}).ExtractErr()
		if !gophercloud.ResponseCodeIs(err, http.StatusForbidden) {
			t.Errorf("%s on a protected node: %v, want 403", target, err)
		}
	}
	if _, err := nodes.Update(ctx, client, n.UUID, nodes.UpdateOpts{nodes.UpdateOperation{
		Op: nodes.ReplaceOp, Path: "/protected", Value: false,
	}}).Extract(); err != nil {
		t.Fatal(err)
	}
	if err := nodes.ChangeProvisionState(ctx, client, n.UUID, nodes.ProvisionStateOpts{Target: nodes.TargetDeleted}).ExtractErr(); err != nil {
		t.Fatal(err)
	}
	waitState(t, client, db, n.UUID, "available")
	got, err := nodes.Get(ctx, client, n.UUID).Extract()
	if err != nil {
		t.Fatal(err)
	}
	if got.InstanceUUID != "" || len(got.InstanceInfo) != 0 {
		t.Errorf("after deleted: instance_uuid %q, instance_info %v; Ironic's tear down clears both", got.InstanceUUID, got.InstanceInfo)
	}
	err = nodes.ChangeProvisionState(ctx, client, n.UUID, nodes.ProvisionStateOpts{Target: nodes.TargetRescue}).ExtractErr()
	if !gophercloud.ResponseCodeIs(err, http.StatusBadRequest) {
		t.Errorf("rescue from available: %v, want 400", err)
	}
	err = nodes.ChangeProvisionState(ctx, client, direct.UUID, nodes.ProvisionStateOpts{Target: nodes.TargetActive}).ExtractErr()
	if !gophercloud.ResponseCodeIs(err, http.StatusBadRequest) {
		t.Errorf("active with the direct deploy interface: %v, want 400", err)
	}
	if got, _ := nodes.Get(ctx, client, direct.UUID).Extract(); got.ProvisionState != "available" {
		t.Errorf("refused deploy left the node %q", got.ProvisionState)
	}
}

// waitAllocation polls an allocation until a conductor worker has finished
// it (active or error).
func waitAllocation(t *testing.T, client *gophercloud.ServiceClient, id string) *allocations.Allocation {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		a, err := allocations.Get(t.Context(), client, id).Extract()
		if err != nil {
			t.Fatal(err)
		}
		if a.State != "allocating" {
			return a
		}
		if time.Now().After(deadline) {
			t.Fatalf("allocation %s still allocating after 20 s", id)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// Manual cleaning through gophercloud on the real conductor: manageable →
// cleaning → manageable with the fake deploy and BIOS interfaces; a step the
// interfaces do not offer ends in clean failed with Ironic's last_error;
// bad input and the direct deploy interface leave the node as it was.
func TestRealConductor_ManualClean(t *testing.T) {
	client, db := realConductorClient(t)
	ctx := t.Context()
	n, err := nodes.Create(ctx, client, nodes.CreateOpts{Name: "clean-me", Driver: "fake-hardware",
		DeployInterface: "fake", BIOSInterface: "fake"}).Extract()
	if err != nil {
		t.Fatal(err)
	}
	direct, err := nodes.Create(ctx, client, nodes.CreateOpts{Name: "direct-clean", Driver: "fake-hardware", DeployInterface: "direct"}).Extract()
	if err != nil {
		t.Fatal(err)
	}
	client.Microversion = "1.15" // manual cleaning's first version
	for _, id := range []string{n.UUID, direct.UUID} {
		if err := nodes.ChangeProvisionState(ctx, client, id, nodes.ProvisionStateOpts{Target: nodes.TargetManage}).ExtractErr(); err != nil {
			t.Fatal(err)
		}
		waitState(t, client, db, id, "manageable")
	}
	clean := func(id string, steps ...nodes.CleanStep) error {
		return nodes.ChangeProvisionState(ctx, client, id, nodes.ProvisionStateOpts{Target: nodes.TargetClean, CleanSteps: steps}).ExtractErr()
	}
	if err := clean(n.UUID, nodes.CleanStep{Interface: nodes.InterfaceBIOS, Step: "factory_reset"},
		nodes.CleanStep{Interface: nodes.InterfaceBIOS, Step: "apply_configuration", Args: map[string]any{"settings": []any{}}}); err != nil {
		t.Fatal(err)
	}
	if got := waitState(t, client, db, n.UUID, "manageable"); got.LastError != "" {
		t.Errorf("after manual clean: last_error %q", got.LastError)
	}

	for _, tc := range []struct {
		name   string
		id     string
		steps  []nodes.CleanStep
		status int
	}{
		{"no steps", n.UUID, nil, http.StatusBadRequest},
		{"direct deploy", direct.UUID, []nodes.CleanStep{{Interface: nodes.InterfaceBIOS, Step: "factory_reset"}}, http.StatusBadRequest},
	} {
		if err := clean(tc.id, tc.steps...); !gophercloud.ResponseCodeIs(err, tc.status) {
			t.Errorf("%s: %v, want %d", tc.name, err, tc.status)
		}
		if got, _ := nodes.Get(ctx, client, tc.id).Extract(); got.ProvisionState != "manageable" {
			t.Errorf("%s: refused clean left the node %q", tc.name, got.ProvisionState)
		}
	}

	if err := clean(n.UUID, nodes.CleanStep{Interface: nodes.InterfaceDeploy, Step: "erase_devices"}); err != nil {
		t.Fatal(err)
	}
	got := waitState(t, client, db, n.UUID, "clean failed")
	want := "Cannot clean node " + n.UUID + ": node does not support this clean step: {'interface': 'deploy', 'step': 'erase_devices'}"
	if got.LastError != want {
		t.Errorf("last_error %q, want %q", got.LastError, want)
	}
	if err := nodes.ChangeProvisionState(ctx, client, n.UUID, nodes.ProvisionStateOpts{Target: nodes.TargetManage}).ExtractErr(); err != nil {
		t.Fatal(err)
	}
	waitState(t, client, db, n.UUID, "manageable")
}
