// Package store is ferro's persistence: one Store interface, implemented once
// in store/sql for SQLite and PostgreSQL.
package store

import (
	"context"
	"errors"
	"time"

	"github.com/ferrometal/ferro/internal/baremetal"
)

// Sentinel errors callers branch on. Implementations wrap them with context.
var (
	ErrNotFound = errors.New("not found")
	// ErrConflict is a unique constraint (uuid, name, port address) or a
	// compare-and-swap that lost.
	ErrConflict = errors.New("conflict")
	// ErrNodeLocked is returned by ReserveNode when another holder has the node.
	ErrNodeLocked = errors.New("node locked")
	// ErrInvalidInput is a request the store cannot run as asked, such as an
	// unknown sort key or sort direction.
	ErrInvalidInput = errors.New("invalid input")
)

// Store is the whole persistence interface. Every method is safe for
// concurrent use. Methods called on the Store passed to InTx's fn run inside
// that transaction.
type Store interface {
	// InTx runs fn in one transaction; fn's error rolls everything back.
	InTx(ctx context.Context, fn func(Store) error) error
	Close() error

	// Nodes. GetNode takes a UUID or a name.
	CreateNode(ctx context.Context, n *baremetal.Node) error
	GetNode(ctx context.Context, ident string) (*baremetal.Node, error)
	ListNodes(ctx context.Context, f NodeFilter) ([]*baremetal.Node, error)
	// ListNodeRefs returns the UUID and conductor group of every node f
	// selects, in no order, ignoring f's page: what the hash ring needs to
	// pick a conductor's nodes, read without their bodies.
	ListNodeRefs(ctx context.Context, f NodeFilter) ([]NodeRef, error)
	// UpdateNode writes every field but Reservation and CreatedAt, and sets
	// UpdatedAt, only while the node's reservation is still n.Reservation
	// (the lock its caller holds, or none): a conductor whose lock was
	// taken over cannot overwrite the node. ErrNodeLocked if the
	// reservation changed, ErrNotFound if the node is gone.
	UpdateNode(ctx context.Context, n *baremetal.Node) error
	// DeleteNode deletes the node with its ports, portgroups, history and inventory.
	DeleteNode(ctx context.Context, uuid string) error
	// ReserveNode sets reservation=holder if it is empty (or already holder)
	// and returns the node; ErrNodeLocked (wrapped, naming the holder) if another has it.
	ReserveNode(ctx context.Context, ident, holder string) (*baremetal.Node, error)
	// ReleaseNode clears the reservation if holder has it.
	ReleaseNode(ctx context.Context, uuid, holder string) error
	// ReleaseAllReservations clears every reservation held by holder and returns how many.
	ReleaseAllReservations(ctx context.Context, holder string) (int, error)

	// Ports.
	CreatePort(ctx context.Context, p *baremetal.Port) error
	GetPort(ctx context.Context, uuid string) (*baremetal.Port, error)
	GetPortByAddress(ctx context.Context, address string) (*baremetal.Port, error)
	ListPorts(ctx context.Context, f PortFilter) ([]*baremetal.Port, error)
	UpdatePort(ctx context.Context, p *baremetal.Port) error
	DeletePort(ctx context.Context, uuid string) error

	// Portgroups. GetPortgroup takes a UUID or a name.
	CreatePortgroup(ctx context.Context, pg *baremetal.Portgroup) error
	GetPortgroup(ctx context.Context, ident string) (*baremetal.Portgroup, error)
	ListPortgroups(ctx context.Context, f PortgroupFilter) ([]*baremetal.Portgroup, error)
	UpdatePortgroup(ctx context.Context, pg *baremetal.Portgroup) error
	DeletePortgroup(ctx context.Context, uuid string) error

	// Chassis. DeleteChassis refuses (ErrConflict) while a node names the
	// chassis.
	CreateChassis(ctx context.Context, c *baremetal.Chassis) error
	GetChassis(ctx context.Context, uuid string) (*baremetal.Chassis, error)
	ListChassis(ctx context.Context, p Page) ([]*baremetal.Chassis, error)
	UpdateChassis(ctx context.Context, c *baremetal.Chassis) error
	DeleteChassis(ctx context.Context, uuid string) error

	// Volume connectors and targets belong to a node and go with it.
	// A connector's (type, connector_id) and a target's (node, boot_index)
	// are unique: ErrConflict.
	CreateVolumeConnector(ctx context.Context, c *baremetal.VolumeConnector) error
	GetVolumeConnector(ctx context.Context, uuid string) (*baremetal.VolumeConnector, error)
	ListVolumeConnectors(ctx context.Context, f VolumeFilter) ([]*baremetal.VolumeConnector, error)
	UpdateVolumeConnector(ctx context.Context, c *baremetal.VolumeConnector) error
	DeleteVolumeConnector(ctx context.Context, uuid string) error
	CreateVolumeTarget(ctx context.Context, vt *baremetal.VolumeTarget) error
	GetVolumeTarget(ctx context.Context, uuid string) (*baremetal.VolumeTarget, error)
	ListVolumeTargets(ctx context.Context, f VolumeFilter) ([]*baremetal.VolumeTarget, error)
	UpdateVolumeTarget(ctx context.Context, vt *baremetal.VolumeTarget) error
	DeleteVolumeTarget(ctx context.Context, uuid string) error

	// Deploy templates. GetDeployTemplate takes a UUID or a name; names
	// are unique (ErrConflict).
	CreateDeployTemplate(ctx context.Context, dt *baremetal.DeployTemplate) error
	GetDeployTemplate(ctx context.Context, ident string) (*baremetal.DeployTemplate, error)
	ListDeployTemplates(ctx context.Context, p Page) ([]*baremetal.DeployTemplate, error)
	UpdateDeployTemplate(ctx context.Context, dt *baremetal.DeployTemplate) error
	DeleteDeployTemplate(ctx context.Context, uuid string) error

	// Runbooks (1.92). GetRunbook takes a UUID or a name; names are
	// unique (ErrConflict).
	CreateRunbook(ctx context.Context, rb *baremetal.Runbook) error
	GetRunbook(ctx context.Context, ident string) (*baremetal.Runbook, error)
	ListRunbooks(ctx context.Context, f RunbookFilter) ([]*baremetal.Runbook, error)
	UpdateRunbook(ctx context.Context, rb *baremetal.Runbook) error
	DeleteRunbook(ctx context.Context, uuid string) error

	// Allocations. GetAllocation takes a UUID or a name.
	CreateAllocation(ctx context.Context, a *baremetal.Allocation) error
	GetAllocation(ctx context.Context, ident string) (*baremetal.Allocation, error)
	ListAllocations(ctx context.Context, f AllocationFilter) ([]*baremetal.Allocation, error)
	UpdateAllocation(ctx context.Context, a *baremetal.Allocation) error
	DeleteAllocation(ctx context.Context, uuid string) error

	// Node history, oldest first.
	AddHistory(ctx context.Context, e *baremetal.HistoryEvent) error
	ListHistory(ctx context.Context, nodeUUID string) ([]*baremetal.HistoryEvent, error)

	// Inventory stored after inspection.
	SaveInventory(ctx context.Context, inv *baremetal.Inventory) error
	GetInventory(ctx context.Context, nodeUUID string) (*baremetal.Inventory, error)
	// ListInventoryHistory returns the inventories SaveInventory replaced,
	// newest first, as many as the store keeps.
	ListInventoryHistory(ctx context.Context, nodeUUID string) ([]*InventoryRecord, error)

	// Conductors register and heartbeat; a conductor whose heartbeat is
	// older than a timeout is dead and its nodes are taken over.
	RegisterConductor(ctx context.Context, c *Conductor) error
	HeartbeatConductor(ctx context.Context, hostname string) error
	UnregisterConductor(ctx context.Context, hostname string) error
	ListConductors(ctx context.Context, aliveSince time.Time) ([]*Conductor, error)

	// Introspections (the inspector's records), keyed by node UUID.
	// SaveIntrospection saves the introspection and, in the same
	// transaction, the reports given, each replacing the one of its kind.
	SaveIntrospection(ctx context.Context, in *Introspection, reports ...IntrospectionData) error
	// SaveIntrospectionFrom is SaveIntrospection for an introspection that
	// must still be stored in one of the states from: a compare-and-swap,
	// so that of two inspectors handling the same node one wins. The loser
	// gets ErrConflict and nothing is written.
	SaveIntrospectionFrom(ctx context.Context, in *Introspection, from []string, reports ...IntrospectionData) error
	GetIntrospection(ctx context.Context, nodeUUID string) (*Introspection, error)
	ListIntrospections(ctx context.Context, f IntrospectionFilter) ([]*Introspection, error)
	// GetIntrospectionData returns a node's report of a kind.
	GetIntrospectionData(ctx context.Context, nodeUUID, kind string) ([]byte, error)
	// LookupIntrospections returns, per node, how many of the given MACs and
	// BMC addresses its introspection's lookup attributes contain (nodes
	// with no match are left out).
	LookupIntrospections(ctx context.Context, macs, bmcs []string) ([]IntrospectionMatch, error)

	// Inspection rules of the bare metal API (1.96), by UUID.
	CreateInspectionRule(ctx context.Context, r *baremetal.InspectionRule) error
	GetInspectionRule(ctx context.Context, uuid string) (*baremetal.InspectionRule, error)
	ListInspectionRules(ctx context.Context, f InspectionRuleFilter) ([]*baremetal.InspectionRule, error)
	UpdateInspectionRule(ctx context.Context, r *baremetal.InspectionRule) error
	DeleteInspectionRule(ctx context.Context, uuid string) error

	// Introspection rules (the inspector API's).
	CreateRule(ctx context.Context, r *Rule) error
	GetRule(ctx context.Context, uuid string) (*Rule, error)
	ListRules(ctx context.Context) ([]*Rule, error)
	DeleteRule(ctx context.Context, uuid string) error
	DeleteAllRules(ctx context.Context) error

	// DHCP leases of the built-in DHCP server, keyed by MAC.
	// SaveLease inserts or replaces the MAC's lease; ErrConflict if another
	// MAC holds the address, ErrNotFound if the node does not exist.
	SaveLease(ctx context.Context, l *Lease) error
	GetLease(ctx context.Context, mac string) (*Lease, error)
	// ListLeases returns every lease, by address.
	ListLeases(ctx context.Context) ([]*Lease, error)
	DeleteLease(ctx context.Context, mac string) error
}

