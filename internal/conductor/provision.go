package conductor

import (
	"context"
	"errors"
	"fmt"

	"github.com/ferrometal/ferro/internal/baremetal"
	"github.com/ferrometal/ferro/internal/driver"
	"github.com/ferrometal/ferro/internal/states"
)

// Provision verbs the API accepts in PUT /v1/nodes/{node}/states/provision.
const (
	VerbManage  = "manage"
	VerbInspect = "inspect"
	VerbProvide = "provide"
	VerbAbort   = "abort"
	// The deployment verbs run only with Ironic's fake deploy (and fake
	// rescue) interface, whose steps do nothing: ferro does not deploy.
	VerbActive   = "active"
	VerbDeleted  = "deleted"
	VerbRebuild  = "rebuild"
	VerbAdopt    = "adopt"
	VerbRescue   = "rescue"
	VerbUnrescue = "unrescue"
)

// ErrNodeProtected is returned (wrapped) for deleted or rebuild on a
// protected node, as Ironic's NodeProtected (403).
var ErrNodeProtected = errors.New("node protected")

// ErrUnsupportedVerb is returned (wrapped) for a deployment verb on a node
// whose deploy or rescue interface ferro cannot run.
var ErrUnsupportedVerb = errors.New("provision verb not supported by the node's interfaces")

// DoProvisionAction validates a provision verb synchronously, under the
// node's exclusive lock, moves the node to the verb's first state and
// continues in a worker. Errors before the worker starts leave the node as it was.
func (c *Conductor) DoProvisionAction(ctx context.Context, ident, verb string) error {
	return c.doProvisionAction(ctx, ident, verb, nil)
}

// doProvisionAction is DoProvisionAction with a deployment's user deploy
// steps (DoNodeDeploy).
func (c *Conductor) doProvisionAction(ctx context.Context, ident, verb string, deploySteps []baremetal.DeployStep) error {
	t, err := c.acquire(ctx, ident)
	if err != nil {
		return err
	}
	n := t.Node
	if !states.Can(n.ProvisionState, verb) {
		c.release(t)
		return fmt.Errorf("%w: The requested action %q can not be performed on node %q while it is in state %q.",
			ErrInvalidState, verb, n.UUID, n.ProvisionState)
	}
	// Take a worker before touching the node, so a busy conductor answers
	// 503 with nothing changed and nothing written.
	if verb != VerbAbort {
		if err := c.takeWorker(); err != nil {
			c.release(t)
			return err
		}
	}
	var work func(ctx context.Context, t *driver.Task)
	switch verb {
	case VerbManage:
		work, err = c.startManage(ctx, t)
	case VerbInspect:
		work, err = c.startInspect(ctx, t)
	case VerbProvide:
		work, err = c.startProvide(ctx, t)
	case VerbAbort:
		err = c.abort(ctx, t)
	case VerbUnhold:
		work, err = c.unhold(ctx, t)
	case VerbActive, VerbRebuild, VerbDeleted, VerbAdopt, VerbRescue, VerbUnrescue:
		work, err = c.startFake(ctx, t, verb, deploySteps)
	default:
		err = fmt.Errorf("%w: provision verb %q is not supported", ErrInvalidState, verb)
	}
	if err != nil || work == nil {
		if verb != VerbAbort {
			c.giveBackWorker()
		}
		c.release(t)
		return err
	}
	c.run(t, work)
	return nil
}

// transition fires event on the task's node and saves it, setting or
// clearing last_error. An error message is also recorded in the history.
// A state no conductor works in (stable or waiting) ends the task: the
// lock goes in the same transaction, so nobody sees a node that is done but
// still reserved.
func (c *Conductor) transition(ctx context.Context, t *driver.Task, event, lastError string) error {
	from := t.Node.ProvisionState
	if err := c.fire(t.Node, event); err != nil {
		return err
	}
	t.Node.LastError = lastError
	if err := c.save(ctx, t); err != nil {
		return fmt.Errorf("save node %s: %w", t.Node.UUID, err)
	}
	c.observer.ProvisionStateChanged(t.Node, from)
	if lastError != "" {
		c.history(ctx, t.Node, event, lastError, baremetal.SeverityError)
	}
	t.Log.Info("provision state changed", "event", event, "state", t.Node.ProvisionState)
	return nil
}

// failNode fires fail with last_error msg. It runs on a context that
// outlives the request, so a failure is always recorded.
func (c *Conductor) failNode(ctx context.Context, t *driver.Task, phase, msg string) {
	ctx = context.WithoutCancel(ctx)
	if err := c.transition(ctx, t, states.EventFail, msg); err != nil {
		t.Log.Error("cannot record failure", "phase", phase, "last_error", msg, "error", err)
	}
}

