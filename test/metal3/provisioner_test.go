package metal3_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"reflect"
	"runtime"
	"strings"

	"github.com/gophercloud/gophercloud/v2"
	"github.com/gophercloud/gophercloud/v2/openstack/baremetal/v1/drivers"
	"github.com/gophercloud/gophercloud/v2/openstack/baremetal/v1/nodes"
	"github.com/gophercloud/gophercloud/v2/openstack/baremetal/v1/ports"
	"github.com/gophercloud/gophercloud/v2/openstack/utils"
)

// This file replays the calls of baremetal-operator's Ironic provisioner
// (pkg/provisioner/ironic in metal3-io/baremetal-operator master, 02aa505)
// with the same gophercloud functions, options and bodies, for the paths a
// freshly created BareMetalHost takes. It was written from the behaviour
// docs/metal3.md describes, not copied. Each method is one provisioner
// call: it makes the requests BMO makes and returns what BMO's controller
// would act on (dirty: call again later; failure: the host's error).

// baseline is BMO's minimum Ironic API minor version (1.89, virtual media).
const baseline = 89

// features is what BMO derives from the API's maximum version
// (clients.AvailableFeatures).
type features struct{ maxVersion int }

func (f features) hasVirtualMediaGetAPI() bool { return f.maxVersion >= 93 }
func (f features) hasDisablePowerOff() bool    { return f.maxVersion >= 95 }
func (f features) hasHealthAPI() bool          { return f.maxVersion >= 109 }
func (f features) hasDeploymentAbort() bool    { return f.maxVersion >= 110 }

// chooseMicroversion is the version BMO then sends with every request.
func (f features) chooseMicroversion() string {
	switch {
	case f.hasDeploymentAbort():
		return "1.110"
	case f.hasHealthAPI():
		return "1.109"
	case f.hasDisablePowerOff():
		return "1.95"
	case f.hasVirtualMediaGetAPI():
		return "1.93"
	}
	return fmt.Sprintf("1.%d", baseline)
}

// checkVersion is GetAvailableFeatures: GET on the endpoint (the version
// document, no microversion header) and BMO's refusal below 1.89, with
// BMO's own message.
func checkVersion(ctx context.Context, client *gophercloud.ServiceClient) (features, error) {
	mvs, err := utils.GetSupportedMicroversions(ctx, client)
	if err != nil {
		return features{}, err
	}
	f := features{maxVersion: mvs.MaxMinor}
	if mvs.MaxMajor != 1 || mvs.MaxMinor < baseline {
		return f, fmt.Errorf("ironic API 1.%d or newer is required, got %d.%d", baseline, mvs.MaxMajor, mvs.MaxMinor)
	}
	return f, nil
}

// checkConductor is checkIronicConductor: GET /v1/drivers must list one.
func checkConductor(ctx context.Context, client *gophercloud.ServiceClient) error {
	pages, err := drivers.ListDrivers(client, drivers.ListDriversOpts{Detail: false}).AllPages(ctx)
	if err != nil {
		return fmt.Errorf("unexpected error from the drivers API: %w", err)
	}
	list, err := drivers.ExtractDrivers(pages)
	if err != nil {
		return err
	}
	if len(list) == 0 {
		return errors.New("no drivers loaded in ironic")
	}
	return nil
}

// host is the part of a BareMetalHost (spec and status) the provisioner
// reads.
type host struct {
	namespace, name, uid string
	bmcAddress           string
	username, password   string
	bootMAC              string
	// bootMode is the spec's (BMO's default is UEFI).
	bootMode string
	// automatedCleaning is spec.automatedCleaningMode != disabled.
	automatedCleaning bool
	disablePowerOff   bool
	rootDeviceName    string
	image             image
	userData          string
}

type image struct{ url, checksum, checksumType string }

// nodeName is BMO's Ironic node name: namespace~name.
func (h host) nodeName() string { return h.namespace + "~" + h.name }

// cpuArch is getHostArchitecture without a spec value or hardware details:
// the controller's own architecture.
func cpuArch() string {
	switch runtime.GOARCH {
	case "amd64":
		return "x86_64"
	case "arm64":
		return "aarch64"
	}
	return runtime.GOARCH
}

// deployConfig is BMO's ironicConfig: DEPLOY_KERNEL_URL,
// DEPLOY_RAMDISK_URL, DEPLOY_ISO_URL.
type deployConfig struct{ kernelURL, ramdiskURL, isoURL string }

// result is provisioner.Result.
type result struct {
	dirty   bool
	failure string
}

var (
	complete   = result{}
	continuing = result{dirty: true}
)

func failed(msg string) result { return result{failure: msg} }

