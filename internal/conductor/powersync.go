package conductor

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/ferrometal/ferro/internal/baremetal"
	"github.com/ferrometal/ferro/internal/driver"
	"github.com/ferrometal/ferro/internal/states"
	"github.com/ferrometal/ferro/internal/store"
)

// PowerSync is [conductor]'s periodic power-state sync, Ironic's
// _sync_power_states.
type PowerSync struct {
	// Interval is sync_power_state_interval; 0 or less disables the sync.
	Interval time.Duration
	// Force is force_power_state_during_sync: a node whose BMC reports
	// another state than the recorded one is powered back to the recorded
	// one; false records what the BMC reports.
	Force bool
	// MaxRetries is power_state_sync_max_retries.
	MaxRetries int
	// Workers is sync_power_state_workers; at least 1.
	Workers int
	// Health is enable_health_monitoring: each sync that reads a node's
	// power state also reads its hardware health (Ironic's
	// node_cache_health).
	Health bool
}

// powerSyncEventType is the node history event type of the sync's errors,
// as Ironic's states.MONITORING.
const powerSyncEventType = "monitoring"

// powerFailureFault is the fault of a node whose power sync failed too
// often (Ironic's faults.POWER_FAILURE).
const powerFailureFault = "power failure"

// powerSyncExcluded are the states whose nodes the sync leaves alone:
// Ironic's SYNC_EXCLUDED_STATES (a ramdisk may be calling back in clean
// wait; enroll has no verified credentials), and inspect wait for the same
// reason as clean wait (an agent's report must not find the node locked by
// the sync). Nodes in a transient state are locked by their task and are
// skipped as locked.
var powerSyncExcluded = []string{states.Enroll, states.AdoptFailed, states.CleanWait, states.InspectWait, states.DeployWait}

// powerSyncStates are the states the sync lists, so that the database
// reads (by the provision_state index) neither the excluded nodes nor
// those in a transient state: a fleet waiting in enroll costs nothing.
var powerSyncStates = slices.DeleteFunc(slices.Clone(states.All), func(s string) bool {
	return states.IsTransient(s) || slices.Contains(powerSyncExcluded, s)
})

// PowerSyncResult is what one sync cycle did.
type PowerSyncResult struct {
	// Listed is the nodes listed by UUID (every conductor's, not in
	// maintenance, not locked, in a state the sync works in; only the
	// UUIDs and groups are read); Checked those of this conductor whose
	// BMC was asked (only they are read in full).
	Listed, Checked int
	// Corrected is the nodes whose power or recorded state was changed;
	// Failed those whose BMC could not be read or set.
	Corrected, Failed int
	Took              time.Duration
}

