// Package inspect holds the "inspector" inspect interface: in-band
// inspection through an ironic-inspector-compatible service, with the boot
// and network management of the spec "boot and network management for
// in-band inspection" (managed path) and the old unmanaged path as fallback.
package inspect

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"net/url"
	"path"
	"strings"
	"time"

	"github.com/ferrometal/ferro/internal/baremetal"
	"github.com/ferrometal/ferro/internal/callback"
	"github.com/ferrometal/ferro/internal/driver"
	"github.com/ferrometal/ferro/internal/states"
)

// Keys in driver_info and driver_internal_info.
const (
	// ManageBootKey records whether ferro manages boot for the running inspection.
	ManageBootKey = "inspector_manage_boot"
	// ExtraKernelParamsKey is the per-node kernel parameters of the spec.
	ExtraKernelParamsKey = "inspector_extra_kernel_params"
	// TokenParam is the kernel parameter carrying the per-inspection callback token.
	TokenParam = callback.TokenParam
	// CallbackParam is the agent's callback URL parameter.
	CallbackParam = callback.URLParam
	// AgentKey in driver_info names the agent the node's inspection
	// ramdisk runs; it overrides [inspector]agent.
	AgentKey = "inspection_agent"
)

// Agents an inspection ramdisk may run ([inspector]agent,
// driver_info[inspection_agent]). The agent decides the callback's
// authentication: ferro issues a per-inspection token, and then requires
// it, only to an agent known to present it.
const (
	// AgentIPA is the stock ironic-python-agent: it knows no token, so none
	// is issued and its report is matched by MAC and BMC address only, as
	// ironic-inspector does.
	AgentIPA = "ironic-python-agent"
	// AgentFerro is ferro-agent: a token is issued on its kernel command
	// line and a report without it is refused.
	AgentFerro = "ferro-agent"
	// AgentAuto is AgentFerro when the node's deploy ramdisk (or ISO) is
	// one `ferro ramdisk build` made (its file name starts with
	// "ferro-agent"), else AgentIPA.
	AgentAuto = "auto"
)

// Client is what the interface needs from an ironic-inspector-compatible API.
type Client interface {
	// Start starts introspection. token, when not empty, is the callback
	// token the agent will present (a ferro extension a real
	// ironic-inspector ignores).
	Start(ctx context.Context, nodeUUID string, manageBoot bool, token string) error
	Status(ctx context.Context, nodeUUID string) (driver.InspectStatus, error)
	Abort(ctx context.Context, nodeUUID string) error
	// Data returns the processed introspection data.
	Data(ctx context.Context, nodeUUID string) (map[string]any, error)
}

// InventoryStore stores what inspection found, for GET /v1/nodes/{node}/inventory.
type InventoryStore interface {
	SaveInventory(ctx context.Context, inv *baremetal.Inventory) error
}

// Options configure the interface.
type Options struct {
	// Client reaches the inspector.
	Client Client
	// Inventory stores what the inspection found; nil stores nothing
	// ([inventory]data_backend = none).
	Inventory InventoryStore
	// Callback says where the agent posts its report ([inspector]
	// callback_endpoint_override, endpoint_override, listen_address,
	// listen_port).
	Callback callback.Settings
	// AllowLoopbackCallback is [inspector]allow_loopback_callback.
	AllowLoopbackCallback bool
	// ExtraKernelParams is [inspector]extra_kernel_params.
	ExtraKernelParams string
	// RequireManagedBoot is [inspector]require_managed_boot.
	RequireManagedBoot bool
	// PowerOff is [inspector]power_off: power the node off when the
	// inspection finished.
	PowerOff bool
	// Agent is [inspector]agent: auto, ironic-python-agent or ferro-agent.
	Agent string
	// DeployRamdisk is [conductor]deploy_ramdisk, which tells auto which
	// agent a node without deploy images in driver_info boots.
	DeployRamdisk string
	// PowerTimeout bounds a power change ([conductor]power_state_change_timeout).
	PowerTimeout time.Duration
	// Progress records the inspection's phases in the node's history;
	// nil records nothing.
	Progress driver.ProgressRecorder
	// Leases releases the node's DHCP leases of the built-in netboot when
	// its inspection ends, on either path (the managed teardown, or the
	// end of an introspection whose boot the inspector managed); nil when
	// another DHCP serves the nodes. Its failure is only logged: the
	// netboot's sweep releases them later.
	Leases LeaseReleaser
}