// provisioner is one ironicProvisioner: BMO makes a new one per reconcile,
// so its node cache lives for one call.
type provisioner struct {
	client   *gophercloud.ServiceClient
	features features
	config   deployConfig
	host     host
	bmc      bmcAccess
	nodeID   string
	cached   *nodes.Node
	// fallback, in diagnosis mode only, retries a refused request in a
	// form today's ferro accepts, so that later steps can be seen.
	fallback *fallbacks
}

func (p *provisioner) getNode(ctx context.Context) (*nodes.Node, error) {
	if p.nodeID == "" {
		return nil, errNeedsRegistration
	}
	if p.cached != nil {
		return p.cached, nil
	}
	n, err := nodes.Get(ctx, p.client, p.nodeID).Extract()
	if err != nil {
		if gophercloud.ResponseCodeIs(err, http.StatusNotFound) {
			return nil, errNeedsRegistration
		}
		return nil, fmt.Errorf("failed to find node by ID %s: %w", p.nodeID, err)
	}
	p.cached = n
	return n, nil
}

var errNeedsRegistration = errors.New("host not registered")

// getPorts lists ports by node or address with BMO's fields.
func (p *provisioner) getPorts(ctx context.Context, nodeUUID, mac string) ([]ports.Port, error) {
	opts := ports.ListOpts{Fields: []string{"node_uuid", "uuid", "address"}, NodeUUID: nodeUUID, Address: mac}
	pages, err := ports.List(p.client, opts).AllPages(ctx)
	if err != nil {
		return nil, fmt.Errorf("failed to page over list of ports: %w", err)
	}
	return ports.ExtractPorts(pages)
}

// findExistingHost looks the node up by UUID, by both names, then by the
// boot MAC's port.
func (p *provisioner) findExistingHost(ctx context.Context) (*nodes.Node, error) {
	n, err := p.getNode(ctx)
	if !errors.Is(err, errNeedsRegistration) {
		return n, err
	}
	names := []string{p.host.nodeName()}
	if !strings.Contains(p.host.name, "~") {
		names = append(names, p.host.name)
	}
	for _, name := range names {
		n, err := nodes.Get(ctx, p.client, name).Extract()
		if err == nil {
			return n, nil
		}
		if !gophercloud.ResponseCodeIs(err, http.StatusNotFound) {
			return nil, fmt.Errorf("failed to find node by name %s: %w", name, err)
		}
	}
	if p.host.bootMAC != "" {
		found, err := p.getPorts(ctx, "", p.host.bootMAC)
		if err != nil {
			return nil, nil // BMO ignores a failed lookup here
		}
		if len(found) > 0 {
			n, err := nodes.Get(ctx, p.client, found[0].NodeUUID).Extract()
			if err != nil {
				return nil, fmt.Errorf("port %s exists but failed to find linked node %s: %w", p.host.bootMAC, found[0].NodeUUID, err)
			}
			if n.Name != "" {
				return nil, fmt.Errorf("MAC address %s conflicts with existing node %s", p.host.bootMAC, n.Name)
			}
			return n, nil
		}
	}
	return nil, nil
}

// register is Register: create the node (or update it), its port, move
// it to manageable, then configureNode. credentialsChanged is true until
// BMO has seen one successful registration.
func (p *provisioner) register(ctx context.Context, credentialsChanged bool) (result, error) {
	if p.host.disablePowerOff && !p.features.hasDisablePowerOff() {
		return failed("current ironic version does not support DisablePowerOff, refusing to manage node"), nil
	}
	n, err := p.findExistingHost(ctx)
	if err != nil {
		return result{}, fmt.Errorf("failed to find existing host: %w", err)
	}
	driverInfo := p.bmc.driverInfo(p.host)
	var up updater
	if n == nil {
		n, err = p.enrollNode(ctx, driverInfo)
		if err != nil {
			return result{}, err
		}
		p.nodeID = n.UUID
	} else {
		p.nodeID = n.UUID
		up.setTopLevel("name", p.host.nodeName(), n.Name)
		if credentialsChanged || !bmcAddressMatches(n.DriverInfo, driverInfo) {
			up.setTopLevel("driver_info", driverInfo, n.DriverInfo)
		}
		up.setTopLevel("disable_power_off", p.host.disablePowerOff, n.DisablePowerOff)
		up.setSection("/properties", n.Properties, map[string]any{"cpu_arch": cpuArch()})
	}
	switch nodes.ProvisionState(n.ProvisionState) {
	case nodes.Enroll, nodes.Manageable, nodes.Available, nodes.Active, nodes.AdoptFail,
		nodes.InspectFail, nodes.CleanFail, nodes.DeployFail, nodes.ServiceFail, nodes.Error:
		if err := p.createPortsForNode(ctx, n); err != nil {
			return result{}, err
		}
	}
	n, res, err := p.tryUpdateNode(ctx, n, up)
	if n == nil {
		return res, err
	}
	switch nodes.ProvisionState(n.ProvisionState) {
	case nodes.Enroll:
		if n.LastError != "" && !credentialsChanged {
			return failed(n.LastError), nil
		}
		if n.TargetProvisionState == string(nodes.TargetManage) {
			return continuing, nil
		}
		return p.changeProvisionState(ctx, n, nodes.ProvisionStateOpts{Target: nodes.TargetManage})
	case nodes.Verifying:
		return continuing, nil
	case nodes.CleanWait, nodes.Cleaning, nodes.DeployWait, nodes.Deploying, nodes.Inspecting:
		return complete, nil
	}
	return p.configureNode(ctx, n)
}