// SyncPowerStates runs one power-state sync: for every node this conductor
// owns on the hash ring that is not in maintenance, not locked, not in a
// power action and not in an excluded state, it asks the BMC for the power
// state, without the node's lock, and locks the node only when the BMC
// disagrees with the record. Nodes that failed last time go first, so a
// dead BMC reaches maintenance fast, as in Ironic.
func (c *Conductor) SyncPowerStates(ctx context.Context) PowerSyncResult {
	started := time.Now()
	maint, reserved := false, false
	f := store.NodeFilter{ProvisionState: powerSyncStates, Maintenance: &maint, Reserved: &reserved}
	// The ring is applied to UUIDs read from an index (nodes_power_sync),
	// and only this conductor's share is read in full: a cycle reads the
	// rows of its own active nodes, not those of every conductor.
	refs, err := c.store.ListNodeRefs(ctx, f)
	var nodes []*baremetal.Node
	if err == nil {
		var mine []string
		for _, r := range refs {
			if c.owns(r.UUID, r.ConductorGroup) {
				mine = append(mine, r.UUID)
			}
		}
		nodes, err = c.listNodesByUUID(ctx, f, mine)
	}
	if err != nil {
		if ctx.Err() == nil {
			c.log.Error("list nodes for the power state sync", "error", err)
		}
		return PowerSyncResult{}
	}
	res := PowerSyncResult{Listed: len(refs)}
	todo := nodes[:0]
	for _, n := range nodes {
		// Read again in full: a node may have changed since the list.
		if c.powerSyncSkips(n) || !c.owns(n.UUID, n.ConductorGroup) {
			continue
		}
		todo = append(todo, n)
	}
	c.syncMu.Lock()
	if len(c.syncFailures) > 0 {
		// Forget the nodes that left the sync (deleted, in maintenance,
		// owned by another conductor now).
		listed := make(map[string]bool, len(todo))
		for _, n := range todo {
			listed[n.UUID] = true
		}
		for id := range c.syncFailures {
			if !listed[id] {
				delete(c.syncFailures, id)
			}
		}
		failures := c.syncFailures
		slices.SortStableFunc(todo, func(a, b *baremetal.Node) int { return failures[b.UUID] - failures[a.UUID] })
	}
	c.syncMu.Unlock()
	res.Checked = len(todo)

	queue := make(chan *baremetal.Node)
	var mu sync.Mutex
	var wg sync.WaitGroup
	for range min(max(c.o.PowerSync.Workers, 1), len(todo)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for n := range queue {
				corrected, failed := c.syncPowerState(ctx, n)
				mu.Lock()
				if corrected {
					res.Corrected++
				}
				if failed {
					res.Failed++
				}
				mu.Unlock()
			}
		}()
	}
	for _, n := range todo {
		if ctx.Err() != nil || c.stopping.Load() {
			break
		}
		queue <- n
	}
	close(queue)
	wg.Wait()
	res.Took = time.Since(started)
	c.log.Info("power state sync done", "listed", res.Listed, "checked", res.Checked,
		"corrected", res.Corrected, "failed", res.Failed, "seconds", res.Took.Seconds())
	if iv := c.o.PowerSync.Interval; iv > 0 && res.Took > 3*iv {
		c.log.Warn("the power state sync took more than 3 times [conductor]sync_power_state_interval: " +
			"raise [conductor]sync_power_state_workers or add conductors")
	}
	return res
}

// uuidBatch bounds the UUIDs of one query (SQLite allows 32,766
// arguments, PostgreSQL 65,535).
const uuidBatch = 1000

// listNodesByUUID reads the nodes of uuids that f selects, in batches.
func (c *Conductor) listNodesByUUID(ctx context.Context, f store.NodeFilter, uuids []string) ([]*baremetal.Node, error) {
	var out []*baremetal.Node
	for batch := range slices.Chunk(uuids, uuidBatch) {
		f.UUIDs = batch
		nodes, err := c.store.ListNodes(ctx, f)
		if err != nil {
			return nil, err
		}
		out = append(out, nodes...)
	}
	return out, nil
}

// powerSyncSkips reports whether the sync leaves the node alone, as read
// with or without its lock.
func (c *Conductor) powerSyncSkips(n *baremetal.Node) bool {
	return n.Maintenance || n.Reservation != "" || n.TargetPowerState != "" ||
		states.IsTransient(n.ProvisionState) || slices.Contains(powerSyncExcluded, n.ProvisionState)
}

// syncPowerState is Ironic's do_sync_power_state for one node: it keeps
// the node's count (power_state_sync_count) and reports whether the node
// was corrected and whether its BMC failed.
func (c *Conductor) syncPowerState(ctx context.Context, n *baremetal.Node) (corrected, failed bool) {
	c.syncMu.Lock()
	count := c.syncFailures[n.UUID] + 1
	c.syncMu.Unlock()
	count, corrected, failed = c.doSyncPowerState(ctx, n, count)
	c.syncMu.Lock()
	if count > 0 {
		c.syncFailures[n.UUID] = count
	} else {
		delete(c.syncFailures, n.UUID)
	}
	c.syncMu.Unlock()
	return corrected, failed
}

