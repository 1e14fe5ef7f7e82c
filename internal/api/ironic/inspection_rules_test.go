package ironic

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/ferrometal/ferro/internal/inspection/rules"
)

const v96 = "1.96"

// Below 1.96 /v1/inspection_rules answers as Ironic's api_version
// decorator: 404 for reads, 405 for writes, with its message.
func TestInspectionRules_BelowTheirVersion(t *testing.T) {
	e := newEnv(t)
	const msg = "The API version does not allow inspection rules"
	id := "5f1b1c3e-8a1e-4e35-9d43-0a9d6f4b2c11"
	for _, tc := range []struct {
		method, path string
		want         int
	}{
		{"GET", "/v1/inspection_rules", 404},
		{"GET", "/v1/inspection_rules/" + id, 404},
		{"POST", "/v1/inspection_rules", 405},
		{"PATCH", "/v1/inspection_rules/" + id, 405},
		{"DELETE", "/v1/inspection_rules/" + id, 405},
		// The version is checked before the identifier.
		{"DELETE", "/v1/inspection_rules/not-a-uuid", 405},
	} {
		if f := e.must(tc.want, tc.method, tc.path, "1.95", map[string]any{"actions": []any{}}).fault(t); f["faultstring"] != msg {
			t.Errorf("%s %s at 1.95: %v", tc.method, tc.path, f)
		}
	}
	if _, ok := e.must(200, "GET", "/v1", "1.95", nil).json(t)["inspection_rules"]; ok {
		t.Error("GET /v1 at 1.95 links inspection_rules")
	}
	if _, ok := e.must(200, "GET", "/v1", v96, nil).json(t)["inspection_rules"]; !ok {
		t.Error("GET /v1 at 1.96 does not link inspection_rules")
	}
}

