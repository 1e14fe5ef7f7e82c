// Package inspector is ferro's inspection service, a drop-in for
// ironic-inspector: it starts introspections, receives the agent's report on
// /v1/continue, finds the node it belongs to, runs the processing hooks and
// introspection rules, and writes what it learned back through the bare
// metal API. It runs in the ferro process or alone (--role inspector).
package inspector

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/ferrometal/ferro/internal/baremetal"
	"github.com/ferrometal/ferro/internal/driver"
	"github.com/ferrometal/ferro/internal/inspection"
	"github.com/ferrometal/ferro/internal/states"
	"github.com/ferrometal/ferro/internal/store"
)

// Introspection states, as ironic-inspector names them.
const (
	StateStarting   = "starting"
	StateWaiting    = "waiting"
	StateProcessing = "processing"
	StateFinished   = "finished"
	StateError      = "error"
	StateAborting   = "aborting"
	StateReapplying = "reapplying"
)

// activeStates are those in which an introspection can still change.
var activeStates = []string{StateStarting, StateWaiting, StateProcessing, StateAborting, StateReapplying}

// Error is a failure with the HTTP status the API answers with.
type Error struct {
	Status int
	Msg    string
}

func (e *Error) Error() string { return e.Msg }

func errorf(status int, format string, a ...any) error {
	return &Error{Status: status, Msg: fmt.Sprintf(format, a...)}
}

// Options wire a Service.
type Options struct {
	Store     store.Store
	BareMetal BareMetal
	Log       *slog.Logger
	// StoreData keeps the raw and processed reports
	// ([processing]store_data = database).
	StoreData bool
	// RamdiskLogsDir, AlwaysStoreRamdiskLogs and RamdiskLogsFilenameFormat
	// are [processing]'s options of the same names.
	RamdiskLogsDir            string
	AlwaysStoreRamdiskLogs    bool
	RamdiskLogsFilenameFormat string
	// PermitActiveIntrospection and CanManageBoot are [inspector]'s options
	// of the same names.
	PermitActiveIntrospection bool
	CanManageBoot             bool
	// IntrospectionDelay is how long a managed boot waits before it
	// reboots the node ([inspector]introspection_delay).
	IntrospectionDelay time.Duration
	// Timeout ends an introspection active for longer ([DEFAULT]timeout);
	// 0 means never.
	Timeout time.Duration
	// TokenLifetime is how long after an introspection starts its
	// callback token is accepted ([conductor]inspect_wait_timeout: the
	// token ends with the inspection it was issued for, even before the
	// timeout checks run); 0 means as long as the introspection waits.
	TokenLifetime time.Duration
	// Notify, when set, is told the UUID of every node whose introspection
	// ended, so a same-process conductor finishes at once instead of polling.
	Notify func(nodeUUID string)
	Now    func() time.Time
	// Progress records "report received" and "processed" in the node's
	// history; nil records nothing.
	Progress driver.ProgressRecorder
	// ExclusiveStore says that no other inspector process uses the store
	// (SQLite): at start every introspection left in processing is this
	// process's own and is recovered at once, not only once it is stale.
	ExclusiveStore bool
	// Pipeline configures the processing of reports (the Inspector
	// dialect: [processing]processing_hooks and the options of the
	// hooks); nil is ferro's defaults. The service adds its rules.
	Pipeline *inspection.Options
}

// DefaultHooks are ferro's [processing]processing_hooks: upstream's
// default plus LLDP processing and local_link_connection, which
// network-managed inspection needs.
var DefaultHooks = append(append([]string(nil), inspection.InspectorDefaultHooks...), "lldp_basic", "local_link_connection")

