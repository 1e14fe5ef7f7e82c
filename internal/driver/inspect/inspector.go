// Package inspect holds the "inspector" inspect interface: in-band
// inspection through an ironic-inspector-compatible service, with the boot
// and network management of the spec "boot and network management for
// in-band inspection" (managed path) and the old unmanaged path as fallback.
package inspect

import (
	"context"
	"errors"
	"fmt"
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
	// APIURLParam is the bare metal API's URL for fast track.
	APIURLParam = callback.APIURLParam
	// AgentKey in driver_info names the agent the node's inspection
	// ramdisk runs; it overrides [inspector]agent.
	AgentKey = "inspection_agent"
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

// mb is the managed boot with the interface's options.
func (i *Inspector) mb() *managedBoot {
	return &managedBoot{powerTimeout: i.o.PowerTimeout, progress: i.o.Progress, leases: i.o.Leases}
}

// Validate checks the kernel parameters and, with
// [inspector]require_managed_boot, that boot and network support managed
// inspection. It runs synchronously in the API request.
func (i *Inspector) Validate(ctx context.Context, t *driver.Task) error {
	if _, err := extraParams(t.Node, i.o.ExtraKernelParams); err != nil {
		return err
	}
	if _, err := agentKind(t.Node, i.o.Agent, i.o.DeployRamdisk); err != nil {
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
		i.mb().record(ctx, t, driver.PhaseFallback, fmt.Sprintf("the inspector manages boot (driver_internal_info[%s]=false): %v", ManageBootKey, reason))
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

// startManaged runs the managed start (managedBoot.startManaged) with the
// introspection started, manage_boot=false, between the ramdisk and the
// power-on.
func (i *Inspector) startManaged(ctx context.Context, t *driver.Task) error {
	callback, err := i.callbackURL()
	if err != nil {
		return &driver.PhaseError{Phase: "building the callback URL", Err: err}
	}
	params, agent, token, err := ramdiskParams(t.Node, i.o.ExtraKernelParams, i.o.Agent, i.o.DeployRamdisk)
	if err != nil {
		return err
	}
	params = append(params, driver.RamdiskParam{Key: CallbackParam, Value: callback})
	t.Log.Info("managed inspection starts", "agent", agent, "callback_token", token != "")

	started := false
	introspection := phase{"starting the introspection", func() error {
		if err := i.o.Client.Start(ctx, t.Node.UUID, false, token); err != nil {
			return err
		}
		started = true
		return nil
	}}
	abort := func(ctx context.Context) error {
		if !started {
			return nil
		}
		if err := i.o.Client.Abort(ctx, t.Node.UUID); err != nil {
			return fmt.Errorf("aborting the introspection: %w", err)
		}
		return nil
	}
	return i.mb().startManaged(ctx, t, params, []phase{introspection}, abort, poweredOnDetail(agent, token))
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
		err = i.mb().teardown(ctx, t, i.o.PowerOff)
	} else {
		i.mb().releaseLeases(ctx, t)
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
		if err := i.mb().teardown(ctx, t, true); err != nil {
			errs = append(errs, err)
		}
	} else {
		i.mb().releaseLeases(ctx, t)
	}
	delete(t.Node.DriverInternalInfo, ManageBootKey)
	return errors.Join(errs...)
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
