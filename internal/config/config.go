// Package config is ferro's configuration: one INI file with Ironic's section
// and option names, defaults that need no file, and an environment override
// FERRO_<SECTION>_<OPTION> for every option.
package config

import (
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"gopkg.in/ini.v1"
)

// Config is the whole configuration. Field tags name the INI option; the
// struct's section tag names the INI section.
type Config struct {
	Default      Default      `section:"DEFAULT"`
	API          API          `section:"api"`
	Database     Database     `section:"database"`
	Conductor    Conductor    `section:"conductor"`
	Inspector    Inspector    `section:"inspector"`
	Ironic       Ironic       `section:"ironic"`
	Processing   Processing   `section:"processing"`
	Capabilities Capabilities `section:"capabilities"`
	PCIDevices   PCIDevices   `section:"pci_devices"`
	Neutron      Neutron      `section:"neutron"`
	PXE          PXE          `section:"pxe"`
	Deploy       Deploy       `section:"deploy"`
	DHCP         DHCP         `section:"dhcp"`
	Inventory    Inventory    `section:"inventory"`
	// InspectionRules is [inspection_rules].
	InspectionRules InspectionRules `section:"inspection_rules"`
	IPMI            IPMI            `section:"ipmi"`
	Redfish         Redfish         `section:"redfish"`
	Netboot         Netboot         `section:"netboot"`
	Metrics         Metrics         `section:"metrics"`
	Web             Web             `section:"web"`
	// ServiceCatalog, AutoDiscovery, PXEFilter and Agent are Ironic's
	// sections of the same names, for the agent inspect interface.
	ServiceCatalog ServiceCatalog `section:"service_catalog"`
	AutoDiscovery  AutoDiscovery  `section:"auto_discovery"`
	PXEFilter      PXEFilter      `section:"pxe_filter"`
	Agent          Agent          `section:"agent"`
	// KeystoneAuthtoken and SSL are in security.go.
	KeystoneAuthtoken KeystoneAuthtoken `section:"keystone_authtoken"`
	SSL               SSL               `section:"ssl"`
}

// Default is [DEFAULT].
type Default struct {
	// Host is this conductor's name in reservations and the conductor table.
	Host  string `ini:"host"`
	Debug bool   `ini:"debug"`
	// Timeout is the inspector's introspection timeout in seconds (ironic-inspector's [DEFAULT]timeout).
	Timeout int `ini:"timeout"`

	EnabledHardwareTypes        []string `ini:"enabled_hardware_types" delim:","`
	EnabledBootInterfaces       []string `ini:"enabled_boot_interfaces" delim:","`
	EnabledDeployInterfaces     []string `ini:"enabled_deploy_interfaces" delim:","`
	EnabledInspectInterfaces    []string `ini:"enabled_inspect_interfaces" delim:","`
	EnabledManagementInterfaces []string `ini:"enabled_management_interfaces" delim:","`
	EnabledNetworkInterfaces    []string `ini:"enabled_network_interfaces" delim:","`
	EnabledPowerInterfaces      []string `ini:"enabled_power_interfaces" delim:","`
	EnabledRAIDInterfaces       []string `ini:"enabled_raid_interfaces" delim:","`
	EnabledVendorInterfaces     []string `ini:"enabled_vendor_interfaces" delim:","`
	EnabledConsoleInterfaces    []string `ini:"enabled_console_interfaces" delim:","`
	EnabledBIOSInterfaces       []string `ini:"enabled_bios_interfaces" delim:","`
	EnabledFirmwareInterfaces   []string `ini:"enabled_firmware_interfaces" delim:","`
	EnabledRescueInterfaces     []string `ini:"enabled_rescue_interfaces" delim:","`
	EnabledStorageInterfaces    []string `ini:"enabled_storage_interfaces" delim:","`

	DefaultBootInterface       string `ini:"default_boot_interface"`
	DefaultDeployInterface     string `ini:"default_deploy_interface"`
	DefaultInspectInterface    string `ini:"default_inspect_interface"`
	DefaultManagementInterface string `ini:"default_management_interface"`
	DefaultNetworkInterface    string `ini:"default_network_interface"`
	DefaultPowerInterface      string `ini:"default_power_interface"`
	DefaultRAIDInterface       string `ini:"default_raid_interface"`
	DefaultVendorInterface     string `ini:"default_vendor_interface"`
	DefaultConsoleInterface    string `ini:"default_console_interface"`
	DefaultBIOSInterface       string `ini:"default_bios_interface"`
	DefaultFirmwareInterface   string `ini:"default_firmware_interface"`
	DefaultRescueInterface     string `ini:"default_rescue_interface"`
	DefaultStorageInterface    string `ini:"default_storage_interface"`
	DefaultResourceClass       string `ini:"default_resource_class"`
	// DefaultConductorGroup is the conductor group of a node discovery enrolls.
	DefaultConductorGroup string `ini:"default_conductor_group"`

	// ClientSocketTimeout bounds, in seconds, reading one request (headers
	// and body) and how long an idle keep-alive connection is kept
	// (oslo.service's name).
	ClientSocketTimeout int `ini:"client_socket_timeout"`
	// MaxHeaderLine bounds the request headers, in bytes (oslo.service's name).
	MaxHeaderLine int `ini:"max_header_line"`
	// AuthStrategy is noauth, http_basic or keystone, for both APIs.
	AuthStrategy string `ini:"auth_strategy"`
	// HTTPBasicAuthUserFile is the Apache htpasswd file (bcrypt entries) of http_basic.
	HTTPBasicAuthUserFile string `ini:"http_basic_auth_user_file"`
	// IgnoredOptions lists names the configuration may set that ferro
	// does not have and must ignore instead of refusing to start:
	// "[section]" (a whole section ferro has not), "[section]option" or a
	// FERRO_* variable. For a file shared with Ironic, or options of a
	// newer ferro (a ferro option).
	IgnoredOptions []string `ini:"ignored_options" delim:","`
}

