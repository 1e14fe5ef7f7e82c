// Package baremetal holds ferro's domain: nodes, ports, portgroups, allocations
// and the values of their state fields. It does no I/O.
package baremetal

import (
	"sync"
	"time"
)

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
	// ParentNode (API 1.83) is the UUID of the node this one is a child
	// of; lists hide child nodes unless asked for them.
	ParentNode string `json:"parent_node,omitempty"`
	// InstanceName (API 1.104) is the deployed instance's human name.
	InstanceName string `json:"instance_name,omitempty"`
	// Health (API 1.109) is the BMC's word on the machine's health
	// ("OK", "Warning", "Critical"), "" when unknown.
	Health string `json:"health,omitempty"`

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
	ServiceStep        JSON `json:"service_step"`

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
	// Firmware are the firmware components the firmware interface last
	// cached (GET /v1/nodes/{node}/firmware, API 1.86).
	Firmware []FirmwareComponent `json:"firmware,omitempty"`

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

	// Stored, when set, holds free-form fields as the JSON text the store
	// keeps, left undecoded for a reader that only passes them on (the
	// API's node lists, store.NodeFilter.KeepJSON); each field with text
	// there has a nil map here. Such a node is for rendering only: the
	// store refuses to write it.
	Stored *StoredJSON `json:"-"`
	// Memo, on a node read for rendering only, keeps what its renderer
	// made of it: the store hands the same node to every list that reads
	// its row unchanged (see Memo).
	Memo *Memo `json:"-"`
}

// Memo keeps up to two values by key for a node read for rendering only
// (Node.Memo): the API's rendered views of it, one per kind of request
// (version, base URL, …). A node whose row changes is read as a new node
// with an empty Memo, so what a Memo holds never outlives the row it was
// made from. Safe for concurrent use.
type Memo struct {
	mu   sync.Mutex
	keys [2]any
	vals [2]any
	next int
}

// Get is the value kept for key, or nil.
func (m *Memo) Get(key any) any {
	m.mu.Lock()
	defer m.mu.Unlock()
	for i, k := range m.keys {
		if k == key {
			return m.vals[i]
		}
	}
	return nil
}

// Put keeps val for key, in place of the older of the two kept.
func (m *Memo) Put(key, val any) {
	m.mu.Lock()
	defer m.mu.Unlock()
	for i, k := range m.keys {
		if k == key {
			m.vals[i] = val
			return
		}
	}
	m.keys[m.next], m.vals[m.next] = key, val
	m.next = (m.next + 1) % len(m.keys)
}

// StoredJSON is the stored JSON text of a node's free-form fields (see
// Node.Stored), indexed by the Stored* constants; nil for a field that was
// decoded.
type StoredJSON [storedFields][]byte

// The free-form fields of a node, as indices of StoredJSON.
const (
	StoredDriverInfo = iota
	StoredDriverInternalInfo
	StoredProperties
	StoredExtra
	StoredInstanceInfo
	StoredNetworkData
	StoredTargetRAIDConfig
	StoredRAIDConfig
	StoredCleanStep
	StoredDeployStep
	StoredServiceStep
	storedFields
)

// Text is the stored text of field, nil when it was decoded (or s is nil).
func (s *StoredJSON) Text(field int) []byte {
	if s == nil {
		return nil
	}
	return s[field]
}

// FirmwareComponent is one firmware component of a node, as Ironic's
// firmware_information table holds it.
type FirmwareComponent struct {
	Component          string     `json:"component"`
	InitialVersion     string     `json:"initial_version,omitempty"`
	CurrentVersion     string     `json:"current_version,omitempty"`
	LastVersionFlashed string     `json:"last_version_flashed,omitempty"`
	Vendor             string     `json:"vendor,omitempty"`
	Model              string     `json:"model,omitempty"`
	SerialNumber       string     `json:"serial_number,omitempty"`
	CreatedAt          time.Time  `json:"created_at"`
	UpdatedAt          *time.Time `json:"updated_at,omitempty"`
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

// Runbook is a named list of steps a project may run on its nodes for
// manual cleaning or servicing (Ironic's runbook, API 1.92; traits and
// description 1.112). A node may run it when one of its traits is the
// runbook's name (below 1.112) or one of the runbook's Traits (1.112).
type Runbook struct {
	UUID        string        `json:"uuid"`
	Name        string        `json:"name"`
	Description *string       `json:"description,omitempty"`
	Steps       []RunbookStep `json:"steps"`
	// DisableRamdisk runs the steps without booting the agent.
	DisableRamdisk bool `json:"disable_ramdisk"`
	// Public runbooks are seen by every project; they have no owner.
	Public bool    `json:"public"`
	Owner  *string `json:"owner,omitempty"` // a project; nil is none ("" is kept, as Ironic keeps it)
	Extra  JSON    `json:"extra"`
	// Traits is a set, in the order it was given.
	Traits []string `json:"traits"`

	CreatedAt time.Time  `json:"created_at"`
	UpdatedAt *time.Time `json:"updated_at,omitempty"`
}

// RunbookStep is one step of a runbook. The steps run in the order of the
// list; Order is kept and shown, as Ironic does, not sorted on.
type RunbookStep struct {
	Interface string `json:"interface"`
	Step      string `json:"step"`
	Args      JSON   `json:"args"`
	Order     int    `json:"order"`
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

// Node health values (API 1.109), Ironic's health_states.HealthState.
const (
	HealthOK       = "OK"
	HealthWarning  = "Warning"
	HealthCritical = "Critical"
)

// History event severities.
const (
	SeverityInfo  = "INFO"
	SeverityError = "ERROR"
)

// HistoryEvent is one entry of a node's history (API 1.78).
type HistoryEvent struct {
	UUID      string `json:"uuid"`
	NodeUUID  string `json:"node_uuid"`
	Conductor string `json:"conductor"`
	Event     string `json:"event"`
	EventType string `json:"event_type"`
	Severity  string `json:"severity"`
	User      string `json:"user,omitempty"`
	// Project (API 1.113) is the project of the request behind the event;
	// State, TargetProvisionState and DurationSeconds (1.115) are the
	// node's provision states when it was recorded and the seconds since
	// its provision state last changed (nil when it never did).
	Project              string    `json:"project,omitempty"`
	State                string    `json:"state,omitempty"`
	TargetProvisionState string    `json:"target_provision_state,omitempty"`
	DurationSeconds      *int64    `json:"duration_seconds,omitempty"`
	CreatedAt            time.Time `json:"created_at"`
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
