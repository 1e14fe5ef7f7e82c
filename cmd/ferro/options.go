package main

import (
	"log/slog"
	"time"

	"github.com/ferrometal/ferro/internal/api/ironic"
	"github.com/ferrometal/ferro/internal/conductor"
	"github.com/ferrometal/ferro/internal/config"
	"github.com/ferrometal/ferro/internal/driver"
	"github.com/ferrometal/ferro/internal/driver/deployimage"
	"github.com/ferrometal/ferro/internal/driver/pxe"
	"github.com/ferrometal/ferro/internal/inspector"
	"github.com/ferrometal/ferro/internal/openstack"
	"github.com/ferrometal/ferro/internal/scrub"
	"github.com/ferrometal/ferro/internal/store"
)

// seconds is an option given in whole seconds, as Ironic's are.
func seconds(n int) time.Duration { return time.Duration(n) * time.Second }

// clientAuth maps a section's client credentials onto the outbound-client
// factory's options, with ferro's own secrets to scrub from what servers
// answer; the client sets the section, endpoint and service type.
func clientAuth(cfg *config.Config, a config.ClientAuth) openstack.Options {
	return openstack.Options{Secrets: scrub.New(cfg.Secrets()...),
		AuthType: a.AuthType, Username: a.Username, Password: a.Password, AuthURL: a.AuthURL,
		ProjectName: a.ProjectName, UserDomainName: a.UserDomainName, ProjectDomainName: a.ProjectDomainName,
		SystemScope: a.SystemScope, Token: a.Token, RegionName: a.RegionName, CAFile: a.CAFile, Insecure: a.Insecure,
	}
}

// pxeOptions are the pxe and ipxe interfaces' options from [pxe], [deploy]
// and [DEFAULT]debug.
func pxeOptions(cfg *config.Config, images *deployimage.Fetcher, dhcp driver.DHCP) pxe.Options {
	return pxe.Options{Images: images, DHCP: dhcp,
		TFTPRoot: cfg.PXE.TFTPRoot, HTTPRoot: cfg.Deploy.HTTPRoot, HTTPURL: cfg.Deploy.HTTPURL, TFTPServer: cfg.PXE.TFTPServer,
		PXEBootfile: cfg.PXE.PXEBootfileName, IPXEBootfile: cfg.PXE.IPXEBootfileName, IPXEBootScript: cfg.PXE.IPXEBootScript,
		KernelAppendParams: cfg.PXE.KernelAppendParams, Debug: cfg.Default.Debug}
}

// conductorOptions are the conductor's options from [DEFAULT], [conductor]
// and [inspector]status_check_period; the caller wires the rest.
func conductorOptions(cfg *config.Config) conductor.Options {
	c := cfg.Conductor
	byClass, _ := c.RunbookByResourceClass() // checked by Validate
	return conductor.Options{
		AutomatedCleaning: conductor.AutomatedCleaning{Default: c.AutomatedClean, StepSource: c.AutomatedCleaningStepSource,
			Runbook: c.AutomatedCleaningRunbook, ByResourceClass: byClass, FromNode: c.AutomatedCleaningRunbookFromNode,
			ValidateTraits: c.AutomatedCleaningRunbookValidateTraits},
		Host: cfg.Default.Host, Group: c.ConductorGroup, Workers: c.WorkersPoolSize,
		PowerTimeout:      seconds(c.PowerStateChangeTimeout),
		HeartbeatInterval: seconds(c.HeartbeatInterval), StatusCheckPeriod: seconds(cfg.Inspector.StatusCheckPeriod),
		CheckProvisionStateInterval: seconds(c.CheckProvisionStateInterval),
		HeartbeatTimeout:            seconds(c.HeartbeatTimeout), InspectWaitTimeout: seconds(c.InspectWaitTimeout),
		PowerSync: conductor.PowerSync{Interval: seconds(max(c.SyncPowerStateInterval, 0)), Force: c.ForcePowerStateDuringSync,
			MaxRetries: c.PowerStateSyncMaxRetries, Workers: c.SyncPowerStateWorkers, Health: c.EnableHealthMonitoring},
		Discovery: conductor.Discovery{Enabled: cfg.AutoDiscovery.Enabled, Driver: cfg.AutoDiscovery.Driver,
			InspectionScope: cfg.AutoDiscovery.InspectionScope, ResourceClass: cfg.Default.DefaultResourceClass,
			ConductorGroup: cfg.Default.DefaultConductorGroup},
		PXEFilter: conductor.PXEFilter{Dir: cfg.PXEFilter.DHCPHostsdir, SupportedInspectInterfaces: cfg.PXEFilter.SupportedInspectInterfaces,
			Period: seconds(cfg.PXEFilter.SyncPeriod)}}
}

// inspectorOptions are the inspector's options from [processing],
// [capabilities], [pci_devices], [inspector] and [DEFAULT]timeout; the
// caller wires the rest.
func inspectorOptions(cfg *config.Config) inspector.Options {
	p := cfg.Processing
	return inspector.Options{StoreData: p.StoreData != "none",
		RamdiskLogsDir: p.RamdiskLogsDir, AlwaysStoreRamdiskLogs: p.AlwaysStoreRamdiskLogs,
		RamdiskLogsFilenameFormat: p.RamdiskLogsFilenameFormat,
		PermitActiveIntrospection: cfg.Inspector.PermitActiveIntrospection, CanManageBoot: cfg.Inspector.CanManageBoot,
		IntrospectionDelay: seconds(cfg.Inspector.IntrospectionDelay), Timeout: seconds(cfg.Default.Timeout),
		TokenLifetime: seconds(cfg.Conductor.InspectWaitTimeout)}
}

// ironicOptions are the bare metal API's options.
func ironicOptions(cfg *config.Config, db store.Store, cond *conductor.Conductor, log *slog.Logger) ironic.Options {
	return ironic.Options{Store: db, Conductor: cond, Log: log, Version: buildVersion(),
		MaxLimit: cfg.API.MaxLimit, PublicEndpoint: cfg.API.PublicEndpoint, HeartbeatTimeout: seconds(cfg.Conductor.HeartbeatTimeout),
		Host: cfg.Default.Host, DefaultResourceClass: cfg.Default.DefaultResourceClass,
		Ramdisk: ironic.RamdiskOptions{Reports: cond, Disabled: !cfg.API.EnableRamdiskEndpoints,
			MaxBodyBytes: int64(cfg.API.MaxJSONBodySizeInspection) << 10, ReadTimeout: seconds(cfg.Default.ClientSocketTimeout),
			HeartbeatTimeout: cfg.API.RamdiskHeartbeatTimeout}}
}
