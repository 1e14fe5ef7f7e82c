package ironic

import (
	"time"

	"github.com/ferrometal/ferro/internal/auth"
	"github.com/ferrometal/ferro/internal/baremetal"
	"github.com/ferrometal/ferro/internal/states"
)

// ifaceOf writes the node's interface of a kind.
func ifaceOf(kind string) func([]byte, *baremetal.Node, *renderCtx) []byte {
	return func(b []byte, n *baremetal.Node, _ *renderCtx) []byte {
		return appendNullString(b, n.Interfaces[kind])
	}
}

type nodeField = viewField[*baremetal.Node]

// nodeFields is the node view in Ironic's order: uuid, created_at,
// updated_at, the object fields alphabetically, then the fields the API
// computes.
var nodeFields = append(headFields(func(n *baremetal.Node) string { return n.UUID },
	func(n *baremetal.Node) time.Time { return n.CreatedAt }, func(n *baremetal.Node) *time.Time { return n.UpdatedAt }),
	[]nodeField{
		{"automated_clean", v47AutomatedClean, nullBoolOf(func(n *baremetal.Node) *bool { return n.AutomatedClean })},
		{"bios_interface", v40BIOSInterface, ifaceOf("bios")},
		{"boot_interface", v31DynamicInterfaces, ifaceOf("boot")},
		{"boot_mode", v75BootMode, nullStrOf(func(n *baremetal.Node) string { return n.BootMode })},
		{"clean_step", v7NodeClean, nodeObjOf(func(n *baremetal.Node) (baremetal.JSON, []byte) {
			return n.CleanStep, n.Stored.Text(baremetal.StoredCleanStep)
		})},
		{"conductor_group", v46ConductorGroup, strOf(func(n *baremetal.Node) string { return n.ConductorGroup })},
		{"console_enabled", 0, boolOf(func(n *baremetal.Node) bool { return n.ConsoleEnabled })},
		{"console_interface", v31DynamicInterfaces, ifaceOf("console")},
		{"deploy_interface", v31DynamicInterfaces, ifaceOf("deploy")},
		{"deploy_step", v44DeployStep, nodeObjOf(func(n *baremetal.Node) (baremetal.JSON, []byte) {
			return n.DeployStep, n.Stored.Text(baremetal.StoredDeployStep)
		})},
		{"description", v51Description, nullStrOf(func(n *baremetal.Node) string { return n.Description })},
		{"disable_power_off", v95DisablePowerOff, boolOf(func(n *baremetal.Node) bool { return n.DisablePowerOff })},
		{"driver", 0, strOf(func(n *baremetal.Node) string { return n.Driver })},
		{"driver_info", 0, func(b []byte, n *baremetal.Node, rc *renderCtx) []byte {
			if rc.redacts(n, auth.RuleNodeGetDriverInfo) {
				return appendRedacted(b, redactedDriverInfo)
			}
			mask := maskDriverInfo
			if rc.showPassword {
				mask = nil
			}
			return appendNodeObject(b, n.DriverInfo, n.Stored.Text(baremetal.StoredDriverInfo), mask)
		}},
		{"driver_internal_info", v3DriverInternalInfo, func(b []byte, n *baremetal.Node, rc *renderCtx) []byte {
			if rc.redacts(n, auth.RuleNodeGetInternalInfo) {
				return appendRedacted(b, redactedInternalInfo)
			}
			return appendNodeObject(b, n.DriverInternalInfo, n.Stored.Text(baremetal.StoredDriverInternalInfo), maskAgentToken)
		}},
		{"extra", 0, nodeObjOf(func(n *baremetal.Node) (baremetal.JSON, []byte) { return n.Extra, n.Stored.Text(baremetal.StoredExtra) })},
		{"fault", v42Fault, nullStrOf(func(n *baremetal.Node) string { return n.Fault })},
		{"firmware_interface", v86FirmwareInterface, ifaceOf("firmware")},
		{"health", v109Health, nullStrOf(func(n *baremetal.Node) string { return n.Health })},
		{"inspection_finished_at", v6InspectState, nullTimeOf(func(n *baremetal.Node) *time.Time { return n.InspectionFinishedAt })},
		{"inspection_started_at", v6InspectState, nullTimeOf(func(n *baremetal.Node) *time.Time { return n.InspectionStartedAt })},
		{"inspect_interface", v31DynamicInterfaces, ifaceOf("inspect")},
		{"instance_info", 0, func(b []byte, n *baremetal.Node, _ *renderCtx) []byte {
			return appendNodeObject(b, n.InstanceInfo, n.Stored.Text(baremetal.StoredInstanceInfo), maskInstanceInfo)
		}},
		{"instance_name", v104InstanceName, nullStrOf(func(n *baremetal.Node) string { return n.InstanceName })},
		{"instance_uuid", 0, nullStrOf(func(n *baremetal.Node) string { return n.InstanceUUID })},
		{"last_error", 0, func(b []byte, n *baremetal.Node, rc *renderCtx) []byte {
			if rc.redacts(n, auth.RuleNodeGetLastError) {
				return appendString(b, redactedLastError)
			}
			return appendNullString(b, n.LastError)
		}},
		{"lessee", v65Lessee, nullStrOf(func(n *baremetal.Node) string { return n.Lessee })},
		{"maintenance", 0, boolOf(func(n *baremetal.Node) bool { return n.Maintenance })},
		{"maintenance_reason", 0, nullStrOf(func(n *baremetal.Node) string { return n.MaintenanceReason })},
		{"management_interface", v31DynamicInterfaces, ifaceOf("management")},
		{"name", v5NodeName, nullStrOf(func(n *baremetal.Node) string { return n.Name })},
		{"network_data", v66NetworkData, nodeObjOf(func(n *baremetal.Node) (baremetal.JSON, []byte) {
			return n.NetworkData, n.Stored.Text(baremetal.StoredNetworkData)
		})},
		{"network_interface", v20NetworkInterface, ifaceOf("network")},
		{"owner", v50Owner, nullStrOf(func(n *baremetal.Node) string { return n.Owner })},
		{"parent_node", v83ParentNode, nullStrOf(func(n *baremetal.Node) string { return n.ParentNode })},
		{"power_interface", v31DynamicInterfaces, ifaceOf("power")},
		{"power_state", 0, nullStrOf(func(n *baremetal.Node) string { return n.PowerState })},
		{"properties", 0, nodeObjOf(func(n *baremetal.Node) (baremetal.JSON, []byte) {
			return n.Properties, n.Stored.Text(baremetal.StoredProperties)
		})},
		{"protected", v48Protected, boolOf(func(n *baremetal.Node) bool { return n.Protected })},
		{"protected_reason", v48Protected, nullStrOf(func(n *baremetal.Node) string { return n.ProtectedReason })},
		{"provision_state", 0, func(b []byte, n *baremetal.Node, rc *renderCtx) []byte {
			return appendNullString(b, provisionStateFor(n.ProvisionState, rc.minor))
		}},
		{"provision_updated_at", 0, nullTimeOf(func(n *baremetal.Node) *time.Time { return n.ProvisionUpdatedAt })},
		{"raid_config", v12RAIDConfig, nodeObjOf(func(n *baremetal.Node) (baremetal.JSON, []byte) {
			return n.RAIDConfig, n.Stored.Text(baremetal.StoredRAIDConfig)
		})},
		{"raid_interface", v31DynamicInterfaces, ifaceOf("raid")},
		{"rescue_interface", v38RescueInterface, ifaceOf("rescue")},
		{"reservation", 0, func(b []byte, n *baremetal.Node, rc *renderCtx) []byte {
			if rc.redacts(n, auth.RuleNodeGetReservation) {
				return appendString(b, redactedReservation)
			}
			return appendNullString(b, n.Reservation)
		}},
		{"resource_class", v21ResourceClass, nullStrOf(func(n *baremetal.Node) string { return n.ResourceClass })},
		{"retired", v61Retired, boolOf(func(n *baremetal.Node) bool { return n.Retired })},
		{"retired_reason", v61Retired, nullStrOf(func(n *baremetal.Node) string { return n.RetiredReason })},
		{"secure_boot", v75BootMode, nullBoolOf(func(n *baremetal.Node) *bool { return n.SecureBoot })},
		{"service_step", v87Service, nodeObjOf(func(n *baremetal.Node) (baremetal.JSON, []byte) {
			return n.ServiceStep, n.Stored.Text(baremetal.StoredServiceStep)
		})},
		{"shard", v82Shard, nullStrOf(func(n *baremetal.Node) string { return n.Shard })},
		{"storage_interface", v33StorageInterface, ifaceOf("storage")},
		{"target_power_state", 0, nullStrOf(func(n *baremetal.Node) string { return n.TargetPowerState })},
		{"target_provision_state", 0, nullStrOf(func(n *baremetal.Node) string { return n.TargetProvisionState })},
		{"target_raid_config", v12RAIDConfig, nodeObjOf(func(n *baremetal.Node) (baremetal.JSON, []byte) {
			return n.TargetRAIDConfig, n.Stored.Text(baremetal.StoredTargetRAIDConfig)
		})},
		{"traits", v37NodeTraits, stringsOf(func(n *baremetal.Node) []string { return n.Traits })},
		{"vendor_interface", v31DynamicInterfaces, ifaceOf("vendor")},
		{"allocation_uuid", v52Allocation, nullStrOf(func(n *baremetal.Node) string { return n.AllocationUUID })},
		{"chassis_uuid", 0, nullStrOf(func(n *baremetal.Node) string { return n.ChassisUUID })},
		{"conductor", v49Conductors, func(b []byte, n *baremetal.Node, rc *renderCtx) []byte {
			return appendNullString(b, rc.conductorFor(n))
		}},
	}...)