func TestInspectionRules_CRUD(t *testing.T) {
	e := newEnv(t)
	rule := map[string]any{
		"description": "set the BMC",
		"priority":    50,
		"conditions":  []any{map[string]any{"op": "eq", "args": []any{"{inventory[system_vendor][manufacturer]}", "Dell"}}},
		"actions":     []any{map[string]any{"op": "set-attribute", "args": map[string]any{"path": "/driver", "value": "idrac"}}},
	}
	r := e.must(201, "POST", "/v1/inspection_rules", v96, rule)
	got := r.json(t)
	id := str(got, "uuid")
	if loc := r.header.Get("Location"); !strings.HasSuffix(loc, "/v1/inspection_rules/"+id) {
		t.Errorf("Location %q", loc)
	}
	for k, want := range map[string]string{"description": "set the BMC", "priority": "50", "sensitive": "false", "phase": "main",
		"conditions": "[map[args:[{inventory[system_vendor][manufacturer]} Dell] op:eq]]",
		"actions":    "[map[args:map[path:/driver value:idrac] op:set-attribute]]",
		"updated_at": "<nil>"} {
		if fmt.Sprint(got[k]) != want {
			t.Errorf("created %s = %v, want %s", k, got[k], want)
		}
	}
	if got["created_at"] == nil || got["links"] == nil {
		t.Errorf("created %v", got)
	}

	// The list shows the defaults, ?detail and ?fields more.
	list := e.must(200, "GET", "/v1/inspection_rules", v96, nil).json(t)["inspection_rules"].([]any)
	if len(list) != 1 || fmt.Sprint(keysOf(list[0].(map[string]any))) != "[description links phase priority uuid]" {
		t.Errorf("list %v", list)
	}
	detail := e.must(200, "GET", "/v1/inspection_rules?detail=true", v96, nil).json(t)["inspection_rules"].([]any)
	if _, ok := detail[0].(map[string]any)["actions"]; !ok {
		t.Errorf("detail %v", detail)
	}
	one := e.must(200, "GET", "/v1/inspection_rules/"+id+"?fields=uuid,actions", v96, nil).json(t)
	if fmt.Sprint(keysOf(one)) != "[actions links uuid]" {
		t.Errorf("fields %v", one)
	}
	if n := len(e.must(200, "GET", "/v1/inspection_rules?phase=other", v96, nil).json(t)["inspection_rules"].([]any)); n != 0 {
		t.Errorf("phase=other lists %d", n)
	}
	// /detail is an identifier, not a list.
	e.must(400, "GET", "/v1/inspection_rules/detail", v96, nil)

	// The rule engine reads what the API stored.
	stored, err := e.store.GetInspectionRule(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := rules.FromStored(stored); err != nil {
		t.Errorf("stored rule does not parse: %v", err)
	}

	patched := e.must(200, "PATCH", "/v1/inspection_rules/"+id, v96, []map[string]any{
		{"op": "replace", "path": "/priority", "value": 60}, {"op": "remove", "path": "/description"}}).json(t)
	if fmt.Sprint(patched["priority"]) != "60" || patched["description"] != nil || patched["updated_at"] == nil {
		t.Errorf("patched %v", patched)
	}
	e.must(204, "DELETE", "/v1/inspection_rules/"+id, v96, nil)
	if f := e.must(404, "GET", "/v1/inspection_rules/"+id, v96, nil).fault(t); f["faultstring"] != "Rule "+id+" could not be found." {
		t.Errorf("after delete: %v", f)
	}
	e.must(404, "DELETE", "/v1/inspection_rules/"+id, v96, nil)
}

// A sensitive rule shows neither conditions nor actions, in every view,
// and cannot be made not sensitive.
func TestInspectionRules_Sensitive(t *testing.T) {
	e := newEnv(t)
	rule := map[string]any{"sensitive": true, "actions": []any{
		map[string]any{"op": "set-attribute", "args": map[string]any{"path": "/driver_info/ipmi_password", "value": "secret"}}}}
	created := e.must(201, "POST", "/v1/inspection_rules", v96, rule).json(t)
	id := str(created, "uuid")
	if created["actions"] != nil || created["conditions"] != nil {
		t.Errorf("created %v", created)
	}
	for _, path := range []string{"/v1/inspection_rules/" + id, "/v1/inspection_rules/" + id + "?fields=actions"} {
		if got := e.must(200, "GET", path, v96, nil).json(t); got["actions"] != nil || strings.Contains(fmt.Sprint(got), "secret") {
			t.Errorf("%s: %v", path, got)
		}
	}
	if body := e.must(200, "GET", "/v1/inspection_rules?detail=true", v96, nil).body; strings.Contains(string(body), "secret") {
		t.Errorf("detail list shows the secret: %s", body)
	}
	f := e.must(400, "PATCH", "/v1/inspection_rules/"+id, v96, []map[string]any{{"op": "replace", "path": "/sensitive", "value": false}}).fault(t)
	if f["faultstring"] != "Couldn't apply patch '[{'op': 'replace', 'path': '/sensitive', 'value': False}]'. Reason: Inspection rules cannot have the sensitive flag unset." {
		t.Errorf("unset sensitive: %v", f)
	}
	e.must(200, "PATCH", "/v1/inspection_rules/"+id, v96, []map[string]any{{"op": "replace", "path": "/priority", "value": 3}})
}

// Bad rules are 400 with Ironic's words: the request schema first, then
// validate_rule's checks of operators, arguments, phase and priority.
func TestInspectionRules_Validation(t *testing.T) {
	e := newEnv(t)
	act := []any{map[string]any{"op": "fail", "args": map[string]any{"msg": "no"}}}
	for _, tc := range []struct {
		name string
		body any
		want string
	}{
		{"no actions", map[string]any{"conditions": []any{}}, "Schema error: 'actions' is a required property"},
		{"empty actions", map[string]any{"actions": []any{}}, "Schema error: "},
		{"unknown property", map[string]any{"actions": act, "scope": "x"}, "Schema error: Additional properties are not allowed ('scope' was unexpected)"},
		{"unknown action", map[string]any{"actions": []any{map[string]any{"op": "explode", "args": map[string]any{}}}}, "Schema error: "},
		{"unknown condition", map[string]any{"actions": act, "conditions": []any{map[string]any{"op": "bigger", "args": []any{1, 2}}}}, "Schema error: "},
		{"action arguments", map[string]any{"actions": []any{map[string]any{"op": "fail", "args": map[string]any{}}}}, "Invalid parameters for action operator fail: "},
		{"condition arguments", map[string]any{"actions": act, "conditions": []any{map[string]any{"op": "eq", "args": map[string]any{"nope": 1}}}}, "Invalid parameters for condition operator eq: "},
		{"priority", map[string]any{"actions": act, "priority": 10000}, "Priority must be between 0 and 9999 for user-defined rules."},
		{"negative priority", map[string]any{"actions": act, "priority": -1}, "Schema error: -1 is less than the minimum of 0"},
		{"phase", map[string]any{"actions": act, "phase": "late"}, "Invalid phase: late. Valid phases are: main"},
		{"two errors", map[string]any{"actions": act, "phase": "late", "priority": 10000}, "Multiple validation errors occurred: "},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := e.must(400, "POST", "/v1/inspection_rules", v96, tc.body).fault(t)
			if fs, _ := f["faultstring"].(string); !strings.HasPrefix(fs, tc.want) {
				t.Errorf("faultstring %q, want prefix %q", fs, tc.want)
			}
		})
	}
	if n := len(e.must(200, "GET", "/v1/inspection_rules", v96, nil).json(t)["inspection_rules"].([]any)); n != 0 {
		t.Errorf("%d rules stored from bad requests", n)
	}

	id := str(e.must(201, "POST", "/v1/inspection_rules", v96, map[string]any{"actions": act}).json(t), "uuid")
	for _, tc := range []struct {
		name  string
		patch []map[string]any
		want  string
	}{
		{"schema of the patched rule", []map[string]any{{"op": "replace", "path": "/priority", "value": "high"}}, "Schema error for patch: "},
		{"validation of the patched rule", []map[string]any{{"op": "replace", "path": "/priority", "value": 10000}}, "Priority must be between 0 and 9999"},
		{"no actions", []map[string]any{{"op": "remove", "path": "/actions"}}, "Schema error for patch: 'actions' is a required property"},
		{"uuid", []map[string]any{{"op": "replace", "path": "/uuid", "value": "5f1b1c3e-8a1e-4e35-9d43-0a9d6f4b2c11"}}, "'/uuid' is an internal attribute"},
	} {
		t.Run("PATCH "+tc.name, func(t *testing.T) {
			f := e.must(400, "PATCH", "/v1/inspection_rules/"+id, v96, tc.patch).fault(t)
			if fs, _ := f["faultstring"].(string); !strings.HasPrefix(fs, tc.want) {
				t.Errorf("faultstring %q, want prefix %q", fs, tc.want)
			}
		})
	}
	if f := e.must(400, "PATCH", "/v1/inspection_rules/nope", v96, []map[string]any{}).fault(t); f["faultstring"] != "Expected UUID for inspection_rule_uuid: nope" {
		t.Errorf("PATCH of a name: %v", f)
	}
	if f := e.must(400, "GET", "/v1/inspection_rules/nope", v96, nil).fault(t); f["faultstring"] != "Schema error: 'nope' is not a 'uuid'" {
		t.Errorf("GET of a name: %v", f)
	}
	if f := e.must(400, "GET", "/v1/inspection_rules?sort_key=actions", v96, nil).fault(t); !strings.Contains(fmt.Sprint(f["faultstring"]), "actions") {
		t.Errorf("sort by actions: %v", f)
	}
	e.must(200, "GET", "/v1/inspection_rules?sort_key=priority&sort_dir=desc", v96, nil)
	e.must(409, "POST", "/v1/inspection_rules", v96, map[string]any{"uuid": id, "actions": act})
}

