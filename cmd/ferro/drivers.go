package main

import (
	"errors"
	"fmt"
	"log/slog"
	"os"
	"time"

	bmcipmi "github.com/ferrometal/ferro/internal/bmc/ipmi"
	bmcredfish "github.com/ferrometal/ferro/internal/bmc/redfish"
	"github.com/ferrometal/ferro/internal/conductor"
	"github.com/ferrometal/ferro/internal/config"
	"github.com/ferrometal/ferro/internal/driver"
	"github.com/ferrometal/ferro/internal/driver/deployimage"
	"github.com/ferrometal/ferro/internal/driver/fake"
	"github.com/ferrometal/ferro/internal/driver/inspect"
	"github.com/ferrometal/ferro/internal/driver/ipmi"
	"github.com/ferrometal/ferro/internal/driver/network"
	"github.com/ferrometal/ferro/internal/driver/pxe"
	rfdriver "github.com/ferrometal/ferro/internal/driver/redfish"
	"github.com/ferrometal/ferro/internal/driver/redfish/vmedia"
	"github.com/ferrometal/ferro/internal/inspection"
	"github.com/ferrometal/ferro/internal/neutron"
	"github.com/ferrometal/ferro/internal/scrub"
	"github.com/ferrometal/ferro/internal/store"
)

// hardwareTypes are the hardware types built into ferro, each declared by
// its folder under internal/driver (its supported interfaces, defaults and
// driver_info keys). The API's driver views, the [DEFAULT]enabled_*
// defaults and the registry read this list and nothing else; its order is
// the order of those defaults. Adding a type is its folder, a line here
// and its Register call in newRegistry (docs/development.md).
var hardwareTypes = []driver.HardwareType{fake.HardwareType, ipmi.HardwareType, rfdriver.HardwareType}

// configHardware gives the configuration the hardware types' defaults of
// [DEFAULT]enabled_hardware_types and enabled_*_interfaces.
func configHardware() config.Hardware {
	e := driver.EnableAll(hardwareTypes)
	return config.Hardware{Types: e.Types, Interfaces: e.Interfaces}
}

// defaultConfig is the configuration with no file and no environment.
func defaultConfig() *config.Config { return config.Defaults(configHardware()) }