// enrollNode is the node create: every field BMO sets, including
// disable_power_off (false) and inspect_interface=agent.
func (p *provisioner) enrollNode(ctx context.Context, driverInfo map[string]any) (*nodes.Node, error) {
	disablePowerOff := p.host.disablePowerOff
	opts := nodes.CreateOpts{
		Driver:              p.bmc.driver,
		BIOSInterface:       p.bmc.biosInterface,
		BootInterface:       p.bmc.bootInterface,
		Name:                p.host.nodeName(),
		DriverInfo:          driverInfo,
		FirmwareInterface:   p.bmc.firmwareInterface,
		DeployInterface:     "", // BMO sets it only for live ISOs and custom deploys
		InspectInterface:    "agent",
		ManagementInterface: p.bmc.managementInterface,
		PowerInterface:      p.bmc.powerInterface,
		RAIDInterface:       p.bmc.raidInterface,
		VendorInterface:     p.bmc.vendorInterface,
		DisablePowerOff:     &disablePowerOff,
		Properties: map[string]any{
			"capabilities": capabilities(nil, p.host.bootMode),
			"cpu_arch":     cpuArch(),
		},
	}
	n, err := nodes.Create(ctx, p.client, opts).Extract()
	if err != nil && p.fallback != nil {
		n, err = p.fallback.create(ctx, p.client, opts, err)
	}
	if err != nil {
		return nil, fmt.Errorf("failed to register host in ironic: %w", err)
	}
	return n, nil
}

// createPortsForNode creates the boot MAC's port (pxe_enabled) unless it
// exists; BMO also creates ports for the NICs of a host's HardwareData,
// which a new host has not.
func (p *provisioner) createPortsForNode(ctx context.Context, n *nodes.Node) error {
	if p.host.bootMAC == "" {
		return nil
	}
	existing, err := p.getPorts(ctx, n.UUID, "")
	if err != nil {
		return err
	}
	for _, port := range existing {
		if port.Address == p.host.bootMAC {
			return nil
		}
	}
	byMAC, err := p.getPorts(ctx, "", p.host.bootMAC)
	if err != nil {
		return err
	}
	for _, port := range byMAC {
		if port.NodeUUID != n.UUID {
			return fmt.Errorf("port belongs to another node %s, MAC: %s", port.NodeUUID, p.host.bootMAC)
		}
	}
	if len(byMAC) > 0 {
		return nil
	}
	pxe := true
	if _, err := ports.Create(ctx, p.client, ports.CreateOpts{NodeUUID: n.UUID, Address: p.host.bootMAC, PXEEnabled: &pxe}).Extract(); err != nil {
		return fmt.Errorf("failed to create ironic port for node %s, MAC: %s: %w", n.UUID, p.host.bootMAC, err)
	}
	return nil
}

// configureNode sets the deploy ramdisk, automated_clean and the
// capabilities once the node is manageable.
func (p *provisioner) configureNode(ctx context.Context, n *nodes.Node) (result, error) {
	var up updater
	up.setSection("/driver_info", n.DriverInfo, p.deployImageInfo())
	up.setTopLevel("automated_clean", p.host.automatedCleaning, n.AutomatedClean)
	up.setSection("/properties", n.Properties, map[string]any{
		"capabilities": capabilities(n, p.host.bootMode),
		"cpu_arch":     cpuArch(),
	})
	if n, res, err := p.tryUpdateNode(ctx, n, up); n == nil {
		return res, err
	}
	return complete, nil
}