// Enabled returns the enabled implementations for an interface kind ("boot", "power", …).
func (d *Default) Enabled(kind string) []string {
	v, _ := d.byKind("Enabled", kind, "Interfaces").([]string)
	return v
}

// setEnabled sets enabled_<kind>_interfaces; an unknown kind is ignored.
func (d *Default) setEnabled(kind string, names []string) {
	if f := reflect.ValueOf(d).Elem().FieldByName("Enabled" + goName(kind) + "Interfaces"); f.IsValid() {
		f.Set(reflect.ValueOf(names))
	}
}

// DefaultFor returns the configured default implementation for an interface
// kind, or "" when the hardware type's own default applies.
func (d *Default) DefaultFor(kind string) string {
	v, _ := d.byKind("Default", kind, "Interface").(string)
	return v
}

func (d *Default) byKind(prefix, kind, suffix string) any {
	name := prefix + goName(kind) + suffix
	f := reflect.ValueOf(d).Elem().FieldByName(name)
	if !f.IsValid() {
		return nil
	}
	return f.Interface()
}

// goName maps an interface kind to the Go field infix used above.
func goName(kind string) string {
	switch kind {
	case "raid":
		return "RAID"
	case "bios":
		return "BIOS"
	}
	return strings.ToUpper(kind[:1]) + kind[1:]
}

// API is [api].
type API struct {
	HostIP string `ini:"host_ip"`
	Port   int    `ini:"port"`
	// MaxLimit caps the page size of list requests.
	MaxLimit int `ini:"max_limit"`
	// PublicEndpoint is the base URL put in links; empty means the request's host.
	PublicEndpoint string `ini:"public_endpoint"`
	// MaxConnections caps the open client connections of each listener (a
	// ferro option); further clients wait in the kernel's accept queue.
	MaxConnections int `ini:"max_connections"`
	// EnableSSLAPI serves both APIs over TLS with [ssl]cert_file and key_file.
	EnableSSLAPI bool `ini:"enable_ssl_api"`
	// AllowInsecureNoauth permits noauth on a non-loopback address.
	AllowInsecureNoauth bool `ini:"allow_insecure_noauth"`
	// EnableRamdiskEndpoints serves POST /v1/continue_inspection; false
	// answers 403 (an API the ramdisks must not reach).
	EnableRamdiskEndpoints bool `ini:"enable_ramdisk_endpoints"`
	// RamdiskHeartbeatTimeout is the agent's heartbeat_timeout in the
	// lookup answer, in seconds.
	RamdiskHeartbeatTimeout int `ini:"ramdisk_heartbeat_timeout"`
	// MaxJSONBodySizeInspection bounds /v1/continue_inspection's body, in KiB.
	MaxJSONBodySizeInspection int `ini:"max_json_body_size_inspection"`
	// NodeListCacheMB bounds the memory of the node list's cache of
	// decoded nodes and their rendered views, in MiB (a ferro option;
	// 0 turns it off).
	NodeListCacheMB int `ini:"node_list_cache_mb"`
}

// Database is [database].
type Database struct {
	// Connection is sqlite:///path or postgresql://…; empty means SQLite in the data directory.
	Connection string `ini:"connection" secret:"connection"`
	// MaxRetries is how many times `ferro serve` tries to connect to
	// PostgreSQL at start before it gives up (oslo.db's name and default:
	// 10; -1 tries until stopped). SQLite is opened once.
	MaxRetries int `ini:"max_retries"`
	// RetryInterval is the wait between two attempts, in seconds.
	RetryInterval int `ini:"retry_interval"`
}

// Conductor is [conductor].
type Conductor struct {
	WorkersPoolSize             int `ini:"workers_pool_size"`
	HeartbeatInterval           int `ini:"heartbeat_interval"`
	HeartbeatTimeout            int `ini:"heartbeat_timeout"`
	CheckProvisionStateInterval int `ini:"check_provision_state_interval"`
	InspectWaitTimeout          int `ini:"inspect_wait_timeout"`
	PowerStateChangeTimeout     int `ini:"power_state_change_timeout"`
	// SyncPowerStateInterval spaces the periodic power-state sync, in
	// seconds; 0 or negative disables it (as Ironic).
	SyncPowerStateInterval int `ini:"sync_power_state_interval"`
	// ForcePowerStateDuringSync makes the sync power a node back to its
	// recorded state; false records the state the BMC reports instead.
	ForcePowerStateDuringSync bool `ini:"force_power_state_during_sync"`
	// PowerStateSyncMaxRetries is how many syncs in a row may fail (BMC
	// unreachable, or a forced state not reached) before the node is put
	// in maintenance with fault "power failure".
	PowerStateSyncMaxRetries int `ini:"power_state_sync_max_retries"`
	// SyncPowerStateWorkers bounds the BMCs queried at once by a sync.
	SyncPowerStateWorkers int `ini:"sync_power_state_workers"`
	// EnableHealthMonitoring makes the power-state sync read the BMC's
	// hardware health into node.health (API 1.109), as Ironic.
	EnableHealthMonitoring bool     `ini:"enable_health_monitoring"`
	DeployKernel           string   `ini:"deploy_kernel"`
	DeployRamdisk          string   `ini:"deploy_ramdisk"`
	FileURLAllowedPaths    []string `ini:"file_url_allowed_paths" delim:","`
	// AutomatedClean is whether a node whose automated_clean is null is
	// cleaned when it is provided or torn down (Ironic's default, true).
	AutomatedClean bool `ini:"automated_clean"`
	// AutomatedCleaningStepSource is where automated cleaning's steps come
	// from: autogenerated (the interfaces' steps with a priority; ferro's
	// have none), runbook (a configured runbook, required) or hybrid (a
	// runbook when one is configured, else autogenerated).
	AutomatedCleaningStepSource string `ini:"automated_cleaning_step_source"`
	// AutomatedCleaningRunbook is the runbook (UUID or name) of nodes whose
	// resource class has none in AutomatedCleaningRunbookByResourceClass.
	AutomatedCleaningRunbook string `ini:"automated_cleaning_runbook"`
	// AutomatedCleaningRunbookByResourceClass is an oslo DictOpt,
	// "class:runbook,class:runbook"; RunbookByResourceClass parses it.
	AutomatedCleaningRunbookByResourceClass string `ini:"automated_cleaning_runbook_by_resource_class"`
	// AutomatedCleaningRunbookFromNode lets driver_info.cleaning_runbook
	// choose a node's runbook (anyone who may edit driver_info may then
	// skip cleaning).
	AutomatedCleaningRunbookFromNode bool `ini:"automated_cleaning_runbook_from_node"`
	// AutomatedCleaningRunbookValidateTraits makes a runbook usable only on
	// nodes with one of its traits.
	AutomatedCleaningRunbookValidateTraits bool   `ini:"automated_cleaning_runbook_validate_traits"`
	ConductorGroup                         string `ini:"conductor_group"`
	// GracefulShutdownTimeout bounds how long SIGTERM waits for running tasks, in seconds.
	GracefulShutdownTimeout int `ini:"graceful_shutdown_timeout"`
	// ImageRedirectHosts are the hosts (host or host:port) an http(s)
	// deploy image download may be redirected to besides the image URL's
	// own origin. ferro's option; Ironic follows every redirect.
	ImageRedirectHosts []string `ini:"image_redirect_hosts" delim:","`
}