// Service is the inspector.
type Service struct {
	store  store.Store
	bm     BareMetal
	o      Options
	log    *slog.Logger
	notify func(string)
	now    func() time.Time
	pipe   *inspection.Pipeline
	// progress is never nil.
	progress  driver.ProgressRecorder
	exclusive bool

	// nodeMu serialises work on one node's introspection in this process.
	nodeMu sync.Map // node UUID → *sync.Mutex
	// pending holds, per node, the channel that cancels its managed boot
	// still waiting for its turn (Abort and a new Start close it).
	pendingMu sync.Mutex
	pending   map[string]chan struct{}
	// Managed boots take their turns in the order they were started: each
	// waits for the previous one's turn channel to close (lastTurn is the
	// newest). lastBoot is when the last boot took its turn; only the boot
	// whose turn it is reads or writes it.
	turnMu   sync.Mutex
	lastTurn chan struct{}
	lastBoot time.Time
	bg       sync.WaitGroup
	ctx      context.Context
	cancel   context.CancelFunc
}

// New builds the service and its processing hooks from the configuration.
func New(o Options) (*Service, error) {
	log := o.Log
	if log == nil {
		log = slog.Default()
	}
	now := o.Now
	if now == nil {
		now = time.Now
	}
	popts := inspection.DefaultOptions(inspection.Inspector)
	popts.Hooks = DefaultHooks
	if o.Pipeline != nil {
		popts = *o.Pipeline
	}
	popts.Dialect = inspection.Inspector
	popts.Rules = &storedRules{store: o.Store, log: log}
	if popts.Log == nil {
		popts.Log = log
	}
	pipe, err := inspection.New(popts)
	if err != nil {
		return nil, fmt.Errorf("processing hooks: %w", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	progress := o.Progress
	if progress == nil {
		progress = driver.NoProgress{}
	}
	return &Service{
		store: o.Store, bm: o.BareMetal, o: o, log: log.With("component", "inspector"),
		notify: o.Notify, now: now, pipe: pipe, ctx: ctx, cancel: cancel,
		progress: progress, exclusive: o.ExclusiveStore,
		pending: map[string]chan struct{}{},
	}, nil
}

// Close stops background work (manage_boot reboots) and waits for it.
func (s *Service) Close() {
	s.cancel()
	s.bg.Wait()
}

func (s *Service) lockNode(uuid string) func() {
	m, _ := s.nodeMu.LoadOrStore(uuid, &sync.Mutex{})
	mu := m.(*sync.Mutex)
	mu.Lock()
	return mu.Unlock
}

// introspectable are the provision states in which introspection may start.
var introspectable = []string{states.Enroll, states.Manageable, states.Inspecting, states.InspectWait, states.InspectFailed}

// Start begins an introspection of a node. With manageBoot the inspector
// sets the boot device and reboots the node itself (the old path); without,
// it only waits for the report. token, when set, must come back with the
// report.
func (s *Service) Start(ctx context.Context, ident string, manageBoot bool, token string) error {
	node, ports, err := s.bm.Node(ctx, ident)
	if errors.Is(err, ErrNodeNotFound) {
		return errorf(http.StatusNotFound, "Node %s was not found", ident)
	}
	if err != nil {
		return fmt.Errorf("get node %s: %w", ident, err)
	}
	allowed := introspectable
	if s.o.PermitActiveIntrospection {
		allowed = append(slices.Clone(allowed), states.Active, "rescue")
	}
	if !slices.Contains(allowed, node.ProvisionState) {
		return errorf(http.StatusBadRequest, "Node %s has invalid provision state %q, valid states are %s",
			node.UUID, node.ProvisionState, strings.Join(allowed, ", "))
	}
	if manageBoot && !s.o.CanManageBoot {
		return errorf(http.StatusBadRequest, "Managed boot is requested, but this installation cannot manage boot ([inspector]can_manage_boot is false)")
	}
	unlock := s.lockNode(node.UUID)
	defer unlock()
	// A start without a token never replaces a running introspection that
	// has one: that would turn a report only the booted agent can send
	// into one anybody who knows a MAC address can.
	if old, err := s.store.GetIntrospection(ctx, node.UUID); err == nil && old.TokenHash != nil && token == "" &&
		old.FinishedAt == nil && slices.Contains(activeStates, old.State) {
		return errorf(http.StatusConflict, "Introspection of node %s is running (state %q) with a callback token; a start without a token cannot replace it, abort it first", node.UUID, old.State)
	} else if err != nil && !errors.Is(err, store.ErrNotFound) {
		return fmt.Errorf("get introspection of node %s: %w", node.UUID, err)
	}
	in := &store.Introspection{
		NodeUUID: node.UUID, ManageBoot: manageBoot, StartedAt: s.now().UTC(), UpdatedAt: s.now().UTC(),
		LookupMACs: portMACs(ports), LookupBMC: bmcAddresses(ctx, node),
	}
	if len(in.LookupMACs) == 0 && len(in.LookupBMC) == 0 {
		return errorf(http.StatusBadRequest, "No lookup attributes were found for node %s, inspector won't be able to find it after introspection, consider creating ironic ports or providing an IPMI address", node.UUID)
	}
	if token != "" {
		h := sha256.Sum256([]byte(token))
		in.TokenHash = h[:]
	}
	in.State = StateWaiting
	if manageBoot {
		in.State = StateStarting
	}
	// As ironic-inspector, a new introspection drops the previous one's
	// data: GET …/data answers 404 until this one is processed.
	if err := s.store.SaveIntrospection(ctx, in, dropData...); err != nil {
		return fmt.Errorf("save introspection of node %s: %w", node.UUID, err)
	}
	s.log.Info("introspection started", "node", node.UUID, "manage_boot", manageBoot, "token", token != "")
	cancelled := s.setPending(node.UUID, manageBoot)
	if manageBoot {
		startedAt := in.StartedAt
		s.turnMu.Lock()
		t := turn{prev: s.lastTurn, mine: make(chan struct{})}
		s.lastTurn = t.mine
		s.turnMu.Unlock()
		s.bg.Add(1)
		go func() {
			defer s.bg.Done()
			s.bootForIntrospection(node.UUID, startedAt, cancelled, t)
		}()
	}
	return nil
}

// dropData are the reports a new introspection deletes.
var dropData = []store.IntrospectionData{{Kind: "raw"}, {Kind: "processed"}}

// setPending cancels the node's managed boot still waiting for its turn,
// if any, and with manageBoot registers a new one, returning the channel
// that cancels it.
func (s *Service) setPending(nodeUUID string, manageBoot bool) <-chan struct{} {
	s.pendingMu.Lock()
	defer s.pendingMu.Unlock()
	if c, ok := s.pending[nodeUUID]; ok {
		close(c)
		delete(s.pending, nodeUUID)
	}
	if !manageBoot {
		return nil
	}
	c := make(chan struct{})
	s.pending[nodeUUID] = c
	return c
}

// donePending forgets the node's pending boot if it is still c.
func (s *Service) donePending(nodeUUID string, c <-chan struct{}) {
	s.pendingMu.Lock()
	defer s.pendingMu.Unlock()
	if cur, ok := s.pending[nodeUUID]; ok && (<-chan struct{})(cur) == c {
		delete(s.pending, nodeUUID)
	}
}

// turn is a managed boot's place in the queue: it may go once prev (nil
// for the first) is closed, and closes mine when it is done with its turn.
type turn struct{ prev, mine chan struct{} }

// waitForTurn spaces managed boots [inspector]introspection_delay apart,
// as ironic-inspector's _wait_for_turn: the first boots at once, each next
// one, in the order they were started, that long after the previous boot
// took its turn. It returns false when the boot was cancelled (an abort, a
// new start, Close) while waiting; a cancelled boot gives its turn to the
// next one without delaying it.
func (s *Service) waitForTurn(cancelled <-chan struct{}, t turn) bool {
	if t.prev != nil {
		select {
		case <-t.prev:
		case <-s.ctx.Done():
			close(t.mine)
			return false
		case <-cancelled:
			// Keep the order: the next boot still waits for the previous.
			s.bg.Add(1)
			go func() {
				defer s.bg.Done()
				<-t.prev
				close(t.mine)
			}()
			return false
		}
	}
	defer close(t.mine)
	delay := s.o.IntrospectionDelay
	if wait := time.Until(s.lastBoot.Add(delay)); wait > 0 {
		timer := time.NewTimer(wait)
		defer timer.Stop()
		select {
		case <-timer.C:
		case <-cancelled:
			return false
		case <-s.ctx.Done():
			return false
		}
	}
	s.lastBoot = time.Now()
	return true
}

// bootForIntrospection is the old path: when its turn comes, PXE once and
// reboot. The introspection's state is checked under the node's lock
// before boot or power is touched, and the move to waiting is a
// compare-and-swap from starting, so an abort (in this process or another)
// either comes first and nothing is touched, or finds the introspection
// waiting and powers the node off after this reboot.
func (s *Service) bootForIntrospection(nodeUUID string, startedAt time.Time, cancelled <-chan struct{}, t turn) {
	defer s.donePending(nodeUUID, cancelled)
	if !s.waitForTurn(cancelled, t) {
		s.log.Info("managed boot cancelled before it touched the node", "node", nodeUUID)
		return
	}
	ctx := s.ctx
	unlock := s.lockNode(nodeUUID)
	defer unlock()
	in, err := s.store.GetIntrospection(ctx, nodeUUID)
	if err != nil || in.State != StateStarting || !in.StartedAt.Equal(startedAt) {
		// Aborted, restarted or timed out meanwhile.
		s.log.Info("managed boot cancelled before it touched the node", "node", nodeUUID)
		return
	}
	in.State, in.UpdatedAt = StateWaiting, s.now().UTC()
	if err := s.store.SaveIntrospectionFrom(ctx, in, []string{StateStarting}); err != nil {
		if !errors.Is(err, store.ErrConflict) {
			s.log.Error("cannot save introspection", "node", nodeUUID, "error", err)
		}
		return
	}
	if err := s.bm.SetBootDevice(ctx, nodeUUID, baremetal.BootDevicePXE, false); err != nil {
		s.finish(ctx, in, fmt.Sprintf("Failed to set boot device to PXE: %v", err))
		return
	}
	if err := s.bm.SetPowerState(ctx, nodeUUID, baremetal.PowerReboot); err != nil {
		s.finish(ctx, in, fmt.Sprintf("Failed to power on the node, check its power management configuration: %v", err))
		return
	}
	s.progress.Record(ctx, nodeUUID, driver.PhasePoweredOn, "rebooted into the ramdisk by the inspector (manage_boot)")
}

// finish ends an introspection, with an error message or without, powers
// the node off when the inspector manages boot, and notifies the conductor.
func (s *Service) finish(ctx context.Context, in *store.Introspection, errMsg string) {
	s.end(ctx, in, ending{errMsg: errMsg, powerOff: in.ManageBoot}) // fails only on storing processed data
}

// finishProcessed ends an introspection whose processing succeeded, as
// finish does, storing the processed data (unless nil) in the same
// transaction as its end. When the data cannot be stored nothing is, and
// the error is returned so that the caller fails the introspection with
// it, as when processing fails.
func (s *Service) finishProcessed(ctx context.Context, in *store.Introspection, processed []byte) error {
	return s.end(ctx, in, ending{processed: processed, powerOff: in.ManageBoot})
}

// ending says how an introspection ends.
type ending struct {
	errMsg    string
	processed []byte
	// powerOff powers the node off (the inspector booted it); with async
	// (an abort) in the background: the caller may be the conductor
	// aborting the node's inspection, which holds the node's lock until
	// the abort returns; the power-off retries until it is free.
	powerOff, async bool
	// from, when set, makes the save a compare-and-swap from these states;
	// end then returns store.ErrConflict when the state moved.
	from []string
	// aborted records the end as an abort in the node's history.
	aborted bool
}

// end ends the introspection.
func (s *Service) end(ctx context.Context, in *store.Introspection, e ending) error {
	was := *in
	now := s.now().UTC()
	in.FinishedAt, in.UpdatedAt, in.Error = &now, now, e.errMsg
	in.State = StateFinished
	if e.errMsg != "" {
		in.State = StateError
	}
	var reports []store.IntrospectionData
	if e.processed != nil {
		reports = append(reports, store.IntrospectionData{Kind: "processed", Data: e.processed})
	}
	var err error
	if e.from != nil {
		err = s.store.SaveIntrospectionFrom(context.WithoutCancel(ctx), in, e.from, reports...)
	} else {
		err = s.store.SaveIntrospection(context.WithoutCancel(ctx), in, reports...)
	}
	if err != nil {
		if e.processed != nil || e.from != nil {
			// The caller ends the introspection again (with this error and
			// without the data), or reads its new state.
			*in = was
			if e.processed == nil {
				return err
			}
			return fmt.Errorf("store processed introspection data: %w", err)
		}
		s.log.Error("cannot save introspection", "node", in.NodeUUID, "error", err)
	}
	s.recordEnd(ctx, in.NodeUUID, e)
	if e.powerOff {
		nodeUUID := in.NodeUUID
		powerOff := func(ctx context.Context) {
			if err := s.bm.SetPowerState(ctx, nodeUUID, baremetal.PowerOff); err != nil {
				s.log.Warn("cannot power off node after introspection", "node", nodeUUID, "error", err)
				return
			}
			s.progress.Record(ctx, nodeUUID, driver.PhasePoweredOff, "by the inspector (manage_boot)")
		}
		if e.async {
			s.bg.Add(1)
			go func() {
				defer s.bg.Done()
				powerOff(s.ctx)
			}()
		} else {
			powerOff(context.WithoutCancel(ctx))
		}
	}
	s.log.Info("introspection ended", "node", in.NodeUUID, "state", in.State, "error", e.errMsg)
	if s.notify != nil {
		s.notify(in.NodeUUID)
	}
	return nil
}

// recordEnd records an abort or a failure in the node's history when the
// introspection was started through the inspector API: when the conductor
// runs the node's inspection (inspecting, inspect wait) it records the end
// itself, with the reason as last_error.
func (s *Service) recordEnd(ctx context.Context, nodeUUID string, e ending) {
	if !e.aborted && e.errMsg == "" {
		return
	}
	if n, _, err := s.bm.Node(context.WithoutCancel(ctx), nodeUUID); err == nil &&
		(n.ProvisionState == states.Inspecting || n.ProvisionState == states.InspectWait) {
		return
	}
	if e.aborted {
		s.progress.Record(context.WithoutCancel(ctx), nodeUUID, driver.PhaseAborted, "through the inspector API")
		return
	}
	s.progress.Record(context.WithoutCancel(ctx), nodeUUID, driver.PhaseFailed, e.errMsg)
}

// Status returns a node's introspection.
func (s *Service) Status(ctx context.Context, ident string) (*store.Introspection, error) {
	uuid, err := s.resolve(ctx, ident)
	if err != nil {
		return nil, err
	}
	in, err := s.store.GetIntrospection(ctx, uuid)
	if errors.Is(err, store.ErrNotFound) {
		return nil, errorf(http.StatusNotFound, "Could not find node %s in cache", uuid) // upstream's words
	}
	return in, err
}

// resolve maps a node name to its UUID; UUIDs pass through so a status
// query needs no bare metal API call.
func (s *Service) resolve(ctx context.Context, ident string) (string, error) {
	if looksLikeUUID(ident) {
		return strings.ToLower(ident), nil
	}
	n, _, err := s.bm.Node(ctx, ident)
	if errors.Is(err, ErrNodeNotFound) {
		return "", errorf(http.StatusNotFound, "Node %s was not found", ident)
	}
	if err != nil {
		return "", err
	}
	return n.UUID, nil
}

func looksLikeUUID(s string) bool {
	if len(s) != 36 {
		return false
	}
	for i, c := range s {
		switch {
		case i == 8 || i == 13 || i == 18 || i == 23:
			if c != '-' {
				return false
			}
		case strings.ContainsRune("0123456789abcdefABCDEF", c):
		default:
			return false
		}
	}
	return true
}

// List returns introspections, newest first.
func (s *Service) List(ctx context.Context, f store.IntrospectionFilter) ([]*store.Introspection, error) {
	return s.store.ListIntrospections(ctx, f)
}

// Abort cancels a running introspection. As ironic-inspector, aborting
// one that has ended changes nothing and succeeds, and one whose report is
// being processed is refused with 409 (upstream holds the node's lock).
// Unlike upstream, an abort wins over a managed boot that has not taken
// place yet (upstream answers 409 while it waits for its turn, then boots):
// the introspection ends at once and the node's boot and power are never
// touched.
func (s *Service) Abort(ctx context.Context, ident string) error {
	uuid, err := s.resolve(ctx, ident)
	if err != nil {
		return err
	}
	unlock := s.lockNode(uuid)
	defer unlock()
	for {
		in, err := s.store.GetIntrospection(ctx, uuid)
		if errors.Is(err, store.ErrNotFound) {
			return errorf(http.StatusNotFound, "Could not find node %s in cache", uuid)
		}
		if err != nil {
			return err
		}
		switch in.State {
		case StateStarting, StateWaiting:
		case StateProcessing, StateReapplying, StateAborting:
			return errorf(http.StatusConflict, "Node is locked, please, retry later")
		default:
			return nil
		}
		s.setPending(uuid, false)
		// Nothing was booted while the introspection is starting; the
		// compare-and-swap loses to a boot that claimed it meanwhile
		// (another inspector process), and the loop then powers off.
		booted := in.State != StateStarting
		err = s.end(ctx, in, ending{
			errMsg: "Canceled by operator", powerOff: in.ManageBoot && booted, async: true,
			from: []string{in.State}, aborted: true,
		})
		if !errors.Is(err, store.ErrConflict) {
			return err
		}
	}
}

// Data returns the stored processed ("processed") or raw ("raw") report.
func (s *Service) Data(ctx context.Context, ident, kind string) ([]byte, error) {
	if !s.o.StoreData {
		return nil, errorf(http.StatusNotFound, "Inspector is not configured to store data. Set the [processing]store_data configuration option to change this.")
	}
	uuid, err := s.resolve(ctx, ident)
	if err != nil {
		return nil, err
	}
	b, err := s.store.GetIntrospectionData(ctx, uuid, kind)
	if errors.Is(err, store.ErrNotFound) {
		// Upstream's words, processed=True or False.
		return nil, errorf(http.StatusNotFound, "Introspection data not found for node %s, processed=%s", uuid,
			map[bool]string{true: "True", false: "False"}[kind == "processed"])
	}
	return b, err
}

// CheckTimeouts moves introspections active for longer than [DEFAULT]timeout to error.
func (s *Service) CheckTimeouts(ctx context.Context) {
	limit := s.o.Timeout
	if limit <= 0 {
		return
	}
	ins, err := s.store.ListIntrospections(ctx, store.IntrospectionFilter{State: activeStates})
	if err != nil {
		s.log.Error("list active introspections", "error", err)
		return
	}
	deadline := s.now().Add(-limit)
	for _, in := range ins {
		if in.StartedAt.After(deadline) {
			continue
		}
		unlock := s.lockNode(in.NodeUUID)
		cur, err := s.store.GetIntrospection(ctx, in.NodeUUID)
		if err == nil && slices.Contains(activeStates, cur.State) && !cur.StartedAt.After(deadline) {
			s.setPending(cur.NodeUUID, false)
			s.finish(ctx, cur, "Introspection timeout")
		}
		unlock()
	}
}

// Run runs the periodic timeout check and recovery until ctx is done; it
// returns nil then. Background work a start or an abort began (manage_boot
// reboots, power-offs) goes on until Close.
func (s *Service) Run(ctx context.Context) error {
	t := time.NewTicker(60 * time.Second)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
			s.CheckTimeouts(ctx)
			s.Recover(ctx)
		}
	}
}

