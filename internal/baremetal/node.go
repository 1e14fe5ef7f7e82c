// Package baremetal holds ferro's domain: nodes, ports, portgroups, allocations
// and the values of their state fields. It does no I/O.
package baremetal

import "time"

// JSON is a free-form JSON object as clients send it (driver_info, properties,
// extra, …). Values keep their JSON types: numbers are json.Number or float64,
// never strings.
type JSON = map[string]any

// Power states, as Ironic names them.
const (
	PowerOn     = "power on"
	PowerOff    = "power off"
	PowerReboot = "rebooting"
	PowerError  = "error"
)

// Boot devices accepted by Management.SetBootDevice.
const (
	BootDevicePXE   = "pxe"
	BootDeviceDisk  = "disk"
	BootDeviceCDROM = "cdrom"
	BootDeviceBIOS  = "bios"
	BootDeviceSafe  = "safe"
)

// InterfaceKinds lists the node's *_interface fields in Ironic's order.
var InterfaceKinds = []string{
	"bios", "boot", "console", "deploy", "firmware", "inspect", "management",
	"network", "power", "raid", "rescue", "storage", "vendor",
}

// Node is one bare metal machine.
type Node struct {
	UUID           string `json:"uuid"`
	Name           string `json:"name,omitempty"`
	Driver         string `json:"driver"`
	Description    string `json:"description,omitempty"`
	ResourceClass  string `json:"resource_class,omitempty"`
	ConductorGroup string `json:"conductor_group"`
	Owner          string `json:"owner,omitempty"`
	Lessee         string `json:"lessee,omitempty"`
	InstanceUUID   string `json:"instance_uuid,omitempty"`
	AllocationUUID string `json:"allocation_uuid,omitempty"`
	ChassisUUID    string `json:"chassis_uuid,omitempty"`
	Shard          string `json:"shard,omitempty"`

	DriverInfo         JSON `json:"driver_info"`
	DriverInternalInfo JSON `json:"driver_internal_info"`
	Properties         JSON `json:"properties"`
	Extra              JSON `json:"extra"`
	InstanceInfo       JSON `json:"instance_info"`
	NetworkData        JSON `json:"network_data"`
	TargetRAIDConfig   JSON `json:"target_raid_config"`
	RAIDConfig         JSON `json:"raid_config"`
	CleanStep          JSON `json:"clean_step"`
	DeployStep         JSON `json:"deploy_step"`

	// Interfaces maps an interface kind ("boot", "power", …) to the
	// implementation name. Every kind in InterfaceKinds is present once the
	// node has been created.
	Interfaces map[string]string `json:"interfaces"`
	Traits     []string          `json:"traits"`

	ProvisionState       string `json:"provision_state"`
	TargetProvisionState string `json:"target_provision_state,omitempty"`
	PowerState           string `json:"power_state,omitempty"`
	TargetPowerState     string `json:"target_power_state,omitempty"`
	LastError            string `json:"last_error,omitempty"`

	Maintenance       bool   `json:"maintenance"`
	MaintenanceReason string `json:"maintenance_reason,omitempty"`
	Fault             string `json:"fault,omitempty"`
	Protected         bool   `json:"protected"`
	ProtectedReason   string `json:"protected_reason,omitempty"`
	Retired           bool   `json:"retired"`
	RetiredReason     string `json:"retired_reason,omitempty"`
	ConsoleEnabled    bool   `json:"console_enabled"`
	AutomatedClean    *bool  `json:"automated_clean,omitempty"`
	BootMode          string `json:"boot_mode,omitempty"`
	SecureBoot        *bool  `json:"secure_boot,omitempty"`
	// DisablePowerOff (API 1.95) says the node must never be powered off:
	// the conductor and the inspect interfaces reboot it instead of
	// powering it off and on, and leave it on where they would power it
	// off at the end.
	DisablePowerOff bool `json:"disable_power_off,omitempty"`

	// Reservation is the hostname of the conductor holding the node's
	// exclusive lock, or "". It is its own column in the store.
	Reservation string `json:"-"`
	// ConductorAffinity is the conductor that last acted on the node.
	ConductorAffinity string `json:"conductor_affinity,omitempty"`

	InspectionStartedAt  *time.Time `json:"inspection_started_at,omitempty"`
	InspectionFinishedAt *time.Time `json:"inspection_finished_at,omitempty"`
	ProvisionUpdatedAt   *time.Time `json:"provision_updated_at,omitempty"`
	CreatedAt            time.Time  `json:"created_at"`
	UpdatedAt            *time.Time `json:"updated_at,omitempty"`
}

// Interface returns the node's implementation name for an interface kind.
func (n *Node) Interface(kind string) string { return n.Interfaces[kind] }

// Port is a physical NIC of a node.
type Port struct {
	UUID                string `json:"uuid"`
	Address             string `json:"address"`
	NodeUUID            string `json:"node_uuid"`
	PortgroupUUID       string `json:"portgroup_uuid,omitempty"`
	LocalLinkConnection JSON   `json:"local_link_connection"`
	PXEEnabled          bool   `json:"pxe_enabled"`
	PhysicalNetwork     string `json:"physical_network,omitempty"`
	Extra               JSON   `json:"extra"`
	InternalInfo        JSON   `json:"internal_info"`
	IsSmartNIC          bool   `json:"is_smartnic"`
	Name                string `json:"name,omitempty"`
	Description         string `json:"description,omitempty"`
	Vendor              string `json:"vendor,omitempty"`
	Category            string `json:"category,omitempty"`
	// AvailableForDynamicPortgroup (1.111): nil is Ironic's default, true.
	AvailableForDynamicPortgroup *bool `json:"available_for_dynamic_portgroup,omitempty"`

	CreatedAt time.Time  `json:"created_at"`
	UpdatedAt *time.Time `json:"updated_at,omitempty"`
}