// Inspector is [inspector]: both the inspector service's listener and the
// conductor's view of the inspector it talks to.
type Inspector struct {
	ListenAddress            string `ini:"listen_address"`
	ListenPort               int    `ini:"listen_port"`
	EndpointOverride         string `ini:"endpoint_override"`
	ClientAuth               `ini:",extends"`
	CallbackEndpointOverride string `ini:"callback_endpoint_override"`
	ExtraKernelParams        string `ini:"extra_kernel_params"`
	PowerOff                 bool   `ini:"power_off"`
	// RequireManagedBoot fails an inspection that cannot manage boot
	// instead of falling back to an unmanaged boot. Unset, each interface
	// has its upstream's default: true for agent (Ironic master), false
	// for inspector (Ironic 2023.1).
	RequireManagedBoot *bool `ini:"require_managed_boot"`
	// PreCreatePorts creates ports from the BMC's MACs before an agent
	// inspection boots the node.
	PreCreatePorts bool `ini:"pre_create_ports"`
	// ForceDHCP adds ipa-collect-lldp=1 to a managed agent inspection.
	ForceDHCP                 bool `ini:"force_dhcp"`
	StatusCheckPeriod         int  `ini:"status_check_period"`
	AllowLoopbackCallback     bool `ini:"allow_loopback_callback"`
	PermitActiveIntrospection bool `ini:"permit_active_introspection"`
	CanManageBoot             bool `ini:"can_manage_boot"`
	IntrospectionDelay        int  `ini:"introspection_delay"`
	// Hooks is the agent inspect interface's hook pipeline, Ironic's
	// names; "$default_hooks" stands for DefaultHooks.
	Hooks        []string `ini:"hooks" delim:","`
	DefaultHooks []string `ini:"default_hooks" delim:","`
	// AddPorts, KeepPorts and UpdatePXEEnabled drive the ports hooks of
	// both inspection paths; [processing]add_ports, keep_ports and
	// update_pxe_enabled are their deprecated aliases (see aliases.go).
	AddPorts         string `ini:"add_ports"`
	KeepPorts        string `ini:"keep_ports"`
	UpdatePXEEnabled bool   `ini:"update_pxe_enabled"`
	// CPUCapabilities maps CPU flags to capabilities, "flag:capability,…"
	// (alias: [capabilities]cpu_flags).
	CPUCapabilities []string `ini:"cpu_capabilities" delim:","`
	// PCIDeviceAlias entries are JSON objects {"vendor_id", "product_id",
	// "name"}, separated by ";" (alias: [pci_devices]alias).
	PCIDeviceAlias []string `ini:"pci_device_alias" delim:";"`
	// PhysicalNetworkCIDRMap is "cidr:physnet,…" for the physical-network hook.
	PhysicalNetworkCIDRMap []string `ini:"physical_network_cidr_map" delim:","`
	// KnownAccelerators is the accelerators hook's YAML file; "" is
	// ferro's list.
	KnownAccelerators       string `ini:"known_accelerators"`
	ExtraHardwareStrict     bool   `ini:"extra_hardware_strict"`
	DiskPartitioningSpacing bool   `ini:"disk_partitioning_spacing"`
	// Agent is the agent the inspection ramdisk runs, which decides whether
	// a managed inspection issues a callback token: ironic-python-agent
	// (none), ferro-agent (issued and required) or auto (ferro-agent when
	// the deploy image's file name says so). driver_info[inspection_agent]
	// overrides it per node.
	Agent string `ini:"agent"`
}

// Ironic is [ironic]: how a standalone inspector reaches the bare metal API.
type Ironic struct {
	EndpointOverride string `ini:"endpoint_override"`
	ClientAuth       `ini:",extends"`
}

// ClientAuth is how ferro authenticates to another service: keystoneauth's
// options, which every section with a client ([inspector], [ironic],
// [neutron]) has under the same names. auth_type is none (or noauth),
// http_basic, or Keystone's password or token.
type ClientAuth struct {
	AuthType          string `ini:"auth_type"`
	Username          string `ini:"username"`
	Password          string `ini:"password" secret:"true"`
	AuthURL           string `ini:"auth_url"`
	ProjectName       string `ini:"project_name"`
	UserDomainName    string `ini:"user_domain_name"`
	ProjectDomainName string `ini:"project_domain_name"`
	SystemScope       string `ini:"system_scope"`
	Token             string `ini:"token" secret:"true"`
	RegionName        string `ini:"region_name"`
	CAFile            string `ini:"cafile"`
	Insecure          bool   `ini:"insecure"`
}