// deployImageInfo is setDeployImage without a PreprovisioningImage: the
// ISO for a BMC that boots ISOs when DEPLOY_ISO_URL is set, else the
// kernel and ramdisk; the other keys are removed.
func (p *provisioner) deployImageInfo() map[string]any {
	info := map[string]any{"deploy_kernel": nil, "deploy_ramdisk": nil, "deploy_iso": nil, "kernel_append_params": nil}
	if p.bmc.supportsISO && p.config.isoURL != "" {
		info["deploy_iso"] = p.config.isoURL
		return info
	}
	info["deploy_kernel"] = p.config.kernelURL
	info["deploy_ramdisk"] = p.config.ramdiskURL
	return info
}

// tryUpdateNode sends the updater's patch, if any: 409 means busy (call
// again), any other error is transient. It returns the node (nil when the
// caller must return res, err).
func (p *provisioner) tryUpdateNode(ctx context.Context, n *nodes.Node, up updater) (*nodes.Node, result, error) {
	if len(up.ops) == 0 {
		return n, result{}, nil
	}
	updated, err := nodes.Update(ctx, p.client, n.UUID, up.ops).Extract()
	if err != nil && p.fallback != nil {
		updated, err = p.fallback.update(ctx, p.client, n.UUID, up.ops, err)
	}
	switch {
	case err == nil:
		p.cached = updated
		return updated, result{}, nil
	case gophercloud.ResponseCodeIs(err, http.StatusConflict):
		return nil, continuing, nil
	}
	return nil, result{}, fmt.Errorf("failed to update host settings in ironic: %w", err)
}

// changeProvisionState is tryChangeNodeProvisionState: maintenance is
// cleared first, 409 means busy.
func (p *provisioner) changeProvisionState(ctx context.Context, n *nodes.Node, opts nodes.ProvisionStateOpts) (result, error) {
	if n.Fault != "" {
		return continuing, nil
	}
	if n.Maintenance {
		return p.setMaintenance(ctx, n, false, "")
	}
	err := nodes.ChangeProvisionState(ctx, p.client, n.UUID, opts).ExtractErr()
	switch {
	case err == nil:
		p.cached = nil
		return continuing, nil
	case gophercloud.ResponseCodeIs(err, http.StatusConflict):
		return continuing, nil
	}
	return result{}, fmt.Errorf("failed to change provisioning state to %q: %w", opts.Target, err)
}

func (p *provisioner) setMaintenance(ctx context.Context, n *nodes.Node, on bool, reason string) (result, error) {
	var err error
	if on {
		err = nodes.SetMaintenance(ctx, p.client, n.UUID, nodes.MaintenanceOpts{Reason: reason}).ExtractErr()
	} else {
		err = nodes.UnsetMaintenance(ctx, p.client, n.UUID).ExtractErr()
	}
	switch {
	case err == nil:
		p.cached = nil
		return continuing, nil
	case gophercloud.ResponseCodeIs(err, http.StatusConflict):
		return continuing, nil
	}
	return result{}, fmt.Errorf("failed to set host maintenance flag to %v (%w)", on, err)
}

// inspectHardware is InspectHardware with refresh, restartOnFailure and
// forceReboot false (a new host). When it completes it returns the
// inventory answer BMO builds the hardware details from.
func (p *provisioner) inspectHardware(ctx context.Context) (result, *nodes.InventoryData, error) {
	n, err := p.getNode(ctx)
	if err != nil {
		return result{}, nil, err
	}
	switch nodes.ProvisionState(n.ProvisionState) {
	case nodes.Available:
		res, err := p.changeProvisionState(ctx, n, nodes.ProvisionStateOpts{Target: nodes.TargetManage})
		return res, nil, err
	case nodes.InspectWait, nodes.Inspecting:
		return continuing, nil, nil
	case nodes.InspectFail:
		msg := n.LastError
		if msg == "" {
			msg = "Inspection failed"
		}
		return failed(msg), nil, nil
	case nodes.Manageable:
	default:
		return result{}, nil, fmt.Errorf("unexpected provision state %s", n.ProvisionState)
	}
	data, err := nodes.GetInventory(ctx, p.client, n.UUID).Extract()
	if err != nil {
		if gophercloud.ResponseCodeIs(err, http.StatusNotFound) {
			res, err := p.startInspection(ctx, n)
			return res, nil, err
		}
		return result{}, nil, fmt.Errorf("failed to retrieve hardware introspection data: %w", err)
	}
	return complete, data, nil
}

// startInspection sets the capabilities and inspect_interface=agent, then
// the inspect verb.
func (p *provisioner) startInspection(ctx context.Context, n *nodes.Node) (result, error) {
	var up updater
	up.setSection("/properties", n.Properties, map[string]any{
		"capabilities": capabilities(n, p.host.bootMode),
		"cpu_arch":     cpuArch(),
	})
	up.setTopLevel("inspect_interface", "agent", n.InspectInterface)
	n, res, err := p.tryUpdateNode(ctx, n, up)
	if n == nil {
		return res, err
	}
	return p.changeProvisionState(ctx, n, nodes.ProvisionStateOpts{Target: nodes.TargetInspect})
}

