package conductor

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/ferrometal/ferro/internal/baremetal"
	"github.com/ferrometal/ferro/internal/driver"
	"github.com/ferrometal/ferro/internal/pyjson"
	"github.com/ferrometal/ferro/internal/states"
)

// stepInfo is what an interface declares about one of its steps, as
// Ironic's step decorators: argsinfo (name → description, and which are
// required), requires_ramdisk, abortable and priority. wait marks a step
// that returns the flow's wait state (Ironic's fake trigger_servicewait).
type stepInfo struct {
	args            map[string]string
	required        []string
	requiresRamdisk bool
	abortable       bool
	priority        int
	wait            bool
}

// stepTable is a flow's steps per interface kind and implementation.
type stepTable map[[2]string]map[string]stepInfo

const (
	biosSettingsDesc     = "List of BIOS settings, each item needs to contain a dictionary with name/value pairs"
	firmwareSettingsDesc = "List of Firmware components, each item needs to contain a dictionary with name/value pairs"
)

// cleanSteps are the clean steps of the interfaces ferro runs: Ironic's
// fake BIOS, firmware and vendor steps (they do nothing here). ferro has
// no redfish BIOS or firmware writes, so redfish offers none.
var cleanSteps = stepTable{
	{"bios", "fake"}: {
		"apply_configuration": {args: map[string]string{"settings": biosSettingsDesc}, required: []string{"settings"}, requiresRamdisk: true},
		"factory_reset":       {requiresRamdisk: true},
		"cache_bios_settings": {requiresRamdisk: true},
	},
	{"firmware", "fake"}: {
		"update": {args: map[string]string{"settings": firmwareSettingsDesc}, required: []string{"settings"}, requiresRamdisk: true},
	},
	{"vendor", "fake"}: {"log_passthrough": {requiresRamdisk: true, priority: 1}},
}

// serviceSteps are the service steps of the interfaces ferro runs:
// Ironic's fake vendor steps. trigger_servicewait leaves the node in
// service wait, where only an abort (flagged, as the step is not
// abortable) or a tear down reaches it: ferro runs no agent to call back.
var serviceSteps = stepTable{
	{"vendor", "fake"}: {
		"log_passthrough":     {},
		"trigger_servicewait": {requiresRamdisk: true, wait: true},
	},
}

// deploySteps are the deploy steps of the interfaces ferro runs: Ironic's
// fake deploy interface's core step, deploy.deploy at priority 100 (it
// does nothing here). Deploy steps are abortable unless they say not.
var deploySteps = stepTable{
	{"deploy", "fake"}: {"deploy": {priority: 100, abortable: true}},
}

// interfacePriority orders steps of one priority, as Ironic's
// DEPLOYING_INTERFACE_PRIORITY (the higher first).
var interfacePriority = map[string]int{
	"vendor": 7, "power": 6, "management": 5, "firmware": 4, "deploy": 3, "bios": 2, "raid": 1,
}

// Reserved step names the conductor runs itself on any interface
// (Ironic's RESERVED_STEP_HANDLER_MAPPING, hold and wait).
const (
	stepHold     = "hold"
	stepWait     = "wait"
	stepPowerOn  = "power_on"
	stepPowerOff = "power_off"
	stepReboot   = "reboot"
)

var reservedPower = map[string]string{
	stepPowerOn: baremetal.PowerOn, stepPowerOff: baremetal.PowerOff, stepReboot: baremetal.PowerReboot,
}

func isReservedStep(name string) bool {
	_, power := reservedPower[name]
	return power || name == stepHold || name == stepWait
}

// maxWaitStep caps a wait step's seconds, as Ironic's
// [conductor]max_conductor_wait_step_seconds default.
const maxWaitStep = 30 * time.Second