func portMACs(ports []*baremetal.Port) []string {
	var macs []string
	for _, p := range ports {
		macs = append(macs, strings.ToLower(p.Address))
	}
	return macs
}

// bmcAddressFields are the driver_info keys upstream's ipmi_address_fields
// read, in order.
var bmcAddressFields = []string{"ipmi_address", "redfish_address", "ilo_address", "drac_host", "drac_address", "ibmc_address"}

// bmcAddresses returns the node's BMC IP addresses (v4 and v6) for lookup,
// resolving a host name with a short timeout.
func bmcAddresses(ctx context.Context, n *baremetal.Node) []string {
	var host string
	for _, f := range bmcAddressFields {
		if v, ok := n.DriverInfo[f].(string); ok && v != "" {
			host = v
			break
		}
	}
	if host == "" {
		return nil
	}
	if u, err := url.Parse(host); err == nil && u.Host != "" {
		host = u.Hostname()
	} else if h, _, err := net.SplitHostPort(host); err == nil {
		host = h
	}
	host = strings.Trim(host, "[]")
	if ip := net.ParseIP(host); ip != nil {
		return []string{ip.String()}
	}
	rctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	addrs, err := net.DefaultResolver.LookupIPAddr(rctx, host)
	if err != nil {
		return nil
	}
	var out []string
	for _, a := range addrs {
		out = append(out, a.IP.String())
	}
	return out
}

