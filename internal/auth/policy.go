package auth

// Target is the object a rule is checked against: a node's owner and
// lessee (Ironic's node.owner, node.lessee), or an allocation's owner.
type Target struct {
	Owner, Lessee string
}

// rule is one check string of Ironic's policy in code.
type rule func(c *Credentials, t Target) bool

// The personas of Ironic's ironic/common/policy.py. Roles are compared
// literally, as oslo.policy does; Keystone puts implied roles (admin ⇒
// member ⇒ reader) into the token, so an admin also matches "member".
func sysAdmin(c *Credentials) bool { return c.System && c.HasRole("admin") }

// serviceRole is rule:service_role: the service role in the service project.
func serviceRole(c *Credentials) bool { return c.HasRole("service") && c.ServiceProject }

func sysMember(c *Credentials) bool { return (c.System && c.HasRole("member")) || serviceRole(c) }

func sysReader(c *Credentials) bool {
	return (c.System && (c.HasRole("reader") || c.HasRole("service"))) || serviceRole(c)
}

func sysService(c *Credentials) bool { return c.System && c.HasRole("service") }

func isProject(c *Credentials, project string) bool {
	return project != "" && c.ProjectID != "" && c.ProjectID == project
}

func owner(role string) rule {
	return func(c *Credentials, t Target) bool { return c.HasRole(role) && isProject(c, t.Owner) }
}

func lessee(role string) rule {
	return func(c *Credentials, t Target) bool { return c.HasRole(role) && isProject(c, t.Lessee) }
}

func ownerOrLessee(role string) rule {
	return func(c *Credentials, t Target) bool {
		return c.HasRole(role) && (isProject(c, t.Owner) || isProject(c, t.Lessee))
	}
}

func system(p func(*Credentials) bool) rule {
	return func(c *Credentials, _ Target) bool { return p(c) }
}

func anyOf(rules ...rule) rule {
	return func(c *Credentials, t Target) bool {
		for _, r := range rules {
			if r(c, t) {
				return true
			}
		}
		return false
	}
}

func role(name string) rule { return func(c *Credentials, _ Target) bool { return c.HasRole(name) } }

// Ironic's composite check strings.
var (
	systemAdmin  = system(sysAdmin)
	systemMember = system(sysMember)
	systemReader = system(sysReader)
	projService  = owner("service")

	systemOrProjectMember          = anyOf(systemMember, ownerOrLessee("member"), system(sysService))
	systemOrProjectReader          = anyOf(systemReader, ownerOrLessee("reader"), projService)
	systemOrOwnerMemberLesseeAdmin = anyOf(systemMember, system(sysService), owner("member"), lessee("admin"), lessee("manager"), projService)
	systemAdminOrOwnerAdmin        = anyOf(systemAdmin, system(sysService), owner("admin"), owner("manager"), projService)
	systemMemberOrOwnerAdmin       = anyOf(systemMember, system(sysService), owner("admin"), owner("manager"), projService)
	systemMemberOrOwnerMember      = anyOf(systemMember, system(sysService), owner("member"), projService)
	systemOrOwnerReader            = anyOf(systemReader, system(sysService), owner("reader"), projService)
	systemMemberOrOwnerLesseeAdmin = anyOf(systemMember, system(sysService), owner("admin"), owner("manager"), lessee("admin"), lessee("manager"), projService)
	targetPropertiesReader         = anyOf(systemReader, role("admin"))
	allocationMember               = anyOf(systemMember, owner("member"))
	allocationReader               = anyOf(systemReader, owner("reader"))
	allocationCreator              = anyOf(systemMember, role("member"))
	apiReader                      = anyOf(role("reader"), role("service"))
	// A runbook's Target.Owner is its owner (Ironic's runbook.owner).
	runbookAdmin   = anyOf(systemMember, owner("manager"), role("service"))
	runbookReader  = anyOf(systemReader, owner("reader"), role("service"))
	runbookCreator = anyOf(systemMember, role("manager"), role("service"))
)

