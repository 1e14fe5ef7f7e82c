package inspect

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/ferrometal/ferro/internal/baremetal"
	"github.com/ferrometal/ferro/internal/callback"
	"github.com/ferrometal/ferro/internal/driver"
	"github.com/ferrometal/ferro/internal/inspection"
	"github.com/ferrometal/ferro/internal/inventory"
	"github.com/ferrometal/ferro/internal/jsonlimit"
	"github.com/ferrometal/ferro/internal/states"
	"github.com/ferrometal/ferro/internal/store"
)

// Keys the agent interface keeps in driver_internal_info while a node is
// inspected, all removed when the inspection ends.
const (
	// LookupBMCAddressesKey holds the node's BMC addresses, resolved, for
	// the lookup of its report (Ironic's lookup_bmc_addresses).
	LookupBMCAddressesKey = "lookup_bmc_addresses"
	// TokenHashKey holds the SHA-256 of the callback token issued to
	// ferro-agent; a report for the node must present the token.
	TokenHashKey = "ferro_inspection_token_sha256"
	// AgentTokenKey and the keys below are Ironic's agent token and URL
	// (API ≥ 1.84 hands a token out with the lookup answer), wiped when
	// an inspection starts and when it is aborted, as Ironic does.
	AgentTokenKey             = "agent_secret_token"
	agentTokenPregeneratedKey = "agent_secret_token_pregenerated"
	agentURLKey               = "agent_url"
	agentVerifyCAKey          = "agent_verify_ca"
	// LastHeartbeatKey is stamped when the report arrives (Ironic: so that
	// fast track sees the agent alive).
	LastHeartbeatKey = "agent_last_heartbeat"
	// FastTrackKey in driver_info overrides [deploy]fast_track per node.
	FastTrackKey = "fast_track"
)

// AgentStore is what the agent interface reads and writes besides the
// task's node: ports it creates before booting, the previous inventory,
// and, in one transaction under the node's lock, what processing learned.
type AgentStore interface {
	InTx(ctx context.Context, fn func(store.Store) error) error
	GetPortByAddress(ctx context.Context, address string) (*baremetal.Port, error)
	CreatePort(ctx context.Context, p *baremetal.Port) error
	GetInventory(ctx context.Context, nodeUUID string) (*baremetal.Inventory, error)
}

// AgentOptions configure the agent interface.
type AgentOptions struct {
	// Pipeline processes the report ([inspector]hooks, the inspection
	// rules; inspection.Ironic).
	Pipeline *inspection.Pipeline
	Store    AgentStore
	// StoreInventory keeps the inventory and plugin_data for GET
	// /v1/nodes/{node}/inventory ([inventory]data_backend = database).
	StoreInventory bool
	// Callback is the bare metal API the agent posts to
	// ([service_catalog]endpoint_override, else [api]host_ip and port).
	Callback callback.APISettings
	// AllowLoopbackCallback is [inspector]allow_loopback_callback.
	AllowLoopbackCallback bool
	// ExtraKernelParams is [inspector]extra_kernel_params.
	ExtraKernelParams string
	// RequireManagedBoot is [inspector]require_managed_boot (true unless
	// set: Ironic master's default for this interface).
	RequireManagedBoot bool
	// PowerOff is [inspector]power_off: power the node off when the
	// inspection succeeded (never with fast track).
	PowerOff bool
	// PreCreatePorts is [inspector]pre_create_ports.
	PreCreatePorts bool
	// ForceDHCP is [inspector]force_dhcp: ipa-collect-lldp=1 on the
	// managed kernel command line.
	ForceDHCP bool
	// FastTrack is [deploy]fast_track (driver_info[fast_track] wins).
	FastTrack bool
	// Agent is [inspector]agent and DeployRamdisk [conductor]deploy_ramdisk:
	// which agent the ramdisk runs, so whether a callback token is issued.
	Agent, DeployRamdisk string
	// PowerTimeout bounds a power change ([conductor]power_state_change_timeout).
	PowerTimeout time.Duration
	// Progress records the phases in the node's history; nil records nothing.
	Progress driver.ProgressRecorder
	// Leases releases the node's built-in DHCP leases when the inspection
	// ends; nil when another DHCP serves the nodes.
	Leases LeaseReleaser
	// Logs stores the ramdisk's logs ([agent]deploy_logs_*); nil drops them.
	Logs *DeployLogs
	// Interfaces are a hardware type's default interfaces, for a rule
	// that changes the driver.
	Interfaces func(driver string) (map[string]string, error)
	// Now is the clock; nil means time.Now.
	Now func() time.Time
}

