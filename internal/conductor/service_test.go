package conductor

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/ferrometal/ferro/internal/baremetal"
	"github.com/ferrometal/ferro/internal/driver"
	"github.com/ferrometal/ferro/internal/driver/fake"
	"github.com/ferrometal/ferro/internal/states"
)

var (
	logPassthrough = CleanStep{Interface: "vendor", Step: "log_passthrough"}
	triggerWait    = CleanStep{Interface: "vendor", Step: "trigger_servicewait"}
	holdStep       = CleanStep{Interface: "deploy", Step: "hold"}
)

// Servicing, case by case: where the worker leaves the node, with what
// last_error and service_step, or the synchronous error that changes nothing.
func TestDoNodeService(t *testing.T) {
	r := newRig(t)
	saved := savedStates{Store: r.store, mu: &sync.Mutex{}, seen: map[string][]string{}}
	r.c.store = saved
	ctx := context.Background()
	tests := []struct {
		name        string
		state       string
		ifs         map[string]string
		maint       bool
		steps       []CleanStep
		noRamdisk   bool
		wantErr     error
		wantState   string
		wantError   string // last_error, after "Cannot service node <uuid>"
		wantStep    baremetal.JSON
		wantPower   string
		wantTarget  string
		wantVisited string
	}{
		{name: "fake vendor step", state: states.Active, steps: []CleanStep{logPassthrough},
			wantState: states.Active, wantStep: baremetal.JSON{}, wantVisited: "servicing/active"},
		{name: "reserved power steps", state: states.Active,
			steps:     []CleanStep{{Interface: "power", Step: "power_off"}, {Interface: "power", Step: "reboot"}, {Interface: "power", Step: "power_off"}},
			wantState: states.Active, wantStep: baremetal.JSON{}, wantPower: baremetal.PowerOff},
		{name: "wait with seconds resumes by itself", state: states.Active,
			steps:     []CleanStep{{Interface: "deploy", Step: "wait", Args: map[string]any{"seconds": float64(0)}}, logPassthrough},
			wantState: states.Active, wantStep: baremetal.JSON{}},
		{name: "again from service failed", state: states.ServiceFailed, steps: []CleanStep{logPassthrough},
			wantState: states.Active, wantStep: baremetal.JSON{}},
		{name: "step not offered", state: states.Active, steps: []CleanStep{{Interface: "bios", Step: "factory_reset"}},
			wantState: states.ServiceFailed, wantTarget: states.Active, wantStep: baremetal.JSON{},
			wantError: ": node does not support this service step: {'interface': 'bios', 'step': 'factory_reset'}"},
		{name: "unexpected argument", state: states.Active, steps: []CleanStep{{Interface: "vendor", Step: "log_passthrough", Args: map[string]any{"x": 1.0}}},
			wantState: states.ServiceFailed, wantTarget: states.Active, wantStep: baremetal.JSON{},
			wantError: ": service step {'interface': 'vendor', 'step': 'log_passthrough', 'args': {'x': 1}} has these unexpected arguments: x"},
		{name: "ramdisk step with disable_ramdisk", state: states.Active, steps: []CleanStep{triggerWait}, noRamdisk: true,
			wantState: states.ServiceFailed, wantTarget: states.Active, wantStep: baremetal.JSON{},
			wantError: ": service step {'interface': 'vendor', 'step': 'trigger_servicewait'} requires booting a ramdisk"},
		{name: "step waiting for the agent", state: states.Active, steps: []CleanStep{triggerWait, logPassthrough},
			wantState: states.ServiceWait, wantTarget: states.Active,
			wantStep: baremetal.JSON{"interface": "vendor", "step": "trigger_servicewait", "abortable": false, "priority": json.Number("0")}},
		{name: "hold", state: states.Active, steps: []CleanStep{holdStep, logPassthrough},
			wantState: states.ServiceHold, wantTarget: states.Active, wantStep: baremetal.JSON{"interface": "deploy", "step": "hold"}},
		{name: "from manageable", state: states.Manageable, steps: []CleanStep{logPassthrough}, wantErr: ErrInvalidState, wantState: states.Manageable},
		{name: "in maintenance", state: states.Active, maint: true, steps: []CleanStep{logPassthrough}, wantErr: ErrInvalidState, wantState: states.Active},
		{name: "direct deploy", state: states.Active, ifs: map[string]string{"deploy": "direct"}, steps: []CleanStep{logPassthrough},
			wantErr: ErrUnsupportedVerb, wantState: states.Active},
	}
	for _, tc := range tests {
		n := r.node(t, tc.state, tc.ifs)
		if tc.maint {
			n.Maintenance = true
			if err := r.store.UpdateNode(ctx, n); err != nil {
				t.Fatal(err)
			}
		}
		err := r.c.DoNodeService(ctx, n.UUID, tc.steps, tc.noRamdisk)
		if !errors.Is(err, tc.wantErr) || (tc.wantErr == nil) != (err == nil) {
			t.Errorf("%s: error %v, want %v", tc.name, err, tc.wantErr)
			continue
		}
		got := r.waitState(t, n.UUID, tc.wantState)
		want := ""
		if tc.wantError != "" {
			want = "Cannot service node " + n.UUID + tc.wantError
		}
		if got.LastError != want || got.TargetProvisionState != tc.wantTarget {
			t.Errorf("%s: last_error %q, target %q; want %q, %q", tc.name, got.LastError, got.TargetProvisionState, want, tc.wantTarget)
		}
		if tc.wantErr != nil {
			if got.ServiceStep != nil && len(got.ServiceStep) != 0 {
				t.Errorf("%s: refused, but service_step %v", tc.name, got.ServiceStep)
			}
			continue
		}
		if d := cmp.Diff(tc.wantStep, got.ServiceStep); d != "" {
			t.Errorf("%s: service_step (-want +got):\n%s", tc.name, d)
		}
		if got.Maintenance {
			t.Errorf("%s: in maintenance (%s)", tc.name, got.MaintenanceReason)
		}
		if tc.wantPower != "" && got.PowerState != tc.wantPower {
			t.Errorf("%s: power %q, want %q", tc.name, got.PowerState, tc.wantPower)
		}
		if tc.wantState == states.Active {
			if v, ok := got.DriverInternalInfo["service_steps"]; !ok || v != nil {
				t.Errorf("%s: driver_internal_info %v, want service_steps wiped to null", tc.name, got.DriverInternalInfo)
			}
			if _, ok := got.DriverInternalInfo["service_step_index"]; ok {
				t.Errorf("%s: service_step_index left: %v", tc.name, got.DriverInternalInfo)
			}
		}
		if tc.wantVisited != "" {
			saved.mu.Lock()
			path := saved.seen[n.UUID]
			saved.mu.Unlock()
			if !slices.Contains(path, tc.wantVisited) {
				t.Errorf("%s: saved as %v, want %s on the way", tc.name, path, tc.wantVisited)
			}
		}
	}
}

