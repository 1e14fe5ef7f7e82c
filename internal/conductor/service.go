package conductor

import (
	"context"
	"fmt"

	"github.com/ferrometal/ferro/internal/baremetal"
	"github.com/ferrometal/ferro/internal/driver"
	"github.com/ferrometal/ferro/internal/pyjson"
	"github.com/ferrometal/ferro/internal/states"
)

// Verbs of the step flows' holds (1.85) and of servicing (1.87).
const (
	VerbUnhold  = "unhold"
	VerbService = "service"
)

// DoNodeService starts servicing an active node, as Ironic's
// do_node_service: maintenance, power and network are checked
// synchronously (errors leave the node as it was), the node goes to
// servicing with target active and the worker runs the steps. A step the
// node's interfaces do not offer, or one that needs a ramdisk when
// disableRamdisk is set, fails the servicing (service failed). Only the
// fake deploy interface, which boots nothing, is supported.
func (c *Conductor) DoNodeService(ctx context.Context, ident string, steps []CleanStep, disableRamdisk bool) error {
	t, err := c.acquire(ctx, ident)
	if err != nil {
		return err
	}
	n := t.Node
	if !states.Can(n.ProvisionState, states.EventService) {
		c.release(t)
		return fmt.Errorf("%w: The requested action \"service\" can not be performed on node %q while it is in state %q.",
			ErrInvalidState, n.UUID, n.ProvisionState)
	}
	if err := c.takeWorker(); err != nil {
		c.release(t)
		return err
	}
	if err := c.startService(ctx, t); err != nil {
		c.giveBackWorker()
		c.release(t)
		return err
	}
	c.run(t, func(ctx context.Context, t *driver.Task) {
		t.Node.DriverInternalInfo[serviceFlow.name+"_disable_ramdisk"] = disableRamdisk
		c.startSteps(ctx, serviceFlow, t, steps, disableRamdisk)
	})
	return nil
}

func (c *Conductor) startService(ctx context.Context, t *driver.Task) error {
	n := t.Node
	if n.Maintenance {
		return fmt.Errorf("%w: The requested action \"service\" can not be performed on node %q while it is in maintenance mode.",
			ErrInvalidState, n.UUID)
	}
	if impl := n.Interfaces["deploy"]; impl != "fake" {
		return fmt.Errorf("%w: the deploy interface %q of node %s cannot service (ferro runs servicing only with the fake deploy interface)",
			ErrUnsupportedVerb, impl, n.UUID)
	}
	if err := t.Driver.Power.Validate(ctx, t); err != nil {
		return fmt.Errorf("Validation of node %s for servicing failed: %w", n.UUID, err)
	}
	if err := t.Driver.Network.Validate(ctx, t); err != nil {
		return fmt.Errorf("Validation of node %s for servicing failed: %w", n.UUID, err)
	}
	from := n.ProvisionState
	if err := c.fireStep(serviceFlow, n, states.EventService); err != nil {
		return err
	}
	n.LastError = ""
	if err := c.save(ctx, t); err != nil {
		return fmt.Errorf("save node %s: %w", n.UUID, err)
	}
	c.observer.ProvisionStateChanged(n, from)
	return nil
}

// unhold releases a node from a hold, as Ironic's unhold: a cleaning or
// deployment goes to its wait state, where the agent's next heartbeat
// would resume it (ferro runs no agent there, so it waits for abort); a
// servicing goes on with its next step at once, in a worker.
func (c *Conductor) unhold(ctx context.Context, t *driver.Task) (func(context.Context, *driver.Task), error) {
	switch t.Node.ProvisionState {
	case states.CleanHold:
		return nil, c.stepTransition(ctx, cleaningFlow(t.Node), t, states.EventUnhold, "")
	case states.DeployHold:
		return nil, c.stepTransition(ctx, deployFlow, t, states.EventUnhold, "")
	case states.ServiceHold:
	default:
		return nil, fmt.Errorf("%w: The requested action \"unhold\" can not be performed on node %q while it is in state %q.",
			ErrInvalidState, t.Node.UUID, t.Node.ProvisionState)
	}
	n := t.Node
	from := n.ProvisionState
	// service wait, then straight on: nothing else would resume it.
	if err := c.fireStep(serviceFlow, n, states.EventUnhold); err != nil {
		return nil, err
	}
	if err := c.fireStep(serviceFlow, n, states.EventResume); err != nil {
		return nil, err
	}
	if err := c.save(ctx, t); err != nil {
		return nil, fmt.Errorf("save node %s: %w", n.UUID, err)
	}
	c.observer.ProvisionStateChanged(n, from)
	return c.continueService, nil
}