// Agent is the "agent" inspect interface (Ironic master's built-in in-band
// inspection): ferro boots the ramdisk itself (managed) or has the node
// PXE-boot whatever serves it (unmanaged, only without
// require_managed_boot); the agent posts its report to the bare metal API's
// /v1/continue_inspection, and the conductor hands it to
// ContinueInspection, which runs the pipeline, tears down and stores what
// was learned.
type Agent struct{ o AgentOptions }

// NewAgent returns the interface.
func NewAgent(o AgentOptions) *Agent {
	if o.Now == nil {
		o.Now = time.Now
	}
	return &Agent{o: o}
}

var (
	_ driver.Inspect   = (*Agent)(nil)
	_ driver.Continuer = (*Agent)(nil)
)

func (a *Agent) mb() *managedBoot {
	return &managedBoot{powerTimeout: a.o.PowerTimeout, progress: a.o.Progress, leases: a.o.Leases}
}

// Validate checks the kernel parameters, the agent choice and fast
// track's value and, with [inspector]require_managed_boot, that boot and
// network can manage the inspection and the callback URL is usable. It
// runs synchronously in the API request.
func (a *Agent) Validate(ctx context.Context, t *driver.Task) error {
	if _, err := extraParams(t.Node, a.o.ExtraKernelParams); err != nil {
		return err
	}
	if _, err := agentKind(t.Node, a.o.Agent, a.o.DeployRamdisk); err != nil {
		return err
	}
	if _, err := a.fastTrack(t.Node); err != nil {
		return err
	}
	if !a.o.RequireManagedBoot {
		return nil
	}
	managed, err := managesBoot(ctx, t)
	if err != nil {
		return err
	}
	if !managed {
		return fmt.Errorf("%w: [inspector]require_managed_boot is set, but node %s cannot be inspected with managed boot: %v",
			driver.ErrInvalidParameter, t.Node.UUID, unmanagedReason(ctx, t))
	}
	_, err = a.callbackURL()
	return err
}

// InspectHardware starts the inspection: ports from the BMC's MACs
// ([inspector]pre_create_ports), managed or unmanaged boot, the BMC
// addresses cached for the lookup, then the boot.
func (a *Agent) InspectHardware(ctx context.Context, t *driver.Task) (string, error) {
	n := t.Node
	wipeAgentToken(n)
	if a.o.PreCreatePorts {
		if err := a.preCreatePorts(ctx, t); err != nil {
			return "", &driver.PhaseError{Phase: "creating ports from the BMC's MAC addresses", Err: err}
		}
	}
	managed, err := managesBoot(ctx, t)
	if err != nil {
		return "", &driver.PhaseError{Phase: "validating boot and network", Err: err}
	}
	if !managed && a.o.RequireManagedBoot {
		return "", &driver.PhaseError{Phase: "validating boot and network",
			Err: fmt.Errorf("managed boot is required ([inspector]require_managed_boot) but not possible: %w", unmanagedReason(ctx, t))}
	}
	n.DriverInternalInfo[ManageBootKey] = managed
	if addrs := LookupAddresses(ctx, n); len(addrs) > 0 {
		n.DriverInternalInfo[LookupBMCAddressesKey] = addrs
	} else {
		delete(n.DriverInternalInfo, LookupBMCAddressesKey)
	}
	delete(n.DriverInternalInfo, TokenHashKey)
	if err := t.SaveNode(ctx); err != nil {
		return "", err
	}
	if !managed {
		reason := unmanagedReason(ctx, t)
		t.Log.Warn("inspection boots whatever answers the node's PXE request (unmanaged)", "reason", reason)
		a.mb().record(ctx, t, driver.PhaseFallback, fmt.Sprintf("unmanaged boot (driver_internal_info[%s]=false): %v", ManageBootKey, reason))
		if err := a.mb().startUnmanaged(ctx, t); err != nil {
			forgetInspection(n)
			return "", err
		}
		return states.InspectWait, nil
	}
	if err := a.startManaged(ctx, t); err != nil {
		forgetInspection(n)
		return "", err
	}
	return states.InspectWait, nil
}

