package auth

import "strings"

// TargetKind says what object a route's rule is checked against, as
// Ironic's check_*_policy_and_retrieve helpers decide it.
type TargetKind int

const (
	// TargetNone: the credentials alone decide (check_policy).
	TargetNone TargetKind = iota
	// TargetNode: the path's {node} (or ?node=), which a project-scoped
	// caller must be able to see (baremetal:node:get) or it answers 404.
	TargetNode
	// TargetPort: the node of the path's {port}.
	TargetPort
	// TargetPortgroup: the node of the path's {portgroup}.
	TargetPortgroup
	// TargetVolumeConnector: the node of the path's volume connector.
	TargetVolumeConnector
	// TargetVolumeTarget: the node of the path's volume target.
	TargetVolumeTarget
	// TargetAllocation: the owner of the path's {allocation}.
	TargetAllocation
	// TargetList: the rule admits the caller; without the resource's
	// list_all rule the handler narrows the list to the caller's project.
	TargetList
	// TargetNodeList: a list below the path's {node} (or {portgroup}'s
	// node), which must be visible; then as TargetList.
	TargetNodeList
	// TargetNodeAllocation: the allocation of the path's {node}, which
	// must be visible; the handler checks the rule on the allocation.
	TargetNodeAllocation
	// TargetBodyNode: a create on the node the body names, checked by the
	// handler once the body is read (check_owner_policy on that node, 403
	// for a node the caller may not use, missing ones included).
	TargetBodyNode
	// TargetPatch: a node PATCH; the path's node must be visible and the
	// handler checks the rules of the fields the patch touches.
	TargetPatch
	// TargetRunbook: the path's runbook, whose owner the handler checks
	// the rule against once it has read it (check_runbook_policy_and_retrieve).
	TargetRunbook
)

// Route is the policy of one Ironic API route.
type Route struct {
	Rule   string
	Target TargetKind
}

// Generic rules for routes the table below does not name yet (a resource
// added later): reads need the system reader, writes the system admin;
// under a node they follow the node's get and update rules.
const (
	ruleGenericRead  = "baremetal:generic:get"
	ruleGenericWrite = "baremetal:generic:write"
)

func init() {
	rules[ruleGenericRead] = systemReader
	rules[ruleGenericWrite] = systemAdmin
}

