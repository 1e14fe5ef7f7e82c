package conductor

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/ferrometal/ferro/internal/driver"
	"github.com/ferrometal/ferro/internal/states"
	"github.com/ferrometal/ferro/internal/store"
)

// runPeriodic runs the conductor's periodic tasks until ctx is cancelled:
// heartbeat (and hash ring refresh), inspection status checks,
// inspect-wait timeouts and orphans, and the power-state sync.
func (c *Conductor) runPeriodic(ctx context.Context) {
	defer close(c.periodicDone)
	every := func(d time.Duration) *time.Ticker {
		if d <= 0 {
			return nil
		}
		return time.NewTicker(d)
	}
	heartbeat := every(c.o.HeartbeatInterval)
	var status, timeouts, pxeFilter, powerSync *time.Ticker
	if !c.apiOnly {
		status = every(c.o.StatusCheckPeriod)
		powerSync = every(c.o.PowerSync.Interval)
		timeouts = every(c.o.CheckProvisionStateInterval)
		if c.o.PXEFilter.Dir != "" {
			pxeFilter = every(c.o.PXEFilter.Period)
		}
	}
	var syncing sync.Mutex
	var background sync.WaitGroup
	defer background.Wait()
	for {
		select {
		case <-ctx.Done():
			for _, t := range []*time.Ticker{heartbeat, status, timeouts, pxeFilter, powerSync} {
				if t != nil {
					t.Stop()
				}
			}
			return
		case <-tick(heartbeat):
			c.timed(TaskHeartbeat, func() {
				if err := c.store.HeartbeatConductor(ctx, c.host); err != nil && ctx.Err() == nil {
					c.log.Error("heartbeat failed", "error", err)
				}
				if c.apiOnly {
					return
				}
				if err := c.refreshRing(ctx); err != nil && ctx.Err() == nil {
					c.log.Error("hash ring refresh failed", "error", err)
				}
			})
			if !c.apiOnly {
				c.timed(TaskTakeOver, func() { c.TakeOverOrphans(ctx) })
			}
		case <-tick(status):
			c.timed(TaskInspectionStatus, func() { c.CheckInspections(ctx) })
		case <-tick(timeouts):
			c.timed(TaskProvisionTimeouts, func() {
				c.CheckInspectTimeouts(ctx)
				c.failUnlockedTransient(ctx)
			})
		case <-tick(pxeFilter):
			c.timed(TaskPXEFilter, func() { c.SyncPXEFilter(ctx) })
		case <-tick(powerSync):
			// In its own goroutine: a cycle of slow BMCs must not hold up
			// the heartbeat (a conductor that misses it is taken for
			// dead). A cycle still running when the next is due skips it.
			if !syncing.TryLock() {
				c.observer.PeriodicTaskSkipped(TaskPowerSync)
				continue
			}
			background.Add(1)
			go func() {
				defer background.Done()
				defer syncing.Unlock()
				c.timed(TaskPowerSync, func() { c.SyncPowerStates(ctx) })
			}()
		}
	}
}

// The periodic tasks' names, as the Observer (and the metrics) see them.
const (
	TaskHeartbeat         = "heartbeat"          // the conductor's heartbeat and the hash ring's refresh
	TaskTakeOver          = "take_over"          // nodes and locks of dead conductors taken over
	TaskInspectionStatus  = "inspection_status"  // inspections in inspect wait polled
	TaskProvisionTimeouts = "provision_timeouts" // inspect wait timeouts, and transient states left by a dead task
	TaskPXEFilter         = "pxe_filter"         // [pxe_filter]dhcp_hostsdir written
	TaskPowerSync         = "power_sync"         // power states read from the BMCs
)

// timed runs one periodic task and tells the observer how long it took.
func (c *Conductor) timed(task string, run func()) {
	start := time.Now()
	run()
	c.observer.PeriodicTaskRan(task, time.Since(start))
}

// tick returns the ticker's channel, or nil (never ready) for a disabled task.
func tick(t *time.Ticker) <-chan time.Time {
	if t == nil {
		return nil
	}
	return t.C
}

// statusCheckConcurrency bounds parallel inspector polls per period.
const statusCheckConcurrency = 8

// CheckInspections polls the inspect interface for every node in inspect
// wait that this conductor owns, finishing those whose inspection ended.
func (c *Conductor) CheckInspections(ctx context.Context) {
	nodes, err := c.store.ListNodes(ctx, store.NodeFilter{ProvisionState: []string{states.InspectWait}})
	if err != nil {
		if ctx.Err() == nil {
			c.log.Error("list nodes in inspect wait", "error", err)
		}
		return
	}
	sem := make(chan struct{}, statusCheckConcurrency)
	var wg sync.WaitGroup
	for _, n := range nodes {
		if !c.owns(n.UUID, n.ConductorGroup) || n.Reservation != "" {
			continue
		}
		sem <- struct{}{}
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			c.checkInspection(ctx, n.UUID)
		}()
	}
	wg.Wait()
}