// Inspector is the "inspector" inspect interface.
type Inspector struct {
	o Options
}

// LeaseReleaser releases the DHCP leases of a node.
type LeaseReleaser interface {
	ReleaseLeases(ctx context.Context, nodeUUID string) error
}

// New returns the interface.
func New(o Options) *Inspector { return &Inspector{o: o} }

// Validate checks the kernel parameters and, with
// [inspector]require_managed_boot, that boot and network support managed
// inspection. It runs synchronously in the API request.
func (i *Inspector) Validate(ctx context.Context, t *driver.Task) error {
	if _, err := i.extraParams(t.Node); err != nil {
		return err
	}
	if _, err := i.agent(t.Node); err != nil {
		return err
	}
	if i.o.RequireManagedBoot {
		managed, err := managesBoot(ctx, t)
		if err != nil {
			return err
		}
		if !managed {
			return fmt.Errorf("%w: [inspector]require_managed_boot is set, but node %s cannot be inspected with managed boot: %v",
				driver.ErrInvalidParameter, t.Node.UUID, unmanagedReason(ctx, t))
		}
		if _, err := i.callbackURL(); err != nil {
			return err
		}
	}
	return nil
}

// managesBoot reports whether ferro can manage boot and network for the
// inspection: boot is validated first, then network. ErrUnsupported from
// either means fall back; any other error fails the inspection.
func managesBoot(ctx context.Context, t *driver.Task) (bool, error) {
	if err := t.Driver.Boot.ValidateInspection(ctx, t); err != nil {
		if errors.Is(err, driver.ErrUnsupported) {
			return false, nil
		}
		return false, fmt.Errorf("validate boot interface for inspection: %w", err)
	}
	if err := t.Driver.Network.ValidateInspection(ctx, t); err != nil {
		if errors.Is(err, driver.ErrUnsupported) {
			return false, nil
		}
		return false, fmt.Errorf("validate network interface for inspection: %w", err)
	}
	return true, nil
}

// unmanagedReason says why managesBoot fell back, for the operator.
func unmanagedReason(ctx context.Context, t *driver.Task) error {
	if err := t.Driver.Boot.ValidateInspection(ctx, t); err != nil {
		return err
	}
	return t.Driver.Network.ValidateInspection(ctx, t)
}

// InspectHardware decides managed or unmanaged and starts the inspection.
func (i *Inspector) InspectHardware(ctx context.Context, t *driver.Task) (string, error) {
	managed, err := managesBoot(ctx, t)
	if err != nil {
		return "", &driver.PhaseError{Phase: "validating boot and network", Err: err}
	}
	if !managed && i.o.RequireManagedBoot {
		return "", &driver.PhaseError{Phase: "validating boot and network",
			Err: fmt.Errorf("managed boot is required but not possible: %w", unmanagedReason(ctx, t))}
	}
	t.Node.DriverInternalInfo[ManageBootKey] = managed
	if err := t.SaveNode(ctx); err != nil {
		return "", err
	}
	if !managed {
		reason := unmanagedReason(ctx, t)
		t.Log.Warn("inspection falls back to the inspector managing boot (unmanaged path)", "reason", reason)
		i.record(ctx, t, driver.PhaseFallback, fmt.Sprintf("the inspector manages boot (driver_internal_info[%s]=false): %v", ManageBootKey, reason))
		if err := i.o.Client.Start(ctx, t.Node.UUID, true, ""); err != nil {
			delete(t.Node.DriverInternalInfo, ManageBootKey)
			return "", &driver.PhaseError{Phase: "starting the introspection", Err: err}
		}
		return states.InspectWait, nil
	}
	if err := i.startManaged(ctx, t); err != nil {
		return "", err
	}
	return states.InspectWait, nil
}