func keysOf(m map[string]any) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// The requests of ironic-tempest-plugin 3.1.0's TestInspectionRules and
// TestInspectionRulesNegative, as it sends them.
func TestInspectionRules_TempestPlugin(t *testing.T) {
	e := newEnv(t)
	payload := func(kv ...any) map[string]any {
		p := map[string]any{"description": "Inspection rule to log node UUID", "conditions": []any{},
			"actions": []any{map[string]any{"op": "log", "args": map[string]any{"msg": "Node with UUID {node.uuid} is being inspected"}}},
			"phase":   "main", "priority": 0, "sensitive": false}
		for i := 0; i < len(kv); i += 2 {
			p[kv[i].(string)] = kv[i+1]
		}
		return p
	}
	id := "0d7b8f8e-3c2a-4e1b-9a57-1c2d3e4f5a6b"
	e.must(201, "POST", "/v1/inspection_rules", v96, payload("sensitive", true, "uuid", id))
	got := e.must(200, "GET", "/v1/inspection_rules/"+id, v96, nil).json(t)
	if got["sensitive"] != true || got["conditions"] != nil || got["actions"] != nil {
		t.Errorf("sensitive: %v", got)
	}

	conds := []any{map[string]any{"op": "eq", "args": []any{"{inventory.system.product_name}", "{item}"},
		"loop": []any{"product_name_1", "product_name_2", "product_name_3"}, "multiple": "any"}}
	acts := []any{map[string]any{"op": "set-attribute", "args": []any{"{item[path]}", "{item[value]}"},
		"loop": []any{map[string]any{"path": "/driver_info/ipmi_username", "value": "admin"},
			map[string]any{"path": "/driver_info/ipmi_password", "value": "password"},
			map[string]any{"path": "/driver_info/ipmi_address", "value": "{inventory[bmc_address]}"}}}}
	created := e.must(201, "POST", "/v1/inspection_rules", v96, payload("conditions", conds, "actions", acts)).json(t)
	if fmt.Sprint(created["conditions"]) != fmt.Sprint(conds) || fmt.Sprint(created["actions"]) != fmt.Sprint(acts) {
		t.Errorf("loops: %v %v", created["conditions"], created["actions"])
	}

	rule := e.must(201, "POST", "/v1/inspection_rules", v96, payload()).json(t)
	newConds := []any{map[string]any{"op": "eq", "args": []any{"{{ inventory.cpu.count }}", 8}}}
	newActs := []any{map[string]any{"op": "set-attribute", "args": []any{"{{ /properties/cpu_model }}", "cpu_xyz"}},
		map[string]any{"op": "log", "args": []any{"CPU model updated via rule."}}}
	patched := e.must(200, "PATCH", "/v1/inspection_rules/"+str(rule, "uuid"), v96, []map[string]any{
		{"op": "replace", "path": "/priority", "value": 200},
		{"op": "replace", "path": "/conditions", "value": newConds},
		{"op": "replace", "path": "/actions", "value": newActs}}).json(t)
	if fmt.Sprint(patched["priority"]) != "200" || fmt.Sprint(patched["conditions"]) != fmt.Sprint(newConds) || fmt.Sprint(patched["actions"]) != fmt.Sprint(newActs) {
		t.Errorf("patched: %v", patched)
	}

	for _, p := range []any{-1, 10000, 5000.50} {
		e.must(400, "POST", "/v1/inspection_rules", v96, payload("priority", p))
	}
	e.must(404, "DELETE", "/v1/inspection_rules/"+"11111111-2222-3333-4444-555555555555", v96, nil)
}
