package ironic

import (
	"context"
	"errors"
	"hash/fnv"
	"net/http"
	"strings"
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
	return waitStateTarget(t, client, db, id, want, "")
}

// waitStateTarget is waitState for a state that keeps a target (a failed
// manual cleaning, a hold).
func waitStateTarget(t *testing.T, client *gophercloud.ServiceClient, db *sql.DB, id, want, target string) *nodes.Node {
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
		if n.ProvisionState == want && n.TargetProvisionState == target && stored.Reservation == "" {
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
	got := waitStateTarget(t, client, db, n.UUID, "clean failed", "manageable")
	want := "Cannot clean node " + n.UUID + ": node does not support this clean step: {'interface': 'deploy', 'step': 'erase_devices'}"
	if got.LastError != want {
		t.Errorf("last_error %q, want %q", got.LastError, want)
	}
	if err := nodes.ChangeProvisionState(ctx, client, n.UUID, nodes.ProvisionStateOpts{Target: nodes.TargetManage}).ExtractErr(); err != nil {
		t.Fatal(err)
	}
	waitState(t, client, db, n.UUID, "manageable")
}

// Servicing through the API with ferro's conductor, as a client sees it:
// a hold step shows service hold with the step in service_step (1.87),
// unhold (1.85) runs the rest, abort in service wait returns to active.
func TestRealConductor_ServiceHoldUnholdAbort(t *testing.T) {
	client, db := realConductorClient(t)
	ctx := t.Context()
	n, err := nodes.Create(ctx, client, nodes.CreateOpts{Name: "serve-me", Driver: "fake-hardware",
		DeployInterface: "fake", VendorInterface: "fake"}).Extract()
	if err != nil {
		t.Fatal(err)
	}
	for _, step := range []struct {
		target nodes.TargetProvisionState
		state  string
	}{{nodes.TargetManage, "manageable"}, {nodes.TargetProvide, "available"}, {nodes.TargetActive, "active"}} {
		if err := nodes.ChangeProvisionState(ctx, client, n.UUID, nodes.ProvisionStateOpts{Target: step.target}).ExtractErr(); err != nil {
			t.Fatal(err)
		}
		waitState(t, client, db, n.UUID, step.state)
	}
	service := func(steps ...nodes.ServiceStep) {
		t.Helper()
		if err := nodes.ChangeProvisionState(ctx, client, n.UUID, nodes.ProvisionStateOpts{Target: nodes.TargetService, ServiceSteps: steps}).ExtractErr(); err != nil {
			t.Fatal(err)
		}
	}
	service(nodes.ServiceStep{Interface: nodes.InterfaceDeploy, Step: "hold"},
		nodes.ServiceStep{Interface: "vendor", Step: "log_passthrough"})
	got := waitStateTarget(t, client, db, n.UUID, "service hold", "active")
	if got.ServiceStep["step"] != "hold" {
		t.Errorf("in service hold: service_step %v", got.ServiceStep)
	}
	if err := nodes.ChangeProvisionState(ctx, client, n.UUID, nodes.ProvisionStateOpts{Target: nodes.TargetUnhold}).ExtractErr(); err != nil {
		t.Fatal(err)
	}
	if got := waitState(t, client, db, n.UUID, "active"); len(got.ServiceStep) != 0 || got.LastError != "" {
		t.Errorf("after unhold: service_step %v, last_error %q", got.ServiceStep, got.LastError)
	}

	service(nodes.ServiceStep{Interface: nodes.InterfaceDeploy, Step: "wait"})
	waitStateTarget(t, client, db, n.UUID, "service wait", "active")
	if err := nodes.ChangeProvisionState(ctx, client, n.UUID, nodes.ProvisionStateOpts{Target: nodes.TargetAbort}).ExtractErr(); err != nil {
		t.Fatal(err)
	}
	got = waitState(t, client, db, n.UUID, "active")
	if want := `By request, the service operation was aborted during or after the completion of step "deploy.wait"`; got.LastError != want {
		t.Errorf("after abort: last_error %q", got.LastError)
	}
	// A wait with seconds pauses under the lock and goes on.
	service(nodes.ServiceStep{Interface: nodes.InterfaceDeploy, Step: "wait", Args: map[string]any{"seconds": 0}},
		nodes.ServiceStep{Interface: nodes.InterfacePower, Step: "power_off"})
	if got := waitState(t, client, db, n.UUID, "active"); got.PowerState != "power off" || got.LastError != "" {
		t.Errorf("after wait and power_off: power %q, last_error %q", got.PowerState, got.LastError)
	}
	// Before 1.87 the field is not shown.
	client.Microversion = "1.86"
	if got, _ := nodes.Get(ctx, client, n.UUID).Extract(); got.ServiceStep != nil {
		t.Errorf("1.86 shows service_step %v", got.ServiceStep)
	}
}

// The conductor a node view names is hashed as hash/fnv hashes it.
func TestFNV1a_SameAsHashFNV(t *testing.T) {
	for _, c := range [][2]string{{"", ""}, {"conductor-1", "1be26c0b-03f2-4d2e-ae87-c02d7f33c123"}, {"h\x00st", "é"}} {
		f := fnv.New64a()
		f.Write([]byte(c[0]))
		f.Write([]byte{0})
		f.Write([]byte(c[1]))
		if got := fnv1a(fnv1a(fnv1a(fnvOffset64, c[0]), "\x00"), c[1]); got != f.Sum64() {
			t.Errorf("%q, %q: %x, hash/fnv %x", c[0], c[1], got, f.Sum64())
		}
	}
}

// provisionRaw sends a provision request body as is at a version and
// returns the status and the faultstring of an error.
func provisionRaw(t *testing.T, client *gophercloud.ServiceClient, id, version string, body map[string]any) (int, string) {
	t.Helper()
	was := client.Microversion
	client.Microversion = version
	defer func() { client.Microversion = was }()
	r, err := client.Put(t.Context(), client.ServiceURL("nodes", id, "states", "provision"), body, nil, &gophercloud.RequestOpts{
		OkCodes: []int{http.StatusAccepted},
	})
	var e gophercloud.ErrUnexpectedResponseCode
	if err != nil && errors.As(err, &e) {
		fault, _ := resp{body: e.Body}.fault(t)["faultstring"].(string)
		return e.Actual, fault
	}
	if err != nil {
		t.Fatal(err)
	}
	return r.StatusCode, ""
}

// A deployment with deploy steps through the API with ferro's conductor:
// a hold step shows deploy hold with the step in deploy_step, unhold
// (1.85) goes to wait call-back, abort there is 406 below 1.110 and ends
// in deploy failed from 1.110, without cleaning; a wait step without
// seconds goes to wait call-back at once. Bad deploy_steps are Ironic's
// 400 (406 below 1.69) and change nothing; no deploy_steps deploys as
// before.
func TestRealConductor_DeployStepsHoldUnholdAbort(t *testing.T) {
	client, db := realConductorClient(t)
	ctx := t.Context()
	n, err := nodes.Create(ctx, client, nodes.CreateOpts{Name: "deploy-steps", Driver: "fake-hardware", DeployInterface: "fake"}).Extract()
	if err != nil {
		t.Fatal(err)
	}
	for _, step := range []struct {
		target nodes.TargetProvisionState
		state  string
	}{{nodes.TargetManage, "manageable"}, {nodes.TargetProvide, "available"}} {
		if err := nodes.ChangeProvisionState(ctx, client, n.UUID, nodes.ProvisionStateOpts{Target: step.target}).ExtractErr(); err != nil {
			t.Fatal(err)
		}
		waitState(t, client, db, n.UUID, step.state)
	}
	hold := map[string]any{"interface": "deploy", "step": "hold", "priority": 50, "args": map[string]any{}}
	for _, tc := range []struct {
		name    string
		version string
		body    map[string]any
		status  int
		want    string
	}{
		{"not a list", "1.110", map[string]any{"target": "active", "deploy_steps": "hold"}, 400,
			"Expected types <class 'NoneType'>, <class 'list'> for deploy_steps: hold"},
		{"below 1.69", "1.68", map[string]any{"target": "active", "deploy_steps": []any{hold}}, 406,
			"The minimal required API version should be 1.69"},
		{"the deploy alias", "1.110", map[string]any{"target": "deploy", "deploy_steps": []any{hold}}, 400,
			`"deploy_steps" is only valid when setting target provision state to active or rebuild`},
		{"no priority", "1.110", map[string]any{"target": "active", "deploy_steps": []any{
			map[string]any{"interface": "deploy", "step": "hold", "args": map[string]any{}}}}, 400,
			"Invalid deploy_steps: 'priority' is a required property"},
		{"no args", "1.110", map[string]any{"target": "active", "deploy_steps": []any{
			map[string]any{"interface": "deploy", "step": "hold", "priority": 1}}}, 400,
			"Invalid deploy_steps: 'args' is a required property"},
		{"unknown interface", "1.110", map[string]any{"target": "active", "deploy_steps": []any{
			map[string]any{"interface": "boot", "step": "hold", "priority": 1, "args": map[string]any{}}}}, 400,
			"Invalid deploy_steps: 'boot' is not one of ['vendor', 'power', 'management', 'firmware', 'deploy', 'bios', 'raid']"},
		{"negative priority", "1.110", map[string]any{"target": "active", "deploy_steps": []any{
			map[string]any{"interface": "deploy", "step": "hold", "priority": -1, "args": map[string]any{}}}}, 400,
			"Invalid deploy_steps: -1 is not valid under any of the given schemas"},
		{"core step overridden", "1.110", map[string]any{"target": "active", "deploy_steps": []any{
			map[string]any{"interface": "deploy", "step": "deploy", "priority": 10, "args": map[string]any{}}}}, 400,
			"Failed to validate deploy or power info for node " + n.UUID + `: Validation of deploy steps from "deploy steps" argument failed.deploy step deploy on interface deploy is a core step`},
	} {
		status, body := provisionRaw(t, client, n.UUID, tc.version, tc.body)
		if status != tc.status || !strings.Contains(body, tc.want) {
			t.Errorf("%s: %d %s, want %d with %s", tc.name, status, body, tc.status, tc.want)
		}
		if got := waitState(t, client, db, n.UUID, "available"); got.LastError != "" || len(got.DeployStep) != 0 {
			t.Errorf("%s: changed the node: last_error %q, deploy_step %v", tc.name, got.LastError, got.DeployStep)
		}
	}

	if status, body := provisionRaw(t, client, n.UUID, "1.110", map[string]any{"target": "active", "deploy_steps": []any{hold}}); status != http.StatusAccepted {
		t.Fatalf("deploy with a hold: %d %s", status, body)
	}
	got := waitStateTarget(t, client, db, n.UUID, "deploy hold", "active")
	if got.DeployStep["step"] != "hold" {
		t.Errorf("in deploy hold: deploy_step %v", got.DeployStep)
	}
	client.Microversion = "1.85"
	if err := nodes.ChangeProvisionState(ctx, client, n.UUID, nodes.ProvisionStateOpts{Target: nodes.TargetUnhold}).ExtractErr(); err != nil {
		t.Fatal(err)
	}
	waitStateTarget(t, client, db, n.UUID, "wait call-back", "active")
	client.Microversion = "1.109"
	err = nodes.ChangeProvisionState(ctx, client, n.UUID, nodes.ProvisionStateOpts{Target: nodes.TargetAbort}).ExtractErr()
	if !gophercloud.ResponseCodeIs(err, http.StatusNotAcceptable) {
		t.Errorf("abort in wait call-back at 1.109: %v, want 406", err)
	}
	if got := waitStateTarget(t, client, db, n.UUID, "wait call-back", "active"); got.LastError != "" {
		t.Errorf("refused abort: last_error %q", got.LastError)
	}
	client.Microversion = "1.110"
	if err := nodes.ChangeProvisionState(ctx, client, n.UUID, nodes.ProvisionStateOpts{Target: nodes.TargetAbort}).ExtractErr(); err != nil {
		t.Fatal(err)
	}
	got = waitStateTarget(t, client, db, n.UUID, "deploy failed", "active")
	if want := `By request, the deploy operation was aborted during or after the completion of step "deploy.hold"`; got.LastError != want || len(got.DeployStep) != 0 {
		t.Errorf("after abort: last_error %q, deploy_step %v", got.LastError, got.DeployStep)
	}

	// A wait step without seconds: wait call-back at once.
	if err := nodes.ChangeProvisionState(ctx, client, n.UUID, nodes.ProvisionStateOpts{Target: nodes.TargetActive,
		DeploySteps: []nodes.DeployStep{{Interface: nodes.InterfaceDeploy, Step: "wait", Priority: 150, Args: map[string]any{}}}}).ExtractErr(); err != nil {
		t.Fatal(err)
	}
	if got := waitStateTarget(t, client, db, n.UUID, "wait call-back", "active"); got.DeployStep["step"] != "wait" {
		t.Errorf("in wait call-back: deploy_step %v", got.DeployStep)
	}
	if err := nodes.ChangeProvisionState(ctx, client, n.UUID, nodes.ProvisionStateOpts{Target: nodes.TargetAbort}).ExtractErr(); err != nil {
		t.Fatal(err)
	}
	waitStateTarget(t, client, db, n.UUID, "deploy failed", "active")

	// No deploy_steps: straight to active, as before.
	if err := nodes.ChangeProvisionState(ctx, client, n.UUID, nodes.ProvisionStateOpts{Target: nodes.TargetActive}).ExtractErr(); err != nil {
		t.Fatal(err)
	}
	if got := waitState(t, client, db, n.UUID, "active"); got.LastError != "" || len(got.DeployStep) != 0 {
		t.Errorf("plain deploy: last_error %q, deploy_step %v", got.LastError, got.DeployStep)
	}
}