// InventoryRecord is a previous inventory of a node and when it was
// stored (zero when unknown: stored before ferro kept the time).
type InventoryRecord struct {
	baremetal.Inventory
	SavedAt time.Time
}

// Lease is an IPv4 address the built-in DHCP server gave a node's port.
// MAC is lower case aa:bb:cc:dd:ee:ff.
type Lease struct {
	MAC       string
	IP        string
	NodeUUID  string
	ExpiresAt time.Time
	UpdatedAt time.Time
}

// Page is the paging and sorting part of every list filter. Marker is the
// UUID of the last item of the previous page. SortKey is a field name as the
// API names it ("created_at", "uuid", "name", …); SortDir is "asc" or "desc".
// Limit 0 means no limit.
type Page struct {
	Limit   int
	Marker  string
	SortKey string
	SortDir string
}

// NodeRef is a node's UUID and conductor group.
type NodeRef struct {
	UUID, ConductorGroup string
}

// NodeFilter selects nodes. Nil pointers and empty strings do not filter.
type NodeFilter struct {
	Page
	UUIDs          []string // any of these UUIDs
	ProvisionState []string
	Driver         string
	Maintenance    *bool
	Associated     *bool // has an instance_uuid
	ResourceClass  string
	ConductorGroup *string
	Fault          string
	Owner          string
	Lessee         string
	InstanceUUID   string
	Reserved       *bool
	Retired        *bool
	Shard          []string
	// ParentNode selects the children of a node (Ironic's parent_node
	// filter); "" selects the nodes that are no one's child, as the API's
	// lists do unless asked for children.
	ParentNode *string
	// ReservedBy selects nodes whose reservation is this holder.
	ReservedBy string
	// Search selects nodes whose name or UUID contains it, ignoring case
	// (the web view's search box).
	Search string
	// Project selects nodes this project owns or leases.
	Project string
	// KeepJSON leaves the free-form fields of the nodes returned as the
	// JSON text stored (baremetal.Node.Stored), for a caller that renders
	// them and nothing else; such nodes cannot be written back. A store
	// may ignore it and decode them.
	KeepJSON bool
}