// stepFlow is one of the step-running operations: manual cleaning,
// servicing or deployment. Each keeps its steps in driver_internal_info["<name>_steps"],
// the running one's index in "<name>_step_index" and the running step in
// the node's clean_step, service_step or deploy_step field, as Ironic.
type stepFlow struct {
	name    string // "clean", "service" or "deploy"
	table   stepTable
	working string // the state steps run in
	// done is the event that ends the flow (manage for manual cleaning).
	done string
	// target is the target_provision_state throughout.
	target string
	// fault is what a failed step sets with maintenance; "" for a
	// deployment, whose failure sets none (Ironic's deploying_error_handler).
	fault string
	// failedStep is the last_error of a step that failed.
	failedStep func(n *baremetal.Node, step baremetal.JSON, err error) string
	// wipeOnFail drops the step list on failure, as Ironic's
	// deploying_error_handler (cleaning's and servicing's keep it).
	wipeOnFail bool
	// untargeted is a state the flow leaves without a target: automated
	// cleaning's clean failed, as Ironic's (manual cleaning's keeps
	// manageable).
	untargeted string
	step       func(n *baremetal.Node) *baremetal.JSON
}

var (
	cleanFlow = &stepFlow{name: "clean", table: cleanSteps, working: states.Cleaning, done: states.EventManage,
		target: states.Manageable, fault: "clean failure", failedStep: nodeFailedStep,
		step: func(n *baremetal.Node) *baremetal.JSON { return &n.CleanStep }}
	serviceFlow = &stepFlow{name: "service", table: serviceSteps, working: states.Servicing, done: states.EventDone,
		target: states.Active, fault: "service failure", failedStep: nodeFailedStep,
		step: func(n *baremetal.Node) *baremetal.JSON { return &n.ServiceStep }}
	deployFlow = &stepFlow{name: "deploy", table: deploySteps, working: states.Deploying, done: states.EventDone,
		target: states.Active, wipeOnFail: true, failedStep: func(_ *baremetal.Node, step baremetal.JSON, err error) string {
			return fmt.Sprintf("Deploy step %s failed: %v.", stepID(step), err)
		}, step: func(n *baremetal.Node) *baremetal.JSON { return &n.DeployStep }}
)

// nodeFailedStep is the last_error of a failed clean or service step.
func nodeFailedStep(n *baremetal.Node, step baremetal.JSON, err error) string {
	return fmt.Sprintf("Node %s failed step %s: %v", n.UUID, stepRepr(step), err)
}

func (f *stepFlow) stepsKey() string { return f.name + "_steps" }
func (f *stepFlow) indexKey() string { return f.name + "_step_index" }

// validate checks the requested steps against the node's interfaces as
// Ironic's _validate_user_steps and returns them as the node stores them
// (with the interface's abortable and priority), or Ironic's message.
// Reserved steps need no interface; ferro keeps them in the list (Ironic
// master's validation drops them, so its hold and wait steps never run).
func (f *stepFlow) validate(n *baremetal.Node, steps []CleanStep, disableRamdisk bool) ([]any, string) {
	var errs []string
	out := make([]any, 0, len(steps))
	for _, s := range steps {
		m := baremetal.JSON{"interface": s.Interface, "step": s.Step}
		if s.Args != nil {
			m["args"] = s.Args
		}
		if isReservedStep(s.Step) {
			out = append(out, m)
			continue
		}
		info, ok := f.table[[2]string{s.Interface, n.Interfaces[s.Interface]}][s.Step]
		if !ok {
			errs = append(errs, fmt.Sprintf("node does not support this %s step: %s", f.name, s))
			continue
		}
		errs = append(errs, argErrors(f.name, s.String(), info, s.Args, true)...)
		if disableRamdisk && info.requiresRamdisk {
			errs = append(errs, fmt.Sprintf("%s step %s requires booting a ramdisk", f.name, s))
		}
		m["abortable"] = info.abortable
		m["priority"] = info.priority
		out = append(out, m)
	}
	return out, strings.Join(errs, "; ")
}

// argErrors is Ironic's check of a user step's args against the step's
// argsinfo: the unexpected ones and, with required, the missing ones.
func argErrors(kind, repr string, info stepInfo, args map[string]any, required bool) []string {
	var errs, unexpected, missing []string
	for _, a := range slices.Sorted(maps.Keys(args)) {
		if _, ok := info.args[a]; !ok {
			unexpected = append(unexpected, a)
		}
	}
	if len(unexpected) > 0 {
		errs = append(errs, fmt.Sprintf("%s step %s has these unexpected arguments: %s", kind, repr, strings.Join(unexpected, ", ")))
	}
	if !required {
		return errs
	}
	for _, a := range info.required {
		if _, ok := args[a]; !ok {
			missing = append(missing, fmt.Sprintf("%s (%s)", a, info.args[a]))
		}
	}
	if len(missing) > 0 {
		errs = append(errs, fmt.Sprintf("%s step %s is missing these required arguments: %s", kind, repr, strings.Join(missing, ", ")))
	}
	return errs
}

