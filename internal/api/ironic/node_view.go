package ironic

import (
	"github.com/ferrometal/ferro/internal/baremetal"
	"github.com/ferrometal/ferro/internal/states"
)

// renderCtx is what rendering a resource needs from the request.
type renderCtx struct {
	s     *server
	minor int
	base  string
	// conductors is loaded on first use, once per request.
	conductors *conductorSnapshot
	// showPassword shows driver_info secrets (the show_password rule).
	showPassword bool
}

func (rq *request) render(s *server) *renderCtx {
	return &renderCtx{s: s, minor: rq.minor, base: rq.base, showPassword: rq.showPassword()}
}

// conductorFor names the conductor serving a node, or "".
func (rc *renderCtx) conductorFor(n *baremetal.Node) string {
	if rc.conductors == nil {
		rc.conductors = rc.s.conductorSnapshot()
	}
	return rc.conductors.owner(n.UUID, n.ConductorGroup)
}

// nodeField is one member of a node's JSON view: its name, the minor
// version that introduced it, and how to write its value.
type nodeField struct {
	name  string
	min   int
	write func(b []byte, n *baremetal.Node, rc *renderCtx) []byte
}

func strOf(get func(n *baremetal.Node) string) func([]byte, *baremetal.Node, *renderCtx) []byte {
	return func(b []byte, n *baremetal.Node, _ *renderCtx) []byte { return appendNullString(b, get(n)) }
}

func objOf(get func(n *baremetal.Node) baremetal.JSON) func([]byte, *baremetal.Node, *renderCtx) []byte {
	return func(b []byte, n *baremetal.Node, _ *renderCtx) []byte { return appendObject(b, get(n)) }
}

func boolOf(get func(n *baremetal.Node) bool) func([]byte, *baremetal.Node, *renderCtx) []byte {
	return func(b []byte, n *baremetal.Node, _ *renderCtx) []byte { return appendBool(b, get(n)) }
}

func ifaceOf(kind string) func([]byte, *baremetal.Node, *renderCtx) []byte {
	return func(b []byte, n *baremetal.Node, _ *renderCtx) []byte {
		return appendNullString(b, n.Interfaces[kind])
	}
}