// Portgroup bonds ports of one node.
type Portgroup struct {
	UUID                     string `json:"uuid"`
	Name                     string `json:"name,omitempty"`
	Address                  string `json:"address,omitempty"`
	NodeUUID                 string `json:"node_uuid"`
	Mode                     string `json:"mode,omitempty"`
	Properties               JSON   `json:"properties"`
	StandalonePortsSupported bool   `json:"standalone_ports_supported"`
	Extra                    JSON   `json:"extra"`
	InternalInfo             JSON   `json:"internal_info"`
	PhysicalNetwork          string `json:"physical_network,omitempty"`
	Category                 string `json:"category,omitempty"`
	// DynamicPortgroup is set by Ironic's conductor for the portgroups it
	// builds itself (1.111); read-only through the API.
	DynamicPortgroup bool `json:"dynamic_portgroup,omitempty"`

	CreatedAt time.Time  `json:"created_at"`
	UpdatedAt *time.Time `json:"updated_at,omitempty"`
}

// Chassis groups nodes, as Ironic's chassis: a description and extra data.
type Chassis struct {
	UUID        string `json:"uuid"`
	Description string `json:"description,omitempty"`
	Extra       JSON   `json:"extra"`

	CreatedAt time.Time  `json:"created_at"`
	UpdatedAt *time.Time `json:"updated_at,omitempty"`
}

// VolumeConnector is a node's connector to a storage network (Ironic's
// volume connector, API 1.32): an iSCSI initiator name, a WWPN, an IP…
type VolumeConnector struct {
	UUID        string `json:"uuid"`
	NodeUUID    string `json:"node_uuid"`
	Type        string `json:"type"`
	ConnectorID string `json:"connector_id"`
	Extra       JSON   `json:"extra"`

	CreatedAt time.Time  `json:"created_at"`
	UpdatedAt *time.Time `json:"updated_at,omitempty"`
}

// VolumeTarget is a volume a node boots from or uses (Ironic's volume
// target, API 1.32). BootIndex is unique per node.
type VolumeTarget struct {
	UUID       string `json:"uuid"`
	NodeUUID   string `json:"node_uuid"`
	VolumeType string `json:"volume_type"`
	VolumeID   string `json:"volume_id"`
	BootIndex  int    `json:"boot_index"`
	Properties JSON   `json:"properties"`
	Extra      JSON   `json:"extra"`

	CreatedAt time.Time  `json:"created_at"`
	UpdatedAt *time.Time `json:"updated_at,omitempty"`
}

// DeployTemplate is a named set of deploy steps (Ironic's deploy template,
// API 1.55); its name is a trait, so that an instance asking for the trait
// gets the steps.
type DeployTemplate struct {
	UUID  string       `json:"uuid"`
	Name  string       `json:"name"`
	Steps []DeployStep `json:"steps"`
	Extra JSON         `json:"extra"`
	// Description is accepted and kept, but Ironic 21.4's view does not
	// show it, so neither does ferro's.
	Description string `json:"description,omitempty"`

	CreatedAt time.Time  `json:"created_at"`
	UpdatedAt *time.Time `json:"updated_at,omitempty"`
}

// DeployStep is one step of a deploy template.
type DeployStep struct {
	Interface string `json:"interface"`
	Step      string `json:"step"`
	Args      JSON   `json:"args"`
	Priority  int    `json:"priority"`
}

// Allocation states.
const (
	AllocationAllocating = "allocating"
	AllocationActive     = "active"
	AllocationError      = "error"
)

// Allocation reserves an available node by resource class and traits.
type Allocation struct {
	UUID           string   `json:"uuid"`
	Name           string   `json:"name,omitempty"`
	NodeUUID       string   `json:"node_uuid,omitempty"`
	ResourceClass  string   `json:"resource_class"`
	Traits         []string `json:"traits"`
	CandidateNodes []string `json:"candidate_nodes"`
	State          string   `json:"state"`
	LastError      string   `json:"last_error,omitempty"`
	Extra          JSON     `json:"extra"`
	Owner          string   `json:"owner,omitempty"`

	CreatedAt time.Time  `json:"created_at"`
	UpdatedAt *time.Time `json:"updated_at,omitempty"`
}

// History event severities.
const (
	SeverityInfo  = "INFO"
	SeverityError = "ERROR"
)

// HistoryEvent is one entry of a node's history (API 1.78).
type HistoryEvent struct {
	UUID      string    `json:"uuid"`
	NodeUUID  string    `json:"node_uuid"`
	Conductor string    `json:"conductor"`
	Event     string    `json:"event"`
	EventType string    `json:"event_type"`
	Severity  string    `json:"severity"`
	User      string    `json:"user,omitempty"`
	CreatedAt time.Time `json:"created_at"`
}

// Inventory is the hardware report stored for a node after inspection (API 1.81).
type Inventory struct {
	NodeUUID   string `json:"node_uuid"`
	Inventory  JSON   `json:"inventory"`
	PluginData JSON   `json:"plugin_data"`
	// EncodedInventory and EncodedPluginData, when set, are Inventory and
	// PluginData already encoded as JSON (by processing's fast encoder):
	// a store writes them as they are instead of encoding the maps again.
	EncodedInventory, EncodedPluginData []byte `json:"-"`
}