// firmwareComponents is GetFirmwareComponents: GET /v1/nodes/{n}/firmware
// (1.86), keeping bios, bmc and nic:* components.
func (p *provisioner) firmwareComponents(ctx context.Context) ([]nodes.FirmwareComponent, error) {
	list, err := nodes.ListFirmware(ctx, p.client, p.nodeID).Extract()
	if err != nil {
		return nil, fmt.Errorf("could not get firmware components for node %s: %w", p.nodeID, err)
	}
	var kept []nodes.FirmwareComponent
	for _, c := range list {
		if c.Component == "bios" || c.Component == "bmc" || strings.HasPrefix(c.Component, "nic:") {
			kept = append(kept, c)
		}
	}
	return kept, nil
}

// firmwareSettings is GetFirmwareSettings with the schema (the
// HostFirmwareSettings controller's call): GET …/bios?detail=True.
func (p *provisioner) firmwareSettings(ctx context.Context) ([]nodes.BIOSSetting, error) {
	list, err := nodes.ListBIOSSettings(ctx, p.client, p.nodeID, nodes.ListBIOSSettingsOpts{Detail: true}).Extract()
	if err != nil {
		return nil, fmt.Errorf("could not get BIOS settings for node %s: %w", p.nodeID, err)
	}
	return list, nil
}

// prepare is Prepare for a host without RAID, BIOS or firmware changes:
// no clean steps, so nothing but the node's state is read.
func (p *provisioner) prepare(ctx context.Context) (result, error) {
	n, err := p.getNode(ctx)
	if err != nil {
		return result{}, err
	}
	switch nodes.ProvisionState(n.ProvisionState) {
	case nodes.Available, nodes.Manageable:
		return complete, nil
	case nodes.Cleaning, nodes.CleanWait:
		return continuing, nil
	}
	return result{}, fmt.Errorf("have unexpected ironic node state %s", n.ProvisionState)
}

// powerOn is PowerOn(force=false).
func (p *provisioner) powerOn(ctx context.Context) (result, error) {
	n, err := p.getNode(ctx)
	if err != nil {
		return result{}, err
	}
	if n.PowerState == string(nodes.PowerOn) {
		return complete, nil
	}
	if n.TargetPowerState == string(nodes.PowerOn) {
		return continuing, nil
	}
	if n.LastError != "" {
		return failed("PowerOn operation failed: " + n.LastError), nil
	}
	return p.changePower(ctx, n, nodes.PowerOn)
}

// powerOff is PowerOff(force=false) for a node that is not inspecting or
// cleaning: soft first (hard=false, BMO's default reboot mode) with a
// fall-back to hard on 400; reboots instead with disable_power_off.
func (p *provisioner) powerOff(ctx context.Context, hard bool) (result, error) {
	n, err := p.getNode(ctx)
	if err != nil {
		return result{}, err
	}
	if n.PowerState == string(nodes.PowerOff) {
		return complete, nil
	}
	if t := n.TargetPowerState; t == string(nodes.PowerOff) || t == string(nodes.SoftPowerOff) {
		return continuing, nil
	}
	if n.TargetPowerState == "" && n.LastError != "" && !strings.Contains(n.LastError, "aborted") {
		return failed(n.LastError), nil
	}
	if !hard {
		target := nodes.SoftPowerOff
		if n.DisablePowerOff {
			target = nodes.SoftRebooting
		}
		res, err := p.changePower(ctx, n, target)
		if !errors.Is(err, errSoftPowerOffUnsupported) {
			return res, err
		}
	}
	target := nodes.PowerOff
	if n.DisablePowerOff {
		target = nodes.Rebooting
	}
	return p.changePower(ctx, n, target)
}

var errSoftPowerOffUnsupported = errors.New("soft power off is unsupported on BMC")

func (p *provisioner) changePower(ctx context.Context, n *nodes.Node, target nodes.TargetPowerState) (result, error) {
	if n.TargetProvisionState != "" {
		return continuing, nil
	}
	opts := nodes.PowerStateOpts{Target: target}
	if target == nodes.SoftPowerOff {
		opts.Timeout = 180
	}
	err := nodes.ChangePowerState(ctx, p.client, n.UUID, opts).ExtractErr()
	switch {
	case err == nil:
		p.cached = nil
		return continuing, nil
	case gophercloud.ResponseCodeIs(err, http.StatusConflict):
		return continuing, nil
	case gophercloud.ResponseCodeIs(err, http.StatusBadRequest) && target == nodes.SoftPowerOff:
		err = fmt.Errorf("%w: %w", errSoftPowerOffUnsupported, err)
	}
	return result{}, fmt.Errorf("failed to %s node: %w", target, err)
}

