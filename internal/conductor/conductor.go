// Package conductor runs the work on nodes: a task manager with exclusive
// node locks (the node's reservation column), a bounded worker pool, the
// provision state machine's side effects, and periodic tasks (heartbeat,
// inspection status and timeouts).
package conductor

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/google/uuid"

	"github.com/ferrometal/ferro/internal/baremetal"
	"github.com/ferrometal/ferro/internal/driver"
	"github.com/ferrometal/ferro/internal/service"
	"github.com/ferrometal/ferro/internal/states"
	"github.com/ferrometal/ferro/internal/store"
)

// Options wires a Conductor.
type Options struct {
	Store    store.Store
	Registry *driver.Registry
	Log      *slog.Logger
	// Host is this conductor's name ([DEFAULT]host): in reservations and
	// the conductor table.
	Host string
	// Group is [conductor]conductor_group.
	Group string
	// Workers bounds the tasks running in the background
	// ([conductor]workers_pool_size); at least 1.
	Workers int
	// PowerTimeout bounds a power change the caller gives no timeout for
	// ([conductor]power_state_change_timeout).
	PowerTimeout time.Duration
	// HeartbeatInterval ([conductor]heartbeat_interval), StatusCheckPeriod
	// ([inspector]status_check_period) and CheckProvisionStateInterval
	// ([conductor]check_provision_state_interval) space the periodic
	// tasks; 0 disables one.
	HeartbeatInterval, StatusCheckPeriod, CheckProvisionStateInterval time.Duration
	// HeartbeatTimeout is how long a conductor that stopped heart-beating
	// counts as alive ([conductor]heartbeat_timeout).
	HeartbeatTimeout time.Duration
	// InspectWaitTimeout fails a node in inspect wait for longer
	// ([conductor]inspect_wait_timeout); 0 means never.
	InspectWaitTimeout time.Duration
	// PowerSync is the periodic power-state sync; a zero Interval disables it.
	PowerSync PowerSync
	// Now is the clock; nil means time.Now.
	Now func() time.Time
	// Discovery is [auto_discovery]: a report no node matches enrolls one.
	Discovery Discovery
	// AutomatedCleaning is [conductor]automated_clean and the runbooks
	// automated cleaning runs.
	AutomatedCleaning AutomatedCleaning
	// PXEFilter is [pxe_filter]: the allow and deny files of an external
	// dnsmasq, synced periodically; a zero Dir syncs nothing.
	PXEFilter PXEFilter
	// APIOnly is for a process with the api role but not the conductor
	// role. With no RPC between roles it runs the work of the requests it
	// takes itself, so it registers and heart-beats, and other conductors
	// leave its locks alone; but it runs no periodic task and takes no part
	// in the hash ring. It holds locks as "<[DEFAULT]host>-api", so that a
	// conductor process on the same host never releases them as its own.
	APIOnly bool
	// Observer is told of state changes and hardware changes (metrics);
	// nil tells nobody.
	Observer Observer
}

// apiHostSuffix ends the lock holder name of an api-only process.
const apiHostSuffix = "-api"

// Conductor is one conductor process's view of the work.
type Conductor struct {
	store store.Store
	reg   *driver.Registry
	o     Options
	log   *slog.Logger
	now   func() time.Time
	host  string
	// apiOnly: see Options.APIOnly.
	apiOnly bool

	// workers bounds the tasks running in the background.
	workers chan struct{}
	running sync.WaitGroup
	// workCtx is the context of background tasks; cancelled when a
	// graceful stop runs out of time.
	workCtx    context.Context
	cancelWork context.CancelFunc
	stopping   atomic.Bool

	// locked holds the nodes this process has reserved, so two tasks of the
	// same conductor (same reservation holder) exclude each other too.
	lockMu sync.Mutex
	locked map[string]chan struct{} // closed when the node is let go

	ring *ring
	// inspectChecks de-duplicates immediate inspection checks per node.
	inspectChecks sync.Map

	periodicDone chan struct{}
	stopPeriodic context.CancelFunc

	observer Observer
	counters counters

	// syncFailures counts, per node, the power syncs in a row that did not confirm its state
	// (Ironic's power_state_sync_count).
	syncMu       sync.Mutex
	syncFailures map[string]int
}