// PortFilter selects ports.
type PortFilter struct {
	Page
	NodeUUID      string
	Address       string
	PortgroupUUID string
	Addresses     []string // any of these MACs
}

// PortgroupFilter selects portgroups.
type PortgroupFilter struct {
	Page
	NodeUUID string
	Address  string
}

// VolumeFilter selects volume connectors or targets.
type VolumeFilter struct {
	Page
	NodeUUID string
}

// AllocationFilter selects allocations.
type AllocationFilter struct {
	Page
	NodeUUID      string
	ResourceClass string
	State         string
	Owner         string
}

// Conductor is one running ferro conductor.
type Conductor struct {
	Hostname string
	Group    string
	Online   bool
	Drivers  []string
	// APIOnly marks a process with the api role but not the conductor
	// role: it holds node locks for the requests it runs, but runs no
	// periodic work, so it is not in the hash ring nor a conductor to the API.
	APIOnly       bool
	CreatedAt     time.Time
	LastHeartbeat time.Time
}

// IntrospectionData is one report of an introspection: Kind "raw" is the
// agent's report as posted, "processed" the data after processing. Saved
// with nil Data, it deletes the node's report of that kind.
type IntrospectionData struct {
	Kind string
	Data []byte
}

// Introspection is the inspector's record of one node's introspection.
type Introspection struct {
	NodeUUID   string
	State      string
	Error      string
	ManageBoot bool
	// TokenHash is the SHA-256 of the per-introspection callback token, or
	// nil when the introspection was started without one.
	TokenHash  []byte
	StartedAt  time.Time
	FinishedAt *time.Time
	UpdatedAt  time.Time
	// LookupMACs and LookupBMC are the attributes the callback is matched on.
	LookupMACs []string
	LookupBMC  []string
}

// IntrospectionMatch is one result of LookupIntrospections.
type IntrospectionMatch struct {
	NodeUUID string
	Matches  int
	Finished bool
}

// IntrospectionFilter selects introspections, newest first by default.
type IntrospectionFilter struct {
	Page
	State []string
}

// InspectionRuleFilter selects inspection rules; an empty Phase does not
// filter.
type InspectionRuleFilter struct {
	Page
	Phase string
}

// RunbookFilter selects runbooks: with Project, those the project owns
// and the public ones (Ironic's project filter).
type RunbookFilter struct {
	Page
	Project string
}

// Rule is an introspection rule, stored as the JSON the API received.
type Rule struct {
	UUID        string
	Description string
	Scope       string
	Body        []byte // the whole rule as JSON: conditions, actions, …
	CreatedAt   time.Time
}

// NodeCount is how many nodes are in one provision state and power state.
type NodeCount struct {
	ProvisionState string
	PowerState     string
	Count          int
}