// unhold in service hold runs the rest of the steps; abort in a hold or a
// wait step returns to active with the step in last_error; a step that
// cannot be aborted is only flagged, as Ironic's _do_abort.
func TestService_HoldUnholdAbort(t *testing.T) {
	r := newRig(t)
	ctx := context.Background()
	serve := func(steps ...CleanStep) *baremetal.Node {
		t.Helper()
		n := r.node(t, states.Active, nil)
		if err := r.c.DoNodeService(ctx, n.UUID, steps, false); err != nil {
			t.Fatal(err)
		}
		return n
	}

	n := serve(holdStep, CleanStep{Interface: "power", Step: "power_off"})
	r.waitState(t, n.UUID, states.ServiceHold)
	if err := r.c.DoProvisionAction(ctx, n.UUID, VerbUnhold); err != nil {
		t.Fatal(err)
	}
	if got := r.waitState(t, n.UUID, states.Active); got.PowerState != baremetal.PowerOff || got.LastError != "" || len(got.ServiceStep) != 0 {
		t.Errorf("after unhold: power %q, last_error %q, service_step %v", got.PowerState, got.LastError, got.ServiceStep)
	}

	for _, tc := range []struct {
		name  string
		steps []CleanStep
		from  string
		step  string
	}{
		{"hold", []CleanStep{holdStep, logPassthrough}, states.ServiceHold, "deploy.hold"},
		{"wait for a callback", []CleanStep{{Interface: "deploy", Step: "wait"}}, states.ServiceWait, "deploy.wait"},
	} {
		n := serve(tc.steps...)
		r.waitState(t, n.UUID, tc.from)
		if err := r.c.DoProvisionAction(ctx, n.UUID, VerbAbort); err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		got := r.waitState(t, n.UUID, states.Active)
		want := `By request, the service operation was aborted during or after the completion of step "` + tc.step + `"`
		if got.LastError != want || got.TargetProvisionState != "" || len(got.ServiceStep) != 0 || got.Maintenance {
			t.Errorf("%s: after abort: last_error %q, target %q, service_step %v, maintenance %v", tc.name, got.LastError, got.TargetProvisionState, got.ServiceStep, got.Maintenance)
		}
	}

	n = serve(triggerWait)
	r.waitState(t, n.UUID, states.ServiceWait)
	if err := r.c.DoProvisionAction(ctx, n.UUID, VerbAbort); err != nil {
		t.Fatal(err)
	}
	if got := r.waitState(t, n.UUID, states.ServiceWait); got.ServiceStep["abort_after"] != true {
		t.Errorf("abort of a step that cannot be aborted: service_step %v, want abort_after", got.ServiceStep)
	}

	// service failed: abort returns to active, unless in maintenance.
	n = r.node(t, states.ServiceFailed, nil)
	if err := r.c.DoProvisionAction(ctx, n.UUID, VerbAbort); err != nil {
		t.Fatal(err)
	}
	if got := r.waitState(t, n.UUID, states.Active); got.LastError != "By request, the service operation was aborted" {
		t.Errorf("abort from service failed: last_error %q", got.LastError)
	}
	n = r.node(t, states.ServiceFailed, nil)
	n.Maintenance = true
	if err := r.store.UpdateNode(ctx, n); err != nil {
		t.Fatal(err)
	}
	if err := r.c.DoProvisionAction(ctx, n.UUID, VerbAbort); !errors.Is(err, ErrInvalidState) {
		t.Errorf("abort in maintenance: %v", err)
	}
	r.waitState(t, n.UUID, states.ServiceFailed)

	// unhold outside a hold is refused and changes nothing.
	for _, st := range []string{states.Active, states.ServiceWait, states.CleanWait} {
		n := r.node(t, st, nil)
		if err := r.c.DoProvisionAction(ctx, n.UUID, VerbUnhold); !errors.Is(err, ErrInvalidState) {
			t.Errorf("unhold in %s: %v", st, err)
		}
		r.waitState(t, n.UUID, st)
	}
}