// startManaged boots the ramdisk with the kernel parameters Ironic's
// prepare_managed_inspection gives it: [inspector]extra_kernel_params (and
// driver_info's), ipa-collect-lldp=1 with force_dhcp, ipa-api-url with
// fast track, ferro's callback token for ferro-agent, and the callback
// URL last.
func (a *Agent) startManaged(ctx context.Context, t *driver.Task) error {
	cb, err := a.callbackURL()
	if err != nil {
		return &driver.PhaseError{Phase: "building the callback URL", Err: err}
	}
	params, agent, token, err := ramdiskParams(t.Node, a.o.ExtraKernelParams, a.o.Agent, a.o.DeployRamdisk)
	if err != nil {
		return err
	}
	if a.o.ForceDHCP && !slices.ContainsFunc(params, func(p driver.RamdiskParam) bool { return p.Key == callback.CollectLLDPParam }) {
		params = append(params, driver.RamdiskParam{Key: callback.CollectLLDPParam, Value: "1"})
	}
	fast, err := a.fastTrack(t.Node)
	if err != nil {
		return &driver.PhaseError{Phase: "parsing kernel parameters", Err: err}
	}
	if fast {
		api, err := a.o.Callback.Resolve()
		if err != nil {
			return &driver.PhaseError{Phase: "building the callback URL", Err: err}
		}
		params = append(params, driver.RamdiskParam{Key: APIURLParam, Value: api.Base})
	}
	params = append(params, driver.RamdiskParam{Key: CallbackParam, Value: cb})
	if token != "" {
		t.Node.DriverInternalInfo[TokenHashKey] = tokenHash(token)
	}
	t.Log.Info("managed inspection starts", "agent", agent, "callback_token", token != "", "callback", cb)
	return a.mb().startManaged(ctx, t, params, nil, nil, poweredOnDetail(agent, token))
}

// preCreatePorts creates a port for every MAC address the BMC reports
// that no port has yet (Ironic's create_ports_if_not_exist). A management
// interface that cannot read them skips the step.
func (a *Agent) preCreatePorts(ctx context.Context, t *driver.Task) error {
	lister, ok := t.Driver.Management.(driver.MACLister)
	if !ok || a.o.Store == nil {
		t.Log.Debug("pre-creating ports prior to inspection is not supported by the management interface")
		return nil
	}
	macs, err := lister.MACAddresses(ctx, t)
	if errors.Is(err, driver.ErrUnsupported) {
		t.Log.Debug("pre-creating ports prior to inspection is not supported", "reason", err)
		return nil
	}
	if err != nil {
		return err
	}
	if len(macs) == 0 {
		t.Log.Warn("not creating any port: the BMC reports no NIC in the enabled state")
		return nil
	}
	for _, raw := range macs {
		mac, ok := inventory.NormalizeMAC(raw)
		if !ok {
			t.Log.Warn("ignoring a NIC address that is not a valid MAC", "address", raw)
			continue
		}
		if p, err := a.o.Store.GetPortByAddress(ctx, mac); err == nil {
			t.Log.Info("port already exists for MAC address", "mac", mac, "port_node", p.NodeUUID)
			continue
		} else if !errors.Is(err, store.ErrNotFound) {
			return err
		}
		p := &baremetal.Port{UUID: uuid.NewString(), Address: mac, NodeUUID: t.Node.UUID, PXEEnabled: true,
			Extra: baremetal.JSON{}, LocalLinkConnection: baremetal.JSON{}, InternalInfo: baremetal.JSON{}}
		if err := a.o.Store.CreatePort(ctx, p); err != nil {
			if errors.Is(err, store.ErrConflict) {
				continue // created meanwhile
			}
			return fmt.Errorf("create port %s: %w", mac, err)
		}
		t.Ports = append(t.Ports, p)
		t.Log.Info("port created for MAC address", "mac", mac)
	}
	return nil
}