// nodeObjOf writes a node's free-form field without secrets: the map, or
// the stored text a list kept (baremetal.Node.Stored).
func nodeObjOf(get func(*baremetal.Node) (baremetal.JSON, []byte)) func([]byte, *baremetal.Node, *renderCtx) []byte {
	return func(b []byte, n *baremetal.Node, _ *renderCtx) []byte {
		m, text := get(n)
		return appendNodeObject(b, m, text, nil)
	}
}

// appendNodeObject appends a node's free-form field, masked with mask
// (nil: nothing masked): text, the stored JSON a list kept, when there is
// one, else m; nil is {}.
func appendNodeObject(b []byte, m baremetal.JSON, text []byte, mask masker) []byte {
	if text != nil {
		return appendStored(b, text, mask)
	}
	if m == nil {
		return append(b, "{}"...)
	}
	return appendMap(b, m, mask)
}

// appendRedacted writes Ironic's stand-in for a redacted dict field.
func appendRedacted(b []byte, text string) []byte {
	o := newObj(b)
	o.str("content", text)
	return o.end()
}

// defaultNodeFields are the fields of GET /v1/nodes without detail.
var defaultNodeFields = []string{"instance_uuid", "maintenance", "power_state", "provision_state", "uuid", "name"}

// nodeFieldError words an unknown field of ?fields= as the node controller
// does (the other controllers' words are resource.checkFields's).
func nodeFieldError(name string) *apiError { return badRequest("Field %s is not a valid field.", name) }

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