// A hold in manual cleaning: unhold leaves it in clean wait for the
// agent's heartbeat (none comes: abort ends it), the target manageable
// throughout.
func TestClean_HoldUnholdAbort(t *testing.T) {
	r := newRig(t)
	ctx := context.Background()
	n := r.node(t, states.Manageable, nil)
	if err := r.c.DoNodeClean(ctx, n.UUID, []CleanStep{holdStep, factoryResetStep}); err != nil {
		t.Fatal(err)
	}
	if got := r.waitState(t, n.UUID, states.CleanHold); got.TargetProvisionState != states.Manageable || got.CleanStep["step"] != "hold" {
		t.Errorf("in clean hold: target %q, clean_step %v", got.TargetProvisionState, got.CleanStep)
	}
	if err := r.c.DoProvisionAction(ctx, n.UUID, VerbUnhold); err != nil {
		t.Fatal(err)
	}
	if got := r.waitState(t, n.UUID, states.CleanWait); got.TargetProvisionState != states.Manageable {
		t.Errorf("after unhold: target %q", got.TargetProvisionState)
	}
	if err := r.c.DoProvisionAction(ctx, n.UUID, VerbAbort); err != nil {
		t.Fatal(err)
	}
	got := r.waitState(t, n.UUID, states.CleanFailed)
	if want := `By request, the clean operation was aborted during or after the completion of step "deploy.hold"`; got.LastError != want || got.TargetProvisionState != states.Manageable {
		t.Errorf("after abort: last_error %q, target %q", got.LastError, got.TargetProvisionState)
	}

	// abort straight from the hold.
	n = r.node(t, states.Manageable, nil)
	if err := r.c.DoNodeClean(ctx, n.UUID, []CleanStep{holdStep}); err != nil {
		t.Fatal(err)
	}
	r.waitState(t, n.UUID, states.CleanHold)
	if err := r.c.DoProvisionAction(ctx, n.UUID, VerbAbort); err != nil {
		t.Fatal(err)
	}
	r.waitState(t, n.UUID, states.CleanFailed)
}