// New returns a conductor; call Start to recover state and run periodic tasks.
func New(o Options) *Conductor {
	now := o.Now
	if now == nil {
		now = time.Now
	}
	log := o.Log
	if log == nil {
		log = slog.Default()
	}
	ctx, cancel := context.WithCancel(context.Background())
	var observer Observer = noObserver{}
	if o.Observer != nil {
		observer = o.Observer
	}
	host := o.Host
	if o.APIOnly {
		host += apiHostSuffix
	}
	return &Conductor{
		store:      o.Store,
		reg:        o.Registry,
		o:          o,
		log:        log.With("component", "conductor"),
		now:        now,
		host:       host,
		apiOnly:    o.APIOnly,
		workers:    make(chan struct{}, max(o.Workers, 1)),
		workCtx:    ctx,
		cancelWork: cancel,
		locked:     map[string]chan struct{}{},
		ring:       newRing(host),
		observer:   observer,

		syncFailures: map[string]int{},
	}
}

// Host is the conductor's name, the value it writes in reservations.
func (c *Conductor) Host() string { return c.host }

// Registry returns the driver registry.
func (c *Conductor) Registry() *driver.Registry { return c.reg }

// Start registers the conductor, recovers nodes a previous run of this host
// left behind, and starts the periodic tasks. It returns once recovery is done.
func (c *Conductor) Start(ctx context.Context) error {
	if err := c.recover(ctx); err != nil {
		return fmt.Errorf("recover nodes of %s: %w", c.host, err)
	}
	c.sweepBootFiles(ctx)
	if err := c.store.RegisterConductor(ctx, &store.Conductor{
		Hostname: c.host, Group: c.o.Group, Online: true,
		Drivers: c.reg.HardwareTypeNames(), APIOnly: c.apiOnly,
	}); err != nil {
		return fmt.Errorf("register conductor %s: %w", c.host, err)
	}
	if err := c.refreshRing(ctx); err != nil {
		return err
	}
	if !c.apiOnly {
		c.SyncPXEFilter(ctx) // before the first period, as Ironic's start
	}
	pctx, cancel := context.WithCancel(context.Background())
	c.stopPeriodic = cancel
	c.periodicDone = make(chan struct{})
	go c.runPeriodic(pctx)
	c.log.Info("conductor started", "host", c.host, "workers", cap(c.workers), "api_only", c.apiOnly)
	return nil
}

// recover releases this host's stale reservations; nodes left in a transient
// state by a crashed task are failed with a last_error.
func (c *Conductor) recover(ctx context.Context) error {
	nodes, err := c.store.ListNodes(ctx, store.NodeFilter{ReservedBy: c.host})
	if err != nil {
		return err
	}
	for _, n := range nodes {
		if states.IsTransient(n.ProvisionState) {
			from := n.ProvisionState
			msg := fmt.Sprintf("conductor %s restarted while the node was in state %q; the operation was aborted", c.host, from)
			if from == states.Inspecting {
				// A start cut short may have left an inspection network or
				// boot files: tear them down like any other failure.
				if t, err := c.load(ctx, n, false); err == nil {
					if err := t.Driver.Inspect.Abort(ctx, t); err != nil && !errors.Is(err, driver.ErrUnsupported) {
						msg += fmt.Sprintf("; clean up failed: %v", err)
					}
				}
			}
			if err := c.fire(n, states.EventFail); err != nil {
				c.log.Error("cannot fail node left in transient state", "node", n.UUID, "state", from, "error", err)
				continue
			}
			n.LastError = msg
			if err := c.store.UpdateNode(ctx, n); err != nil {
				return err
			}
			c.history(ctx, n, "recover", msg, baremetal.SeverityError)
			c.log.Warn("failed node left in transient state", "node", n.UUID, "state", from, "new_state", n.ProvisionState)
		}
	}
	released, err := c.store.ReleaseAllReservations(ctx, c.host)
	if err != nil {
		return err
	}
	if released > 0 {
		c.log.Info("released stale reservations", "count", released)
	}
	return nil
}

// sweepBootFiles removes the boot files of nodes that are not being
// inspected (or no longer exist): a conductor that died mid-inspection left
// them on its disk when another took its nodes over, and a stale per-MAC
// entry would boot the node into the inspection ramdisk later. Failures are
// logged; they do not stop the conductor.
func (c *Conductor) sweepBootFiles(ctx context.Context) {
	keep := func(ctx context.Context, nodeUUID string) bool {
		n, err := c.store.GetNode(ctx, nodeUUID)
		if errors.Is(err, store.ErrNotFound) {
			return false
		}
		// When in doubt, keep.
		return err != nil || n.ProvisionState == states.Inspecting || n.ProvisionState == states.InspectWait
	}
	for _, b := range c.reg.BootInterfaces() {
		s, ok := b.(driver.BootFileSweeper)
		if !ok {
			continue
		}
		swept, err := s.SweepBootFiles(ctx, keep)
		if len(swept) > 0 {
			c.log.Warn("removed boot files left by inspections that ended elsewhere", "nodes", swept)
		}
		if err != nil {
			c.log.Error("cannot sweep boot files", "error", err)
		}
	}
}