// Processing is [processing] of ironic-inspector.
type Processing struct {
	DefaultProcessingHooks []string `ini:"default_processing_hooks" delim:","`
	// ProcessingHooks may contain "$default_processing_hooks".
	ProcessingHooks   []string `ini:"processing_hooks" delim:","`
	AddPorts          string   `ini:"add_ports"`
	KeepPorts         string   `ini:"keep_ports"`
	UpdatePXEEnabled  bool     `ini:"update_pxe_enabled"`
	OverwriteExisting bool     `ini:"overwrite_existing"`
	StoreData         string   `ini:"store_data"`
	SkipBlockDevices  []string `ini:"skip_block_devices" delim:","`
	// MaxConcurrentReports bounds the agent reports read and decoded at
	// once (a ferro option); 0 means twice the number of CPUs.
	MaxConcurrentReports int `ini:"max_concurrent_reports"`
	// ReportMemoryBudget bounds, in MiB, the memory the agent reports
	// being read and processed may take at once (a ferro option).
	ReportMemoryBudget int `ini:"report_memory_budget"`
	// RamdiskLogsDir is where the ramdisk's logs are written, as
	// ironic-inspector; empty means they are dropped.
	RamdiskLogsDir            string `ini:"ramdisk_logs_dir"`
	AlwaysStoreRamdiskLogs    bool   `ini:"always_store_ramdisk_logs"`
	RamdiskLogsFilenameFormat string `ini:"ramdisk_logs_filename_format"`
}

// Hooks returns the processing hooks in order, with
// $default_processing_hooks expanded.
func (p *Processing) Hooks() []string {
	var out []string
	for _, h := range p.ProcessingHooks {
		h = strings.TrimSpace(h)
		if h == "$default_processing_hooks" {
			out = append(out, p.DefaultProcessingHooks...)
		} else if h != "" {
			out = append(out, h)
		}
	}
	return out
}

// InspectionRules is [inspection_rules]: the rules of the agent inspect
// interface (API 1.96).
type InspectionRules struct {
	// BuiltInRules is a YAML file of rules that run with the stored ones
	// and cannot be changed through the API.
	BuiltInRules string `ini:"built_in_rules"`
	// MaskSecrets says whether rules see the password, auth_token and
	// bmc_password values of the inventory and plugin_data: always masked,
	// never, or sensitive (masked for rules that are not sensitive).
	MaskSecrets string `ini:"mask_secrets"`
}

// Capabilities is [capabilities].
type Capabilities struct {
	BootMode bool `ini:"boot_mode"`
	// CPUFlags maps CPU flags to capability names, "flag:capability,…".
	CPUFlags []string `ini:"cpu_flags" delim:","`
}

// PCIDevices is [pci_devices].
type PCIDevices struct {
	// Alias entries are JSON objects {"vendor_id":…,"product_id":…,"name":…}.
	Alias []string `ini:"alias" delim:";"`
}

// Neutron is [neutron].
type Neutron struct {
	URL                             string `ini:"url"`
	ClientAuth                      `ini:",extends"`
	InspectionNetwork               string   `ini:"inspection_network"`
	InspectionNetworkSecurityGroups []string `ini:"inspection_network_security_groups" delim:","`
	AddAllPorts                     bool     `ini:"add_all_ports"`
	Retries                         int      `ini:"retries"`
	Timeout                         int      `ini:"timeout"`
	PortSetupDelay                  int      `ini:"port_setup_delay"`
}

// PXE is [pxe].
type PXE struct {
	TFTPRoot           string `ini:"tftp_root"`
	TFTPServer         string `ini:"tftp_server"`
	KernelAppendParams string `ini:"kernel_append_params"`
	PXEBootfileName    string `ini:"pxe_bootfile_name"`
	IPXEBootfileName   string `ini:"ipxe_bootfile_name"`
	IPXEBootScript     string `ini:"ipxe_boot_script"`
	// UEFIIPXEBootfileName is the iPXE binary a UEFI PXE ROM chain-loads.
	UEFIIPXEBootfileName string `ini:"uefi_ipxe_bootfile_name"`
	// IPXEDir is where the built-in netboot finds iPXE and PXELINUX
	// binaries to copy into the boot roots; empty means Debian's paths.
	IPXEDir        string `ini:"ipxe_dir"`
	ImageCacheSize int    `ini:"image_cache_size"`
}

// Deploy is [deploy].
type Deploy struct {
	HTTPURL  string `ini:"http_url"`
	HTTPRoot string `ini:"http_root"`
	// DefaultBootMode is the boot mode of a node that names none (bios or uefi).
	DefaultBootMode string `ini:"default_boot_mode"`
	// HTTPListen is where the built-in netboot serves http_root; empty
	// means the API port, under http_url's path.
	HTTPListen string `ini:"http_listen"`
	// FastTrack leaves the node powered on after an agent inspection and
	// puts ipa-api-url on its kernel line (driver_info[fast_track] wins).
	FastTrack bool `ini:"fast_track"`
}

// ServiceCatalog is [service_catalog]: where the bare metal API is, for
// the agent inspect interface's callback URL (no Keystone catalog).
type ServiceCatalog struct {
	EndpointOverride string `ini:"endpoint_override"`
}

// AutoDiscovery is [auto_discovery]: a report no node matches enrolls one.
type AutoDiscovery struct {
	Enabled bool `ini:"enabled"`
	// Driver is the enrolled node's hardware type (required when enabled).
	Driver string `ini:"driver"`
	// InspectionScope is set as the node's properties.inspection_scope.
	InspectionScope string `ini:"inspection_scope"`
}

// PXEFilter is [pxe_filter]: the allow and deny files of an external
// dnsmasq's dhcp-hostsdir.
type PXEFilter struct {
	// DHCPHostsdir is the directory; empty writes nothing.
	DHCPHostsdir string `ini:"dhcp_hostsdir"`
	// SupportedInspectInterfaces are the interfaces of the nodes whose
	// ports are allowed while they are inspected.
	SupportedInspectInterfaces []string `ini:"supported_inspect_interfaces" delim:","`
	// SyncPeriod is the seconds between two syncs.
	SyncPeriod int `ini:"sync_period"`
}

