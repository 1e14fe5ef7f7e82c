package conductor

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/ferrometal/ferro/internal/baremetal"
	"github.com/ferrometal/ferro/internal/driver"
	"github.com/ferrometal/ferro/internal/states"
	"github.com/ferrometal/ferro/internal/store"
)

// lockLocal marks a node as locked by this process. It makes two tasks of
// one conductor exclude each other although they share the reservation
// holder name. A node held locally is waited for a short while: a task that
// ends saves its last state and clears the reservation in one transaction
// and drops its local mark just after, and a client that saw the cleared
// reservation must not get a 409 in between.
func (c *Conductor) lockLocal(key string) bool {
	deadline := time.NewTimer(localLockGrace)
	defer deadline.Stop()
	for {
		c.lockMu.Lock()
		released, held := c.locked[key]
		if !held {
			c.locked[key] = make(chan struct{})
			c.lockMu.Unlock()
			return true
		}
		c.lockMu.Unlock()
		c.counters.lockWaits.Add(1)
		c.counters.lockWaiters.Add(1)
		select {
		case <-released:
			c.counters.lockWaiters.Add(-1)
		case <-deadline.C:
			c.counters.lockWaiters.Add(-1)
			c.counters.lockConflicts.Add(1)
			return false
		}
	}
}

// localLockGrace is how long lockLocal waits for a task of this process
// to let a node go before the node counts as locked.
const localLockGrace = 50 * time.Millisecond

func (c *Conductor) unlockLocal(key string) {
	c.lockMu.Lock()
	if released, held := c.locked[key]; held {
		close(released)
		delete(c.locked, key)
	}
	c.lockMu.Unlock()
}

func (c *Conductor) lockedError(ident, holder string) error {
	return fmt.Errorf("%w: Node %s is locked by host %s, please retry after the current operation is completed", ErrNodeLocked, ident, holder)
}

// acquire takes the node's exclusive lock and loads the task: the node,
// its ports and portgroups, and its resolved interfaces.
func (c *Conductor) acquire(ctx context.Context, ident string) (*driver.Task, error) {
	n, err := c.lockNode(ctx, ident)
	if err != nil {
		return nil, err
	}
	t, err := c.load(ctx, n, false)
	if err != nil {
		c.releaseNode(n.UUID)
		return nil, err
	}
	return t, nil
}

// lockNode takes the node's exclusive lock and returns the node as read
// under it.
func (c *Conductor) lockNode(ctx context.Context, ident string) (*baremetal.Node, error) {
	if c.stopping.Load() {
		return nil, ErrShuttingDown
	}
	// The local lock needs one key per node: resolve a name to its UUID.
	id := strings.ToLower(ident)
	if len(ident) != 36 || uuid.Validate(ident) != nil {
		n, err := c.store.GetNode(ctx, ident)
		if err != nil {
			return nil, err
		}
		id = n.UUID
	}
	if !c.lockLocal(id) {
		return nil, c.lockedError(id, c.host)
	}
	n, err := c.store.ReserveNode(ctx, id, c.host)
	if err != nil {
		if errors.Is(err, store.ErrNodeLocked) {
			c.counters.lockConflicts.Add(1)
		}
		c.unlockLocal(id)
		return nil, err
	}
	if n.DriverInternalInfo == nil {
		n.DriverInternalInfo = baremetal.JSON{}
	}
	return n, nil
}

// shared loads a task without taking the lock, for reads (validate, boot device).
func (c *Conductor) shared(ctx context.Context, ident string) (*driver.Task, error) {
	n, err := c.store.GetNode(ctx, ident)
	if err != nil {
		return nil, err
	}
	return c.load(ctx, n, true)
}