// Rule names that callers refer to.
const (
	RuleShowPassword = "show_password"
	// RuleInspectorAdmin guards the inspector's API (all but the public routes).
	RuleInspectorAdmin = "baremetal-introspection:admin"
	// RuleIPAContinueInspection guards POST /v1/continue_inspection,
	// which anyone may call (the lookup protects it).
	RuleIPAContinueInspection = "baremetal:driver:ipa_continue_inspection"
	// RuleIPAHeartbeat guards POST /v1/heartbeat: Ironic's check_str ''.
	RuleIPAHeartbeat = "baremetal:node:ipa_heartbeat"
	RuleNodeListAll  = "baremetal:node:list_all"
	RulePortListAll  = "baremetal:port:list_all"
	RulePGListAll    = "baremetal:portgroup:list_all"
	RuleAllocListAll = "baremetal:allocation:list_all"
	// RuleAllocCreateRestricted allows an allocation for another project.
	RuleAllocCreateRestricted = "baremetal:allocation:create_restricted"
	// RuleNodeCreateSelfOwned lets a project admin create a node it owns.
	RuleNodeCreateSelfOwned = "baremetal:node:create:self_owned_node"
	// RuleNodeDeleteSelfOwned lets a project admin delete a node it owns.
	RuleNodeDeleteSelfOwned = "baremetal:node:delete:self_owned_node"
	RuleNodeGet             = "baremetal:node:get"
	RuleNodeUpdate          = "baremetal:node:update"
	// RuleNodeFilterThreshold: who passes it sees every field of a node;
	// others are checked field by field (the get:* rules).
	RuleNodeFilterThreshold = "baremetal:node:get:filter_threshold"
	RuleNodeGetDriverInfo   = "baremetal:node:get:driver_info"
	RuleNodeGetLastError    = "baremetal:node:get:last_error"
	RuleNodeGetReservation  = "baremetal:node:get:reservation"
	RuleNodeGetInternalInfo = "baremetal:node:get:driver_internal_info"
	// RuleNodeUpdateOwnerProvisioned lets an active node's owner change.
	RuleNodeUpdateOwnerProvisioned = "baremetal:node:update_owner_provisioned"
	// RuleNodeDisableCleaning guards setting automated_clean to false.
	RuleNodeDisableCleaning = "baremetal:node:disable_cleaning"
	RuleVolumeListAll       = "baremetal:volume:list_all"
	// RuleVolumeTargetProperties shows volume targets' properties.
	RuleVolumeTargetProperties = "baremetal:volume:view_target_properties"
	// RulePublic is the rule of the public routes: everyone.
	RulePublic        = "baremetal:public"
	RulePortGet       = "baremetal:port:get"
	RulePortgroupGet  = "baremetal:portgroup:get"
	RuleAllocationGet = "baremetal:allocation:get"

	RuleRunbookGet     = "baremetal:runbook:get"
	RuleRunbookList    = "baremetal:runbook:list"
	RuleRunbookListAll = "baremetal:runbook:list_all"
	RuleRunbookUpdate  = "baremetal:runbook:update"
	// RuleRunbookUse lets a runbook's steps run on a node (provision).
	RuleRunbookUse = "baremetal:runbook:use"
	// RuleRunbookUpdatePublic and RuleRunbookUpdateOwner guard a PATCH of
	// /public and /owner.
	RuleRunbookUpdatePublic = "baremetal:runbook:update:public"
	RuleRunbookUpdateOwner  = "baremetal:runbook:update:owner"
)