// startManage: enroll → verifying (worker checks the power credentials) →
// manageable; from the other states manage is immediate.
func (c *Conductor) startManage(ctx context.Context, t *driver.Task) (func(context.Context, *driver.Task), error) {
	if t.Node.ProvisionState != states.Enroll {
		return nil, c.transition(ctx, t, states.EventManage, "")
	}
	if err := c.transition(ctx, t, states.EventManage, ""); err != nil {
		return nil, err
	}
	return func(ctx context.Context, t *driver.Task) {
		if err := t.Driver.Power.Validate(ctx, t); err != nil {
			c.failNode(ctx, t, "verify", fmt.Sprintf("Failed to validate power driver interface for node %s. Error: %v", t.Node.UUID, err))
			return
		}
		if st, err := t.Driver.Power.PowerState(ctx, t); err != nil {
			c.failNode(ctx, t, "verify", fmt.Sprintf("Failed to get power state for node %s. Error: %v", t.Node.UUID, err))
			return
		} else {
			t.Node.PowerState = st
		}
		cacheVendor(ctx, t)
		if err := c.transition(ctx, t, states.EventDone, ""); err != nil {
			t.Log.Error("cannot finish verifying", "error", err)
		}
	}, nil
}

// cacheVendor sets properties.vendor from the management interface when
// none is set, as Ironic's node_cache_vendor at the end of verifying; the
// node is saved with the transition. A failure is logged, never fatal.
func cacheVendor(ctx context.Context, t *driver.Task) {
	if v, ok := t.Node.Properties["vendor"]; ok && v != nil && v != "" {
		return
	}
	d, ok := t.Driver.Management.(driver.VendorDetector)
	if !ok {
		return
	}
	vendor, err := d.DetectVendor(ctx, t)
	if err != nil {
		t.Log.Warn("cannot detect the vendor", "error", err)
		return
	}
	if vendor == "" {
		return
	}
	if t.Node.Properties == nil {
		t.Node.Properties = baremetal.JSON{}
	}
	t.Node.Properties["vendor"] = vendor
	t.Log.Info("detected vendor", "vendor", vendor)
}

// fakeVerbs names, per deployment verb, the interface that must be fake.
var fakeVerbs = map[string]string{
	VerbActive: "deploy", VerbRebuild: "deploy", VerbDeleted: "deploy", VerbAdopt: "deploy",
	VerbRescue: "rescue", VerbUnrescue: "rescue",
}

// startFake runs a deployment verb with the fake interfaces, as Ironic's
// conductor does with them: validate power, move to the verb's transient
// state, and finish in the worker. A deployment or rebuild runs its deploy
// steps (startDeploy); deleting goes on through cleaning to available and
// forgets the instance and the deployment's bookkeeping, as Ironic's tear
// down.
func (c *Conductor) startFake(ctx context.Context, t *driver.Task, verb string, deploySteps []baremetal.DeployStep) (func(context.Context, *driver.Task), error) {
	kind := fakeVerbs[verb]
	if impl := t.Node.Interfaces[kind]; impl != "fake" {
		return nil, fmt.Errorf("%w: the %s interface %q of node %s cannot %s (ferro runs deployment verbs only with the fake interfaces)",
			ErrUnsupportedVerb, kind, impl, t.Node.UUID, verb)
	}
	if t.Node.Protected && (verb == VerbDeleted || verb == VerbRebuild) {
		return nil, fmt.Errorf("%w: Node %s is protected and cannot be undeployed, rebuilt or deleted", ErrNodeProtected, t.Node.UUID)
	}
	if t.Node.Maintenance {
		return nil, fmt.Errorf("%w: The requested action %q can not be performed on node %q while it is in maintenance mode.",
			ErrInvalidState, verb, t.Node.UUID)
	}
	if err := t.Driver.Power.Validate(ctx, t); err != nil {
		return nil, fmt.Errorf("validate power interface of node %s: %w", t.Node.UUID, err)
	}
	if verb == VerbActive || verb == VerbRebuild {
		return c.startDeploy(ctx, t, verb, deploySteps)
	}
	if err := c.transition(ctx, t, verb, ""); err != nil {
		return nil, err
	}
	return func(ctx context.Context, t *driver.Task) {
		if verb == VerbDeleted {
			t.Node.InstanceInfo = baremetal.JSON{}
			t.Node.InstanceUUID = ""
			t.Node.InstanceName = ""
			t.Node.DeployStep = baremetal.JSON{}
			deployFlow.wipe(t.Node)
			if err := c.transition(ctx, t, states.EventDone, ""); err != nil {
				t.Log.Error("cannot finish tear down", "error", err)
				return
			}
			// Torn down, now cleaning. A bad runbook configuration fails
			// the cleaning (Ironic's raises in the worker and leaves the
			// node in deleting).
			steps, err := c.automatedCleaningPlan(ctx, t.Node)
			if err != nil {
				c.failNode(ctx, t, "clean", err.Error())
				return
			}
			c.automatedClean(ctx, t, steps)
			return
		}
		if err := c.transition(ctx, t, states.EventDone, ""); err != nil {
			t.Log.Error("cannot finish provision action", "verb", verb, "error", err)
		}
	}, nil
}