// provision is Provision for a direct deploy of p.host.image (no custom
// deploy, no live ISO, no forced reboot).
func (p *provisioner) provision(ctx context.Context) (result, error) {
	n, err := p.getNode(ctx)
	if err != nil {
		return result{}, err
	}
	switch nodes.ProvisionState(n.ProvisionState) {
	case nodes.Manageable:
		return p.changeProvisionState(ctx, n, nodes.ProvisionStateOpts{Target: nodes.TargetProvide})
	case nodes.Available:
		if res, err := p.setUpForProvisioning(ctx, n); err != nil || res.dirty || res.failure != "" {
			return res, err
		}
		return p.changeProvisionState(ctx, n, nodes.ProvisionStateOpts{
			Target:      nodes.TargetActive,
			ConfigDrive: p.configDrive(),
		})
	case nodes.Active:
		return complete, nil
	case nodes.DeployFail:
		return failed("Image provisioning failed: " + n.LastError), nil
	}
	return continuing, nil
}

// setUpForProvisioning patches instance_uuid, instance_info and
// force_persistent_boot_device, then validates boot and deploy.
func (p *provisioner) setUpForProvisioning(ctx context.Context, n *nodes.Node) (result, error) {
	var up updater
	up.setTopLevel("instance_uuid", p.host.uid, n.InstanceUUID)
	hints := map[string]string{}
	if p.host.rootDeviceName != "" {
		hints["name"] = "s== " + p.host.rootDeviceName
	}
	instanceCaps := map[string]string{}
	if p.host.bootMode == "UEFISecureBoot" {
		instanceCaps["secure_boot"] = "true"
	}
	up.setSection("/instance_info", n.InstanceInfo, map[string]any{"capabilities": instanceCaps, "root_device": hints})
	info := map[string]any{
		"boot_iso":          nil,
		"image_source":      p.host.image.url,
		"image_disk_format": nil, // spec.image.format unset
		"image_pull_secret": nil,
	}
	if p.host.image.checksumType == "" {
		info["image_checksum"], info["image_os_hash_algo"], info["image_os_hash_value"] = p.host.image.checksum, nil, nil
	} else {
		info["image_checksum"], info["image_os_hash_algo"], info["image_os_hash_value"] = nil, p.host.image.checksumType, p.host.image.checksum
	}
	up.setSection("/instance_info", n.InstanceInfo, info)
	up.setSection("/driver_info", n.DriverInfo, map[string]any{"force_persistent_boot_device": "Default"})
	n, res, err := p.tryUpdateNode(ctx, n, up)
	if n == nil {
		return res, err
	}
	v, err := nodes.Validate(ctx, p.client, n.UUID).Extract()
	if err != nil {
		if gophercloud.ResponseCodeIs(err, http.StatusConflict) {
			return continuing, nil
		}
		return result{}, fmt.Errorf("failed to validate host during registration: %w", err)
	}
	var reasons []string
	if !v.Boot.Result {
		reasons = append(reasons, v.Boot.Reason)
	}
	if !v.Deploy.Result {
		reasons = append(reasons, v.Deploy.Reason)
	}
	if len(reasons) > 0 {
		return failed("host validation error: " + strings.Join(reasons, "; ")), nil
	}
	return complete, nil
}

// configDrive is getConfigDrive: the user data, no network data, and
// BMO's default meta data.
func (p *provisioner) configDrive() nodes.ConfigDrive {
	return nodes.ConfigDrive{
		UserData: p.host.userData,
		MetaData: map[string]any{
			"uuid":             p.host.uid,
			"metal3-namespace": p.host.namespace,
			"metal3-name":      p.host.name,
			"local-hostname":   p.host.name,
			"local_hostname":   p.host.name,
			"name":             p.host.name,
		},
	}
}