// staleProcessing is how long an introspection may stay in processing
// before recovery takes it as abandoned by a crashed process: processing a
// report takes well under a second.
const staleProcessing = 5 * time.Minute

// Recover finishes introspections a crashed process left in processing.
// Their raw report was stored when processing began, so each is processed
// again from it; one without a stored report ends in error with a reason,
// so that no node waits for [conductor]inspect_wait_timeout for a report
// ferro already had. With ExclusiveStore every such introspection is this
// process's own, so all are recovered; otherwise only those in processing
// for longer than staleProcessing (another live inspector may be working
// on a fresh one). Run calls it periodically too.
func (s *Service) Recover(ctx context.Context) {
	ins, err := s.store.ListIntrospections(ctx, store.IntrospectionFilter{State: []string{StateProcessing}})
	if err != nil {
		if ctx.Err() == nil {
			s.log.Error("list introspections left in processing", "error", err)
		}
		return
	}
	for _, in := range ins {
		if !s.exclusive && s.now().Sub(in.UpdatedAt) < staleProcessing {
			continue
		}
		s.recoverOne(ctx, in.NodeUUID)
	}
}

func (s *Service) recoverOne(ctx context.Context, nodeUUID string) {
	unlock := s.lockNode(nodeUUID)
	defer unlock()
	in, err := s.store.GetIntrospection(ctx, nodeUUID)
	if err != nil || in.State != StateProcessing {
		return // finished meanwhile
	}
	fail := func(reason string) {
		s.log.Warn("introspection left in processing moved to error", "node", nodeUUID, "reason", reason)
		s.finish(ctx, in, reason)
	}
	body, err := s.store.GetIntrospectionData(ctx, nodeUUID, "raw")
	if errors.Is(err, store.ErrNotFound) {
		fail("The inspector stopped while processing the report and no copy of it was stored ([processing]store_data is none); inspect the node again")
		return
	}
	if err != nil {
		s.log.Error("cannot read the stored report of an introspection left in processing", "node", nodeUUID, "error", err)
		return
	}
	rep, err := inspection.Decode(body)
	if err != nil {
		fail(fmt.Sprintf("The inspector stopped while processing the report, and the stored report does not decode: %v", err))
		return
	}
	s.log.Warn("re-processing the stored report of an introspection left in processing", "node", nodeUUID)
	if err := s.processReport(ctx, in, rep, s.pipe.Start(ctx, rep, nodeUUID)); err != nil {
		s.log.Warn("re-processing the stored report failed", "node", nodeUUID, "error", err)
	}
}