// rules is Ironic's default policy (2023.x, enforce_scope and
// enforce_new_defaults on), by rule name; rules ferro adds for its own
// resources follow the same personas.
var rules = map[string]rule{
	// show_password is "!" upstream: nobody. ferro shows driver_info
	// secrets to the system admin (see docs/security.md).
	RuleShowPassword:   systemAdmin,
	RuleInspectorAdmin: anyOf(systemAdmin, system(sysService), system(serviceRole)),

	"baremetal:node:create":                   anyOf(systemAdmin, system(sysService)),
	RuleNodeCreateSelfOwned:                   anyOf(role("admin"), role("service")),
	"baremetal:node:list":                     apiReader,
	RuleNodeListAll:                           systemReader,
	RuleNodeGet:                               systemOrProjectReader,
	RuleNodeFilterThreshold:                   systemReader,
	RuleNodeGetLastError:                      systemOrOwnerReader,
	RuleNodeGetReservation:                    systemOrOwnerReader,
	RuleNodeGetInternalInfo:                   systemOrOwnerReader,
	RuleNodeGetDriverInfo:                     systemOrOwnerReader,
	"baremetal:node:update:driver_info":       systemMemberOrOwnerMember,
	"baremetal:node:update:properties":        systemMemberOrOwnerMember,
	"baremetal:node:update:chassis_uuid":      systemAdmin,
	"baremetal:node:update:instance_uuid":     systemMemberOrOwnerMember,
	"baremetal:node:update:lessee":            systemMemberOrOwnerMember,
	"baremetal:node:update:owner":             systemMember,
	"baremetal:node:update:driver_interfaces": systemMemberOrOwnerAdmin,
	"baremetal:node:update:network_data":      systemMemberOrOwnerMember,
	"baremetal:node:update:conductor_group":   systemMember,
	"baremetal:node:update:name":              systemMemberOrOwnerMember,
	"baremetal:node:update:retired":           systemMemberOrOwnerMember,
	"baremetal:node:update:shard":             systemAdmin,
	"baremetal:node:update:parent_node":       systemMember,
	RuleNodeUpdate:                            systemOrProjectMember,
	"baremetal:node:update_extra":             systemOrProjectMember,
	"baremetal:node:update_instance_info":     systemOrOwnerMemberLesseeAdmin,
	RuleNodeUpdateOwnerProvisioned:            systemAdmin,
	RuleNodeDisableCleaning:                   systemAdmin,
	"baremetal:node:delete":                   systemAdmin,
	RuleNodeDeleteSelfOwned:                   owner("admin"),
	"baremetal:node:validate":                 systemOrOwnerMemberLesseeAdmin,
	"baremetal:node:set_maintenance":          systemOrOwnerMemberLesseeAdmin,
	"baremetal:node:clear_maintenance":        systemOrOwnerMemberLesseeAdmin,
	"baremetal:node:get_boot_device":          systemMemberOrOwnerAdmin,
	"baremetal:node:set_boot_device":          systemMemberOrOwnerAdmin,
	"baremetal:node:get_states":               systemOrProjectReader,
	"baremetal:node:set_power_state":          systemOrProjectMember,
	"baremetal:node:set_provision_state":      systemOrOwnerMemberLesseeAdmin,
	"baremetal:node:set_raid_state":           systemMemberOrOwnerMember,
	"baremetal:node:get_console":              systemMemberOrOwnerMember,
	"baremetal:node:set_console_state":        systemMemberOrOwnerMember,
	"baremetal:node:vif:list":                 systemOrProjectReader,
	"baremetal:node:vif:attach":               systemOrOwnerMemberLesseeAdmin,
	"baremetal:node:vif:detach":               systemOrOwnerMemberLesseeAdmin,
	"baremetal:node:traits:list":              systemOrProjectReader,
	"baremetal:node:traits:set":               systemMemberOrOwnerAdmin,
	"baremetal:node:traits:delete":            systemMemberOrOwnerAdmin,
	"baremetal:node:bios:get":                 systemOrProjectReader,
	"baremetal:node:history:get":              systemOrOwnerReader,
	"baremetal:node:inventory:get":            systemOrOwnerReader,
	"baremetal:node:firmware:get":             systemOrProjectReader,
	"baremetal:node:vmedia:get":               systemOrProjectReader,
	"baremetal:node:vmedia:attach":            systemOrProjectMember,
	"baremetal:node:vmedia:detach":            systemOrProjectMember,
	"baremetal:shards:get":                    systemReader,

	RulePortGet:                  systemOrProjectReader,
	"baremetal:port:list":        apiReader,
	RulePortListAll:              systemReader,
	"baremetal:port:create":      systemAdminOrOwnerAdmin,
	"baremetal:port:delete":      systemAdminOrOwnerAdmin,
	"baremetal:port:update":      systemMemberOrOwnerAdmin,
	RulePortgroupGet:             systemOrProjectReader,
	"baremetal:portgroup:list":   apiReader,
	RulePGListAll:                systemReader,
	"baremetal:portgroup:create": systemAdminOrOwnerAdmin,
	"baremetal:portgroup:delete": systemAdminOrOwnerAdmin,
	"baremetal:portgroup:update": systemMemberOrOwnerAdmin,

	"baremetal:volume:get":     systemOrProjectReader,
	"baremetal:volume:list":    apiReader,
	RuleVolumeListAll:          systemReader,
	"baremetal:volume:create":  systemMemberOrOwnerLesseeAdmin,
	"baremetal:volume:delete":  systemMemberOrOwnerLesseeAdmin,
	"baremetal:volume:update":  systemOrOwnerMemberLesseeAdmin,
	RuleVolumeTargetProperties: targetPropertiesReader,

	"baremetal:chassis:get":                             systemReader,
	"baremetal:chassis:create":                          systemAdmin,
	"baremetal:chassis:update":                          systemMember,
	"baremetal:chassis:delete":                          systemAdmin,
	"baremetal:driver:get":                              systemReader,
	"baremetal:driver:get_properties":                   systemReader,
	"baremetal:driver:get_raid_logical_disk_properties": systemReader,
	"baremetal:conductor:get":                           systemReader,
	"baremetal:deploy_template:get":                     systemReader,
	"baremetal:deploy_template:create":                  systemAdmin,
	"baremetal:deploy_template:update":                  systemAdmin,
	"baremetal:deploy_template:delete":                  systemAdmin,
	// Ironic master's rule_policies (1.96).
	"baremetal:inspection_rule:get":      systemReader,
	"baremetal:inspection_rule:list_all": systemReader,
	"baremetal:inspection_rule:create":   systemAdmin,
	"baremetal:inspection_rule:update":   systemAdmin,
	"baremetal:inspection_rule:delete":   systemAdmin,
	RuleAllocationGet:                    allocationReader,
	"baremetal:allocation:list":          apiReader,
	RuleAllocListAll:                     systemReader,
	"baremetal:allocation:create":        allocationCreator,
	RuleAllocCreateRestricted:            systemMember,
	"baremetal:allocation:delete":        allocationMember,
	"baremetal:allocation:update":        allocationMember,
	// Ironic master's runbook_policies (1.92).
	RuleRunbookGet:             runbookReader,
	RuleRunbookList:            apiReader,
	RuleRunbookListAll:         systemReader,
	"baremetal:runbook:create": runbookCreator,
	"baremetal:runbook:delete": runbookAdmin,
	RuleRunbookUpdate:          runbookAdmin,
	RuleRunbookUpdatePublic:    systemMember,
	RuleRunbookUpdateOwner:     systemMember,
	RuleRunbookUse:             runbookAdmin,
	RulePublic:                 func(*Credentials, Target) bool { return true },
	// Ironic's check_str '': the ramdisk's report needs no credentials.
	RuleIPAContinueInspection: func(*Credentials, Target) bool { return true },
	RuleIPAHeartbeat:          func(*Credentials, Target) bool { return true },
}

// Allowed reports whether c may do what the rule guards on t. nil
// credentials (no auth layer: noauth) and Unrestricted ones pass every
// rule but show_password, as in Ironic, whose policy is enforced only
// with auth_strategy keystone while show_password is checked always. An
// unknown rule is denied.
func Allowed(name string, c *Credentials, t Target) bool {
	r, ok := rules[name]
	if !ok {
		return false
	}
	if c == nil || c.Unrestricted {
		return name != RuleShowPassword
	}
	return r(c, t)
}

// Known reports whether name is a rule of the table.
func Known(name string) bool {
	_, ok := rules[name]
	return ok
}
