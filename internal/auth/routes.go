package auth

import (
	"slices"
	"strings"
)

// TargetKind says what object a route's rule is checked against.
type TargetKind int

const (
	// TargetNone: the credentials alone decide.
	TargetNone TargetKind = iota
	// TargetNode: the path's {node}.
	TargetNode
	// TargetPort: the node of the path's {port}.
	TargetPort
	// TargetPortgroup: the node of the path's {portgroup}.
	TargetPortgroup
	// TargetAllocation: the owner of the path's {allocation}.
	TargetAllocation
	// TargetList: the rule admits the caller; without the resource's
	// list_all rule the handler narrows the list to the caller's project.
	TargetList
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

// ironicRoutes maps the Ironic API's ServeMux patterns to Ironic's rules.
var ironicRoutes = map[string]Route{
	"GET /{$}":    {"baremetal:public", TargetNone},
	"GET /v1":     {"baremetal:public", TargetNone},
	"GET /v1/{$}": {"baremetal:public", TargetNone},

	"GET /v1/nodes":                                         {"baremetal:node:list", TargetList},
	"GET /v1/nodes/{$}":                                     {"baremetal:node:list", TargetList},
	"GET /v1/nodes/detail":                                  {"baremetal:node:list", TargetList},
	"GET /v1/nodes/validate":                                {"baremetal:node:validate", TargetNode},
	"POST /v1/nodes":                                        {"baremetal:node:create", TargetNone},
	"GET /v1/nodes/{node}":                                  {RuleNodeGet, TargetNode},
	"PATCH /v1/nodes/{node}":                                {"baremetal:node:update", TargetNode},
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
	"GET /v1/nodes/{node}/states/console":                   {"baremetal:node:get_console", TargetNode},
	"GET /v1/nodes/{node}/bios":                             {"baremetal:node:bios:get", TargetNode},
	"GET /v1/nodes/{node}/bios/{setting}":                   {"baremetal:node:bios:get", TargetNode},
	"GET /v1/nodes/{node}/vifs":                             {"baremetal:node:vif:list", TargetNode},
	"GET /v1/nodes/{node}/allocation":                       {RuleAllocationGet, TargetNode},
	"DELETE /v1/nodes/{node}/allocation":                    {"baremetal:allocation:delete", TargetNode},
	"GET /v1/nodes/{node}/ports":                            {RulePortGet, TargetNode},
	"GET /v1/nodes/{node}/ports/detail":                     {RulePortGet, TargetNode},
	"GET /v1/nodes/{node}/portgroups":                       {RulePortgroupGet, TargetNode},
	"GET /v1/nodes/{node}/portgroups/detail":                {RulePortgroupGet, TargetNode},

	"GET /v1/ports":           {"baremetal:port:list", TargetList},
	"GET /v1/ports/{$}":       {"baremetal:port:list", TargetList},
	"GET /v1/ports/detail":    {"baremetal:port:list", TargetList},
	"POST /v1/ports":          {"baremetal:port:create", TargetNone},
	"GET /v1/ports/{port}":    {RulePortGet, TargetPort},
	"PATCH /v1/ports/{port}":  {"baremetal:port:update", TargetPort},
	"DELETE /v1/ports/{port}": {"baremetal:port:delete", TargetPort},

	"GET /v1/portgroups":                          {"baremetal:portgroup:list", TargetList},
	"GET /v1/portgroups/{$}":                      {"baremetal:portgroup:list", TargetList},
	"GET /v1/portgroups/detail":                   {"baremetal:portgroup:list", TargetList},
	"POST /v1/portgroups":                         {"baremetal:portgroup:create", TargetNone},
	"GET /v1/portgroups/{portgroup}":              {RulePortgroupGet, TargetPortgroup},
	"PATCH /v1/portgroups/{portgroup}":            {"baremetal:portgroup:update", TargetPortgroup},
	"DELETE /v1/portgroups/{portgroup}":           {"baremetal:portgroup:delete", TargetPortgroup},
	"GET /v1/portgroups/{portgroup}/ports":        {RulePortGet, TargetPortgroup},
	"GET /v1/portgroups/{portgroup}/ports/detail": {RulePortGet, TargetPortgroup},

	"GET /v1/allocations":                 {"baremetal:allocation:list", TargetList},
	"GET /v1/allocations/{$}":             {"baremetal:allocation:list", TargetList},
	"POST /v1/allocations":                {"baremetal:allocation:create", TargetNone},
	"GET /v1/allocations/{allocation}":    {RuleAllocationGet, TargetAllocation},
	"PATCH /v1/allocations/{allocation}":  {"baremetal:allocation:update", TargetAllocation},
	"DELETE /v1/allocations/{allocation}": {"baremetal:allocation:delete", TargetAllocation},

	"GET /v1/drivers":                     {"baremetal:driver:get", TargetNone},
	"GET /v1/drivers/{$}":                 {"baremetal:driver:get", TargetNone},
	"GET /v1/drivers/{driver}":            {"baremetal:driver:get", TargetNone},
	"GET /v1/drivers/{driver}/properties": {"baremetal:driver:get_properties", TargetNone},
	"GET /v1/conductors":                  {"baremetal:conductor:get", TargetNone},
	"GET /v1/conductors/{$}":              {"baremetal:conductor:get", TargetNone},
	"GET /v1/conductors/{hostname}":       {"baremetal:conductor:get", TargetNone},
	"GET /v1/chassis":                     {"baremetal:chassis:get", TargetNone},
	"GET /v1/chassis/{$}":                 {"baremetal:chassis:get", TargetNone},
	"GET /v1/chassis/{chassis}":           {"baremetal:chassis:get", TargetNone},
	"GET /v1/shards":                      {"baremetal:shards:get", TargetNone},
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

// IronicPatterns lists the Ironic API route patterns the policy table names, sorted.
func IronicPatterns() []string {
	out := make([]string, 0, len(ironicRoutes))
	for p := range ironicRoutes {
		out = append(out, p)
	}
	slices.Sort(out)
	return out
}