// ironicRoutes maps the Ironic API's ServeMux patterns to the rules
// Ironic's controllers check (ironic/api/controllers/v1/*.py).
var ironicRoutes = map[string]Route{
	"GET /{$}":    {RulePublic, TargetNone},
	"GET /v1":     {RulePublic, TargetNone},
	"GET /v1/{$}": {RulePublic, TargetNone},
	// The ramdisk's report: public (Ironic's check_str '').
	"POST /v1/continue_inspection": {RuleIPAContinueInspection, TargetNone},
	"POST /v1/heartbeat":           {RuleIPAHeartbeat, TargetNone},
	"POST /v1/heartbeat/{node}":    {RuleIPAHeartbeat, TargetNone},

	"GET /v1/nodes":                                         {"baremetal:node:list", TargetList},
	"GET /v1/nodes/{$}":                                     {"baremetal:node:list", TargetList},
	"GET /v1/nodes/detail":                                  {"baremetal:node:list", TargetList},
	"GET /v1/chassis/{chassis}/nodes":                       {"baremetal:node:list", TargetList},
	"GET /v1/chassis/{chassis}/nodes/detail":                {"baremetal:node:list", TargetList},
	"GET /v1/nodes/validate":                                {"baremetal:node:validate", TargetNode},
	"POST /v1/nodes":                                        {"baremetal:node:create", TargetNone},
	"GET /v1/nodes/{node}":                                  {RuleNodeGet, TargetNode},
	"PATCH /v1/nodes/{node}":                                {"baremetal:node:update", TargetPatch},
	"DELETE /v1/nodes/{node}":                               {"baremetal:node:delete", TargetNode},
	"GET /v1/nodes/{node}/validate":                         {"baremetal:node:validate", TargetNode},
	"GET /v1/nodes/{node}/states":                           {"baremetal:node:get_states", TargetNode},
	"PUT /v1/nodes/{node}/states/power":                     {"baremetal:node:set_power_state", TargetNode},
	"PUT /v1/nodes/{node}/states/provision":                 {"baremetal:node:set_provision_state", TargetNode},
	"PUT /v1/nodes/{node}/states/raid":                      {"baremetal:node:set_raid_state", TargetNode},
	"PUT /v1/nodes/{node}/maintenance":                      {"baremetal:node:set_maintenance", TargetNode},
	"DELETE /v1/nodes/{node}/maintenance":                   {"baremetal:node:clear_maintenance", TargetNode},
	"GET /v1/nodes/{node}/management/boot_device":           {"baremetal:node:get_boot_device", TargetNode},
	"PUT /v1/nodes/{node}/management/boot_device":           {"baremetal:node:set_boot_device", TargetNode},
	"GET /v1/nodes/{node}/management/boot_device/supported": {"baremetal:node:get_boot_device", TargetNode},
	"GET /v1/nodes/{node}/traits":                           {"baremetal:node:traits:list", TargetNode},
	"PUT /v1/nodes/{node}/traits":                           {"baremetal:node:traits:set", TargetNode},
	"PUT /v1/nodes/{node}/traits/{trait}":                   {"baremetal:node:traits:set", TargetNode},
	"DELETE /v1/nodes/{node}/traits":                        {"baremetal:node:traits:delete", TargetNode},
	"DELETE /v1/nodes/{node}/traits/{trait}":                {"baremetal:node:traits:delete", TargetNode},
	"GET /v1/nodes/{node}/history":                          {"baremetal:node:history:get", TargetNode},
	"GET /v1/nodes/{node}/history/{event}":                  {"baremetal:node:history:get", TargetNode},
	"GET /v1/nodes/{node}/inventory":                        {"baremetal:node:inventory:get", TargetNode},
	// The parent must be visible; the list is then narrowed as a node
	// list (NodeChildrenController).
	"GET /v1/nodes/{node}/children":          {RuleNodeGet, TargetNode},
	"GET /v1/nodes/{node}/firmware":          {"baremetal:node:firmware:get", TargetNode},
	"GET /v1/nodes/{node}/vmedia":            {"baremetal:node:vmedia:get", TargetNode},
	"POST /v1/nodes/{node}/vmedia":           {"baremetal:node:vmedia:attach", TargetNode},
	"DELETE /v1/nodes/{node}/vmedia":         {"baremetal:node:vmedia:detach", TargetNode},
	"GET /v1/nodes/{node}/states/console":    {"baremetal:node:get_console", TargetNode},
	"PUT /v1/nodes/{node}/states/console":    {"baremetal:node:set_console_state", TargetNode},
	"GET /v1/nodes/states/console/{node}":    {"baremetal:node:get_console", TargetNode},
	"PUT /v1/nodes/states/console/{node}":    {"baremetal:node:set_console_state", TargetNode},
	"GET /v1/nodes/{node}/bios":              {"baremetal:node:bios:get", TargetNode},
	"GET /v1/nodes/{node}/bios/{setting}":    {"baremetal:node:bios:get", TargetNode},
	"GET /v1/nodes/{node}/vifs":              {"baremetal:node:vif:list", TargetNode},
	"POST /v1/nodes/{node}/vifs":             {"baremetal:node:vif:attach", TargetNode},
	"DELETE /v1/nodes/{node}/vifs/{vif}":     {"baremetal:node:vif:detach", TargetNode},
	"GET /v1/nodes/{node}/allocation":        {RuleAllocationGet, TargetNodeAllocation},
	"DELETE /v1/nodes/{node}/allocation":     {"baremetal:allocation:delete", TargetNodeAllocation},
	"GET /v1/nodes/{node}/ports":             {"baremetal:port:list", TargetNodeList},
	"GET /v1/nodes/{node}/ports/detail":      {"baremetal:port:list", TargetNodeList},
	"GET /v1/nodes/{node}/portgroups":        {"baremetal:portgroup:list", TargetNodeList},
	"GET /v1/nodes/{node}/portgroups/detail": {"baremetal:portgroup:list", TargetNodeList},
	// Ironic's volume controller checks baremetal:volume:get without a
	// node, under a node too.
	"GET /v1/nodes/{node}/volume":                   {"baremetal:volume:get", TargetNone},
	"GET /v1/nodes/{node}/volume/connectors":        {"baremetal:volume:list", TargetNodeList},
	"GET /v1/nodes/{node}/volume/connectors/detail": {"baremetal:volume:list", TargetNodeList},
	"GET /v1/nodes/{node}/volume/targets":           {"baremetal:volume:list", TargetNodeList},
	"GET /v1/nodes/{node}/volume/targets/detail":    {"baremetal:volume:list", TargetNodeList},

	"GET /v1/ports":           {"baremetal:port:list", TargetList},
	"GET /v1/ports/{$}":       {"baremetal:port:list", TargetList},
	"GET /v1/ports/detail":    {"baremetal:port:list", TargetList},
	"POST /v1/ports":          {"baremetal:port:create", TargetBodyNode},
	"GET /v1/ports/{port}":    {RulePortGet, TargetPort},
	"PATCH /v1/ports/{port}":  {"baremetal:port:update", TargetPort},
	"DELETE /v1/ports/{port}": {"baremetal:port:delete", TargetPort},

	"GET /v1/portgroups":                          {"baremetal:portgroup:list", TargetList},
	"GET /v1/portgroups/{$}":                      {"baremetal:portgroup:list", TargetList},
	"GET /v1/portgroups/detail":                   {"baremetal:portgroup:list", TargetList},
	"POST /v1/portgroups":                         {"baremetal:portgroup:create", TargetBodyNode},
	"GET /v1/portgroups/{portgroup}":              {RulePortgroupGet, TargetPortgroup},
	"PATCH /v1/portgroups/{portgroup}":            {"baremetal:portgroup:update", TargetPortgroup},
	"DELETE /v1/portgroups/{portgroup}":           {"baremetal:portgroup:delete", TargetPortgroup},
	"GET /v1/portgroups/{portgroup}/ports":        {"baremetal:port:list", TargetNodeList},
	"GET /v1/portgroups/{portgroup}/ports/detail": {"baremetal:port:list", TargetNodeList},

	"GET /v1/volume":                        {"baremetal:volume:get", TargetNone},
	"GET /v1/volume/{$}":                    {"baremetal:volume:get", TargetNone},
	"GET /v1/volume/connectors":             {"baremetal:volume:list", TargetList},
	"GET /v1/volume/connectors/{$}":         {"baremetal:volume:list", TargetList},
	"GET /v1/volume/connectors/detail":      {"baremetal:volume:list", TargetList},
	"POST /v1/volume/connectors":            {"baremetal:volume:create", TargetBodyNode},
	"GET /v1/volume/connectors/{volume}":    {"baremetal:volume:get", TargetVolumeConnector},
	"PATCH /v1/volume/connectors/{volume}":  {"baremetal:volume:update", TargetVolumeConnector},
	"DELETE /v1/volume/connectors/{volume}": {"baremetal:volume:delete", TargetVolumeConnector},
	"GET /v1/volume/targets":                {"baremetal:volume:list", TargetList},
	"GET /v1/volume/targets/{$}":            {"baremetal:volume:list", TargetList},
	"GET /v1/volume/targets/detail":         {"baremetal:volume:list", TargetList},
	"POST /v1/volume/targets":               {"baremetal:volume:create", TargetBodyNode},
	"GET /v1/volume/targets/{volume}":       {"baremetal:volume:get", TargetVolumeTarget},
	"PATCH /v1/volume/targets/{volume}":     {"baremetal:volume:update", TargetVolumeTarget},
	"DELETE /v1/volume/targets/{volume}":    {"baremetal:volume:delete", TargetVolumeTarget},

	"GET /v1/allocations":                 {"baremetal:allocation:list", TargetList},
	"GET /v1/allocations/{$}":             {"baremetal:allocation:list", TargetList},
	"POST /v1/allocations":                {"baremetal:allocation:create", TargetNone},
	"GET /v1/allocations/{allocation}":    {RuleAllocationGet, TargetAllocation},
	"PATCH /v1/allocations/{allocation}":  {"baremetal:allocation:update", TargetAllocation},
	"DELETE /v1/allocations/{allocation}": {"baremetal:allocation:delete", TargetAllocation},

	"GET /v1/drivers":                                       {"baremetal:driver:get", TargetNone},
	"GET /v1/drivers/{$}":                                   {"baremetal:driver:get", TargetNone},
	"GET /v1/drivers/{driver}":                              {"baremetal:driver:get", TargetNone},
	"GET /v1/drivers/{driver}/properties":                   {"baremetal:driver:get_properties", TargetNone},
	"GET /v1/drivers/{driver}/raid/logical_disk_properties": {"baremetal:driver:get_raid_logical_disk_properties", TargetNone},
	"GET /v1/conductors":                                    {"baremetal:conductor:get", TargetNone},
	"GET /v1/conductors/{$}":                                {"baremetal:conductor:get", TargetNone},
	"GET /v1/conductors/{hostname}":                         {"baremetal:conductor:get", TargetNone},
	"GET /v1/chassis":                                       {"baremetal:chassis:get", TargetNone},
	"GET /v1/chassis/{$}":                                   {"baremetal:chassis:get", TargetNone},
	"GET /v1/chassis/detail":                                {"baremetal:chassis:get", TargetNone},
	"GET /v1/chassis/{chassis}":                             {"baremetal:chassis:get", TargetNone},
	"POST /v1/chassis":                                      {"baremetal:chassis:create", TargetNone},
	"PATCH /v1/chassis/{chassis}":                           {"baremetal:chassis:update", TargetNone},
	"DELETE /v1/chassis/{chassis}":                          {"baremetal:chassis:delete", TargetNone},
	"GET /v1/shards":                                        {"baremetal:shards:get", TargetNone},
	"GET /v1/deploy_templates":                              {"baremetal:deploy_template:get", TargetNone},
	"GET /v1/deploy_templates/{$}":                          {"baremetal:deploy_template:get", TargetNone},
	"GET /v1/deploy_templates/detail":                       {"baremetal:deploy_template:get", TargetNone},
	"GET /v1/deploy_templates/{template}":                   {"baremetal:deploy_template:get", TargetNone},
	"POST /v1/deploy_templates":                             {"baremetal:deploy_template:create", TargetNone},
	"PATCH /v1/deploy_templates/{template}":                 {"baremetal:deploy_template:update", TargetNone},
	"DELETE /v1/deploy_templates/{template}":                {"baremetal:deploy_template:delete", TargetNone},
	// Inspection rules (1.96): Ironic master's rule_policies.
	"GET /v1/inspection_rules":           {"baremetal:inspection_rule:get", TargetNone},
	"GET /v1/inspection_rules/{$}":       {"baremetal:inspection_rule:get", TargetNone},
	"GET /v1/inspection_rules/{rule}":    {"baremetal:inspection_rule:get", TargetNone},
	"POST /v1/inspection_rules":          {"baremetal:inspection_rule:create", TargetNone},
	"PATCH /v1/inspection_rules/{rule}":  {"baremetal:inspection_rule:update", TargetNone},
	"DELETE /v1/inspection_rules/{rule}": {"baremetal:inspection_rule:delete", TargetNone},

	// Runbooks (1.92, traits 1.112): the rules of runbook.py, checked
	// against the runbook's owner by the handler.
	"GET /v1/runbooks":                             {RuleRunbookList, TargetList},
	"GET /v1/runbooks/{$}":                         {RuleRunbookList, TargetList},
	"POST /v1/runbooks":                            {"baremetal:runbook:create", TargetNone},
	"GET /v1/runbooks/{runbook}":                   {RuleRunbookGet, TargetRunbook},
	"PATCH /v1/runbooks/{runbook}":                 {RuleRunbookUpdate, TargetRunbook},
	"DELETE /v1/runbooks/{runbook}":                {"baremetal:runbook:delete", TargetRunbook},
	"GET /v1/runbooks/{runbook}/traits":            {RuleRunbookGet, TargetRunbook},
	"PUT /v1/runbooks/{runbook}/traits":            {RuleRunbookUpdate, TargetRunbook},
	"PUT /v1/runbooks/{runbook}/traits/{trait}":    {RuleRunbookUpdate, TargetRunbook},
	"DELETE /v1/runbooks/{runbook}/traits":         {RuleRunbookUpdate, TargetRunbook},
	"DELETE /v1/runbooks/{runbook}/traits/{trait}": {RuleRunbookUpdate, TargetRunbook},
}

// IronicRoute returns the policy of an Ironic API route pattern. A
// pattern the table does not name gets a generic rule: under
// /v1/nodes/{node} the node's get (reads) or update (writes) rule, else
// the system reader for reads and the system admin for writes.
func IronicRoute(pattern string) Route {
	if r, ok := ironicRoutes[pattern]; ok {
		return r
	}
	method, path, _ := strings.Cut(pattern, " ")
	read := method == "GET" || method == "HEAD"
	if strings.HasPrefix(path, "/v1/nodes/{node}") {
		if read {
			return Route{RuleNodeGet, TargetNode}
		}
		return Route{"baremetal:node:update", TargetNode}
	}
	if read {
		return Route{ruleGenericRead, TargetNone}
	}
	return Route{ruleGenericWrite, TargetNone}
}