// Agent is [agent]: the ramdisk logs of the agent inspect interface.
type Agent struct {
	// DeployLogsCollect is always, on_failure or never.
	DeployLogsCollect string `ini:"deploy_logs_collect"`
	// DeployLogsStorageBackend is local (ferro has no swift).
	DeployLogsStorageBackend string `ini:"deploy_logs_storage_backend"`
	// DeployLogsLocalPath is the directory of the logs; empty means
	// deploy-logs in the data directory.
	DeployLogsLocalPath string `ini:"deploy_logs_local_path"`
}

// DHCP is [dhcp].
type DHCP struct {
	DHCPProvider string `ini:"dhcp_provider"`
}

// Inventory is [inventory].
type Inventory struct {
	DataBackend string `ini:"data_backend"`
	// KeepPrevious is how many previous inventories of each node are kept,
	// to tell what changed at a re-inspection (0: none, and no changes
	// are computed). A ferro option; Ironic keeps only the last.
	KeepPrevious int `ini:"keep_previous"`
}

// Metrics is [metrics]: the Prometheus exposition (a ferro section).
type Metrics struct {
	// Enabled serves /metrics on the API port, behind its authentication.
	Enabled bool `ini:"enabled"`
	// Listen is host:port of a listener of its own that serves only
	// /metrics; empty for none.
	Listen string `ini:"listen"`
	// ListenAuth puts the API's authentication in front of that listener
	// too; false serves it to anyone who reaches the address (a
	// management network a scraper sits on).
	ListenAuth bool `ini:"listen_auth"`
}

// Web is [web]: the read-only web view under /ui/ (a ferro section).
type Web struct {
	Enabled bool `ini:"enabled"`
	// PageSize is how many machines one page of the list shows.
	PageSize int `ini:"page_size"`
}

// Hardware is what the binary's hardware types give the configuration: the
// defaults of [DEFAULT]enabled_hardware_types and, per interface kind
// ("boot", "power", …), of enabled_<kind>_interfaces. The configuration
// knows no hardware type itself; cmd/ferro reads them from the driver
// registry's types.
type Hardware struct {
	Types      []string
	Interfaces map[string][]string
}

// Defaults returns the configuration used when no file and no environment
// sets anything: an all-in-one service on loopback, with hw's hardware
// types and interfaces enabled. Paths that depend on the data directory are
// filled in by Resolve.
func Defaults(hw Hardware) *Config {
	host, _ := os.Hostname()
	if host == "" {
		host = "localhost"
	}
	c := &Config{
		Default: Default{
			Host:                  host,
			Timeout:               3600,
			EnabledHardwareTypes:  slices.Clone(hw.Types),
			ClientSocketTimeout:   60,
			MaxHeaderLine:         16384,
			AuthStrategy:          AuthNoauth,
			HTTPBasicAuthUserFile: "/etc/ironic/htpasswd",
		},
		API: API{HostIP: "127.0.0.1", Port: 6385, MaxLimit: 1000, MaxConnections: 1024,
			EnableRamdiskEndpoints: true, RamdiskHeartbeatTimeout: 300, MaxJSONBodySizeInspection: 16384,
			NodeListCacheMB: 32},
		Database: Database{MaxRetries: 10, RetryInterval: 10},
		Conductor: Conductor{
			WorkersPoolSize:             100,
			HeartbeatInterval:           10,
			HeartbeatTimeout:            60,
			CheckProvisionStateInterval: 60,
			InspectWaitTimeout:          1800,
			PowerStateChangeTimeout:     60,
			SyncPowerStateInterval:      60,
			ForcePowerStateDuringSync:   true,
			PowerStateSyncMaxRetries:    3,
			SyncPowerStateWorkers:       8,
			EnableHealthMonitoring:      true,
			FileURLAllowedPaths:         []string{"/var/lib/ironic", "/shared/html", "/templates", "/opt/cache/files", "/usr/share/ironic"},
			AutomatedClean:              true,
			AutomatedCleaningStepSource: "autogenerated",
			// Ironic's default: a runbook must be approved for the node.
			AutomatedCleaningRunbookValidateTraits: true,
			GracefulShutdownTimeout:                60,
		},
		Inspector: Inspector{
			ListenAddress:           "127.0.0.1",
			ListenPort:              5050,
			ClientAuth:              ClientAuth{AuthType: "none"},
			PowerOff:                true,
			PreCreatePorts:          true,
			StatusCheckPeriod:       60,
			CanManageBoot:           true,
			IntrospectionDelay:      5,
			Agent:                   "auto",
			Hooks:                   []string{"$default_hooks"},
			DefaultHooks:            []string{"ramdisk-error", "validate-interfaces", "ports", "architecture"},
			AddPorts:                "pxe",
			KeepPorts:               "all",
			UpdatePXEEnabled:        true,
			CPUCapabilities:         []string{"vmx:cpu_vt", "svm:cpu_vt", "aes:cpu_aes", "pse:cpu_hugepages", "pdpe1gb:cpu_hugepages_1g", "smx:cpu_txt"},
			DiskPartitioningSpacing: true,
		},
		InspectionRules: InspectionRules{MaskSecrets: "always"},
		Ironic:          Ironic{ClientAuth: ClientAuth{AuthType: "none"}},
		Processing: Processing{
			DefaultProcessingHooks: []string{"ramdisk_error", "root_disk_selection", "scheduler", "validate_interfaces", "capabilities", "pci_devices", "lldp_basic", "local_link_connection"},
			ProcessingHooks:        []string{"$default_processing_hooks"},
			AddPorts:               "pxe",
			KeepPorts:              "all",
			UpdatePXEEnabled:       true,
			OverwriteExisting:      true,
			StoreData:              "database",
			ReportMemoryBudget:     160,
			// ironic-inspector's default.
			RamdiskLogsFilenameFormat: "{uuid}_{dt:%Y%m%d-%H%M%S.%f}.tar.gz",
		},
		Capabilities: Capabilities{
			CPUFlags: []string{"vmx:cpu_vt", "svm:cpu_vt", "aes:cpu_aes", "pse:cpu_hugepages", "pdpe1gb:cpu_hugepages_1g", "smx:cpu_txt"},
		},
		Neutron: Neutron{ClientAuth: ClientAuth{AuthType: "none"}, Retries: 3, Timeout: 30, PortSetupDelay: 0},
		PXE: PXE{
			PXEBootfileName:      "pxelinux.0",
			IPXEBootfileName:     "undionly.kpxe",
			UEFIIPXEBootfileName: "snponly.efi",
			KernelAppendParams:   "nofb nomodeset vga=normal",
		},
		Deploy:    Deploy{DefaultBootMode: "uefi"},
		DHCP:      DHCP{DHCPProvider: "none"},
		Inventory: Inventory{DataBackend: "database", KeepPrevious: 5},
		Metrics:   Metrics{Enabled: true, ListenAuth: true},
		Web:       Web{Enabled: true, PageSize: 100},
		PXEFilter: PXEFilter{SupportedInspectInterfaces: []string{"agent"}, SyncPeriod: 45},
		Agent:     Agent{DeployLogsCollect: "on_failure", DeployLogsStorageBackend: "local"},
		IPMI:      defaultIPMI(),
		Redfish:   redfishDefaults(),
		Netboot:   defaultNetboot(),

		KeystoneAuthtoken: defaultKeystoneAuthtoken(),
	}
	for kind, names := range hw.Interfaces {
		c.Default.setEnabled(kind, slices.Clone(names))
	}
	return c
}