// newRegistry builds the driver registry of hardwareTypes with
// [DEFAULT]enabled_* and default_*, and registers the implementations
// built into this binary.
func newRegistry(cfg *config.Config, db store.Store, inspectClient inspect.Client, agentPipeline *inspection.Pipeline,
	ipmiClient *bmcipmi.Client, log *slog.Logger, obs *observability) (*driver.Registry, error) {
	e := driver.Enabled{Types: cfg.Default.EnabledHardwareTypes, Interfaces: map[string][]string{}, Defaults: map[string]string{}}
	for _, kind := range driver.Kinds {
		e.Interfaces[kind] = cfg.Default.Enabled(kind)
		e.Defaults[kind] = cfg.Default.DefaultFor(kind)
	}
	reg := driver.NewRegistry(hardwareTypes, e)
	fake.Register(reg)
	ipmi.Register(reg, ipmi.Options{Client: ipmiClient, DisableBootTimeout: cfg.IPMI.DisableBootTimeout,
		DefaultBootMode: cfg.Deploy.DefaultBootMode})
	reg.RegisterNetwork("noop", network.Noop{})

	// Neutron is optional: without [neutron]url (or Keystone auth) the flat
	// and neutron interfaces fall back for inspection unless a node names an
	// inspection network, which is then a validation error.
	var nc *neutron.Client
	if cfg.Neutron.URL != "" || cfg.Neutron.AuthURL != "" {
		c, err := neutron.New(neutron.Options{URL: cfg.Neutron.URL, Auth: clientAuth(cfg, cfg.Neutron.ClientAuth),
			Retries: cfg.Neutron.Retries, Timeout: seconds(cfg.Neutron.Timeout), Log: log})
		if err != nil {
			return nil, fmt.Errorf("neutron client: %w", err)
		}
		nc = c
	}
	no := network.Options{InspectionNetwork: cfg.Neutron.InspectionNetwork,
		SecurityGroups: cfg.Neutron.InspectionNetworkSecurityGroups, AddAllPorts: cfg.Neutron.AddAllPorts}
	reg.RegisterNetwork("flat", network.NewFlat(nc, no))
	reg.RegisterNetwork("neutron", network.NewNeutron(nc, no))

	var dhcp driver.DHCP = driver.NoDHCP{}
	if cfg.DHCP.DHCPProvider == "neutron" {
		if nc == nil {
			return nil, errors.New("[dhcp]dhcp_provider=neutron needs [neutron]url or Keystone options")
		}
		dhcp = network.NeutronDHCP{Provider: neutron.NewDHCPProvider(nc, seconds(cfg.Neutron.PortSetupDelay))}
	}
	// One deploy image cache for every boot interface: two nodes needing
	// the same download wait for one another.
	images := deployimage.New(deployimage.Options{AllowedPaths: cfg.Conductor.FileURLAllowedPaths,
		RedirectHosts: cfg.Conductor.ImageRedirectHosts,
		DefaultKernel: cfg.Conductor.DeployKernel, DefaultRamdisk: cfg.Conductor.DeployRamdisk,
		CacheSize: int64(cfg.PXE.ImageCacheSize) << 20})
	if err := pxe.Register(reg, pxeOptions(cfg, images, dhcp)); err != nil {
		return nil, err
	}
	registerRedfish(reg, cfg, db, images, log, obs)
	if inspectClient != nil {
		ic := cfg.Inspector
		o := inspect.Options{Client: inspectClient, Callback: callbackSettings(cfg),
			AllowLoopbackCallback: ic.AllowLoopbackCallback, ExtraKernelParams: ic.ExtraKernelParams,
			RequireManagedBoot: requireManagedBoot(cfg, false), PowerOff: ic.PowerOff, Agent: ic.Agent,
			DeployRamdisk: cfg.Conductor.DeployRamdisk, PowerTimeout: seconds(cfg.Conductor.PowerStateChangeTimeout),
			Progress: obs.progress(conductor.NewProgress(db, cfg.Default.Host, log))}
		if cfg.Inventory.DataBackend != "none" {
			o.Inventory = db
		}
		if cfg.DHCP.DHCPProvider == "builtin" {
			o.Leases = leaseReleaser{store: db, log: log}
		}
		reg.RegisterInspect("inspector", inspect.New(o))
	}
	if agentPipeline != nil {
		reg.RegisterInspect("agent", inspect.NewAgent(agentOptions(cfg, db, agentPipeline, reg, log, obs)))
	}
	warnings, err := reg.CheckEnabled()
	if err != nil {
		return nil, fmt.Errorf("[DEFAULT]enabled_*_interfaces: %w", err)
	}
	for _, w := range warnings {
		log.Warn("an enabled interface no hardware type of ferro has is ignored", "interface", w)
	}
	if err := checkDiscovery(cfg, reg); err != nil {
		return nil, err
	}
	if dir := cfg.PXEFilter.DHCPHostsdir; dir != "" {
		// Ironic's prepare_host: the directory is the operator's to create.
		if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
			return nil, fmt.Errorf("[pxe_filter]dhcp_hostsdir %q does not exist or is not a directory", dir)
		}
	}
	return reg, nil
}

// requireManagedBoot is [inspector]require_managed_boot, or when unset the
// interface's upstream default: true for agent (Ironic master), false
// for inspector (Ironic 2023.1).
func requireManagedBoot(cfg *config.Config, agent bool) bool {
	if v := cfg.Inspector.RequireManagedBoot; v != nil {
		return *v
	}
	return agent
}

