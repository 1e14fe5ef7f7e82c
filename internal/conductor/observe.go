package conductor

import (
	"context"
	"errors"
	"sync/atomic"
	"time"

	"github.com/ferrometal/ferro/internal/baremetal"
	"github.com/ferrometal/ferro/internal/hardware"
	"github.com/ferrometal/ferro/internal/store"
)

// Observer is told of the conductor's work as it happens, for metrics. Its
// methods must return quickly; they run on the task's goroutine.
type Observer interface {
	// ProvisionStateChanged is called once the node is saved in its new
	// provision state, from the state it left.
	ProvisionStateChanged(n *baremetal.Node, from string)
	// HardwareChanged is called at the end of a successful re-inspection
	// with what changed since the previous one (possibly nothing).
	HardwareChanged(n *baremetal.Node, changes []hardware.Change)
	// PeriodicTaskRan is called after each run of a periodic task (the
	// Task* names) with the time it took.
	PeriodicTaskRan(task string, took time.Duration)
	// PeriodicTaskSkipped is called when a task was due while its previous
	// run was still going (the power sync: a cycle longer than its
	// interval).
	PeriodicTaskSkipped(task string)
}

type noObserver struct{}

func (noObserver) ProvisionStateChanged(*baremetal.Node, string)      {}
func (noObserver) HardwareChanged(*baremetal.Node, []hardware.Change) {}
func (noObserver) PeriodicTaskRan(string, time.Duration)              {}
func (noObserver) PeriodicTaskSkipped(string)                         {}

// Stats is a snapshot of the conductor's load.
type Stats struct {
	// Workers is the size of the worker pool; Busy how many run a task.
	Workers, Busy int
	// LockWaiters are callers waiting right now for a node another task of
	// this process holds (the pool itself never queues: a full pool
	// answers 503).
	LockWaiters int
	// LockWaits counts the waits for such a node since start, and
	// LockConflicts the lock requests that failed because another holder
	// kept the node.
	LockWaits, LockConflicts uint64
	// WorkerRefusals counts tasks refused because every worker was busy.
	WorkerRefusals uint64
}

// counters are the conductor's running totals behind Stats.
type counters struct {
	lockWaiters    atomic.Int64
	lockWaits      atomic.Uint64
	lockConflicts  atomic.Uint64
	workerRefusals atomic.Uint64
}

// Stats returns the conductor's load now; cheap enough for every scrape.
func (c *Conductor) Stats() Stats {
	return Stats{
		Workers: cap(c.workers), Busy: len(c.workers),
		LockWaiters: int(c.counters.lockWaiters.Load()),
		LockWaits:   c.counters.lockWaits.Load(), LockConflicts: c.counters.lockConflicts.Load(),
		WorkerRefusals: c.counters.workerRefusals.Load(),
	}
}

// HardwareChangesEventType is the node history event type of the summary
// of what changed on a machine since its previous inspection.
const HardwareChangesEventType = "hardware changes"

// recordHardwareChanges compares the inventory an inspection just stored
// with the previous one and records the changes in one line of the node's
// history (a WARNING when something was removed or changed, INFO when
// nothing was): "2 hardware changes since the inspection of …: disk …
// removed; NIC … switch port changed from … to …". The first inspection,
// or a store keeping no previous inventories, records nothing. Failures
// are logged: the node was inspected either way.
func (c *Conductor) recordHardwareChanges(ctx context.Context, n *baremetal.Node) {
	ctx = context.WithoutCancel(ctx)
	// The history first: a first inspection has none, and then the
	// inventory it stored need not be read back.
	prev, err := c.store.ListInventoryHistory(ctx, n.UUID)
	if err != nil {
		c.log.Warn("cannot compare the inventory with the previous one", "node", n.UUID, "error", err)
		return
	}
	if len(prev) == 0 {
		return
	}
	cur, err := c.store.GetInventory(ctx, n.UUID)
	if errors.Is(err, store.ErrNotFound) {
		return
	}
	if err != nil {
		c.log.Warn("cannot compare the inventory with the previous one", "node", n.UUID, "error", err)
		return
	}
	changes := hardware.Compare(hardware.Read(&prev[0].Inventory), hardware.Read(cur))
	c.observer.HardwareChanged(n, changes)
	severity := baremetal.SeverityInfo
	for _, ch := range changes {
		if ch.Change != hardware.Added {
			severity = "WARNING"
		}
	}
	since := "the previous inspection"
	if !prev[0].SavedAt.IsZero() {
		since = "the inspection of " + prev[0].SavedAt.UTC().Format(time.RFC3339)
	}
	c.history(ctx, n, HardwareChangesEventType, hardware.Summary(changes)+" (since "+since+")", severity)
}