// deprovision is Deprovision(restartOnFailure=false).
func (p *provisioner) deprovision(ctx context.Context) (result, error) {
	n, err := p.getNode(ctx)
	if err != nil {
		return result{}, err
	}
	switch nodes.ProvisionState(n.ProvisionState) {
	case nodes.Error:
		return failed("Deprovisioning failed: " + n.LastError), nil
	case nodes.CleanFail:
		return failed("Cleaning failed: " + n.LastError), nil
	case nodes.Manageable:
		return p.changeProvisionState(ctx, n, nodes.ProvisionStateOpts{Target: nodes.TargetProvide})
	case nodes.Available:
		return complete, nil
	case nodes.Deleting, nodes.Cleaning, nodes.CleanWait, nodes.Deploying:
		return continuing, nil
	case nodes.Active, nodes.DeployFail, nodes.DeployWait:
		if n.AutomatedClean == nil || *n.AutomatedClean != p.host.automatedCleaning {
			var up updater
			up.setTopLevel("automated_clean", p.host.automatedCleaning, n.AutomatedClean)
			if _, err := nodes.Update(ctx, p.client, n.UUID, up.ops).Extract(); err != nil {
				return result{}, fmt.Errorf("failed to update automatedClean: %w", err)
			}
			p.cached = nil
			return continuing, nil
		}
		return p.changeProvisionState(ctx, n, nodes.ProvisionStateOpts{Target: nodes.TargetDeleted})
	}
	return result{}, fmt.Errorf("unhandled ironic state %s", n.ProvisionState)
}

// deleteNode is Delete: a stale instance_uuid is removed first; states
// other than enroll, manageable and available need maintenance set.
func (p *provisioner) deleteNode(ctx context.Context) (result, error) {
	n, err := p.getNode(ctx)
	if errors.Is(err, errNeedsRegistration) {
		return complete, nil
	}
	if err != nil {
		return result{}, err
	}
	switch st := nodes.ProvisionState(n.ProvisionState); st {
	case nodes.Verifying, nodes.Deploying, nodes.Cleaning, nodes.Inspecting, nodes.Servicing, nodes.Deleting,
		nodes.DeployWait, nodes.InspectWait, nodes.CleanWait, nodes.ServiceWait:
		return continuing, nil
	case nodes.Enroll:
	case nodes.Available, nodes.Manageable:
		if n.InstanceUUID != "" {
			var up updater
			up.setTopLevel("instance_uuid", nil, n.InstanceUUID)
			if n, res, err := p.tryUpdateNode(ctx, n, up); n == nil {
				return res, err
			}
		}
	default:
		if !n.Maintenance {
			return p.setMaintenance(ctx, n, true, "forcing deletion in baremetal-operator")
		}
	}
	err = nodes.Delete(ctx, p.client, n.UUID).ExtractErr()
	switch {
	case err == nil, gophercloud.ResponseCodeIs(err, http.StatusNotFound):
		p.cached = nil
		return continuing, nil
	case gophercloud.ResponseCodeIs(err, http.StatusConflict):
		return continuing, nil
	}
	return result{}, fmt.Errorf("failed to remove host: %w", err)
}

// hasCapacity is HasCapacity, asked before a host enters inspecting,
// provisioning or deprovisioning: hosts on virtual media always have
// room; others count the nodes busy booting the ramdisk over the network
// against PROVISIONING_LIMIT (20).
func (p *provisioner) hasCapacity(ctx context.Context) (bool, error) {
	if p.bmc.supportsISO {
		return true, nil
	}
	pages, err := nodes.List(p.client, nodes.ListOpts{Fields: []string{"uuid,name,provision_state,boot_interface"}}).AllPages(ctx)
	if err != nil {
		return false, err
	}
	all, err := nodes.ExtractNodes(pages)
	if err != nil {
		return false, err
	}
	busy := map[string]bool{}
	for _, n := range all {
		switch nodes.ProvisionState(n.ProvisionState) {
		case nodes.Cleaning, nodes.CleanWait, nodes.Inspecting, nodes.InspectWait, nodes.Deploying, nodes.DeployWait, nodes.Deleting:
			if !strings.Contains(n.BootInterface, "virtual-media") {
				busy[n.Name] = true
			}
		}
	}
	return busy[p.host.nodeName()] || len(busy) < 20, nil
}

// capabilities is buildCapabilitiesValue: the node's capabilities with
// boot_mode/secure_boot replaced by the host's boot mode.
func capabilities(n *nodes.Node, bootMode string) string {
	mode := map[string]string{"UEFI": "boot_mode:uefi", "UEFISecureBoot": "boot_mode:uefi,secure_boot:true", "legacy": "boot_mode:bios"}[bootMode]
	if n == nil {
		return mode
	}
	existing, _ := n.Properties["capabilities"].(string)
	if existing == "" {
		return mode
	}
	var kept []string
	for _, c := range strings.Split(existing, ",") {
		if !strings.HasPrefix(c, "boot_mode:") && !strings.HasPrefix(c, "secure_boot:") {
			kept = append(kept, c)
		}
	}
	return strings.Join(append(kept, mode), ",")
}