// Abort in wait call-back (1.110) and in deploy hold ends in deploy
// failed, without cleaning; unhold in deploy hold goes to wait call-back.
func TestDeploy_WaitAndHoldAbort(t *testing.T) {
	r := newRig(t)
	ctx := context.Background()
	n := r.node(t, states.DeployWait, nil)
	if err := r.c.DoProvisionAction(ctx, n.UUID, VerbAbort); err != nil {
		t.Fatal(err)
	}
	if got := r.waitState(t, n.UUID, states.DeployFailed); got.LastError != "By request, the deploy operation was aborted" {
		t.Errorf("abort in wait call-back: last_error %q", got.LastError)
	}
	n = r.node(t, states.DeployHold, nil)
	if err := r.c.DoProvisionAction(ctx, n.UUID, VerbUnhold); err != nil {
		t.Fatal(err)
	}
	r.waitState(t, n.UUID, states.DeployWait)
	n = r.node(t, states.DeployHold, nil)
	if err := r.c.DoProvisionAction(ctx, n.UUID, VerbAbort); err != nil {
		t.Fatal(err)
	}
	r.waitState(t, n.UUID, states.DeployFailed)
}

var factoryResetStep = CleanStep{Interface: "bios", Step: "factory_reset"}

// failingPower refuses every power change.
type failingPower struct{ fake.Power }

func (failingPower) SetPowerState(context.Context, *driver.Task, string, time.Duration) error {
	return errors.New("BMC said no")
}

// A step that fails while it runs fails the flow and puts the node in
// maintenance with the flow's fault, as Ironic's error handlers.
func TestSteps_FailingStepSetsMaintenance(t *testing.T) {
	r := newRigWith(t, func(_ *Options, e *driver.Enabled) {
		e.Interfaces["power"] = append(e.Interfaces["power"], "failing")
	})
	r.opts.Registry.RegisterPower("failing", failingPower{})
	ctx := context.Background()
	for _, tc := range []struct {
		state, want, fault string
		run                func(id string) error
	}{
		{states.Active, states.ServiceFailed, "service failure", func(id string) error {
			return r.c.DoNodeService(ctx, id, []CleanStep{{Interface: "power", Step: "reboot"}}, false)
		}},
		{states.Manageable, states.CleanFailed, "clean failure", func(id string) error {
			return r.c.DoNodeClean(ctx, id, []CleanStep{{Interface: "power", Step: "power_on"}})
		}},
	} {
		n := r.node(t, tc.state, map[string]string{"power": "failing"})
		if err := tc.run(n.UUID); err != nil {
			t.Fatal(err)
		}
		got := r.waitState(t, n.UUID, tc.want)
		step := "{'interface': 'power', 'step': 'reboot'}"
		if tc.want == states.CleanFailed {
			step = "{'interface': 'power', 'step': 'power_on'}"
		}
		want := "Node " + n.UUID + " failed step " + step + ": BMC said no"
		if got.LastError != want || !got.Maintenance || got.Fault != tc.fault || got.MaintenanceReason != want {
			t.Errorf("%s: last_error %q, maintenance %v, fault %q, reason %q; want %q, fault %q", tc.want, got.LastError, got.Maintenance, got.Fault, got.MaintenanceReason, want, tc.fault)
		}
		if len(got.ServiceStep) != 0 || len(got.CleanStep) != 0 {
			t.Errorf("%s: steps left: %v %v", tc.want, got.ServiceStep, got.CleanStep)
		}
	}
}