// NotifyInspectionFinished is how the built-in inspector tells the conductor
// that a node's introspection ended, so completion does not wait for the
// next poll. It returns at once; the check runs in the background.
func (c *Conductor) NotifyInspectionFinished(nodeUUID string) {
	if c.stopping.Load() {
		return
	}
	if _, busy := c.inspectChecks.LoadOrStore(nodeUUID, true); busy {
		return
	}
	c.running.Add(1)
	go func() {
		defer c.running.Done()
		defer c.inspectChecks.Delete(nodeUUID)
		// The node may still be locked by the task that is moving it to
		// inspect wait; retry briefly.
		for attempt := 0; attempt < 50; attempt++ {
			if c.checkInspection(c.workCtx, nodeUUID) != errRetry {
				return
			}
			select {
			case <-c.workCtx.Done():
				return
			case <-time.After(time.Duration(attempt+1) * 20 * time.Millisecond):
			}
		}
	}()
}

var errRetry = errors.New("retry")

// checkInspection finishes one node's inspection if the inspect interface
// says it ended. The status is read without the node's lock (as Ironic's
// shared task), so a poll never blocks the inspector writing to the node;
// the lock is taken only to finish. It returns errRetry when the node is
// locked or not yet in inspect wait.
func (c *Conductor) checkInspection(ctx context.Context, nodeUUID string) error {
	st, err := c.inspectionStatus(ctx, nodeUUID)
	if err != nil || (!st.Finished && st.Error == "") {
		return err
	}
	t, err := c.acquire(ctx, nodeUUID)
	if err != nil {
		if errors.Is(err, ErrNodeLocked) {
			return errRetry
		}
		return err
	}
	defer c.release(t)
	if t.Node.ProvisionState != states.InspectWait {
		return nil // finished, aborted or timed out meanwhile
	}
	c.finishInspection(ctx, t, st)
	return nil
}

// inspectionStatus asks the node's inspect interface, without locking,
// how its inspection is going.
func (c *Conductor) inspectionStatus(ctx context.Context, nodeUUID string) (driver.InspectStatus, error) {
	n, err := c.store.GetNode(ctx, nodeUUID)
	if err != nil {
		return driver.InspectStatus{}, err
	}
	// A status query needs the node and its interfaces, not its ports.
	t := &driver.Task{Node: n, Shared: true, Driver: c.reg.Resolve(n.Interfaces), Log: c.log.With("node", n.UUID), Store: c.store}
	switch n.ProvisionState {
	case states.Inspecting:
		return driver.InspectStatus{}, errRetry
	case states.InspectWait:
	default:
		return driver.InspectStatus{}, nil
	}
	st, err := t.Driver.Inspect.Status(ctx, t)
	if err != nil && !errors.Is(err, driver.ErrUnsupported) {
		t.Log.Warn("inspection status check failed; retrying next period", "error", err)
	}
	return st, err
}

// finishInspection runs the inspect interface's Finish (teardown, storing
// data) and moves the node to manageable or inspect failed.
func (c *Conductor) finishInspection(ctx context.Context, t *driver.Task, st driver.InspectStatus) {
	ctx = context.WithoutCancel(ctx)
	err := t.Driver.Inspect.Finish(ctx, t, st)
	now := c.now().UTC()
	t.Node.InspectionFinishedAt = &now
	switch {
	case st.Error != "":
		msg := fmt.Sprintf("ironic-inspector inspection failed: %s", st.Error)
		if err != nil {
			msg += fmt.Sprintf("; clean up also failed: %v", err)
		}
		c.failNode(ctx, t, "inspect", msg)
	case err != nil:
		msg := err.Error()
		var pe *driver.PhaseError
		if !errors.As(err, &pe) {
			msg = fmt.Sprintf("Inspection clean up failed: %v", err)
		}
		c.failNode(ctx, t, "clean up", msg)
	default:
		// Under the node's lock: the next inspection cannot store its
		// inventory before this one was compared.
		c.recordHardwareChanges(ctx, t.Node)
		if err := c.transition(ctx, t, states.EventDone, ""); err != nil {
			t.Log.Error("cannot finish inspection", "error", err)
		}
	}
}