// startManaged runs the managed start: power off, inspection network,
// ramdisk, introspection with manage_boot=false, power on. Any failure tears
// down everything and names the phase.
func (i *Inspector) startManaged(ctx context.Context, t *driver.Task) error {
	callback, err := i.callbackURL()
	if err != nil {
		return &driver.PhaseError{Phase: "building the callback URL", Err: err}
	}
	params, err := i.extraParams(t.Node)
	if err != nil {
		return &driver.PhaseError{Phase: "parsing kernel parameters", Err: err}
	}
	agent, err := i.agent(t.Node)
	if err != nil {
		return &driver.PhaseError{Phase: "choosing the agent", Err: err}
	}
	// A token only for an agent that presents it: the stock agent cannot,
	// and its report is matched by MAC and BMC address as upstream.
	var token string
	if agent == AgentFerro {
		if token, err = newToken(); err != nil {
			return &driver.PhaseError{Phase: "generating the callback token", Err: err}
		}
		params = append(params, driver.RamdiskParam{Key: TokenParam, Value: token})
	}
	params = append(params, driver.RamdiskParam{Key: CallbackParam, Value: callback})
	t.Log.Info("managed inspection starts", "agent", agent, "callback_token", token != "")

	timeout := i.o.PowerTimeout
	started := false
	steps := []struct {
		phase string
		run   func() error
	}{
		{"powering off the node", func() error { return i.setPower(ctx, t, baremetal.PowerOff, timeout) }},
		{"adding the inspection network", func() error { return t.Driver.Network.AddInspectionNetwork(ctx, t) }},
		{"preparing the ramdisk", func() error { return t.Driver.Boot.PrepareRamdisk(ctx, t, params) }},
		{"starting the introspection", func() error {
			if err := i.o.Client.Start(ctx, t.Node.UUID, false, token); err != nil {
				return err
			}
			started = true
			return nil
		}},
		{"powering on the node", func() error {
			if err := i.setPower(ctx, t, baremetal.PowerOn, timeout); err != nil {
				return err
			}
			detail := "ramdisk for " + agent + ", no callback token"
			if token != "" {
				detail = "ramdisk for " + agent + ", callback token required"
			}
			i.record(ctx, t, driver.PhasePoweredOn, detail)
			return nil
		}},
	}
	for _, s := range steps {
		if err := s.run(); err != nil {
			t.Log.Error("managed inspection failed to start", "phase", s.phase, "error", err)
			// Tear down on a context that survives the request's cancellation.
			tctx := context.WithoutCancel(ctx)
			var terrs []error
			if started {
				if aerr := i.o.Client.Abort(tctx, t.Node.UUID); aerr != nil {
					terrs = append(terrs, fmt.Errorf("aborting the introspection: %w", aerr))
				}
			}
			if terr := i.teardown(tctx, t, true); terr != nil {
				terrs = append(terrs, terr)
			}
			if len(terrs) > 0 {
				err = fmt.Errorf("%w; teardown also failed: %w", err, errors.Join(terrs...))
			}
			// Torn down: nothing is managed any more (the conductor saves the node).
			delete(t.Node.DriverInternalInfo, ManageBootKey)
			return &driver.PhaseError{Phase: s.phase, Err: err}
		}
	}
	return nil
}

// setPower switches power and records the state on the node; the
// conductor saves the node when the phase ends.
func (i *Inspector) setPower(ctx context.Context, t *driver.Task, state string, timeout time.Duration) error {
	if err := t.Driver.Power.SetPowerState(ctx, t, state, timeout); err != nil {
		return err
	}
	if st, err := t.Driver.Power.PowerState(ctx, t); err == nil {
		t.Node.PowerState = st
	}
	return nil
}