// bmcAddressMatches compares the first *_address key of each driver_info,
// as BMO does.
func bmcAddressMatches(current, desired map[string]any) bool {
	first := func(m map[string]any) map[string]any {
		for k, v := range m {
			if strings.HasSuffix(k, "_address") {
				return map[string]any{k: v}
			}
		}
		return map[string]any{}
	}
	return reflect.DeepEqual(first(current), first(desired))
}

// bmcAccess is what BMO's hardwareutils/bmc derives from a BMC address:
// the driver, the interfaces it sets (empty: the hardware type's default)
// and how driver_info is built.
type bmcAccess struct {
	driver, bootInterface, firmwareInterface, raidInterface string
	biosInterface, managementInterface, powerInterface      string
	vendorInterface                                         string
	supportsISO                                             bool
	driverInfo                                              func(h host) map[string]any
}

// parseBMC handles the two address schemes the tests use: ipmi://host:port
// and redfish-virtualmedia[+http|+https]://host:port/path.
func parseBMC(address string) (bmcAccess, error) {
	u, err := url.Parse(address)
	if err != nil {
		return bmcAccess{}, err
	}
	scheme, transport, _ := strings.Cut(u.Scheme, "+")
	switch scheme {
	case "ipmi":
		return bmcAccess{driver: "ipmi", bootInterface: "ipxe", raidInterface: "no-raid",
			driverInfo: func(h host) map[string]any {
				port := u.Port()
				if port == "" {
					port = "623"
				}
				priv := "ADMINISTRATOR"
				if v := u.Query().Get("privilegelevel"); v != "" {
					priv = v
				}
				return map[string]any{"ipmi_port": port, "ipmi_username": h.username, "ipmi_password": h.password,
					"ipmi_address": u.Hostname(), "ipmi_priv_level": priv}
			}}, nil
	case "redfish-virtualmedia":
		if transport == "" {
			transport = "https"
		}
		return bmcAccess{driver: "redfish", bootInterface: "redfish-virtual-media", firmwareInterface: "redfish",
			raidInterface: "redfish", supportsISO: true,
			driverInfo: func(h host) map[string]any {
				info := map[string]any{"redfish_username": h.username, "redfish_password": h.password,
					"redfish_address": transport + "://" + u.Host}
				if p := strings.Trim(u.Path, "/"); p != "" && p != "redfish/v1" {
					info["redfish_system_id"] = u.Path
				}
				return info
			}}, nil
	}
	return bmcAccess{}, fmt.Errorf("unknown BMC type %q", u.Scheme)
}

// updater builds JSON patches as BMO's clients.NodeUpdater: "add" when a
// value is missing or different, "remove" when the wanted value is nil and
// one is present, nothing otherwise.
type updater struct{ ops nodes.UpdateOpts }

func (u *updater) setTopLevel(name string, desired, current any) {
	u.setSection("", map[string]any{name: current}, map[string]any{name: desired})
}

func (u *updater) setSection(base string, current, desired map[string]any) {
	for name, want := range desired {
		have, present := current[name]
		want, have = deref(want), deref(have)
		path := base + "/" + name
		if want == nil {
			if present && have != nil {
				u.ops = append(u.ops, nodes.UpdateOperation{Op: nodes.RemoveOp, Path: path})
			}
			continue
		}
		if !present || !sameValue(have, want) {
			u.ops = append(u.ops, nodes.UpdateOperation{Op: nodes.AddOp, Path: path, Value: want})
		}
	}
}

// deref turns a pointer into its value (nil for a nil pointer) and an
// empty current string into nil, as a JSON field Ironic omits.
func deref(v any) any {
	if v == nil {
		return nil
	}
	rv := reflect.ValueOf(v)
	if rv.Kind() == reflect.Pointer {
		if rv.IsNil() {
			return nil
		}
		return rv.Elem().Interface()
	}
	return v
}

// sameValue compares a decoded JSON value with a Go value of another type
// (map[string]string against map[string]any, and so on).
func sameValue(have, want any) bool {
	if reflect.DeepEqual(have, want) {
		return true
	}
	hv, wv := reflect.ValueOf(have), reflect.ValueOf(want)
	switch hv.Kind() {
	case reflect.Map:
		if wv.Kind() != reflect.Map || hv.Len() != wv.Len() {
			return false
		}
		for _, k := range hv.MapKeys() {
			w := wv.MapIndex(k)
			if !w.IsValid() || !sameValue(hv.MapIndex(k).Interface(), w.Interface()) {
				return false
			}
		}
		return true
	case reflect.Slice:
		if wv.Kind() != reflect.Slice || hv.Len() != wv.Len() {
			return false
		}
		for i := range hv.Len() {
			if !sameValue(hv.Index(i).Interface(), wv.Index(i).Interface()) {
				return false
			}
		}
		return true
	}
	return false
}