// stepID is Ironic's step_id: interface.step.
func stepID(step baremetal.JSON) string {
	iface, _ := step["interface"].(string)
	name, _ := step["step"].(string)
	return iface + "." + name
}

// stepRepr renders a stored step as Ironic's messages show a step dict:
// interface, step and args first, as they were stored.
func stepRepr(step baremetal.JSON) string {
	var b strings.Builder
	b.WriteString("{")
	keys := slices.SortedFunc(maps.Keys(step), func(a, b string) int {
		if ra, rb := keyRank(a), keyRank(b); ra != rb {
			return ra - rb
		}
		return strings.Compare(a, b)
	})
	for i, k := range keys {
		if i > 0 {
			b.WriteString(", ")
		}
		fmt.Fprintf(&b, "%s: %s", pyjson.Repr(k), pyjson.Repr(step[k]))
	}
	b.WriteString("}")
	return b.String()
}

func keyRank(k string) int {
	switch k {
	case "interface":
		return 0
	case "step":
		return 1
	case "args":
		return 2
	}
	return 3
}

// storedSteps reads the flow's step list from driver_internal_info.
func (f *stepFlow) storedSteps(n *baremetal.Node) []baremetal.JSON {
	raw, _ := n.DriverInternalInfo[f.stepsKey()].([]any)
	out := make([]baremetal.JSON, 0, len(raw))
	for _, r := range raw {
		if m, ok := r.(map[string]any); ok {
			out = append(out, m)
		}
	}
	return out
}

// wipe removes the flow's bookkeeping, as Ironic's wipe_*_internal_info:
// the steps stay as null, the rest goes (a deployment's user_deploy_steps
// with it).
func (f *stepFlow) wipe(n *baremetal.Node) {
	if n.DriverInternalInfo == nil {
		n.DriverInternalInfo = baremetal.JSON{}
	}
	n.DriverInternalInfo[f.stepsKey()] = nil
	delete(n.DriverInternalInfo, f.indexKey())
	delete(n.DriverInternalInfo, f.name+"_disable_ramdisk")
	delete(n.DriverInternalInfo, "user_"+f.stepsKey())
}

// fire moves the node by event, keeping the flow's target (Ironic passes
// it along: a manual cleaning's wait and hold aim at manageable).
func (c *Conductor) fireStep(f *stepFlow, n *baremetal.Node, event string) error {
	if err := c.fire(n, event); err != nil {
		return err
	}
	switch n.ProvisionState {
	case f.target, f.untargeted:
		return nil // arrived, or failed with no target
	}
	n.TargetProvisionState = f.target
	return nil
}

// stepTransition is transition for a flow's events: the flow's target is
// kept, the node saved (the lock goes with a wait or hold) and the
// change observed.
func (c *Conductor) stepTransition(ctx context.Context, f *stepFlow, t *driver.Task, event, lastError string) error {
	from := t.Node.ProvisionState
	if err := c.fireStep(f, t.Node, event); err != nil {
		return err
	}
	t.Node.LastError = lastError
	if err := c.save(context.WithoutCancel(ctx), t); err != nil {
		return fmt.Errorf("save node %s: %w", t.Node.UUID, err)
	}
	c.observer.ProvisionStateChanged(t.Node, from)
	if lastError != "" {
		c.history(ctx, t.Node, f.working, lastError, baremetal.SeverityError)
	}
	t.Log.Info("provision state changed", "event", event, "state", t.Node.ProvisionState)
	return nil
}