// continueService runs the steps after the current one, or aborts when an
// abort was asked for while a step that cannot be aborted ran.
func (c *Conductor) continueService(ctx context.Context, t *driver.Task) {
	n := t.Node
	if abortAfter, _ := n.ServiceStep["abort_after"].(bool); abortAfter {
		err := c.fireStep(serviceFlow, n, states.EventFail)
		if err == nil {
			err = c.abortService(ctx, t)
		}
		if err != nil {
			t.Log.Error("cannot abort servicing", "error", err)
		}
		return
	}
	next := 0
	if i, err := pyjson.Int(n.DriverInternalInfo[serviceFlow.indexKey()]); err == nil {
		next = int(i) + 1
	}
	c.runSteps(ctx, serviceFlow, t, next)
}

// serviceAbortMessage is Ironic's servicing get_last_error.
func serviceAbortMessage(n *baremetal.Node) string {
	msg := "By request, the service operation was aborted"
	if len(n.ServiceStep) > 0 {
		msg += fmt.Sprintf(" during or after the completion of step \"%s\"", stepID(n.ServiceStep))
	}
	return msg
}

// abortSteps is abort in a step flow's wait or hold, as Ironic's _do_abort:
// a running step that cannot be aborted is flagged abort_after and the
// node stays; otherwise cleaning goes to clean failed, a deployment to
// deploy failed (1.110, no cleaning), and servicing through service
// failed back to active with the reason in last_error. Nothing runs in
// these states here (no ramdisk is booted), so there is nothing to tear down.
func (c *Conductor) abortSteps(ctx context.Context, t *driver.Task) error {
	ctx = context.WithoutCancel(ctx)
	n := t.Node
	switch n.ProvisionState {
	case states.CleanWait, states.CleanHold:
		if flagAbortAfter(n.CleanStep) {
			return c.save(ctx, t)
		}
		msg := "By request, the clean operation was aborted"
		if len(n.CleanStep) > 0 {
			msg += fmt.Sprintf(" during or after the completion of step \"%s\"", stepID(n.CleanStep))
		}
		n.CleanStep = baremetal.JSON{}
		f := cleaningFlow(n)
		f.wipe(n)
		return c.stepTransition(ctx, f, t, states.EventAbort, msg)
	case states.DeployWait, states.DeployHold:
		if n.ProvisionState == states.DeployWait && flagAbortAfter(n.DeployStep) {
			return c.save(ctx, t)
		}
		msg := "By request, the deploy operation was aborted"
		if len(n.DeployStep) > 0 {
			msg += fmt.Sprintf(" during or after the completion of step \"%s\"", stepID(n.DeployStep))
		}
		n.DeployStep = baremetal.JSON{}
		deployFlow.wipe(n)
		return c.stepTransition(ctx, deployFlow, t, states.EventAbort, msg)
	case states.ServiceWait, states.ServiceHold:
		if flagAbortAfter(n.ServiceStep) {
			return c.save(ctx, t)
		}
		// Ironic fails first, then aborts from service failed.
		if err := c.fireStep(serviceFlow, n, states.EventFail); err != nil {
			return err
		}
		return c.abortService(ctx, t)
	case states.ServiceFailed:
		if n.Maintenance {
			return fmt.Errorf("%w: Can not abort service on node \"%s\" while it is in maintenance mode. Please remove the node from maintenance prior to issuing the request to abort the service operation.",
				ErrInvalidState, n.UUID)
		}
		return c.abortService(ctx, t)
	}
	return fmt.Errorf("%w: abort is not supported in state %q", ErrInvalidState, n.ProvisionState)
}

// abortService is Ironic's do_node_service_abort from service failed: back
// to active, last_error saying which step was running.
func (c *Conductor) abortService(ctx context.Context, t *driver.Task) error {
	n := t.Node
	msg := serviceAbortMessage(n)
	n.ServiceStep = baremetal.JSON{}
	serviceFlow.wipe(n)
	return c.stepTransition(ctx, serviceFlow, t, states.EventAbort, msg)
}

// flagAbortAfter marks a running step that cannot be aborted to abort the
// flow once it completes, as Ironic; it reports whether it did.
func flagAbortAfter(step baremetal.JSON) bool {
	if len(step) == 0 {
		return false
	}
	if abortable, _ := step["abortable"].(bool); abortable {
		return false
	}
	// Nothing runs in a hold or a wait step, so those abort at once.
	if name, _ := step["step"].(string); name == stepHold || name == stepWait {
		return false
	}
	step["abort_after"] = true
	return true
}