// teardown undoes the managed path: ramdisk, inspection network, and power
// off when asked. Every step runs; errors are collected.
func (i *Inspector) teardown(ctx context.Context, t *driver.Task, powerOff bool) error {
	var errs []error
	if err := t.Driver.Boot.CleanUpRamdisk(ctx, t); err != nil {
		errs = append(errs, fmt.Errorf("cleaning up the ramdisk: %w", err))
	}
	if err := t.Driver.Network.RemoveInspectionNetwork(ctx, t); err != nil {
		errs = append(errs, fmt.Errorf("removing the inspection network: %w", err))
	} else {
		i.record(ctx, t, driver.PhaseNetworkRemoved, "")
	}
	i.releaseLeases(ctx, t)
	if powerOff {
		timeout := i.o.PowerTimeout
		if err := i.setPower(ctx, t, baremetal.PowerOff, timeout); err != nil {
			errs = append(errs, fmt.Errorf("powering off the node: %w", err))
		} else {
			i.record(ctx, t, driver.PhasePoweredOff, "")
		}
	}
	return errors.Join(errs...)
}

// releaseLeases releases the node's built-in DHCP leases at once rather
// than at the netboot's next sweep, so that the addresses are free for
// other nodes and no lease outlives the inspection. A failure is logged;
// the sweep stays the backstop.
func (i *Inspector) releaseLeases(ctx context.Context, t *driver.Task) {
	if i.o.Leases == nil {
		return
	}
	if err := i.o.Leases.ReleaseLeases(context.WithoutCancel(ctx), t.Node.UUID); err != nil {
		t.Log.Warn("cannot release the DHCP leases; the netboot's sweep will", "error", err)
	}
}

// record notes a phase in the node's history.
func (i *Inspector) record(ctx context.Context, t *driver.Task, phase, detail string) {
	if i.o.Progress != nil {
		i.o.Progress.Record(context.WithoutCancel(ctx), t.Node.UUID, phase, detail)
	}
}

// agent resolves the agent the node's inspection ramdisk runs:
// driver_info[inspection_agent], else [inspector]agent; auto is decided by
// the deploy image's file name.
func (i *Inspector) agent(n *baremetal.Node) (string, error) {
	kind := i.o.Agent
	if raw, ok := n.DriverInfo[AgentKey]; ok {
		s, isString := raw.(string)
		if !isString || (s != AgentAuto && s != AgentIPA && s != AgentFerro) {
			return "", fmt.Errorf("%w: driver_info[%s] = %v is not one of %s, %s, %s",
				driver.ErrInvalidParameter, AgentKey, raw, AgentAuto, AgentIPA, AgentFerro)
		}
		kind = s
	}
	switch kind {
	case AgentIPA, AgentFerro:
		return kind, nil
	case AgentAuto, "":
	default:
		return "", fmt.Errorf("%w: [inspector]agent %q is not one of %s, %s, %s", driver.ErrInvalidParameter, kind, AgentAuto, AgentIPA, AgentFerro)
	}
	images := []any{n.DriverInfo["deploy_ramdisk"], n.DriverInfo["deploy_iso"]}
	if _, ok := n.DriverInfo["deploy_kernel"]; !ok {
		images = append(images, i.o.DeployRamdisk)
	}
	for _, img := range images {
		if s, ok := img.(string); ok && IsFerroAgentImage(s) {
			return AgentFerro, nil
		}
	}
	return AgentIPA, nil
}

// IsFerroAgentImage reports whether an image reference (a path or a URL)
// names an image `ferro ramdisk build` made: its file name starts with
// "ferro-agent" (ferro-agent.initramfs, ferro-agent.iso).
func IsFerroAgentImage(ref string) bool {
	if u, err := url.Parse(ref); err == nil && u.Path != "" {
		ref = u.Path
	}
	return strings.HasPrefix(path.Base(ref), AgentFerro)
}

// managed reports the recorded choice for the running inspection.
func managed(n *baremetal.Node) bool {
	v, _ := n.DriverInternalInfo[ManageBootKey].(bool)
	return v
}

// Status asks the inspector how the introspection is going.
func (i *Inspector) Status(ctx context.Context, t *driver.Task) (driver.InspectStatus, error) {
	return i.o.Client.Status(ctx, t.Node.UUID)
}

// Finish tears down the managed path (on the unmanaged one the inspector
// has powered the node off; only its DHCP leases are released) and, on
// success, stores the inventory. The conductor saves the node with its new
// state.
func (i *Inspector) Finish(ctx context.Context, t *driver.Task, st driver.InspectStatus) error {
	var err error
	if managed(t.Node) {
		err = i.teardown(ctx, t, i.o.PowerOff)
	} else {
		i.releaseLeases(ctx, t)
	}
	delete(t.Node.DriverInternalInfo, ManageBootKey)
	if err == nil && st.Error == "" {
		i.storeInventory(ctx, t)
	}
	return err
}