// doSyncPowerState returns the node's count of syncs in a row that did not
// confirm its power state (0: this one did; Ironic keeps counting a node it
// had to correct until a sync finds it right), whether it changed the node
// or its power, and whether the BMC failed. count is the count this sync
// makes if it does not confirm the state.
func (c *Conductor) doSyncPowerState(ctx context.Context, n *baremetal.Node, count int) (next int, corrected, failed bool) {
	t := &driver.Task{Node: n, Shared: true, Driver: c.reg.Resolve(n.Interfaces), Log: c.log.With("node", n.UUID), Store: c.store}
	if n.PowerState == "" {
		// No state recorded and credentials that do not validate: nothing
		// to sync.
		if err := t.Driver.Power.Validate(ctx, t); err != nil {
			return 0, false, false
		}
	}
	actual, err := t.Driver.Power.PowerState(ctx, t)
	if err == nil && actual == baremetal.PowerError {
		err = errors.New("Power driver returned ERROR state while trying to sync power state.")
	}
	if err != nil {
		if ctx.Err() != nil {
			return count - 1, false, false // stopped, not the BMC's fault
		}
		if count > c.o.PowerSync.MaxRetries {
			c.powerSyncMaxRetriesExceeded(ctx, n.UUID, "", err)
		} else {
			t.Log.Warn("During sync_power_state, could not get power state", "attempt", count, "retries", c.o.PowerSync.MaxRetries, "error", err)
		}
		return count, false, true
	}
	if c.o.PowerSync.Health {
		c.cacheHealth(ctx, t)
	}
	if n.PowerState == actual {
		return 0, false, false
	}
	// The BMC disagrees: take the lock and look again.
	lt, err := c.acquire(ctx, n.UUID)
	if err != nil {
		return 0, false, false // locked meanwhile: a task is working on it
	}
	defer c.release(lt)
	node := lt.Node
	switch {
	case node.PowerState == actual:
		return 0, false, false
	case node.Maintenance || node.TargetPowerState != "" || states.IsTransient(node.ProvisionState) || slices.Contains(powerSyncExcluded, node.ProvisionState):
		return 0, false, false // something was done to the node since it was read
	case node.PowerState == "":
		t.Log.Info("During sync_power_state, node has no previous known state; recording the current state", "state", actual)
		node.PowerState = actual
		if err := lt.SaveNode(ctx); err != nil {
			t.Log.Error("cannot record the power state", "error", err)
		}
		return 0, true, false
	}
	if count > c.o.PowerSync.MaxRetries {
		c.powerSyncMaxRetriesExceededLocked(ctx, lt, actual, nil)
		return count, true, true
	}
	// Only a recorded on or off can be forced back (not "error").
	forcible := node.PowerState == baremetal.PowerOn || node.PowerState == baremetal.PowerOff
	if c.o.PowerSync.Force && forcible && !node.DisablePowerOff {
		t.Log.Warn("During sync_power_state, the node's power state does not match the recorded one; changing the hardware state",
			"actual", actual, "state", node.PowerState)
		want := node.PowerState
		if err := c.setPower(ctx, lt, want, c.o.PowerTimeout); err != nil {
			node.LastError = fmt.Sprintf("Failed to change power state to '%s' by '%s'. Error: %v", want, want, err)
			c.history(ctx, node, powerSyncEventType, node.LastError, baremetal.SeverityError)
			t.Log.Error("Failed to change power state during sync", "state", want, "attempt", count, "retries", c.o.PowerSync.MaxRetries, "error", err)
			if err := lt.SaveNode(ctx); err != nil {
				t.Log.Error("cannot record the failed power action", "error", err)
			}
			return count, true, true
		}
		if err := lt.SaveNode(ctx); err != nil {
			t.Log.Error("cannot save the power state", "error", err)
			return count, true, true
		}
		// Checked again next cycle: a forced state that does not hold
		// keeps counting toward maintenance, as in Ironic.
		return count, true, false
	}
	t.Log.Warn("During sync_power_state, the node's power state does not match the recorded one; updating the recorded state",
		"actual", actual, "state", node.PowerState)
	node.PowerState = actual
	if err := lt.SaveNode(ctx); err != nil {
		t.Log.Error("cannot record the power state", "error", err)
	}
	return count, true, false
}

