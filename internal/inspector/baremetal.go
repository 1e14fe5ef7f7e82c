package inspector

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/ferrometal/ferro/internal/baremetal"
	"github.com/ferrometal/ferro/internal/inspection"
	"github.com/ferrometal/ferro/internal/inspection/plan"
	"github.com/ferrometal/ferro/internal/store"
)

// ErrNodeNotFound is returned by a BareMetal client for an unknown node.
var ErrNodeNotFound = errors.New("node not found")

// BareMetal is what the inspector needs from the bare metal API. It has an
// in-process implementation (all-in-one) and an HTTP one (gophercloud) that
// works against ferro or a real Ironic.
type BareMetal interface {
	// Node returns a node (by UUID or name) with its ports.
	Node(ctx context.Context, ident string) (*baremetal.Node, []*baremetal.Port, error)
	// Apply carries out a processing plan on the node and its ports.
	Apply(ctx context.Context, nodeUUID string, ch plan.Changes) error
	SetBootDevice(ctx context.Context, nodeUUID, device string, persistent bool) error
	SetPowerState(ctx context.Context, nodeUUID, target string) error
	// Previous returns the inventory and plugin_data the node's last
	// inspection stored (nil, nil: none), for the hardware changes the
	// rules are offered.
	Previous(ctx context.Context, nodeUUID string) (*inspection.Previous, error)
}

// NodeLocker runs fn under a node's exclusive lock in one transaction; the
// conductor implements it.
type NodeLocker interface {
	WithNodeLock(ctx context.Context, ident string, fn func(ctx context.Context, tx store.Store, n *baremetal.Node) error) error
}

// PowerManager is the conductor's power and boot device control, used by the
// in-process client for manage_boot=true introspections.
type PowerManager interface {
	ChangePowerState(ctx context.Context, ident, target string, timeout time.Duration) error
	SetBootDevice(ctx context.Context, ident, device string, persistent bool) error
}

// Local is the in-process BareMetal client: it reads the store directly and
// applies a whole plan in one transaction under the node's lock.
type Local struct {
	Store  store.Store
	Locker NodeLocker
	Power  PowerManager
	// LockedNodeErr tells a locked node apart from other errors, so Apply can retry.
	LockedNodeErr error
	// Interfaces are a hardware type's default interfaces, for a plan
	// that changes the driver (a rule's set-attribute of driver); nil
	// refuses such a plan.
	Interfaces func(driver string) (map[string]string, error)
}

// Node implements BareMetal.
func (l *Local) Node(ctx context.Context, ident string) (*baremetal.Node, []*baremetal.Port, error) {
	n, err := l.Store.GetNode(ctx, ident)
	if errors.Is(err, store.ErrNotFound) {
		return nil, nil, fmt.Errorf("%w: %s", ErrNodeNotFound, ident)
	}
	if err != nil {
		return nil, nil, err
	}
	ports, err := l.Store.ListPorts(ctx, store.PortFilter{NodeUUID: n.UUID})
	if err != nil {
		return nil, nil, err
	}
	return n, ports, nil
}

// Apply implements BareMetal.
func (l *Local) Apply(ctx context.Context, nodeUUID string, ch plan.Changes) error {
	if ch.IsZero() {
		return nil
	}
	return l.retryLocked(ctx, func() error {
		return l.Locker.WithNodeLock(ctx, nodeUUID, func(ctx context.Context, tx store.Store, n *baremetal.Node) error {
			return inspection.Apply(ctx, tx, n, ch, inspection.ApplyOptions{Interfaces: l.Interfaces})
		})
	})
}

// retryLocked calls fn again while it fails because the node is locked.
func (l *Local) retryLocked(ctx context.Context, fn func() error) error {
	return retryWhileLocked(ctx, func(err error) bool {
		return l.LockedNodeErr != nil && errors.Is(err, l.LockedNodeErr)
	}, fn)
}

// retryWhileLocked calls fn again while locked(err), for about 2.5 s: the
// conductor holds a node's lock briefly (moving it to inspect wait,
// switching its power, polling the inspector), and Ironic's clients retry
// its 409 the same way.
func retryWhileLocked(ctx context.Context, locked func(error) bool, fn func() error) error {
	delay := 5 * time.Millisecond
	for {
		err := fn()
		if err == nil || !locked(err) || delay > 2*time.Second {
			return err
		}
		select {
		case <-ctx.Done():
			return err
		case <-time.After(delay):
			delay *= 2
		}
	}
}

// SetBootDevice implements BareMetal.
func (l *Local) SetBootDevice(ctx context.Context, nodeUUID, device string, persistent bool) error {
	return l.retryLocked(ctx, func() error { return l.Power.SetBootDevice(ctx, nodeUUID, device, persistent) })
}

// SetPowerState implements BareMetal. The conductor switches power in a
// worker that holds the node's lock, so a power-off right after the
// reboot this client asked for finds the node locked and is retried.
func (l *Local) SetPowerState(ctx context.Context, nodeUUID, target string) error {
	return l.retryLocked(ctx, func() error { return l.Power.ChangePowerState(ctx, nodeUUID, target, 0) })
}

// Previous is the inventory the store holds for the node.
func (l *Local) Previous(ctx context.Context, nodeUUID string) (*inspection.Previous, error) {
	inv, err := l.Store.GetInventory(ctx, nodeUUID)
	if errors.Is(err, store.ErrNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	return &inspection.Previous{Inventory: inv.Inventory, PluginData: inv.PluginData}, nil
}