// storeInventory fetches the processed data and stores inventory and plugin
// data. A failure is logged, not fatal: the node was inspected.
func (i *Inspector) storeInventory(ctx context.Context, t *driver.Task) {
	if i.o.Inventory == nil {
		return
	}
	data, err := i.o.Client.Data(ctx, t.Node.UUID)
	if err != nil {
		t.Log.Warn("cannot fetch introspection data; inventory not stored", "error", err)
		return
	}
	inv, _ := data["inventory"].(map[string]any)
	delete(data, "inventory")
	if err := i.o.Inventory.SaveInventory(ctx, &baremetal.Inventory{NodeUUID: t.Node.UUID, Inventory: inv, PluginData: data}); err != nil {
		t.Log.Warn("cannot store inventory", "error", err)
	}
}

// Abort stops the introspection and tears down everything the managed path
// set up (upstream's inspector interface does not; ferro does, so an abort
// leaves no Neutron port or boot file behind). The conductor saves the node.
func (i *Inspector) Abort(ctx context.Context, t *driver.Task) error {
	var errs []error
	if err := i.o.Client.Abort(ctx, t.Node.UUID); err != nil {
		errs = append(errs, fmt.Errorf("aborting the introspection: %w", err))
	}
	if managed(t.Node) {
		if err := i.teardown(ctx, t, true); err != nil {
			errs = append(errs, err)
		}
	} else {
		i.releaseLeases(ctx, t)
	}
	delete(t.Node.DriverInternalInfo, ManageBootKey)
	return errors.Join(errs...)
}

// extraParams parses [inspector]extra_kernel_params, then
// driver_info[inspector_extra_kernel_params], in that order.
func (i *Inspector) extraParams(n *baremetal.Node) (driver.RamdiskParams, error) {
	params, err := ParseKernelParams(i.o.ExtraKernelParams)
	if err != nil {
		return nil, fmt.Errorf("%w: [inspector]extra_kernel_params: %v", driver.ErrInvalidParameter, err)
	}
	if raw, ok := n.DriverInfo[ExtraKernelParamsKey]; ok {
		s, isString := raw.(string)
		if !isString {
			return nil, fmt.Errorf("%w: driver_info[%s] must be a string", driver.ErrInvalidParameter, ExtraKernelParamsKey)
		}
		node, err := ParseKernelParams(s)
		if err != nil {
			return nil, fmt.Errorf("%w: driver_info[%s]: %v", driver.ErrInvalidParameter, ExtraKernelParamsKey, err)
		}
		params = append(params, node...)
	}
	for _, p := range params {
		if p.Key == CallbackParam || p.Key == TokenParam {
			return nil, fmt.Errorf("%w: kernel parameter %s is set by ferro and cannot be given", driver.ErrInvalidParameter, p.Key)
		}
	}
	return params, nil
}

// callbackURL is the URL the agent posts to (callback.Settings.Resolve).
// A loopback host is rejected unless [inspector]allow_loopback_callback
// is set.
func (i *Inspector) callbackURL() (string, error) {
	return CallbackURL(i.o.Callback, i.o.AllowLoopbackCallback)
}

// CallbackURL resolves the callback URL of s, refusing a loopback host
// unless allowLoopback.
func CallbackURL(s callback.Settings, allowLoopback bool) (string, error) {
	t, err := s.Resolve()
	if err != nil {
		return "", fmt.Errorf("%w: inspector callback endpoint %q is not an http(s) URL", driver.ErrInvalidParameter, t.Base)
	}
	if t.Loopback && !allowLoopback {
		return "", fmt.Errorf("%w: inspector callback endpoint %q is a loopback address the ramdisk cannot reach; set [inspector]callback_endpoint_override",
			driver.ErrInvalidParameter, t.Base)
	}
	return t.URL, nil
}

func newToken() (string, error) {
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		return "", err
	}
	return hex.EncodeToString(b), nil
}