// Load reads the INI file at path (none when path is "") over the defaults
// (Defaults(hw)), then applies FERRO_<SECTION>_<OPTION> variables from
// environ (os.Environ() form), then validates. A section, option or FERRO_*
// variable ferro does not have is an error (*UnknownNamesError) unless
// [DEFAULT]ignored_options lists it; ignored lists those that were set and
// ignored so. Errors about a value name the variable, or the file and line,
// that set it.
func Load(path string, environ []string, hw Hardware) (cfg *Config, ignored []string, err error) {
	in, err := read(path, environ)
	if err != nil {
		return nil, nil, err
	}
	applyAliases(in.f)
	cfg = Defaults(hw)
	v := reflect.ValueOf(cfg).Elem()
	t := v.Type()
	for i := range t.NumField() {
		secName := t.Field(i).Tag.Get("section")
		sec, err := in.f.GetSection(iniSection(secName))
		if err != nil {
			continue
		}
		if err := sec.MapTo(v.Field(i).Addr().Interface()); err != nil {
			return nil, in.ignored, fmt.Errorf("configuration section [%s]: %w", secName, err)
		}
		if err := checkTypes(secName, sec, v.Field(i), in); err != nil {
			return nil, in.ignored, err
		}
	}
	trimLists(v)
	if err := cfg.Validate(); err != nil {
		return nil, in.ignored, in.annotate(err)
	}
	return cfg, in.ignored, nil
}

// optionRef finds the first "[section]option" a validation problem names.
var optionRef = regexp.MustCompile(`\[([A-Za-z0-9_]+)\]([a-z0-9_]+)`)

// annotate prefixes each of Validate's problems with where the option it
// names was set (the variable, or file:line), when it was set.
func (in *input) annotate(err error) error {
	var pe *problemsError
	if !errors.As(err, &pe) {
		return err
	}
	out := make([]string, len(pe.problems))
	for i, p := range pe.problems {
		out[i] = p
		if m := optionRef.FindStringSubmatch(p); m != nil {
			if w := in.where(m[1] + "." + m[2]); w != "" {
				out[i] = w + ": " + p
			}
		}
	}
	return &problemsError{out}
}

// sectionName maps ini's default section name to Ironic's DEFAULT.
func sectionName(s string) string {
	if s == ini.DefaultSection {
		return "DEFAULT"
	}
	return s
}

func iniSection(s string) string {
	if s == "DEFAULT" {
		return ini.DefaultSection
	}
	return s
}

func forEachOption(fn func(section, option string, f reflect.StructField)) {
	t := reflect.TypeFor[Config]()
	for i := range t.NumField() {
		sec := t.Field(i)
		for _, f := range optionFields(sec.Type) {
			fn(sec.Tag.Get("section"), optionName(f), f)
		}
	}
}

// forEachValue calls fn with every option's value.
func forEachValue(c *Config, fn func(section, option string, v reflect.Value)) {
	v := reflect.ValueOf(c).Elem()
	t := v.Type()
	for i := range t.NumField() {
		sv := v.Field(i)
		for _, f := range optionFields(sv.Type()) {
			fn(t.Field(i).Tag.Get("section"), optionName(f), sv.FieldByIndex(f.Index))
		}
	}
}

// optionFields are a section's options in order: the fields with an ini
// name, those of an embedded struct (ini:",extends", as ClientAuth) in its
// place.
func optionFields(section reflect.Type) []reflect.StructField {
	var out []reflect.StructField
	for _, f := range reflect.VisibleFields(section) {
		if optionName(f) != "" && !f.Anonymous {
			out = append(out, f)
		}
	}
	return out
}

// optionName is the INI name of a field, "" for none.
func optionName(f reflect.StructField) string {
	name, _, _ := strings.Cut(f.Tag.Get("ini"), ",")
	return name
}

