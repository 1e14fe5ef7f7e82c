package conductor

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/ferrometal/ferro/internal/baremetal"
	"github.com/ferrometal/ferro/internal/driver"
	"github.com/ferrometal/ferro/internal/states"
)

// VerbClean is manual cleaning, from manageable back to manageable.
const VerbClean = "clean"

// CleanStep is one step of a manual cleaning or servicing request, as the
// API validated it.
type CleanStep struct {
	Interface string
	Step      string
	Args      map[string]any
}

// String renders the step as Ironic's messages do (a Python dict).
func (s CleanStep) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "{'interface': '%s', 'step': '%s'", s.Interface, s.Step)
	if s.Args != nil {
		keys := make([]string, 0, len(s.Args))
		for k := range s.Args {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		b.WriteString(", 'args': {")
		for i, k := range keys {
			if i > 0 {
				b.WriteString(", ")
			}
			fmt.Fprintf(&b, "'%s': %v", k, s.Args[k])
		}
		b.WriteString("}")
	}
	b.WriteString("}")
	return b.String()
}

// DoNodeClean starts manual cleaning, as Ironic's do_node_clean: maintenance
// and power are checked synchronously (errors leave the node as it was),
// the node goes to cleaning with target manageable, and the worker runs the
// steps. A step the node's interfaces do not offer fails the cleaning
// (clean failed, last_error says which). Only the fake deploy interface,
// whose prepare_cleaning boots nothing, is supported.
func (c *Conductor) DoNodeClean(ctx context.Context, ident string, steps []CleanStep) error {
	t, err := c.acquire(ctx, ident)
	if err != nil {
		return err
	}
	n := t.Node
	if !states.Can(n.ProvisionState, states.EventClean) {
		c.release(t)
		return fmt.Errorf("%w: The requested action \"manual clean\" can not be performed on node %q while it is in state %q.",
			ErrInvalidState, n.UUID, n.ProvisionState)
	}
	if err := c.takeWorker(); err != nil {
		c.release(t)
		return err
	}
	work, err := c.startClean(ctx, t, steps)
	if err != nil {
		c.giveBackWorker()
		c.release(t)
		return err
	}
	c.run(t, work)
	return nil
}

func (c *Conductor) startClean(ctx context.Context, t *driver.Task, steps []CleanStep) (func(context.Context, *driver.Task), error) {
	n := t.Node
	if n.Maintenance {
		return nil, fmt.Errorf("%w: The requested action \"cleaning\" can not be performed on node %q while it is in maintenance mode.",
			ErrInvalidState, n.UUID)
	}
	if impl := n.Interfaces["deploy"]; impl != "fake" {
		return nil, fmt.Errorf("%w: the deploy interface %q of node %s cannot clean (ferro runs manual cleaning only with the fake deploy interface)",
			ErrUnsupportedVerb, impl, n.UUID)
	}
	if err := t.Driver.Power.Validate(ctx, t); err != nil {
		return nil, fmt.Errorf("Validation of node %s for cleaning failed: %w", n.UUID, err)
	}
	if err := c.fire(n, states.EventClean); err != nil {
		return nil, err
	}
	n.TargetProvisionState = states.Manageable
	n.LastError = ""
	if err := c.save(ctx, t); err != nil {
		return nil, fmt.Errorf("save node %s: %w", n.UUID, err)
	}
	return func(ctx context.Context, t *driver.Task) { c.startSteps(ctx, cleanFlow, t, steps, false) }, nil
}

// startSteps validates the requested steps against the node's interfaces
// (a mismatch fails the flow, as Ironic's "Cannot clean node" and
// "Cannot service node"), stores them and runs them.
func (c *Conductor) startSteps(ctx context.Context, f *stepFlow, t *driver.Task, steps []CleanStep, disableRamdisk bool) {
	stored, msg := f.validate(t.Node, steps, disableRamdisk)
	if msg != "" {
		c.failSteps(ctx, f, t, fmt.Sprintf("Cannot %s node %s: %s", f.name, t.Node.UUID, msg))
		return
	}
	*f.step(t.Node) = baremetal.JSON{}
	t.Node.DriverInternalInfo[f.stepsKey()] = stored
	c.runSteps(ctx, f, t, 0)
}