// failSteps fails the flow with msg, as Ironic's error handlers: a
// cleaning or servicing failure while a step ran also puts the node in
// maintenance with the flow's fault; a deployment's drops its steps.
func (c *Conductor) failSteps(ctx context.Context, f *stepFlow, t *driver.Task, msg string) {
	ctx = context.WithoutCancel(ctx)
	n := t.Node
	if f.fault != "" && len(*f.step(n)) > 0 {
		n.Maintenance = true
		n.Fault = f.fault
		if n.MaintenanceReason == "" {
			n.MaintenanceReason = msg
		}
	}
	*f.step(n) = baremetal.JSON{}
	delete(n.DriverInternalInfo, f.indexKey())
	if f.wipeOnFail {
		f.wipe(n)
	}
	if err := c.stepTransition(ctx, f, t, states.EventFail, msg); err != nil {
		t.Log.Error("cannot record failure", "phase", f.name, "last_error", msg, "error", err)
	}
}

// runSteps runs the flow's stored steps from index from on, the node in
// the flow's working state under the task's lock, until they are done
// (the flow's done event), one leaves the node in a wait or hold (the
// lock goes with the save), or one fails (the flow's failed state).
func (c *Conductor) runSteps(ctx context.Context, f *stepFlow, t *driver.Task, from int) {
	n := t.Node
	steps := f.storedSteps(n)
	for i := from; i < len(steps); i++ {
		step := steps[i]
		*f.step(n) = step
		n.DriverInternalInfo[f.indexKey()] = i
		if err := c.save(ctx, t); err != nil {
			t.Log.Error("cannot save the running step", "phase", f.name, "error", err)
			return
		}
		t.Log.Info("executing step", "phase", f.name, "step", stepID(step))
		paused, err := c.runStep(ctx, f, t, step)
		if err != nil && ctx.Err() != nil {
			// The conductor stops: the node stays in its working state,
			// which recovery fails as for any task cut short.
			t.Log.Warn("step interrupted", "phase", f.name, "step", stepID(step), "error", err)
			return
		}
		if err != nil {
			c.failSteps(ctx, f, t, f.failedStep(n, step, err))
			return
		}
		if paused {
			return
		}
	}
	*f.step(n) = baremetal.JSON{}
	f.wipe(n)
	if err := c.stepTransition(ctx, f, t, f.done, ""); err != nil {
		t.Log.Error("cannot finish", "phase", f.name, "error", err)
	}
}

// runStep executes one step. paused is true when the step left the node
// in the flow's wait or hold state (saved, the lock gone).
func (c *Conductor) runStep(ctx context.Context, f *stepFlow, t *driver.Task, step baremetal.JSON) (paused bool, err error) {
	name, _ := step["step"].(string)
	args, _ := step["args"].(map[string]any)
	if target, ok := reservedPower[name]; ok {
		return false, c.setPower(ctx, t, target, c.o.PowerTimeout)
	}
	switch name {
	case stepHold:
		return true, c.stepTransition(ctx, f, t, states.EventHold, "")
	case stepWait:
		v, ok := args["seconds"]
		if !ok {
			// Until a callback, which nothing sends here: abort ends it.
			return true, c.stepTransition(ctx, f, t, states.EventWait, "")
		}
		secs, err := pyjson.Int(v)
		if err != nil {
			return false, err
		}
		d := time.Duration(secs) * time.Second
		if d > maxWaitStep {
			msg := fmt.Sprintf("A wait time exceeding the configured maximum has been requested. Holding for %d, got %d.", secs, int(maxWaitStep/time.Second))
			c.history(ctx, t.Node, t.Node.ProvisionState, msg, baremetal.SeverityInfo)
			d = maxWaitStep
		}
		// Ironic waits under the lock and resumes: the node never shows
		// the wait state.
		timer := time.NewTimer(d)
		defer timer.Stop()
		select {
		case <-timer.C:
		case <-ctx.Done():
			return false, ctx.Err()
		}
		return false, nil
	}
	iface, _ := step["interface"].(string)
	info, ok := f.table[[2]string{iface, t.Node.Interfaces[iface]}][name]
	if !ok {
		return false, fmt.Errorf("the %s interface %q has no step %s", iface, t.Node.Interfaces[iface], name)
	}
	if info.wait {
		return true, c.stepTransition(ctx, f, t, states.EventWait, "")
	}
	return false, nil
}