// checkTypes rejects values that ini.MapTo silently ignores (a word where a
// number or boolean belongs), so a typo fails at start instead of later.
// The error names the variable, or the file and line, that set the value.
func checkTypes(secName string, sec *ini.Section, v reflect.Value, in *input) error {
	for _, f := range optionFields(v.Type()) {
		opt := optionName(f)
		if !sec.HasKey(opt) {
			continue
		}
		raw := strings.TrimSpace(sec.Key(opt).String())
		var want string
		switch f.Type.Kind() {
		case reflect.Int:
			if _, err := strconv.Atoi(raw); err != nil {
				want = "an integer"
			}
		case reflect.Float64:
			if v, err := strconv.ParseFloat(raw, 64); err != nil || v < 0 {
				want = "a number of at least 0"
			}
		case reflect.Bool:
			if _, err := parseBool(raw); err != nil {
				want = "a boolean"
			}
		case reflect.Pointer:
			if f.Type.Elem().Kind() == reflect.Bool {
				if _, err := parseBool(raw); err != nil {
					return fmt.Errorf("option %s: %q is not a boolean", opt, raw)
				}
			}
		}
		if want != "" {
			return fmt.Errorf("%s: [%s]%s: %q is not %s", in.where(secName+"."+opt), secName, opt, raw, want)
		}
	}
	return nil
}

func parseBool(s string) (bool, error) {
	switch strings.ToLower(s) {
	case "1", "t", "true", "yes", "y", "on":
		return true, nil
	case "0", "f", "false", "no", "n", "off", "":
		return false, nil
	}
	return false, fmt.Errorf("invalid boolean %q", s)
}

// trimLists trims spaces around list items and drops empty ones.
func trimLists(v reflect.Value) {
	for i := range v.NumField() {
		sec := v.Field(i)
		for _, sf := range optionFields(sec.Type()) {
			f := sec.FieldByIndex(sf.Index)
			if f.Kind() != reflect.Slice || f.Type().Elem().Kind() != reflect.String {
				continue
			}
			var out []string
			for _, s := range f.Interface().([]string) {
				if s = strings.TrimSpace(s); s != "" {
					out = append(out, s)
				}
			}
			f.Set(reflect.ValueOf(out))
		}
	}
}

// Validate checks values that have a fixed set or range.
func (c *Config) Validate() error {
	var errs []string
	bad := func(format string, a ...any) { errs = append(errs, fmt.Sprintf(format, a...)) }
	if c.API.Port < 0 || c.API.Port > 65535 {
		bad("[api]port %d is not a TCP port", c.API.Port)
	}
	if c.API.HostIP != "" && net.ParseIP(c.API.HostIP) == nil && c.API.HostIP != "localhost" {
		bad("[api]host_ip %q is not an IP address", c.API.HostIP)
	}
	if c.Inspector.ListenPort < 0 || c.Inspector.ListenPort > 65535 {
		bad("[inspector]listen_port %d is not a TCP port", c.Inspector.ListenPort)
	}
	// No option ferro has is a negative number: durations, ports,
	// counts and sizes. A negative duration would mean "never" or "at
	// once" by accident.
	forEachValue(c, func(section, option string, v reflect.Value) {
		if section == "database" && option == "max_retries" {
			return // -1 is oslo.db's "forever", checked below
		}
		if section == "conductor" && option == "sync_power_state_interval" {
			return // negative disables the sync, as in Ironic
		}
		if v.Kind() == reflect.Int && v.Int() < 0 {
			bad("[%s]%s is %d: it must not be negative", section, option, v.Int())
		}
	})
	if c.Database.MaxRetries < -1 {
		bad("[database]max_retries is %d: it must be -1 (retry until stopped) or more", c.Database.MaxRetries)
	}
	if c.Conductor.WorkersPoolSize < 1 {
		bad("[conductor]workers_pool_size must be at least 1")
	}
	if c.Conductor.SyncPowerStateWorkers < 1 {
		bad("[conductor]sync_power_state_workers must be at least 1")
	}
	if c.Default.ClientSocketTimeout < 1 {
		bad("[DEFAULT]client_socket_timeout must be at least 1 (seconds): every connection needs a read deadline")
	}
	if c.Default.MaxHeaderLine < 1024 {
		bad("[DEFAULT]max_header_line must be at least 1024 (bytes)")
	}
	if c.API.MaxConnections < 1 {
		bad("[api]max_connections must be at least 1")
	}
	if c.Web.PageSize < 1 || c.Web.PageSize > 1000 {
		bad("[web]page_size must be between 1 and 1000")
	}
	if c.API.NodeListCacheMB < 0 || c.API.NodeListCacheMB > 1<<20 {
		bad("[api]node_list_cache_mb must be between 0 and 1048576 (MiB)")
	}
	if c.Inventory.KeepPrevious > 100 {
		bad("[inventory]keep_previous must be at most 100")
	}
	if c.Metrics.Listen != "" {
		if _, _, err := net.SplitHostPort(c.Metrics.Listen); err != nil {
			bad("[metrics]listen %q is not host:port: %v", c.Metrics.Listen, err)
		}
	}
	if c.AutoDiscovery.Enabled && c.AutoDiscovery.Driver == "" {
		bad("[auto_discovery]driver must be set when [auto_discovery]enabled is true")
	}
	if c.PXEFilter.SyncPeriod < 1 {
		bad("[pxe_filter]sync_period must be at least 1 (seconds)")
	}
	if c.API.MaxJSONBodySizeInspection < 4 {
		bad("[api]max_json_body_size_inspection must be at least 4 (KiB)")
	}
	if c.Processing.MaxConcurrentReports < 0 {
		bad("[processing]max_concurrent_reports must not be negative")
	}
	nb := c.Netboot
	for _, o := range []struct {
		name string
		v    int
	}{
		{"tftp_max_unacknowledged", nb.TFTPMaxUnacknowledged}, {"tftp_max_transfers_per_client", nb.TFTPMaxTransfersPerClient},
		{"tftp_client_request_rate", nb.TFTPClientRequestRate}, {"tftp_max_client_timeout", nb.TFTPMaxClientTimeout},
		{"tftp_first_ack_timeout", nb.TFTPFirstACKTimeout}, {"tftp_stall_timeout", nb.TFTPStallTimeout},
		{"tftp_window_bytes", nb.TFTPWindowBytes}, {"dhcp_max_leases_per_node", nb.DHCPMaxLeasesPerNode},
	} {
		if o.v < 1 {
			bad("[netboot]%s must be at least 1", o.name)
		}
	}
	if nb.TFTPMaxAmplification < 0 {
		bad("[netboot]tftp_max_amplification must not be negative (0: no bound)")
	}
	if c.Processing.ReportMemoryBudget < 1 {
		// One 16 MiB report needs more: it then runs alone.
		bad("[processing]report_memory_budget must be at least 1 (MiB)")
	}
	for _, opt := range []struct {
		name, val string
		allowed   []string
	}{
		{"[processing]add_ports", c.Processing.AddPorts, []string{"pxe", "active", "all", "disabled"}},
		{"[processing]keep_ports", c.Processing.KeepPorts, []string{"all", "present", "added"}},
		{"[inspector]add_ports", c.Inspector.AddPorts, []string{"pxe", "active", "all", "disabled"}},
		{"[inspector]keep_ports", c.Inspector.KeepPorts, []string{"all", "present", "added"}},
		{"[inspection_rules]mask_secrets", c.InspectionRules.MaskSecrets, []string{"always", "never", "sensitive"}},
		{"[processing]store_data", c.Processing.StoreData, []string{"none", "database"}},
		{"[dhcp]dhcp_provider", c.DHCP.DHCPProvider, []string{"none", "neutron", "builtin"}},
		{"[netboot]mode", c.Netboot.Mode, []string{"dhcp", "proxy"}},
		{"[inventory]data_backend", c.Inventory.DataBackend, []string{"none", "database"}},
		{"[deploy]default_boot_mode", c.Deploy.DefaultBootMode, []string{"bios", "uefi"}},
		{"[inspector]agent", c.Inspector.Agent, []string{"auto", "ironic-python-agent", "ferro-agent"}},
		{"[agent]deploy_logs_collect", c.Agent.DeployLogsCollect, []string{"always", "on_failure", "never"}},
		{"[agent]deploy_logs_storage_backend", c.Agent.DeployLogsStorageBackend, []string{"local"}},
		{"[conductor]automated_cleaning_step_source", c.Conductor.AutomatedCleaningStepSource, []string{"autogenerated", "runbook", "hybrid"}},
	} {
		if !slices.Contains(opt.allowed, opt.val) {
			bad("%s %q is not one of %s", opt.name, opt.val, strings.Join(opt.allowed, ", "))
		}
	}
	if _, err := c.Conductor.RunbookByResourceClass(); err != nil {
		bad("[conductor]automated_cleaning_runbook_by_resource_class: %v", err)
	}
	errs = append(errs, c.Redfish.problems()...)
	for _, kind := range []string{"boot", "deploy", "inspect", "management", "network", "power", "raid", "vendor", "console", "bios", "firmware", "rescue", "storage"} {
		if d := c.Default.DefaultFor(kind); d != "" && !slices.Contains(c.Default.Enabled(kind), d) {
			bad("[DEFAULT]default_%s_interface %q is not in enabled_%s_interfaces", kind, d, kind)
		}
	}
	c.validateSecurity(bad)
	if len(errs) > 0 {
		return &problemsError{errs}
	}
	return nil
}