// ContinueInspection processes the agent's report (the conductor holds
// the node's lock): the pipeline plans every change without making any;
// then the boot and the inspection network are torn down and the node
// powered off (before the ports the hooks delete are gone, so the
// inspection network's ports are found); then, in one transaction, the
// plan is applied and the inventory stored. A failure of the hooks or a
// rule tears down the same way and changes nothing else.
func (a *Agent) ContinueInspection(ctx context.Context, t *driver.Task, rep *inspection.Report, extra map[string]any) error {
	ctx = context.WithoutCancel(ctx)
	n := t.Node
	n.DriverInternalInfo[LastHeartbeatKey] = a.o.Now().UTC().Format("2006-01-02T15:04:05.000000")
	target := inspection.Target{Node: n, Ports: t.Ports, PluginData: extra}
	if a.o.Store != nil {
		target.Previous = previousInspection(a.o.Store, n.UUID, t.Log)
	}
	res, err := a.o.Pipeline.Process(ctx, rep, target)
	if err != nil {
		if res != nil {
			a.storeLogs(t, res.Logs, true)
		}
		msg := err.Error()
		var f *inspection.Failure
		if errors.As(err, &f) && f.Stage != inspection.StageRules {
			// Ironic's agent interface words a hook failure so.
			msg = "Failed to inspect hardware. Reason: failed to run inspection hooks: " + msg
		}
		if terr := a.endTeardown(ctx, t, true); terr != nil {
			msg += "; clean up also failed: " + terr.Error()
		}
		return errors.New(msg)
	}
	if err := a.endTeardown(ctx, t, false); err != nil {
		return fmt.Errorf("Inspection clean up failed: %w", err)
	}
	if a.o.Store == nil {
		return errors.New("no store to apply the inspection's results to")
	}
	// Encoded here, by processing's encoder, rather than by the store's.
	var inv *baremetal.Inventory
	if a.o.StoreInventory {
		// Ironic's hooks leave the inventory as sent: its bytes in the body are it.
		invJSON, ok := jsonlimit.Member(rep.Body, "inventory")
		if !ok || a.o.Pipeline.Dialect() != inspection.Ironic {
			if invJSON, err = inspection.Marshal(res.Inventory); err != nil {
				return fmt.Errorf("encode the inventory: %w", err)
			}
		}
		pdJSON, err := inspection.Marshal(res.PluginData)
		if err != nil {
			return fmt.Errorf("encode the plugin data: %w", err)
		}
		inv = &baremetal.Inventory{NodeUUID: n.UUID, Inventory: res.Inventory, PluginData: res.PluginData,
			EncodedInventory: invJSON, EncodedPluginData: pdJSON}
	}
	// Apply to a copy: a failed transaction leaves t.Node as it was, which
	// the conductor then saves in inspect failed.
	cp := *n
	err = a.o.Store.InTx(ctx, func(tx store.Store) error {
		cur, err := tx.GetNode(ctx, n.UUID)
		if err != nil {
			return err
		}
		if cur.Reservation != n.Reservation {
			return fmt.Errorf("%w: node %s is locked by %q now", store.ErrNodeLocked, n.UUID, cur.Reservation)
		}
		// The node itself is saved by the conductor with its new state;
		// Apply writes it here only when the plan changes it.
		if err := inspection.Apply(ctx, tx, &cp, res.Changes, inspection.ApplyOptions{Interfaces: a.o.Interfaces, Log: t.Log}); err != nil {
			return err
		}
		if inv != nil {
			if err := tx.SaveInventory(ctx, inv); err != nil {
				return fmt.Errorf("store the inventory: %w", err)
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("Failed to store the results of the inspection: %w", err)
	}
	*n = cp
	a.mb().record(ctx, t, driver.PhaseProcessed, strings.Join(res.Rules, ", "))
	for _, rule := range res.Rules {
		t.Log.Info("inspection rule applied", "rule", rule)
	}
	a.storeLogs(t, res.Logs, false)
	return nil
}

// endTeardown ends an inspection whose report arrived: the managed boot
// is torn down; the power goes off when the inspection failed, or after
// a success with [inspector]power_off and no fast track (Ironic's
// clean_up with always_power_off); the driver_internal_info of the
// inspection is removed.
func (a *Agent) endTeardown(ctx context.Context, t *driver.Task, failed bool) error {
	fast, _ := a.fastTrack(t.Node)
	powerOff := failed || (a.o.PowerOff && !fast)
	var err error
	if managed(t.Node) {
		err = a.mb().teardown(ctx, t, powerOff)
	} else {
		a.mb().releaseLeases(ctx, t)
		if powerOff {
			err = a.mb().endPower(ctx, t)
		}
	}
	forgetInspection(t.Node)
	return err
}

// Abort tears down everything the start set up and powers the node off
// (a reboot with disable_power_off); the agent token and the lookup
// addresses are wiped. A timeout aborts the same way.
func (a *Agent) Abort(ctx context.Context, t *driver.Task) error {
	wipeAgentToken(t.Node)
	return a.endTeardown(ctx, t, true)
}

// Status is not polled: the report arrives through the API.
func (a *Agent) Status(context.Context, *driver.Task) (driver.InspectStatus, error) {
	return driver.InspectStatus{}, fmt.Errorf("%w: the agent interface is not polled; its report arrives at /v1/continue_inspection", driver.ErrUnsupported)
}

// Finish is not used: ContinueInspection ends the inspection.
func (a *Agent) Finish(context.Context, *driver.Task, driver.InspectStatus) error {
	return fmt.Errorf("%w: the agent interface finishes in ContinueInspection", driver.ErrUnsupported)
}

// storeLogs stores the ramdisk's logs by [agent]deploy_logs_collect:
// always, or on_failure after a failed processing.
func (a *Agent) storeLogs(t *driver.Task, logs string, failed bool) {
	if a.o.Logs == nil || !a.o.Logs.wanted(failed) {
		return
	}
	if logs == "" {
		t.Log.Warn("no logs were passed by the ramdisk")
		return
	}
	if path, err := a.o.Logs.Store(t.Node, logs, "inspect", a.o.Now()); err != nil {
		t.Log.Error("could not store the ramdisk logs", "error", err)
	} else {
		t.Log.Info("ramdisk logs were stored", "file", path)
	}
}

// callbackURL is <bare metal API>/v1/continue_inspection; a loopback host
// needs [inspector]allow_loopback_callback, an unspecified one
// (0.0.0.0) is never reachable.
func (a *Agent) callbackURL() (string, error) {
	t, err := a.o.Callback.Resolve()
	if err != nil {
		return "", fmt.Errorf("%w: the bare metal API's URL %q (%s) is not an http(s) URL", driver.ErrInvalidParameter, t.Base, t.Option)
	}
	if t.Unspecified {
		return "", fmt.Errorf("%w: the bare metal API's URL %q (%s) is not an address the ramdisk can reach; set [service_catalog]endpoint_override",
			driver.ErrInvalidParameter, t.Base, t.Option)
	}
	if t.Loopback && !a.o.AllowLoopbackCallback {
		return "", fmt.Errorf("%w: the bare metal API's URL %q (%s) is a loopback address the ramdisk cannot reach; set [service_catalog]endpoint_override",
			driver.ErrInvalidParameter, t.Base, t.Option)
	}
	return t.URL, nil
}

// fastTrack is driver_info[fast_track] when set (a boolean, or a string
// Ironic's bool_from_string accepts), else [deploy]fast_track.
func (a *Agent) fastTrack(n *baremetal.Node) (bool, error) {
	raw, ok := n.DriverInfo[FastTrackKey]
	if !ok || raw == nil {
		return a.o.FastTrack, nil
	}
	switch v := raw.(type) {
	case bool:
		return v, nil
	case string:
		switch strings.ToLower(strings.TrimSpace(v)) {
		case "1", "t", "true", "on", "y", "yes":
			return true, nil
		case "0", "f", "false", "off", "n", "no":
			return false, nil
		}
	}
	return false, fmt.Errorf("%w: Invalid value of fast_track: %v", driver.ErrInvalidParameter, raw)
}

// forgetInspection removes what a running inspection keeps on the node.
func forgetInspection(n *baremetal.Node) {
	for _, k := range []string{ManageBootKey, LookupBMCAddressesKey, TokenHashKey} {
		delete(n.DriverInternalInfo, k)
	}
}

// wipeAgentToken removes Ironic's agent token and URL (wipe_token_and_url).
func wipeAgentToken(n *baremetal.Node) {
	for _, k := range []string{AgentTokenKey, agentTokenPregeneratedKey, agentURLKey, agentVerifyCAKey} {
		delete(n.DriverInternalInfo, k)
	}
}

// LookupAddresses are the node's BMC addresses a report is looked up by
// (Ironic's cache_lookup_addresses): every driver_info value whose key
// ends in _address — the IPMI ones not when IPMI bridging is on —, its
// host if it is a URL, each resolved to its IPv4 and IPv6 addresses,
// loopback ones left out; the host name itself too. Sorted.
func LookupAddresses(ctx context.Context, n *baremetal.Node) []string {
	set := map[string]bool{}
	bridging := false
	if b, ok := n.DriverInfo["ipmi_bridging"].(string); ok && b != "" && b != "no" {
		bridging = true
	}
	for key, raw := range n.DriverInfo {
		addr, ok := raw.(string)
		if !strings.HasSuffix(key, "_address") || !ok || addr == "" {
			continue
		}
		if strings.HasPrefix(key, "ipmi_") && bridging {
			continue
		}
		if strings.Contains(addr, "//") {
			u, err := url.Parse(addr)
			if err != nil {
				continue
			}
			addr = u.Hostname()
		}
		addr = strings.Trim(addr, "[]")
		if addr == "" {
			continue
		}
		if ip := net.ParseIP(addr); ip != nil {
			if !ip.IsLoopback() {
				set[ip.String()] = true
			}
			continue
		}
		rctx, cancel := context.WithTimeout(ctx, 2*time.Second)
		ips, err := net.DefaultResolver.LookupIPAddr(rctx, addr)
		cancel()
		if err == nil {
			for _, ip := range ips {
				if !ip.IP.IsLoopback() {
					set[ip.IP.String()] = true
				}
			}
		}
		if addr != "localhost" {
			set[addr] = true
		}
	}
	out := make([]string, 0, len(set))
	for a := range set {
		out = append(out, a)
	}
	slices.Sort(out)
	return out
}

// CachedLookupAddresses reads what LookupAddresses cached on the node.
func CachedLookupAddresses(n *baremetal.Node) []string {
	var out []string
	switch v := n.DriverInternalInfo[LookupBMCAddressesKey].(type) {
	case []string:
		out = v
	case []any:
		for _, a := range v {
			if s, ok := a.(string); ok {
				out = append(out, s)
			}
		}
	}
	return out
}

// previousInspection loads the inventory the node's last inspection
// stored, for the pipeline, which reads it only when the raid-device hook
// or a rule needs it (40 NICs' worth of JSON is not decoded for nothing).
// A store error is logged and treated as no previous inspection: the
// report is processed either way.
func previousInspection(st AgentStore, nodeUUID string, log *slog.Logger) func(context.Context) (*inspection.Previous, error) {
	return func(ctx context.Context) (*inspection.Previous, error) {
		inv, err := st.GetInventory(ctx, nodeUUID)
		if errors.Is(err, store.ErrNotFound) {
			return nil, nil
		}
		if err != nil {
			log.Warn("cannot read the previous inventory; processing goes on without it", "error", err)
			return nil, nil
		}
		return &inspection.Previous{Inventory: inv.Inventory, PluginData: inv.PluginData}, nil
	}
}