// startProvide: manageable → cleaning → available. The steps of automated
// cleaning are a configured runbook's (automatedCleanSteps; a bad
// configuration is refused here, the node unchanged); without one there
// are none to run (ferro's interfaces have no automated clean steps and
// it boots no ramdisk to find the agent's), so cleaning completes at once.
func (c *Conductor) startProvide(ctx context.Context, t *driver.Task) (func(context.Context, *driver.Task), error) {
	if t.Node.Retired && t.Node.ProvisionState == states.Manageable {
		// Ironic's NodeIsRetired: a retired node is not handed out again.
		return nil, fmt.Errorf("%w: The providing operation can't be performed on node %s because it is retired.", driver.ErrInvalidParameter, t.Node.UUID)
	}
	if err := t.Driver.Power.Validate(ctx, t); err != nil {
		return nil, err
	}
	steps, err := c.automatedCleaningPlan(ctx, t.Node)
	if err != nil {
		return nil, err
	}
	if err := c.transition(ctx, t, states.EventProvide, ""); err != nil {
		return nil, err
	}
	return func(ctx context.Context, t *driver.Task) { c.automatedClean(ctx, t, steps) }, nil
}

// startInspect validates power and inspect synchronously (errors go to the
// caller, state unchanged), moves the node to inspecting and returns the
// worker that runs the inspect interface.
func (c *Conductor) startInspect(ctx context.Context, t *driver.Task) (func(context.Context, *driver.Task), error) {
	if err := t.Driver.Power.Validate(ctx, t); err != nil {
		return nil, fmt.Errorf("validate power interface of node %s: %w", t.Node.UUID, err)
	}
	if err := t.Driver.Inspect.Validate(ctx, t); err != nil {
		if errors.Is(err, driver.ErrUnsupported) {
			// no-inspect: Ironic's UnsupportedDriverExtension.
			return nil, fmt.Errorf("%w: %s", driver.ErrUnsupported, unsupportedExtension(t.Node.Driver, "inspect"))
		}
		return nil, fmt.Errorf("validate inspect interface of node %s: %w", t.Node.UUID, err)
	}
	now := c.now().UTC()
	t.Node.InspectionStartedAt = &now
	t.Node.InspectionFinishedAt = nil
	if err := c.transition(ctx, t, states.EventInspect, ""); err != nil {
		return nil, err
	}
	return c.runInspect, nil
}

// runInspect is the inspecting worker.
func (c *Conductor) runInspect(ctx context.Context, t *driver.Task) {
	next, err := t.Driver.Inspect.InspectHardware(ctx, t)
	if err != nil {
		msg := fmt.Sprintf("Failed to inspect hardware. Reason: %v", err)
		var pe *driver.PhaseError
		if errors.As(err, &pe) {
			msg = pe.Error()
		}
		c.failNode(ctx, t, "inspect", msg)
		return
	}
	switch next {
	case states.InspectWait:
		if err := c.transition(ctx, t, states.EventWait, ""); err != nil {
			t.Log.Error("cannot enter inspect wait", "error", err)
		}
	case states.Manageable:
		now := c.now().UTC()
		t.Node.InspectionFinishedAt = &now
		// Under the node's lock: the next inspection cannot store its
		// inventory before this one was compared.
		c.recordHardwareChanges(ctx, t.Node)
		c.cacheFirmware(ctx, t)
		if err := c.transition(ctx, t, states.EventDone, ""); err != nil {
			t.Log.Error("cannot finish inspection", "error", err)
		}
	default:
		c.failNode(ctx, t, "inspect", fmt.Sprintf("inspect interface returned unexpected state %q", next))
	}
}

// abort stops an inspection in inspect wait (the inspect interface aborts
// and tears down; the node goes to inspect failed) or a step flow in its
// wait or hold (abortSteps).
func (c *Conductor) abort(ctx context.Context, t *driver.Task) error {
	if t.Node.ProvisionState != states.InspectWait {
		return c.abortSteps(ctx, t)
	}
	if err := t.Driver.Inspect.Abort(ctx, t); err != nil {
		if errors.Is(err, driver.ErrUnsupported) {
			return err
		}
		c.history(ctx, t.Node, states.EventAbort, fmt.Sprintf("Failed to abort inspection: %v", err), baremetal.SeverityError)
		return err
	}
	return c.transition(context.WithoutCancel(ctx), t, states.EventAbort, "Inspection was aborted by request.")
}