// Stop stops taking work, waits for running tasks until ctx is done (then
// cancels them), releases every lock this host holds and unregisters.
func (c *Conductor) Stop(ctx context.Context) error {
	c.stopping.Store(true)
	if c.stopPeriodic != nil {
		c.stopPeriodic()
		<-c.periodicDone
	}
	done := make(chan struct{})
	go func() { c.running.Wait(); close(done) }()
	select {
	case <-done:
	case <-ctx.Done():
		c.log.Warn("graceful stop timed out; cancelling running tasks")
		c.cancelWork()
		<-done
	}
	c.cancelWork()
	bg := context.WithoutCancel(ctx)
	var errs []error
	if _, err := c.store.ReleaseAllReservations(bg, c.host); err != nil {
		errs = append(errs, err)
	}
	if err := c.store.UnregisterConductor(bg, c.host); err != nil {
		errs = append(errs, err)
	}
	c.log.Info("conductor stopped", "host", c.host)
	return errors.Join(errs...)
}

// Run is the started conductor as a part of the process (service.Group):
// it waits until ctx ends, then stops the conductor (Stop) on
// service.DrainContext, so running tasks may finish until the group's
// drain deadline and are cancelled after it. Call it after Start.
func (c *Conductor) Run(ctx context.Context) error {
	<-ctx.Done()
	dctx, cancel := service.DrainContext(ctx)
	defer cancel()
	return c.Stop(dctx)
}

// takeWorker reserves a slot in the worker pool, or fails with
// ErrNoFreeWorker (ErrShuttingDown once stopping). The slot must go to run
// or back with giveBackWorker.
func (c *Conductor) takeWorker() error {
	if c.stopping.Load() {
		return ErrShuttingDown
	}
	select {
	case c.workers <- struct{}{}:
		return nil
	default:
		c.counters.workerRefusals.Add(1)
		return fmt.Errorf("%w: all %d workers are busy", ErrNoFreeWorker, cap(c.workers))
	}
}

func (c *Conductor) giveBackWorker() { <-c.workers }

// run runs fn on a reserved worker slot with the task's lock held,
// releasing both when fn returns.
func (c *Conductor) run(t *driver.Task, fn func(ctx context.Context, t *driver.Task)) {
	c.running.Add(1)
	go func() {
		defer c.running.Done()
		defer c.giveBackWorker()
		defer c.release(t)
		defer func() {
			if r := recover(); r != nil {
				c.log.Error("task panicked", "node", t.Node.UUID, "panic", r)
			}
		}()
		fn(c.workCtx, t)
	}()
}

// fire applies a state machine event to the node in memory: provision and
// target state and provision_updated_at.
func (c *Conductor) fire(n *baremetal.Node, event string) error {
	to, err := states.Next(n.ProvisionState, event)
	if err != nil {
		return fmt.Errorf("%w: %v", ErrInvalidState, err)
	}
	now := c.now().UTC()
	n.ProvisionState = to
	n.TargetProvisionState = states.Target(to)
	n.ProvisionUpdatedAt = &now
	return nil
}

// history appends an event to the node's history; failures are only logged.
func (c *Conductor) history(ctx context.Context, n *baremetal.Node, eventType, event, severity string) {
	now := c.now().UTC()
	e := &baremetal.HistoryEvent{
		UUID: uuid.NewString(), NodeUUID: n.UUID, Conductor: c.host, Event: event, EventType: eventType, Severity: severity,
		State: n.ProvisionState, TargetProvisionState: n.TargetProvisionState, CreatedAt: now,
	}
	// Ironic's node_history_record: how long the node has been in its
	// provision state.
	if n.ProvisionUpdatedAt != nil {
		d := int64(now.Sub(*n.ProvisionUpdatedAt) / time.Second)
		e.DurationSeconds = &d
	}
	err := c.store.AddHistory(context.WithoutCancel(ctx), e)
	if err != nil {
		c.log.Warn("cannot record node history", "node", n.UUID, "error", err)
	}
}