// powerSyncMaxRetriesExceeded locks the node and puts it in maintenance
// (powerSyncMaxRetriesExceededLocked); a node locked meanwhile is left to
// its task.
func (c *Conductor) powerSyncMaxRetriesExceeded(ctx context.Context, nodeUUID, actual string, cause error) {
	t, err := c.acquire(ctx, nodeUUID)
	if err != nil {
		return
	}
	defer c.release(t)
	if t.Node.Maintenance {
		return
	}
	c.powerSyncMaxRetriesExceededLocked(ctx, t, actual, cause)
}

// powerSyncMaxRetriesExceededLocked is Ironic's
// handle_sync_power_state_max_retries_exceeded: the record takes the
// actual state, and the node goes to maintenance with fault "power
// failure" and the reason in its history.
func (c *Conductor) powerSyncMaxRetriesExceededLocked(ctx context.Context, t *driver.Task, actual string, cause error) {
	n := t.Node
	shown := noneIfEmpty(actual)
	msg := fmt.Sprintf("During sync_power_state, max retries exceeded for node %s, node state %s does not match expected state '%s'. "+
		"Updating DB state to '%s' Switching node to maintenance mode.", n.UUID, shown, n.PowerState, shown)
	if cause != nil {
		msg += fmt.Sprintf(" Error: %v", cause)
	}
	n.PowerState = actual
	n.Maintenance, n.MaintenanceReason, n.Fault = true, msg, powerFailureFault
	c.history(ctx, n, powerSyncEventType, msg, baremetal.SeverityError)
	if err := t.SaveNode(ctx); err != nil {
		t.Log.Error("cannot put the node in maintenance", "error", err)
		return
	}
	t.Log.Error(msg)
}

// cacheHealth is Ironic's node_cache_health: the BMC's hardware health
// goes to node.health, and a change to the node's history (monitoring,
// INFO). The node is locked only when the value changed; a driver without
// health, a BMC that fails or a node locked meanwhile leave it as it was.
func (c *Conductor) cacheHealth(ctx context.Context, t *driver.Task) {
	hr, ok := t.Driver.Management.(driver.HealthReader)
	if !ok {
		return
	}
	health, err := hr.Health(ctx, t)
	if errors.Is(err, driver.ErrUnsupported) {
		return
	}
	if err != nil {
		if ctx.Err() == nil {
			t.Log.Warn("Could not retrieve health status", "error", err)
		}
		return
	}
	if health == t.Node.Health {
		return
	}
	lt, err := c.acquire(ctx, t.Node.UUID)
	if err != nil {
		return
	}
	defer c.release(lt)
	node := lt.Node
	old := node.Health
	if old == health {
		return
	}
	node.Health = health
	if err := lt.SaveNode(ctx); err != nil {
		t.Log.Error("cannot record the health status", "error", err)
		return
	}
	t.Node.Health = health
	c.history(ctx, node, powerSyncEventType, fmt.Sprintf("Node health status changed: health='%s' (previously '%s')",
		noneIfEmpty(health), noneIfEmpty(old)), baremetal.SeverityInfo)
	if health == baremetal.HealthWarning || health == baremetal.HealthCritical {
		t.Log.Warn("node health status changed; it indicates a problem", "health", health, "previous", noneIfEmpty(old))
	} else {
		t.Log.Info("node health status changed", "health", noneIfEmpty(health), "previous", noneIfEmpty(old))
	}
}

// noneIfEmpty is how Python prints an unset string: None.
func noneIfEmpty(s string) string {
	if s == "" {
		return "None"
	}
	return s
}