// RunbookByResourceClass parses
// [conductor]automated_cleaning_runbook_by_resource_class as oslo.config's
// Dict: "key:value" items separated by commas, spaces around each trimmed.
func (c *Conductor) RunbookByResourceClass() (map[string]string, error) {
	return parseDict(c.AutomatedCleaningRunbookByResourceClass)
}

func parseDict(s string) (map[string]string, error) {
	out := map[string]string{}
	if strings.TrimSpace(s) == "" {
		return out, nil
	}
	for _, item := range strings.Split(s, ",") {
		k, v, ok := strings.Cut(item, ":")
		k, v = strings.TrimSpace(k), strings.TrimSpace(v)
		if !ok || k == "" {
			return nil, fmt.Errorf("%q is not key:value", strings.TrimSpace(item))
		}
		if _, dup := out[k]; dup {
			return nil, fmt.Errorf("%q is given twice", k)
		}
		out[k] = v
	}
	return out, nil
}

// problemsError is what Validate found wrong, one problem per option.
type problemsError struct{ problems []string }

func (e *problemsError) Error() string {
	return "invalid configuration: " + strings.Join(e.problems, "; ")
}

// Secrets returns the values of every secret option (passwords, tokens,
// the password of a database URL): what ferro's clients scrub from the
// text servers send back, whoever echoes it.
func (c *Config) Secrets() []string {
	var out []string
	v := reflect.ValueOf(c).Elem()
	t := v.Type()
	for i := range t.NumField() {
		sv := v.Field(i)
		for _, f := range optionFields(sv.Type()) {
			val, _ := sv.FieldByIndex(f.Index).Interface().(string)
			switch {
			case val == "":
			case f.Tag.Get("secret") == "true":
				out = append(out, val)
			case f.Tag.Get("secret") == "connection":
				if u, err := url.Parse(val); err == nil && u.User != nil {
					if p, ok := u.User.Password(); ok && p != "" {
						out = append(out, p)
					}
				}
			}
		}
	}
	return out
}

// Options returns every option as "[section]name" with its current value,
// secrets masked, for `ferro config show` and the start-up log.
func (c *Config) Options() [][2]string {
	var out [][2]string
	v := reflect.ValueOf(c).Elem()
	t := v.Type()
	for i := range t.NumField() {
		sec := t.Field(i).Tag.Get("section")
		sv := v.Field(i)
		for _, f := range optionFields(sv.Type()) {
			opt := optionName(f)
			fv := sv.FieldByIndex(f.Index)
			val := fmt.Sprint(fv.Interface())
			if b, ok := fv.Interface().(*bool); ok {
				val = "" // unset: the default depends on where it is used
				if b != nil {
					val = strconv.FormatBool(*b)
				}
			}
			if s, ok := fv.Interface().([]string); ok {
				val = strings.Join(s, ",")
			}
			if f.Tag.Get("secret") == "true" && val != "" {
				val = "******"
			}
			if f.Tag.Get("secret") == "connection" {
				val = MaskConnection(val)
			}
			out = append(out, [2]string{"[" + sec + "]" + opt, val})
		}
	}
	return out
}