func (c *Conductor) load(ctx context.Context, n *baremetal.Node, shared bool) (*driver.Task, error) {
	ports, err := c.store.ListPorts(ctx, store.PortFilter{NodeUUID: n.UUID})
	if err != nil {
		return nil, fmt.Errorf("load ports of node %s: %w", n.UUID, err)
	}
	pgs, err := c.store.ListPortgroups(ctx, store.PortgroupFilter{NodeUUID: n.UUID})
	if err != nil {
		return nil, fmt.Errorf("load portgroups of node %s: %w", n.UUID, err)
	}
	if n.DriverInternalInfo == nil {
		n.DriverInternalInfo = baremetal.JSON{}
	}
	return &driver.Task{
		Node: n, Ports: ports, Portgroups: pgs, Shared: shared,
		Driver: c.reg.Resolve(n.Interfaces),
		Log:    c.log.With("node", n.UUID),
		Store:  fencedTaskStore{Store: c.store, node: n.UUID, holder: c.host},
	}, nil
}

// release saves nothing; it drops the task's lock unless the task's last
// save did.
func (c *Conductor) release(t *driver.Task) {
	if t.Shared || t.Released {
		return
	}
	c.releaseNode(t.Node.UUID)
}

// save writes the task's node. When the node is in a state no conductor
// works in, the task is over: the reservation is cleared in the same
// transaction and the task marked released.
func (c *Conductor) save(ctx context.Context, t *driver.Task) error {
	if t.Shared || states.IsTransient(t.Node.ProvisionState) {
		return t.SaveNode(ctx)
	}
	err := c.store.InTx(ctx, func(tx store.Store) error {
		if err := tx.UpdateNode(ctx, t.Node); err != nil {
			return err
		}
		return tx.ReleaseNode(ctx, t.Node.UUID, c.host)
	})
	if err != nil {
		return err
	}
	t.Node.Reservation = ""
	t.Released = true
	c.unlockLocal(t.Node.UUID)
	return nil
}

func (c *Conductor) releaseNode(uuid string) {
	// The lock must go even when the request that held it was cancelled.
	// A node deleted under its lock (DELETE /v1/nodes) has no lock left.
	if err := c.store.ReleaseNode(context.Background(), uuid, c.host); err != nil && !errors.Is(err, store.ErrNotFound) {
		c.log.Error("cannot release node lock", "node", uuid, "error", err)
	}
	c.unlockLocal(uuid)
}

// WithNodeLock takes the node's exclusive lock, runs fn in one transaction
// with the node as read under the lock, and releases the lock. The API uses
// it for node updates and deletes and for port and portgroup changes, the
// in-process inspector to apply what it learned.
func (c *Conductor) WithNodeLock(ctx context.Context, ident string, fn func(ctx context.Context, tx store.Store, n *baremetal.Node) error) error {
	n, err := c.lockNode(ctx, ident)
	if err != nil {
		return err
	}
	defer c.releaseNode(n.UUID)
	// Nobody writes a node without its lock, so the node read by the
	// reservation is current for the whole transaction.
	return c.store.InTx(ctx, func(tx store.Store) error { return fn(ctx, tx, n) })
}

// fencedTaskStore is what a task's drivers save through. Node writes are
// fenced by the store itself (UpdateNode checks the reservation); a port
// write checks, in the same transaction, that the node's lock is still the
// one the task took, so a conductor that stalled while its lock was taken
// over cannot rewrite the ports (their inspection_vif_port_id) of a node
// another conductor works on now.
type fencedTaskStore struct {
	store.Store
	node, holder string
}

func (f fencedTaskStore) UpdatePort(ctx context.Context, p *baremetal.Port) error {
	return f.InTx(ctx, func(tx store.Store) error {
		n, err := tx.GetNode(ctx, f.node)
		if err != nil {
			return err
		}
		if n.Reservation != f.holder {
			return fmt.Errorf("%w: node %s is locked by %q now, not by this task's %q", store.ErrNodeLocked, f.node, n.Reservation, f.holder)
		}
		return tx.UpdatePort(ctx, p)
	})
}
