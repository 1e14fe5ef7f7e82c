package auth

import (
	"testing"
)

// Personas as Keystone issues them: implied roles are in the token
// (admin ⇒ member ⇒ reader).
var (
	sysAdminC   = &Credentials{System: true, Roles: []string{"admin", "member", "reader"}}
	sysReaderC  = &Credentials{System: true, Roles: []string{"reader"}}
	aAdmin      = &Credentials{ProjectID: "pa", Roles: []string{"admin", "member", "reader"}}
	aMember     = &Credentials{ProjectID: "pa", Roles: []string{"member", "reader"}}
	aReader     = &Credentials{ProjectID: "pa", Roles: []string{"reader"}}
	bMember     = &Credentials{ProjectID: "pb", Roles: []string{"member", "reader"}}
	serviceUser = &Credentials{ProjectID: "ps", ProjectName: "service", ServiceProject: true, Roles: []string{"service"}}
)

func TestAllowed_IronicDefaults(t *testing.T) {
	ownedByA := Target{Owner: "pa"}
	leasedToA := Target{Owner: "pb", Lessee: "pa"}
	for _, tc := range []struct {
		rule string
		c    *Credentials
		t    Target
		want bool
	}{
		{"baremetal:node:create", sysAdminC, Target{}, true},
		{"baremetal:node:create", aAdmin, Target{}, false},
		{"baremetal:node:create", serviceUser, Target{}, false},
		{RuleNodeListAll, sysReaderC, Target{}, true},
		{RuleNodeListAll, aAdmin, Target{}, false},
		{"baremetal:node:list", aReader, Target{}, true},
		{RuleNodeGet, aReader, ownedByA, true},
		{RuleNodeGet, aReader, leasedToA, true},
		{RuleNodeGet, bMember, ownedByA, false},
		{RuleNodeGet, sysReaderC, ownedByA, true},
		{"baremetal:node:set_power_state", aReader, ownedByA, false},
		{"baremetal:node:set_power_state", aMember, ownedByA, true},
		{"baremetal:node:set_power_state", aMember, leasedToA, true},
		{"baremetal:node:set_provision_state", aMember, leasedToA, false}, // lessee needs admin
		{"baremetal:node:set_provision_state", aAdmin, leasedToA, true},
		{"baremetal:node:set_provision_state", aMember, ownedByA, true},
		{"baremetal:node:update:owner", aAdmin, ownedByA, false},
		{"baremetal:node:delete", aAdmin, ownedByA, false},
		{RuleNodeDeleteSelfOwned, aAdmin, ownedByA, true},
		{"baremetal:node:delete", sysAdminC, ownedByA, true},
		{"baremetal:node:delete", sysReaderC, ownedByA, false},
		{"baremetal:port:create", aAdmin, ownedByA, true},
		{"baremetal:port:create", aMember, ownedByA, false},
		{"baremetal:driver:get", aAdmin, Target{}, false},
		{"baremetal:driver:get", sysReaderC, Target{}, true},
		{"baremetal:conductor:get", serviceUser, Target{}, true},
		{"baremetal:node:update", serviceUser, ownedByA, true},
		{RuleAllocationGet, aReader, Target{Owner: "pa"}, true},
		{RuleAllocationGet, bMember, Target{Owner: "pa"}, false},
		{"baremetal:allocation:create", aMember, Target{}, true},
		{RuleAllocCreateRestricted, aMember, Target{}, false},
		{RuleShowPassword, sysAdminC, Target{}, true},
		{RuleShowPassword, sysReaderC, Target{}, false},
		{RuleShowPassword, aAdmin, ownedByA, false},
		{RuleShowPassword, &Credentials{Unrestricted: true}, Target{}, false},
		{RuleShowPassword, nil, Target{}, false},
		{RuleInspectorAdmin, sysAdminC, Target{}, true},
		{RuleInspectorAdmin, serviceUser, Target{}, true},
		{RuleInspectorAdmin, aAdmin, Target{}, false},
		{RuleInspectorAdmin, sysReaderC, Target{}, false},
		{"baremetal:node:delete", &Credentials{Unrestricted: true}, Target{}, true},
		{"baremetal:node:delete", nil, Target{}, true},
		{"no:such:rule", sysAdminC, Target{}, false},
		// An empty owner never matches an empty project.
		{RuleNodeGet, &Credentials{Roles: []string{"reader"}}, Target{}, false},
	} {
		if got := Allowed(tc.rule, tc.c, tc.t); got != tc.want {
			t.Errorf("Allowed(%s, %+v, %+v) = %v, want %v", tc.rule, tc.c, tc.t, got, tc.want)
		}
	}
}

func TestIronicRoute_EveryRuleExists(t *testing.T) {
	for pattern, r := range ironicRoutes {
		if !Known(r.Rule) {
			t.Errorf("%s: rule %q is not in the table", pattern, r.Rule)
		}
	}
	for _, tc := range []struct {
		pattern string
		want    Route
	}{
		{"GET /v1/nodes/{node}/not_yet_named", Route{RuleNodeGet, TargetNode}},
		{"GET /v1/nodes/{node}/firmware", Route{"baremetal:node:firmware:get", TargetNode}},
		{"POST /v1/nodes/{node}/not_yet_named", Route{"baremetal:node:update", TargetNode}},
		{"GET /v1/deploy_templates", Route{"baremetal:deploy_template:get", TargetNone}},
		{"GET /v1/runbooks", Route{RuleRunbookList, TargetList}},
		{"POST /v1/runbooks", Route{"baremetal:runbook:create", TargetNone}},
		{"GET /v1/not_yet_named", Route{ruleGenericRead, TargetNone}},
		{"POST /v1/not_yet_named", Route{ruleGenericWrite, TargetNone}},
	} {
		if got := IronicRoute(tc.pattern); got != tc.want {
			t.Errorf("IronicRoute(%q) = %+v, want %+v", tc.pattern, got, tc.want)
		}
	}
}
