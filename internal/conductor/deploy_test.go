package conductor

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/ferrometal/ferro/internal/baremetal"
	"github.com/ferrometal/ferro/internal/driver"
	"github.com/ferrometal/ferro/internal/states"
)

func deployStep(iface, step string, priority int, args baremetal.JSON) baremetal.DeployStep {
	return baremetal.DeployStep{Interface: iface, Step: step, Priority: priority, Args: args}
}

// The fake deploy's core step as Ironic stores it.
var coreDeployStep = baremetal.JSON{"step": "deploy", "priority": json.Number("100"), "abortable": true, "argsinfo": nil, "interface": "deploy"}

// Deployment, case by case: the user's deploy steps merged with the fake
// deploy's deploy.deploy (priority 100) by priority, where the worker
// leaves the node, or the synchronous error that changes nothing.
func TestDoNodeDeploy(t *testing.T) {
	r := newRig(t)
	saved := savedStates{Store: r.store, mu: &sync.Mutex{}, seen: map[string][]string{}}
	r.c.store = saved
	ctx := context.Background()
	hold := func(p int) baremetal.DeployStep { return deployStep("deploy", "hold", p, baremetal.JSON{}) }
	holdDoc := func(p string) baremetal.JSON {
		return baremetal.JSON{"interface": "deploy", "step": "hold", "args": map[string]any{}, "priority": json.Number(p)}
	}
	tests := []struct {
		name      string
		state     string
		verb      string
		steps     []baremetal.DeployStep
		wantErr   string // the synchronous error, after "Failed to validate deploy or power info for node <uuid>: "
		wantState string
		wantError string // last_error
		wantStep  baremetal.JSON
		wantSteps []any // driver_internal_info deploy_steps while held
		wantPower string
	}{
		{name: "plain deploy", state: states.Available, wantState: states.Active, wantStep: baremetal.JSON{}},
		{name: "rebuild", state: states.Active, verb: VerbRebuild, wantState: states.Active, wantStep: baremetal.JSON{}},
		{name: "hold after the core step", state: states.Available, steps: []baremetal.DeployStep{hold(50)},
			wantState: states.DeployHold, wantStep: holdDoc("50"), wantSteps: []any{coreDeployStep, holdDoc("50")}},
		{name: "hold before the core step", state: states.Available, steps: []baremetal.DeployStep{hold(150)},
			wantState: states.DeployHold, wantStep: holdDoc("150"), wantSteps: []any{holdDoc("150"), coreDeployStep}},
		{name: "rebuild with a hold", state: states.Active, verb: VerbRebuild, steps: []baremetal.DeployStep{hold(50)},
			wantState: states.DeployHold, wantStep: holdDoc("50")},
		{name: "again from deploy failed", state: states.DeployFailed, steps: []baremetal.DeployStep{hold(50)},
			wantState: states.DeployHold, wantStep: holdDoc("50")},
		{name: "core step disabled", state: states.Available, steps: []baremetal.DeployStep{deployStep("deploy", "deploy", 0, nil), hold(10)},
			wantState: states.DeployHold, wantStep: holdDoc("10"), wantSteps: []any{holdDoc("10")}},
		{name: "a disabled user step does not run", state: states.Available, steps: []baremetal.DeployStep{hold(0)},
			wantState: states.Active, wantStep: baremetal.JSON{}},
		{name: "wait for a callback", state: states.Available, steps: []baremetal.DeployStep{deployStep("deploy", "wait", 50, baremetal.JSON{})},
			wantState: states.DeployWait,
			wantStep:  baremetal.JSON{"interface": "deploy", "step": "wait", "args": map[string]any{}, "priority": json.Number("50")}},
		{name: "wait with seconds and a power step", state: states.Available, steps: []baremetal.DeployStep{
			deployStep("deploy", "wait", 60, baremetal.JSON{"seconds": json.Number("0")}), deployStep("power", "power_off", 50, baremetal.JSON{})},
			wantState: states.Active, wantStep: baremetal.JSON{}, wantPower: baremetal.PowerOff},
		{name: "a step no interface offers is skipped", state: states.Available, steps: []baremetal.DeployStep{deployStep("bios", "apply_configuration", 50, baremetal.JSON{})},
			wantState: states.Active, wantStep: baremetal.JSON{}},
		{name: "nothing left to run", state: states.Available, steps: []baremetal.DeployStep{deployStep("deploy", "deploy", 0, nil)},
			wantState: states.DeployFailed, wantError: "No deploy steps returned by the driver", wantStep: baremetal.JSON{}},
		{name: "core step overridden", state: states.Available, steps: []baremetal.DeployStep{deployStep("deploy", "deploy", 50, baremetal.JSON{})},
			wantState: states.Available,
			wantErr:   `Validation of deploy steps from "deploy steps" argument failed.deploy step deploy on interface deploy is a core step and cannot be overridden by user steps. It may be disabled by setting the priority to 0`},
		{name: "unexpected argument", state: states.Available, steps: []baremetal.DeployStep{deployStep("deploy", "deploy", 0, baremetal.JSON{"x": json.Number("1")})},
			wantState: states.Available,
			wantErr:   `Validation of deploy steps from "deploy steps" argument failed.deploy step {'interface': 'deploy', 'step': 'deploy', 'args': {'x': 1}, 'priority': 0} has these unexpected arguments: x`},
		{name: "duplicate steps", state: states.Available, steps: []baremetal.DeployStep{deployStep("deploy", "deploy", 0, nil), deployStep("deploy", "deploy", 0, nil)},
			wantState: states.Available,
			wantErr:   `Validation of deploy steps from "deploy steps" argument failed.deploy steps from all deploy templates matching this node's instance traits cannot have the same interface and step. Duplicate deploy steps for deploy.deploy`},
	}
	for _, tc := range tests {
		n := r.node(t, tc.state, nil)
		verb := cmpOr(tc.verb, VerbActive)
		err := r.c.DoNodeDeploy(ctx, n.UUID, verb, tc.steps)
		if tc.wantErr != "" {
			want := "Failed to validate deploy or power info for node " + n.UUID + ": " + tc.wantErr
			if !errors.Is(err, driver.ErrInvalidParameter) || !strings.HasSuffix(err.Error(), want) {
				t.Errorf("%s: error %v, want %q", tc.name, err, want)
			}
			got := r.waitState(t, n.UUID, tc.wantState)
			if got.LastError != "" || got.DriverInternalInfo["deploy_steps"] != nil {
				t.Errorf("%s: refused, but last_error %q, driver_internal_info %v", tc.name, got.LastError, got.DriverInternalInfo)
			}
			continue
		}
		if err != nil {
			t.Errorf("%s: %v", tc.name, err)
			continue
		}
		got := r.waitState(t, n.UUID, tc.wantState)
		wantTarget := states.Active
		if tc.wantState == states.Active {
			wantTarget = ""
		}
		if got.LastError != tc.wantError || got.TargetProvisionState != wantTarget || got.Maintenance {
			t.Errorf("%s: last_error %q, target %q, maintenance %v; want %q, %q", tc.name, got.LastError, got.TargetProvisionState, got.Maintenance, tc.wantError, wantTarget)
		}
		if d := cmp.Diff(tc.wantStep, got.DeployStep); d != "" {
			t.Errorf("%s: deploy_step (-want +got):\n%s", tc.name, d)
		}
		if tc.wantSteps != nil {
			if d := cmp.Diff(tc.wantSteps, got.DriverInternalInfo["deploy_steps"]); d != "" {
				t.Errorf("%s: deploy_steps (-want +got):\n%s", tc.name, d)
			}
		}
		if tc.wantPower != "" && got.PowerState != tc.wantPower {
			t.Errorf("%s: power %q, want %q", tc.name, got.PowerState, tc.wantPower)
		}
		if tc.wantState == states.Active || tc.wantState == states.DeployFailed {
			if v, ok := got.DriverInternalInfo["deploy_steps"]; !ok || v != nil {
				t.Errorf("%s: driver_internal_info %v, want deploy_steps wiped to null", tc.name, got.DriverInternalInfo)
			}
			for _, k := range []string{"deploy_step_index", "user_deploy_steps"} {
				if _, ok := got.DriverInternalInfo[k]; ok {
					t.Errorf("%s: %s left: %v", tc.name, k, got.DriverInternalInfo)
				}
			}
		}
		if tc.wantState == states.DeployHold && len(tc.steps) > 0 {
			if _, ok := got.DriverInternalInfo["user_deploy_steps"]; !ok {
				t.Errorf("%s: no user_deploy_steps while held: %v", tc.name, got.DriverInternalInfo)
			}
		}
	}
	// The plain deployment still passes through deploying to active.
	n := r.node(t, states.Available, nil)
	if err := r.c.DoProvisionAction(ctx, n.UUID, VerbActive); err != nil {
		t.Fatal(err)
	}
	r.waitState(t, n.UUID, states.Active)
	saved.mu.Lock()
	path := saved.seen[n.UUID]
	saved.mu.Unlock()
	if !slices.Contains(path, "deploying/active") || path[len(path)-1] != "active/" {
		t.Errorf("plain deploy saved as %v", path)
	}
}

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// Deploy templates apply as Ironic's: a template named by one of the
// node's instance_info traits adds its steps; an instance trait the node
// does not have is refused.
func TestDoNodeDeploy_Templates(t *testing.T) {
	r := newRig(t)
	ctx := context.Background()
	if err := r.store.CreateDeployTemplate(ctx, &baremetal.DeployTemplate{UUID: "5d1b1c2e-8d5e-4a4e-9d7b-0c7f7e1e2a10", Name: "CUSTOM_HOLD",
		Steps: []baremetal.DeployStep{deployStep("deploy", "hold", 60, baremetal.JSON{})}}); err != nil {
		t.Fatal(err)
	}
	node := func(nodeTraits []string, instanceTraits any) *baremetal.Node {
		n := r.node(t, states.Available, nil)
		n.Traits = nodeTraits
		n.InstanceInfo = baremetal.JSON{"traits": instanceTraits}
		if err := r.store.UpdateNode(ctx, n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	n := node([]string{"CUSTOM_HOLD"}, []any{"CUSTOM_HOLD"})
	if err := r.c.DoNodeDeploy(ctx, n.UUID, VerbActive, nil); err != nil {
		t.Fatal(err)
	}
	if got := r.waitState(t, n.UUID, states.DeployHold); got.DeployStep["step"] != "hold" {
		t.Errorf("template hold: deploy_step %v", got.DeployStep)
	}
	// The user's step of the same interface and step wins.
	n = node([]string{"CUSTOM_HOLD"}, []any{"CUSTOM_HOLD"})
	if err := r.c.DoNodeDeploy(ctx, n.UUID, VerbActive, []baremetal.DeployStep{deployStep("deploy", "hold", 0, baremetal.JSON{})}); err != nil {
		t.Fatal(err)
	}
	r.waitState(t, n.UUID, states.Active)

	n = node(nil, []any{"CUSTOM_HOLD"})
	err := r.c.DoNodeDeploy(ctx, n.UUID, VerbActive, nil)
	if want := "Cannot specify instance traits that are not also set on the node. Node " + n.UUID + " is missing traits CUSTOM_HOLD"; err == nil || !strings.HasSuffix(err.Error(), want) {
		t.Errorf("instance trait not on the node: %v", err)
	}
	n = node(nil, "CUSTOM_HOLD")
	if err := r.c.DoNodeDeploy(ctx, n.UUID, VerbActive, nil); err == nil || !strings.Contains(err.Error(), "A list of strings is expected.") {
		t.Errorf("instance traits not a list: %v", err)
	}
	r.waitState(t, n.UUID, states.Available)
}

// A deploy hold: unhold goes to wait call-back (the agent's heartbeat
// would resume it; none comes), abort there ends in deploy failed with
// the step in last_error, the target active and no cleaning.
func TestDeploy_HoldUnholdAbort(t *testing.T) {
	r := newRig(t)
	ctx := context.Background()
	n := r.node(t, states.Available, nil)
	if err := r.c.DoNodeDeploy(ctx, n.UUID, VerbActive, []baremetal.DeployStep{deployStep("deploy", "hold", 50, baremetal.JSON{})}); err != nil {
		t.Fatal(err)
	}
	r.waitState(t, n.UUID, states.DeployHold)
	if err := r.c.DoProvisionAction(ctx, n.UUID, VerbUnhold); err != nil {
		t.Fatal(err)
	}
	if got := r.waitState(t, n.UUID, states.DeployWait); got.TargetProvisionState != states.Active || got.DeployStep["step"] != "hold" {
		t.Errorf("after unhold: target %q, deploy_step %v", got.TargetProvisionState, got.DeployStep)
	}
	if err := r.c.DoProvisionAction(ctx, n.UUID, VerbAbort); err != nil {
		t.Fatal(err)
	}
	got := r.waitState(t, n.UUID, states.DeployFailed)
	want := `By request, the deploy operation was aborted during or after the completion of step "deploy.hold"`
	if got.LastError != want || got.TargetProvisionState != states.Active || len(got.DeployStep) != 0 || got.Maintenance {
		t.Errorf("after abort: last_error %q, target %q, deploy_step %v, maintenance %v", got.LastError, got.TargetProvisionState, got.DeployStep, got.Maintenance)
	}
	if v, ok := got.DriverInternalInfo["deploy_steps"]; !ok || v != nil {
		t.Errorf("after abort: driver_internal_info %v", got.DriverInternalInfo)
	}
	// Deployed again from deploy failed, without the hold.
	if err := r.c.DoProvisionAction(ctx, n.UUID, VerbActive); err != nil {
		t.Fatal(err)
	}
	if got := r.waitState(t, n.UUID, states.Active); got.LastError != "" {
		t.Errorf("redeploy: last_error %q", got.LastError)
	}
}

// Undeploying from wait call-back tears down as from active: the
// deployment's bookkeeping goes with the instance.
func TestDeploy_DeletedFromWaitCallBack(t *testing.T) {
	r := newRig(t)
	ctx := context.Background()
	n := r.node(t, states.Available, nil)
	if err := r.c.DoNodeDeploy(ctx, n.UUID, VerbActive, []baremetal.DeployStep{deployStep("deploy", "wait", 50, baremetal.JSON{})}); err != nil {
		t.Fatal(err)
	}
	r.waitState(t, n.UUID, states.DeployWait)
	if err := r.c.DoProvisionAction(ctx, n.UUID, VerbDeleted); err != nil {
		t.Fatal(err)
	}
	got := r.waitState(t, n.UUID, states.Available)
	if len(got.DeployStep) != 0 || got.DriverInternalInfo["deploy_steps"] != nil || got.DriverInternalInfo["user_deploy_steps"] != nil {
		t.Errorf("after tear down: deploy_step %v, driver_internal_info %v", got.DeployStep, got.DriverInternalInfo)
	}
}

// A deploy step that fails ends in deploy failed with Ironic's
// last_error and, unlike cleaning and servicing, no maintenance.
func TestDeploy_FailingStep(t *testing.T) {
	r := newRigWith(t, func(_ *Options, e *driver.Enabled) {
		e.Interfaces["power"] = append(e.Interfaces["power"], "failing")
	})
	r.opts.Registry.RegisterPower("failing", failingPower{})
	ctx := context.Background()
	n := r.node(t, states.Available, map[string]string{"power": "failing"})
	if err := r.c.DoNodeDeploy(ctx, n.UUID, VerbActive, []baremetal.DeployStep{deployStep("power", "power_on", 50, baremetal.JSON{})}); err != nil {
		t.Fatal(err)
	}
	got := r.waitState(t, n.UUID, states.DeployFailed)
	if want := "Deploy step power.power_on failed: BMC said no."; got.LastError != want || got.Maintenance || got.Fault != "" || got.TargetProvisionState != states.Active {
		t.Errorf("last_error %q, maintenance %v, fault %q, target %q; want %q", got.LastError, got.Maintenance, got.Fault, got.TargetProvisionState, want)
	}
	if len(got.DeployStep) != 0 || got.DriverInternalInfo["deploy_steps"] != nil {
		t.Errorf("deploy_step %v, driver_internal_info %v", got.DeployStep, got.DriverInternalInfo)
	}
}