// nodeFields is the node view in Ironic's order: uuid, created_at,
// updated_at, the object fields alphabetically, then the fields the API
// computes. Fields introduced after 1.82 (firmware_interface,
// parent_node, …) are never shown.
var nodeFields = []nodeField{
	{"uuid", 0, func(b []byte, n *baremetal.Node, _ *renderCtx) []byte { return appendString(b, n.UUID) }},
	{"created_at", 0, func(b []byte, n *baremetal.Node, _ *renderCtx) []byte { return appendTime(b, n.CreatedAt) }},
	{"updated_at", 0, func(b []byte, n *baremetal.Node, _ *renderCtx) []byte { return appendNullTime(b, n.UpdatedAt) }},
	{"automated_clean", v47AutomatedClean, func(b []byte, n *baremetal.Node, _ *renderCtx) []byte {
		return appendNullBool(b, n.AutomatedClean)
	}},
	{"bios_interface", v40BIOSInterface, ifaceOf("bios")},
	{"boot_interface", v31DynamicInterfaces, ifaceOf("boot")},
	{"boot_mode", v75BootMode, strOf(func(n *baremetal.Node) string { return n.BootMode })},
	{"clean_step", v7NodeClean, objOf(func(n *baremetal.Node) baremetal.JSON { return n.CleanStep })},
	{"conductor_group", v46ConductorGroup, func(b []byte, n *baremetal.Node, _ *renderCtx) []byte {
		return appendString(b, n.ConductorGroup)
	}},
	{"console_enabled", 0, boolOf(func(n *baremetal.Node) bool { return n.ConsoleEnabled })},
	{"console_interface", v31DynamicInterfaces, ifaceOf("console")},
	{"deploy_interface", v31DynamicInterfaces, ifaceOf("deploy")},
	{"deploy_step", v44DeployStep, objOf(func(n *baremetal.Node) baremetal.JSON { return n.DeployStep })},
	{"description", v51Description, strOf(func(n *baremetal.Node) string { return n.Description })},
	{"driver", 0, func(b []byte, n *baremetal.Node, _ *renderCtx) []byte { return appendString(b, n.Driver) }},
	{"driver_info", 0, func(b []byte, n *baremetal.Node, rc *renderCtx) []byte {
		if n.DriverInfo == nil {
			return append(b, "{}"...)
		}
		if rc.showPassword {
			return appendMap(b, n.DriverInfo, nil)
		}
		return appendMap(b, n.DriverInfo, maskDriverInfo)
	}},
	{"driver_internal_info", v3DriverInternalInfo, func(b []byte, n *baremetal.Node, _ *renderCtx) []byte {
		if n.DriverInternalInfo == nil {
			return append(b, "{}"...)
		}
		return appendMap(b, n.DriverInternalInfo, maskAgentToken)
	}},
	{"extra", 0, objOf(func(n *baremetal.Node) baremetal.JSON { return n.Extra })},
	{"fault", v42Fault, strOf(func(n *baremetal.Node) string { return n.Fault })},
	{"inspection_finished_at", v6InspectState, func(b []byte, n *baremetal.Node, _ *renderCtx) []byte {
		return appendNullTime(b, n.InspectionFinishedAt)
	}},
	{"inspection_started_at", v6InspectState, func(b []byte, n *baremetal.Node, _ *renderCtx) []byte {
		return appendNullTime(b, n.InspectionStartedAt)
	}},
	{"inspect_interface", v31DynamicInterfaces, ifaceOf("inspect")},
	{"instance_info", 0, func(b []byte, n *baremetal.Node, _ *renderCtx) []byte {
		if n.InstanceInfo == nil {
			return append(b, "{}"...)
		}
		return appendMap(b, n.InstanceInfo, maskInstanceInfo)
	}},
	{"instance_uuid", 0, strOf(func(n *baremetal.Node) string { return n.InstanceUUID })},
	{"last_error", 0, strOf(func(n *baremetal.Node) string { return n.LastError })},
	{"lessee", v65Lessee, strOf(func(n *baremetal.Node) string { return n.Lessee })},
	{"maintenance", 0, boolOf(func(n *baremetal.Node) bool { return n.Maintenance })},
	{"maintenance_reason", 0, strOf(func(n *baremetal.Node) string { return n.MaintenanceReason })},
	{"management_interface", v31DynamicInterfaces, ifaceOf("management")},
	{"name", v5NodeName, strOf(func(n *baremetal.Node) string { return n.Name })},
	{"network_data", v66NetworkData, objOf(func(n *baremetal.Node) baremetal.JSON { return n.NetworkData })},
	{"network_interface", v20NetworkInterface, ifaceOf("network")},
	{"owner", v50Owner, strOf(func(n *baremetal.Node) string { return n.Owner })},
	{"power_interface", v31DynamicInterfaces, ifaceOf("power")},
	{"power_state", 0, strOf(func(n *baremetal.Node) string { return n.PowerState })},
	{"properties", 0, objOf(func(n *baremetal.Node) baremetal.JSON { return n.Properties })},
	{"protected", v48Protected, boolOf(func(n *baremetal.Node) bool { return n.Protected })},
	{"protected_reason", v48Protected, strOf(func(n *baremetal.Node) string { return n.ProtectedReason })},
	{"provision_state", 0, func(b []byte, n *baremetal.Node, rc *renderCtx) []byte {
		return appendNullString(b, provisionStateFor(n.ProvisionState, rc.minor))
	}},
	{"provision_updated_at", 0, func(b []byte, n *baremetal.Node, _ *renderCtx) []byte {
		return appendNullTime(b, n.ProvisionUpdatedAt)
	}},
	{"raid_config", v12RAIDConfig, objOf(func(n *baremetal.Node) baremetal.JSON { return n.RAIDConfig })},
	{"raid_interface", v31DynamicInterfaces, ifaceOf("raid")},
	{"rescue_interface", v38RescueInterface, ifaceOf("rescue")},
	{"reservation", 0, strOf(func(n *baremetal.Node) string { return n.Reservation })},
	{"resource_class", v21ResourceClass, strOf(func(n *baremetal.Node) string { return n.ResourceClass })},
	{"retired", v61Retired, boolOf(func(n *baremetal.Node) bool { return n.Retired })},
	{"retired_reason", v61Retired, strOf(func(n *baremetal.Node) string { return n.RetiredReason })},
	{"secure_boot", v75BootMode, func(b []byte, n *baremetal.Node, _ *renderCtx) []byte {
		return appendNullBool(b, n.SecureBoot)
	}},
	{"shard", v82Shard, strOf(func(n *baremetal.Node) string { return n.Shard })},
	{"storage_interface", v33StorageInterface, ifaceOf("storage")},
	{"target_power_state", 0, strOf(func(n *baremetal.Node) string { return n.TargetPowerState })},
	{"target_provision_state", 0, strOf(func(n *baremetal.Node) string { return n.TargetProvisionState })},
	{"target_raid_config", v12RAIDConfig, objOf(func(n *baremetal.Node) baremetal.JSON { return n.TargetRAIDConfig })},
	{"traits", v37NodeTraits, func(b []byte, n *baremetal.Node, _ *renderCtx) []byte {
		if n.Traits == nil {
			return append(b, "[]"...)
		}
		return appendStrings(b, n.Traits)
	}},
	{"vendor_interface", v31DynamicInterfaces, ifaceOf("vendor")},
	{"allocation_uuid", v52Allocation, strOf(func(n *baremetal.Node) string { return n.AllocationUUID })},
	{"chassis_uuid", 0, strOf(func(n *baremetal.Node) string { return n.ChassisUUID })},
	{"conductor", v49Conductors, func(b []byte, n *baremetal.Node, rc *renderCtx) []byte {
		return appendNullString(b, rc.conductorFor(n))
	}},
}