// agentOptions are the agent inspect interface's options from
// [inspector], [service_catalog], [api], [deploy], [agent] and
// [inventory].
func agentOptions(cfg *config.Config, db store.Store, p *inspection.Pipeline, reg *driver.Registry, log *slog.Logger, obs *observability) inspect.AgentOptions {
	ic := cfg.Inspector
	o := inspect.AgentOptions{Pipeline: p, Store: db, StoreInventory: cfg.Inventory.DataBackend != "none",
		Callback: apiCallback(cfg), AllowLoopbackCallback: ic.AllowLoopbackCallback,
		ExtraKernelParams: ic.ExtraKernelParams, RequireManagedBoot: requireManagedBoot(cfg, true),
		PowerOff: ic.PowerOff, PreCreatePorts: ic.PreCreatePorts, ForceDHCP: ic.ForceDHCP, FastTrack: cfg.Deploy.FastTrack,
		Agent: ic.Agent, DeployRamdisk: cfg.Conductor.DeployRamdisk, PowerTimeout: seconds(cfg.Conductor.PowerStateChangeTimeout),
		Progress:   obs.progress(conductor.NewProgress(db, cfg.Default.Host, log)),
		Logs:       &inspect.DeployLogs{Collect: cfg.Agent.DeployLogsCollect, Dir: cfg.Agent.DeployLogsLocalPath},
		Interfaces: reg.DefaultInterfaces,
	}
	if cfg.DHCP.DHCPProvider == "builtin" {
		o.Leases = leaseReleaser{store: db, log: log}
	}
	return o
}

// checkDiscovery refuses [auto_discovery] that cannot work: the driver
// must be an enabled hardware type whose default inspect interface is
// agent, which processes the discovered machine's report.
func checkDiscovery(cfg *config.Config, reg *driver.Registry) error {
	d := cfg.AutoDiscovery
	if !d.Enabled {
		return nil
	}
	if _, ok := reg.HardwareType(d.Driver); !ok {
		return fmt.Errorf("[auto_discovery]driver %q is not an enabled hardware type", d.Driver)
	}
	if name, err := reg.DefaultInterface(d.Driver, "inspect"); err != nil || name != "agent" {
		return fmt.Errorf("[auto_discovery]driver %q inspects with %q by default, not agent: set [DEFAULT]default_inspect_interface = agent", d.Driver, name)
	}
	return nil
}

// registerRedfish adds the redfish power, management and inspect
// interfaces and the redfish-virtual-media boot interface, sharing one
// Redfish client (one session per BMC).
func registerRedfish(reg *driver.Registry, cfg *config.Config, db store.Store, images *deployimage.Fetcher, log *slog.Logger, obs *observability) {
	rc := cfg.Redfish
	client := bmcredfish.New(bmcredfish.Options{
		ConnectionAttempts: rc.ConnectionAttempts,
		// 0 s means no wait; the client's zero value would mean its default.
		ConnectionRetryInterval: max(seconds(rc.ConnectionRetryInterval), time.Millisecond),
		CacheSize:               rc.ConnectionCacheSize,
		Log:                     log,
		WrapTransport:           obs.redfish(),
		Secrets:                 scrub.New(cfg.Secrets()...),
	})
	o := rfdriver.Options{Client: client, AuthType: rc.AuthType, DefaultBootMode: cfg.Deploy.DefaultBootMode, Log: log}
	reg.RegisterPower("redfish", rfdriver.NewPower(o))
	reg.RegisterManagement("redfish", rfdriver.NewManagement(o))
	reg.RegisterOther("firmware", "redfish", rfdriver.NewFirmware(o))
	io := rfdriver.InspectOptions{Options: o, Ports: db}
	if cfg.Inventory.DataBackend != "none" {
		io.Inventory = db
	}
	reg.RegisterInspect("redfish", rfdriver.NewInspect(io))
	reg.RegisterBoot(vmedia.Name, vmedia.New(vmedia.Options{
		Images: images, Client: client, AuthType: rc.AuthType,
		HTTPRoot: cfg.Deploy.HTTPRoot, HTTPURL: cfg.Deploy.HTTPURL,
		KernelAppendParams: rc.KernelAppendParams, Debug: cfg.Default.Debug, Log: log,
	}))
}