// CheckInspectTimeouts fails owned nodes that have been in inspect wait for
// longer than [conductor]inspect_wait_timeout, after tearing down through
// the inspect interface's Abort.
func (c *Conductor) CheckInspectTimeouts(ctx context.Context) {
	limit := c.o.InspectWaitTimeout
	if limit <= 0 {
		return
	}
	nodes, err := c.store.ListNodes(ctx, store.NodeFilter{ProvisionState: []string{states.InspectWait}})
	if err != nil {
		if ctx.Err() == nil {
			c.log.Error("list nodes in inspect wait", "error", err)
		}
		return
	}
	deadline := c.now().Add(-limit)
	for _, n := range nodes {
		if n.Maintenance || n.Reservation != "" || !c.owns(n.UUID, n.ConductorGroup) {
			continue
		}
		if n.InspectionStartedAt == nil || n.InspectionStartedAt.After(deadline) {
			continue
		}
		t, err := c.acquire(ctx, n.UUID)
		if err != nil {
			continue
		}
		if t.Node.ProvisionState == states.InspectWait {
			msg := timeoutMessage(ctx, c.store, t.Node, limit)
			if err := t.Driver.Inspect.Abort(ctx, t); err != nil && !errors.Is(err, driver.ErrUnsupported) {
				msg += fmt.Sprintf("; clean up failed: %v", err)
			}
			c.failNode(ctx, t, "timeout", msg)
		}
		c.release(t)
	}
}

// TakeOverOrphans releases the locks of nodes whose holder is no longer a
// live conductor (it stopped heart-beating), for the nodes this conductor
// owns now, and fails those left in a transient state, tearing down an
// inspection that was starting — as Ironic's orphan check does.
func (c *Conductor) TakeOverOrphans(ctx context.Context) {
	timeout := c.o.HeartbeatTimeout
	live, err := c.store.ListConductors(ctx, c.now().Add(-timeout))
	if err != nil {
		if ctx.Err() == nil {
			c.log.Error("list live conductors", "error", err)
		}
		return
	}
	alive := map[string]bool{c.host: true}
	for _, cd := range live {
		alive[cd.Hostname] = true
	}
	reserved := true
	nodes, err := c.store.ListNodes(ctx, store.NodeFilter{Reserved: &reserved})
	if err != nil {
		if ctx.Err() == nil {
			c.log.Error("list reserved nodes", "error", err)
		}
		return
	}
	for _, n := range nodes {
		if alive[n.Reservation] || !c.owns(n.UUID, n.ConductorGroup) {
			continue
		}
		dead := n.Reservation
		if err := c.store.ReleaseNode(ctx, n.UUID, dead); err != nil {
			continue // taken or released meanwhile
		}
		c.log.Warn("released the lock of a dead conductor", "node", n.UUID, "holder", dead)
		// The state is decided on the node as read under the new lock,
		// never on the listing: the holder may have moved the node into a
		// transient state (manageable → inspecting) between the listing
		// and the release, and a node left there unlocked would never be
		// failed by this path again (issue 20). A node another task
		// locked meanwhile is left to failUnlockedTransient.
		c.failTransient(ctx, n.UUID, fmt.Sprintf("conductor %s stopped while the node was in state %%q; the operation was aborted", dead), "take over")
	}
}

// failTransient locks the node and, when it is (still) in a transient
// state, tears down an inspection that was starting and fails it with
// msgFormat's last_error (%q is the state it was in).
func (c *Conductor) failTransient(ctx context.Context, nodeUUID, msgFormat, phase string) {
	t, err := c.acquire(ctx, nodeUUID)
	if err != nil {
		return
	}
	defer c.release(t)
	if !states.IsTransient(t.Node.ProvisionState) {
		return
	}
	from := t.Node.ProvisionState
	msg := fmt.Sprintf(msgFormat, from)
	if from == states.Inspecting {
		if err := t.Driver.Inspect.Abort(ctx, t); err != nil && !errors.Is(err, driver.ErrUnsupported) {
			msg += fmt.Sprintf("; clean up failed: %v", err)
		}
	}
	c.log.Warn("failed a node left in a transient state without its task", "node", nodeUUID, "state", from, "phase", phase)
	c.failNode(ctx, t, phase, msg)
}

// failUnlockedTransient fails the owned nodes that are in a transient
// state (inspecting, verifying, cleaning, …) with no lock. Every task
// holds its node's lock for as long as the node is in such a state, so
// one without a lock lost its task: its lock was taken over from a
// conductor declared dead (a starved machine missing heartbeats) whose
// task then could not save its next state, or the taker lost the race for
// the lock. The node's conductor may be alive, so neither recovery at
// start nor the take-over would ever see it; Ironic fails such nodes
// (_fail_transient_state, _check_orphan_nodes) likewise. It runs every
// [conductor]check_provision_state_interval.
func (c *Conductor) failUnlockedTransient(ctx context.Context) {
	reserved := false
	nodes, err := c.store.ListNodes(ctx, store.NodeFilter{ProvisionState: states.Transient, Reserved: &reserved})
	if err != nil {
		if ctx.Err() == nil {
			c.log.Error("list unlocked nodes in transient states", "error", err)
		}
		return
	}
	for _, n := range nodes {
		if !c.owns(n.UUID, n.ConductorGroup) {
			continue
		}
		c.failTransient(ctx, n.UUID, "the task of the node in state %q lost its lock (its conductor was taken for dead) and ended; the operation was aborted", "orphan")
	}
}