// nodeFieldMin maps a node field name to its minimum minor version.
var nodeFieldMin = func() map[string]int {
	m := make(map[string]int, len(nodeFields))
	for _, f := range nodeFields {
		m[f.name] = f.min
	}
	return m
}()

// nodeFieldPrefix holds `"name": ` for each of nodeFields.
var nodeFieldPrefix = func() []string {
	p := make([]string, len(nodeFields))
	for i, f := range nodeFields {
		p[i] = `"` + f.name + `": `
	}
	return p
}()

// defaultNodeFields are the fields of GET /v1/nodes without detail.
var defaultNodeFields = []string{"instance_uuid", "maintenance", "power_state", "provision_state", "uuid", "name"}

// checkNodeFields validates a fields parameter: unknown names are 400,
// names the version does not have are 406.
func checkNodeFields(fields []string, minor int) error {
	for _, f := range fields {
		if _, ok := nodeFieldMin[f]; !ok {
			return badRequest("Field %s is not a valid field.", f)
		}
	}
	for _, f := range fields {
		if minor < nodeFieldMin[f] {
			return notAcceptable()
		}
	}
	return nil
}

// provisionStateFor is Ironic's update_state_in_older_versions.
func provisionStateFor(state string, minor int) string {
	switch {
	case minor < v2AvailableState && state == states.Available:
		return "" // NOSTATE, rendered as null
	case minor < v39InspectWait && state == states.InspectWait:
		return states.Inspecting
	}
	return state
}

// appendNode appends a node's view. fs selects fields (nil: all, plus the
// sub-resource links).
func appendNode(b []byte, n *baremetal.Node, rc *renderCtx, fs fieldSet) []byte {
	o := newObj(b)
	for i := range nodeFields {
		f := &nodeFields[i]
		if rc.minor < f.min || !fs.want(f.name) {
			continue
		}
		o.keyed(nodeFieldPrefix[i])
		o.b = f.write(o.b, n, rc)
	}
	// Up to ten hrefs share two prefixes: escape base and UUID once.
	var buf [192]byte
	self := appendURLPart(append(appendURLPart(buf[:0], rc.base), "/v1/nodes/"...), n.UUID)
	mark := appendURLPart(append(appendURLPart(self, rc.base), "/nodes/"...), n.UUID)
	self, mark = self[:len(self):len(self)], mark[len(self):]
	o.key("links")
	o.b = appendLinkPair(o.b, self, mark, "")
	if fs == nil {
		o.key("ports")
		o.b = appendLinkPair(o.b, self, mark, "/ports")
		if rc.minor >= v14StatesLinks {
			o.key("states")
			o.b = appendLinkPair(o.b, self, mark, "/states")
		}
		if rc.minor >= v24PortgroupSubcontrol {
			o.key("portgroups")
			o.b = appendLinkPair(o.b, self, mark, "/portgroups")
		}
		if rc.minor >= v32Volume {
			o.key("volume")
			o.b = appendLinkPair(o.b, self, mark, "/volume")
		}
	}
	return o.end()
}

// appendNodeStates appends GET /v1/nodes/{node}/states.
func appendNodeStates(b []byte, n *baremetal.Node, minor int) []byte {
	o := newObj(b)
	o.boolean("console_enabled", n.ConsoleEnabled)
	o.nullStr("last_error", n.LastError)
	o.nullStr("power_state", n.PowerState)
	o.nullStr("provision_state", provisionStateFor(n.ProvisionState, minor))
	o.key("provision_updated_at")
	o.b = appendNullTime(o.b, n.ProvisionUpdatedAt)
	o.nullStr("target_power_state", n.TargetPowerState)
	o.nullStr("target_provision_state", n.TargetProvisionState)
	if minor >= v12RAIDConfig {
		o.key("raid_config")
		o.b = appendObject(o.b, n.RAIDConfig)
		o.key("target_raid_config")
		o.b = appendObject(o.b, n.TargetRAIDConfig)
	}
	if minor >= v75BootMode {
		o.nullStr("boot_mode", n.BootMode)
		o.key("secure_boot")
		o.b = appendNullBool(o.b, n.SecureBoot)
	}
	return o.end()
}
