package ironic

import (
	"encoding/json"
	"fmt"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/ferrometal/ferro/internal/auth"
)

const (
	v92  = "1.92"
	v112 = "1.112"
)

var runbookSteps = []any{map[string]any{"interface": "bios", "step": "apply_configuration", "args": map[string]any{}, "order": 1}}

// Below 1.92 /v1/runbooks answers as Ironic's RunbooksController._route:
// webob's 404 for reads, 405 for writes; the traits below 1.112 webob's 404.
func TestRunbooks_BelowTheirVersions(t *testing.T) {
	e := newEnv(t)
	e.must(201, "POST", "/v1/runbooks", v92, map[string]any{"name": "CUSTOM_A", "steps": runbookSteps})
	for _, tc := range []struct {
		method, path, version string
		want                  int
		msg                   string
	}{
		{"GET", "/v1/runbooks", "1.91", 404, "The API version does not allow runbooks"},
		{"GET", "/v1/runbooks/CUSTOM_A", "1.91", 404, "The API version does not allow runbooks"},
		{"POST", "/v1/runbooks", "1.91", 405, "The API version does not allow runbooks"},
		{"PATCH", "/v1/runbooks/CUSTOM_A", "1.82", 405, "The API version does not allow runbooks"},
		{"DELETE", "/v1/runbooks/CUSTOM_A", "1.91", 405, "The API version does not allow runbooks"},
		{"GET", "/v1/runbooks/CUSTOM_A/traits", "1.91", 404, "The API version does not allow runbooks"},
		{"PUT", "/v1/runbooks/CUSTOM_A/traits/CUSTOM_X", "1.91", 405, "The API version does not allow runbooks"},
		{"GET", "/v1/runbooks/CUSTOM_A/traits", "1.111", 404, "The API version does not allow runbook traits"},
		{"PUT", "/v1/runbooks/CUSTOM_A/traits/CUSTOM_X", "1.111", 404, "The API version does not allow runbook traits"},
		{"DELETE", "/v1/runbooks/CUSTOM_A/traits", "1.111", 404, "The API version does not allow runbook traits"},
	} {
		r := e.must(tc.want, tc.method, tc.path, tc.version, map[string]any{"name": "CUSTOM_B", "steps": runbookSteps})
		if f := r.fault(t); f["description"] != tc.msg {
			t.Errorf("%s %s at %s: %v", tc.method, tc.path, tc.version, f)
		}
	}
	if _, ok := e.must(200, "GET", "/v1", "1.91", nil).json(t)["runbooks"]; ok {
		t.Error("GET /v1 at 1.91 links runbooks")
	}
	if _, ok := e.must(200, "GET", "/v1", v92, nil).json(t)["runbooks"]; !ok {
		t.Error("GET /v1 at 1.92 does not link runbooks")
	}
	// Nothing was written below the version.
	if _, err := e.store.GetRunbook(t.Context(), "CUSTOM_B"); err == nil {
		t.Error("a create below 1.92 stored a runbook")
	}
}

func TestRunbooks_CRUD(t *testing.T) {
	e := newEnv(t)
	id := "8f0a5a2c-3c63-4a8e-9a7d-7f6e1a2b3c4d"
	r := e.must(201, "POST", "/v1/runbooks", v92, map[string]any{"name": "CUSTOM_WIPE", "uuid": id,
		"steps":           []any{map[string]any{"interface": "deploy", "step": "erase_devices", "args": map[string]any{"password": "x"}, "order": "2"}},
		"disable_ramdisk": true, "extra": map[string]any{"k": "v"}})
	if loc := r.header.Get("Location"); !strings.HasSuffix(loc, "/v1/runbooks/"+id) {
		t.Errorf("Location %q", loc)
	}
	got := r.json(t)
	for k, want := range map[string]string{"uuid": id, "name": "CUSTOM_WIPE", "disable_ramdisk": "true", "public": "false",
		"owner": "<nil>", "extra": "map[k:v]", "updated_at": "<nil>",
		// The order as an integer, the args' secrets masked as Ironic's step_sanitize.
		"steps": "[map[args:map[password:******] interface:deploy order:2 step:erase_devices]]"} {
		if fmt.Sprint(got[k]) != want {
			t.Errorf("created %s = %v, want %s", k, got[k], want)
		}
	}
	// description and traits are 1.112's.
	for _, k := range []string{"description", "traits"} {
		if _, ok := got[k]; ok {
			t.Errorf("1.92 shows %s", k)
		}
	}
	e.must(400, "GET", "/v1/runbooks/"+id+"?fields=traits", v92, nil)
	if got := e.must(200, "GET", "/v1/runbooks/"+id, v112, nil).json(t); fmt.Sprint(got["traits"], got["description"]) != "[] <nil>" {
		t.Errorf("at 1.112: traits %v description %v", got["traits"], got["description"])
	}

	e.must(201, "POST", "/v1/runbooks", v92, map[string]any{"name": "CUSTOM_A", "steps": runbookSteps})
	// By name, and no /detail: the word is a name.
	e.must(200, "GET", "/v1/runbooks/CUSTOM_WIPE", v92, nil)
	if f := e.must(404, "GET", "/v1/runbooks/detail", v92, nil).fault(t); f["faultstring"] != "Runbook detail could not be found." {
		t.Errorf("GET detail: %v", f)
	}
	list := e.must(200, "GET", "/v1/runbooks?sort_key=name", v92, nil).json(t)["runbooks"].([]any)
	if len(list) != 2 || fmt.Sprint(keysOf(list[0].(map[string]any))) != "[links name uuid]" || str(list[0].(map[string]any), "name") != "CUSTOM_A" {
		t.Errorf("list %v", list)
	}
	page := e.must(200, "GET", "/v1/runbooks?limit=1", v92, nil).json(t)
	if next, _ := page["next"].(string); !strings.Contains(next, "marker="+id) {
		t.Errorf("next %v", page["next"])
	}
	detail := e.must(200, "GET", "/v1/runbooks?detail=true", v92, nil).json(t)["runbooks"].([]any)
	if _, ok := detail[0].(map[string]any)["steps"]; !ok {
		t.Errorf("detail %v", detail)
	}
	e.must(400, "GET", "/v1/runbooks?sort_key=steps", v92, nil)
	e.must(400, "GET", "/v1/runbooks?sort_key=nope", v92, nil)
	e.must(200, "GET", "/v1/runbooks?sort_key=description", v92, nil)

	// PATCH: name, steps (added at an index), then delete.
	p := e.must(200, "PATCH", "/v1/runbooks/CUSTOM_WIPE", v92, []map[string]any{
		{"op": "replace", "path": "/name", "value": "wipe-disks"}, // any logical name on PATCH
		{"op": "add", "path": "/steps/1", "value": map[string]any{"interface": "raid", "step": "delete_configuration", "order": 3}},
	}).json(t)
	if fmt.Sprintf("%v %v", p["name"], p["steps"]) != "wipe-disks [map[args:map[password:******] interface:deploy order:2 step:erase_devices] map[args:map[] interface:raid order:3 step:delete_configuration]]" {
		t.Errorf("patched %v %v", p["name"], p["steps"])
	}
	if p["updated_at"] == nil {
		t.Error("no updated_at after PATCH")
	}
	// An empty owner is kept as Ironic keeps it, not shown as null.
	if p := e.must(200, "PATCH", "/v1/runbooks/wipe-disks", v92, []map[string]any{{"op": "add", "path": "/owner", "value": ""}}).json(t); p["owner"] != "" {
		t.Errorf("owner %#v after setting it to \"\"", p["owner"])
	}
	e.must(204, "DELETE", "/v1/runbooks/wipe-disks", v92, nil)
	if f := e.must(404, "GET", "/v1/runbooks/"+id, v92, nil).fault(t); f["faultstring"] != "Runbook "+id+" could not be found." {
		t.Errorf("after delete: %v", f)
	}
}

// Bad input gets Ironic's 400 (or 409) and changes nothing.
func TestRunbooks_BadInput(t *testing.T) {
	e := newEnv(t)
	e.must(201, "POST", "/v1/runbooks", v92, map[string]any{"name": "CUSTOM_A", "steps": runbookSteps})
	before := e.must(200, "GET", "/v1/runbooks?detail=true", v112, nil).body
	step := func(kv ...any) map[string]any {
		m := map[string]any{"interface": "bios", "step": "apply_configuration", "order": 1}
		for i := 0; i < len(kv); i += 2 {
			if kv[i+1] == nil {
				delete(m, kv[i].(string))
			} else {
				m[kv[i].(string)] = kv[i+1]
			}
		}
		return m
	}
	for _, tc := range []struct {
		name, version string
		body          map[string]any
		status        int
		fault         string
	}{
		{"no name", v92, map[string]any{"steps": runbookSteps}, 400, "Schema error for runbook: 'name' is a required property"},
		{"no steps", v92, map[string]any{"name": "CUSTOM_B"}, 400, "Schema error for runbook: 'steps' is a required property"},
		{"name null", v92, map[string]any{"name": nil, "steps": runbookSteps}, 400, "Schema error for runbook: None is not of type 'string'"},
		{"name not a trait", v92, map[string]any{"name": "invalid-name", "steps": runbookSteps}, 400,
			"Schema error for runbook: 'invalid-name' is not valid under any of the given schemas. Possible root cause: 'invalid-name' does not match '^CUSTOM_[A-Z0-9_]+$'"},
		{"name not logical", v112, map[string]any{"name": "a b", "steps": runbookSteps}, 400,
			`Schema error for runbook: 'a b' does not match '^[A-Za-z0-9\\-._~]+$'`},
		{"unknown field", v92, map[string]any{"name": "CUSTOM_B", "steps": runbookSteps, "description": "x"}, 400,
			"Schema error for runbook: Additional properties are not allowed ('description' was unexpected)"},
		{"traits on create", v112, map[string]any{"name": "b", "steps": runbookSteps, "traits": []any{"CUSTOM_X"}}, 400,
			"Schema error for runbook: Additional properties are not allowed ('traits' was unexpected)"},
		{"steps not a list", v92, map[string]any{"name": "CUSTOM_B", "steps": map[string]any{"key": "value"}}, 400, "Schema error for runbook: {'key': 'value'} is not of type 'array'"},
		{"no steps in list", v92, map[string]any{"name": "CUSTOM_B", "steps": []any{}}, 400, "Schema error for runbook: [] is too short"},
		{"bad step key", v92, map[string]any{"name": "CUSTOM_B", "steps": []any{map[string]any{"invalid_key": "value"}}}, 400,
			"Schema error for runbook: Additional properties are not allowed ('invalid_key' was unexpected)"},
		{"priority is a deploy step's", v92, map[string]any{"name": "CUSTOM_B", "steps": []any{step("priority", 1)}}, 400,
			"Schema error for runbook: Additional properties are not allowed ('priority' was unexpected)"},
		{"no order", v92, map[string]any{"name": "CUSTOM_B", "steps": []any{step("order", nil)}}, 400, "Schema error for runbook: 'order' is a required property"},
		{"negative order", v92, map[string]any{"name": "CUSTOM_B", "steps": []any{step("order", -1)}}, 400, "Schema error for runbook: -1 is not valid under any of the given schemas"},
		{"unknown interface", v92, map[string]any{"name": "CUSTOM_B", "steps": []any{step("interface", "boot")}}, 400,
			"Schema error for runbook: 'boot' is not one of ['vendor', 'power', 'management', 'firmware', 'deploy', 'bios', 'raid']"},
		{"duplicate steps", v92, map[string]any{"name": "CUSTOM_B", "steps": []any{step(), step("order", 2)}}, 400,
			"Deploy template invalid: Duplicate deploy steps. A template cannot have multiple deploy steps with the same interface and step. Duplicates: interface: bios, step: apply_configuration."},
		{"malformed uuid", v92, map[string]any{"name": "CUSTOM_B", "steps": runbookSteps, "uuid": "malformed:uuid"}, 400, "Expected UUID for uuid: malformed:uuid"},
		{"public not a boolean", v92, map[string]any{"name": "CUSTOM_B", "steps": runbookSteps, "public": "yes"}, 400, "Schema error for runbook: 'yes' is not of type 'boolean', 'null'"},
		{"owner under noauth", v92, map[string]any{"name": "CUSTOM_B", "steps": runbookSteps, "owner": "p1"}, 400,
			"Cannot create a runbook as a project scoped admin with an owner other than your own project."},
		{"duplicate name", v92, map[string]any{"name": "CUSTOM_A", "steps": runbookSteps}, 409, "A runbook with name CUSTOM_A already exists."},
	} {
		if f := e.must(tc.status, "POST", "/v1/runbooks", tc.version, tc.body).fault(t); f["faultstring"] != tc.fault {
			t.Errorf("%s: %q, want %q", tc.name, f["faultstring"], tc.fault)
		}
	}
	for _, tc := range []struct {
		name    string
		version string
		ops     []map[string]any
		status  int
		fault   string
	}{
		{"remove steps", v92, []map[string]any{{"op": "remove", "path": "/steps"}}, 400, "Schema error for patch: 'steps' is a required property"},
		{"remove the last step", v92, []map[string]any{{"op": "remove", "path": "/steps/0"}}, 400, "Schema error for patch: [] is too short"},
		{"remove name", v92, []map[string]any{{"op": "remove", "path": "/name"}}, 400, "Schema error for patch: 'name' is a required property"},
		{"empty name", v92, []map[string]any{{"op": "replace", "path": "/name", "value": ""}}, 400, "Schema error for patch: '' is too short"},
		{"uuid", v92, []map[string]any{{"op": "replace", "path": "/uuid", "value": "x"}}, 400,
			"Cannot patch /uuid. Only the following can be updated: disable_ramdisk, extra, name, owner, public, steps"},
		{"description below 1.112", v92, []map[string]any{{"op": "add", "path": "/description", "value": "x"}}, 400,
			"Cannot patch /description. Only the following can be updated: disable_ramdisk, extra, name, owner, public, steps"},
		{"traits", v112, []map[string]any{{"op": "add", "path": "/traits", "value": []any{}}}, 400,
			"Cannot patch /traits. Only the following can be updated: disable_ramdisk, extra, name, owner, public, steps, description"},
		{"owner of a public runbook", v92, []map[string]any{{"op": "add", "path": "/owner", "value": "p1"}, {"op": "add", "path": "/public", "value": true}}, 400,
			"Couldn't apply patch '[{'op': 'add', 'path': '/owner', 'value': 'p1'}, {'op': 'add', 'path': '/public', 'value': True}]'. Reason: There cannot be an owner for a public runbook"},
		{"bad step", v92, []map[string]any{{"op": "add", "path": "/steps/-", "value": map[string]any{"interface": "bios"}}}, 400, "Schema error for patch: 'step' is a required property"},
	} {
		if f := e.must(tc.status, "PATCH", "/v1/runbooks/CUSTOM_A", tc.version, tc.ops).fault(t); f["faultstring"] != tc.fault {
			t.Errorf("PATCH %s: %q, want %q", tc.name, f["faultstring"], tc.fault)
		}
	}
	for _, tc := range []struct{ method, path, body, fault string }{
		{"GET", "/v1/runbooks/a%20b", "", "Expected UUID or name for runbook_ident: a b"},
		{"GET", "/v1/runbooks/a%20b/traits", "", "Expected a logical name or UUID but received a b."},
		{"PUT", "/v1/runbooks/CUSTOM_A/traits/bad", "", "Schema error for trait: 'bad' is not valid under any of the given schemas. Possible root cause: 'bad' does not match '^CUSTOM_[A-Z0-9_]+$'"},
		{"PUT", "/v1/runbooks/CUSTOM_A/traits", `{"traits": ["CUSTOM_X", "bad"]}`, "Schema error for body: 'bad' is not valid under any of the given schemas. Possible root cause: 'bad' does not match '^CUSTOM_[A-Z0-9_]+$'"},
		{"PUT", "/v1/runbooks/CUSTOM_A/traits", `{"other": []}`, "Schema error for body: Additional properties are not allowed ('other' was unexpected)"},
		{"PUT", "/v1/runbooks/CUSTOM_A/traits", "", "A single runbook trait may be added via PUT /v1/runbooks/<runbook identifier>/traits/<trait> with no body, or all runbook traits may be replaced via PUT /v1/runbooks/<runbook identifier>/traits with the list of traits specified in the request body."},
		{"PUT", "/v1/runbooks/CUSTOM_A/traits/CUSTOM_X", `{"traits": []}`, "A single runbook trait may be added via PUT /v1/runbooks/<runbook identifier>/traits/<trait> with no body, or all runbook traits may be replaced via PUT /v1/runbooks/<runbook identifier>/traits with the list of traits specified in the request body."},
	} {
		var body any
		if tc.body != "" {
			body = tc.body
		}
		if f := e.must(400, tc.method, tc.path, v112, body).fault(t); f["faultstring"] != tc.fault {
			t.Errorf("%s %s: %q, want %q", tc.method, tc.path, f["faultstring"], tc.fault)
		}
	}
	if after := e.must(200, "GET", "/v1/runbooks?detail=true", v112, nil).body; string(after) != string(before) {
		t.Errorf("bad input changed the runbooks:\n%s\n%s", before, after)
	}
}

func TestRunbooks_Traits(t *testing.T) {
	e := newEnv(t)
	e.must(201, "POST", "/v1/runbooks", v112, map[string]any{"name": "wipe", "description": "disks", "steps": runbookSteps})
	traits := func() string {
		t.Helper()
		return fmt.Sprint(e.must(200, "GET", "/v1/runbooks/wipe/traits", v112, nil).json(t)["traits"])
	}
	if got := traits(); got != "[]" {
		t.Errorf("new runbook's traits %s", got)
	}
	r := e.must(204, "PUT", "/v1/runbooks/wipe/traits/CUSTOM_B", v112, nil)
	if loc := r.header.Get("Location"); !strings.HasSuffix(loc, "/v1/runbooks/wipe/traits/CUSTOM_B") {
		t.Errorf("Location %q", loc)
	}
	e.must(204, "PUT", "/v1/runbooks/wipe/traits/CUSTOM_B", v112, nil) // a trait it has: nothing changes
	e.must(204, "PUT", "/v1/runbooks/wipe/traits/CUSTOM_A", v112, nil)
	if got := traits(); got != "[CUSTOM_A CUSTOM_B]" {
		t.Errorf("after adding: %s", got)
	}
	e.must(204, "PUT", "/v1/runbooks/wipe/traits", v112, map[string]any{"traits": []any{"CUSTOM_Z", "HW_CPU_X86_AVX2", "CUSTOM_Z"}})
	if got := traits(); got != "[CUSTOM_Z HW_CPU_X86_AVX2]" {
		t.Errorf("after replacing: %s", got)
	}
	e.must(204, "DELETE", "/v1/runbooks/wipe/traits/CUSTOM_NOT_THERE", v112, nil)
	e.must(204, "DELETE", "/v1/runbooks/wipe/traits/CUSTOM_Z", v112, nil)
	if got := traits(); got != "[HW_CPU_X86_AVX2]" {
		t.Errorf("after removing one: %s", got)
	}
	if got := e.must(200, "GET", "/v1/runbooks/wipe", v112, nil).json(t); fmt.Sprintf("%v %v", got["traits"], got["description"]) != "[HW_CPU_X86_AVX2] disks" {
		t.Errorf("view: %v %v", got["traits"], got["description"])
	}
	e.must(204, "DELETE", "/v1/runbooks/wipe/traits", v112, nil)
	if got := traits(); got != "[]" {
		t.Errorf("after removing all: %s", got)
	}
	e.must(404, "GET", "/v1/runbooks/other/traits", v112, nil)
}

// A runbook replaces clean_steps when its trait matches the node's: by
// name below 1.112, by the runbook's traits from 1.112.
func TestRunbooks_ManualClean(t *testing.T) {
	e := newEnv(t)
	id := str(e.createNode(map[string]any{"name": "n1"}), "uuid")
	e.setState(id, "manageable")
	rb := str(e.must(201, "POST", "/v1/runbooks", v92, map[string]any{"name": "CUSTOM_CLEAN", "disable_ramdisk": true,
		"steps": []any{map[string]any{"interface": "bios", "step": "apply_configuration", "args": map[string]any{"settings": []any{}}, "order": 1}}}).json(t), "uuid")
	clean := func(version string, extra ...any) map[string]any {
		body := map[string]any{"target": "clean", "runbook": rb}
		for i := 0; i < len(extra); i += 2 {
			body[extra[i].(string)] = extra[i+1]
		}
		return body
	}
	for _, tc := range []struct {
		name, version string
		body          map[string]any
		status        int
		fault         string
	}{
		{"below 1.92", "1.91", clean("1.91"), 406, "Request not acceptable."},
		{"not a string", v92, clean(v92, "runbook", 5), 400, "Expected types <class 'NoneType'>, <class 'str'> for runbook: 5"},
		{"bad name", v92, clean(v92, "runbook", "a b"), 400, "Expected a logical name or UUID but received a b."},
		{"not there", v92, clean(v92, "runbook", "CUSTOM_NONE"), 404, "Runbook CUSTOM_NONE could not be found."},
		{"name is no node trait", v92, clean(v92), 400,
			"This runbook has not been approved for use on this node " + id + ". Please ask an administrator to add it to your node traits."},
		{"runbook has no traits", v112, clean(v112), 400,
			"Runbook " + rb + " has no traits configured. Please ask an administrator to add traits to the runbook."},
		{"other verb", v92, map[string]any{"target": "provide", "runbook": rb}, 400, ""},
	} {
		f := e.must(tc.status, "PUT", "/v1/nodes/"+id+"/states/provision", tc.version, tc.body).fault(t)
		if tc.fault != "" && f["faultstring"] != tc.fault {
			t.Errorf("%s: %q, want %q", tc.name, f["faultstring"], tc.fault)
		}
	}
	e.must(204, "PUT", "/v1/nodes/"+id+"/traits/CUSTOM_CLEAN", v92, nil)
	e.must(204, "PUT", "/v1/runbooks/"+rb+"/traits/CUSTOM_OTHER", v112, nil)
	for _, tc := range []struct {
		name, version string
		body          map[string]any
		fault         string
	}{
		{"with clean_steps", v92, clean(v92, "clean_steps", runbookSteps), "Please provide either \"clean_steps\" or a runbook, but not both."},
		{"no node trait among the runbook's", v112, clean(v112),
			"This runbook has not been approved for use on this node " + id + ". The node does not have any of the runbook's traits ['CUSTOM_OTHER']. Please ask an administrator to add a matching trait to your node."},
		{"another verb", v92, map[string]any{"target": "provide", "runbook": rb}, "disable_ramdisk is supported only with manual cleaning or servicing"},
	} {
		if f := e.must(400, "PUT", "/v1/nodes/"+id+"/states/provision", tc.version, tc.body).fault(t); f["faultstring"] != tc.fault {
			t.Errorf("%s: %q, want %q", tc.name, f["faultstring"], tc.fault)
		}
	}
	if calls := e.cond.Calls(); len(calls) != 0 {
		t.Fatalf("refused requests reached the conductor: %v", calls)
	}
	// 1.92: the node's trait is the runbook's name.
	e.must(202, "PUT", "/v1/nodes/"+id+"/states/provision", v92, clean(v92, "disable_ramdisk", false))
	// 1.112: one of the node's traits is one of the runbook's.
	e.must(204, "PUT", "/v1/nodes/"+id+"/traits/CUSTOM_OTHER", v92, nil)
	e.must(202, "PUT", "/v1/nodes/"+id+"/states/provision", v112, clean(v112, "runbook", "CUSTOM_CLEAN"))
	step := "[{'interface': 'bios', 'step': 'apply_configuration', 'args': {'settings': []}}]"
	if d := cmp.Diff([]string{"clean " + id + " " + step, "clean " + id + " " + step}, e.cond.Calls()); d != "" {
		t.Errorf("calls (-want +got):\n%s", d)
	}
}

// A runbook replaces service_steps as it replaces clean_steps; its
// disable_ramdisk is passed on from 1.108, and is refused (406) below.
func TestRunbooks_Service(t *testing.T) {
	e := newEnv(t)
	id := str(e.createNode(map[string]any{"name": "n1"}), "uuid")
	e.setState(id, "active")
	rb := str(e.must(201, "POST", "/v1/runbooks", v92, map[string]any{"name": "CUSTOM_SVC", "disable_ramdisk": true,
		"steps": []any{map[string]any{"interface": "vendor", "step": "log_passthrough", "args": map[string]any{}, "order": 1}}}).json(t), "uuid")
	e.must(204, "PUT", "/v1/nodes/"+id+"/traits/CUSTOM_SVC", v92, nil)
	service := map[string]any{"target": "service", "runbook": rb}
	for _, tc := range []struct {
		name, version string
		body          map[string]any
		status        int
		fault         string
	}{
		{"below 1.108 the runbook's disable_ramdisk", "1.107", service, 406, "disable_ramdisk is not acceptable in this API version"},
		{"with service_steps", "1.108", map[string]any{"target": "service", "runbook": rb, "service_steps": runbookSteps}, 400,
			"Please provide either \"service_steps\" or a runbook, but not both."},
	} {
		if f := e.must(tc.status, "PUT", "/v1/nodes/"+id+"/states/provision", tc.version, tc.body).fault(t); f["faultstring"] != tc.fault {
			t.Errorf("%s: %q, want %q", tc.name, f["faultstring"], tc.fault)
		}
	}
	if calls := e.cond.Calls(); len(calls) != 0 {
		t.Fatalf("refused requests reached the conductor: %v", calls)
	}
	e.must(202, "PUT", "/v1/nodes/"+id+"/states/provision", "1.108", service)
	want := "service " + id + " [{'interface': 'vendor', 'step': 'log_passthrough', 'args': {}}] disable_ramdisk=true"
	if d := cmp.Diff([]string{want}, e.cond.Calls()); d != "" {
		t.Errorf("calls (-want +got):\n%s", d)
	}
}

// asPersonaAt sends a request with credentials at a microversion.
func (e *env) asPersonaAt(c *auth.Credentials, version, method, path string, body any) resp {
	e.t.Helper()
	var b []byte
	if body != nil {
		b, _ = json.Marshal(body)
	}
	req := httptest.NewRequest(method, path, strings.NewReader(string(b)))
	req.Header.Set("X-OpenStack-Ironic-API-Version", version)
	req.Header.Set("Content-Type", "application/json")
	req = req.WithContext(auth.NewContext(req.Context(), c))
	rec := httptest.NewRecorder()
	e.h.ServeHTTP(rec, req)
	return resp{code: rec.Code, header: rec.Header(), body: rec.Body.Bytes()}
}

// The runbook rules of Ironic master's policy: a project sees its own and
// the public runbooks, only system members make one public or change its
// owner, a project manager creates runbooks of its project.
func TestRunbooks_Policy(t *testing.T) {
	e := newEnv(t)
	sysAdmin := &auth.Credentials{System: true, Roles: []string{"admin", "member", "reader"}}
	sysReader := &auth.Credentials{System: true, Roles: []string{"reader"}}
	manager := &auth.Credentials{ProjectID: "pa", Roles: []string{"manager", "member", "reader"}}
	admin := &auth.Credentials{ProjectID: "pa", Roles: []string{"admin", "member", "reader"}}
	member := &auth.Credentials{ProjectID: "pa", Roles: []string{"member", "reader"}}
	other := &auth.Credentials{ProjectID: "pb", Roles: []string{"manager", "member", "reader"}}
	body := func(name string, kv ...any) map[string]any {
		m := map[string]any{"name": name, "steps": runbookSteps}
		for i := 0; i < len(kv); i += 2 {
			m[kv[i].(string)] = kv[i+1]
		}
		return m
	}
	public := str(e.asPersonaAt(sysAdmin, v92, "POST", "/v1/runbooks", body("CUSTOM_PUBLIC", "public", true)).json(t), "uuid")
	e.asPersonaAt(sysAdmin, v92, "POST", "/v1/runbooks", body("CUSTOM_B_OWNED", "owner", "pb"))
	// A project admin (no manager role) may not create one; a manager
	// creates one its project owns, never public or another's.
	e.mustPersona(403, admin, "POST", "/v1/runbooks", body("CUSTOM_X"), "Access was denied to the following resource: baremetal:runbook:create")
	e.mustPersona(400, manager, "POST", "/v1/runbooks", body("CUSTOM_X", "public", true), "Cannot create a public runbook as a project scoped admin.")
	e.mustPersona(400, manager, "POST", "/v1/runbooks", body("CUSTOM_X", "owner", "pb"), "Cannot create a runbook as a project scoped admin with an owner other than your own project.")
	mine := e.asPersonaAt(manager, v92, "POST", "/v1/runbooks", body("CUSTOM_MINE")).json(t)
	if mine["owner"] != "pa" {
		t.Fatalf("manager's runbook: owner %v", mine["owner"])
	}
	names := func(c *auth.Credentials, query string) string {
		t.Helper()
		r := e.asPersonaAt(c, v92, "GET", "/v1/runbooks?sort_key=name"+query, nil)
		var out []string
		for _, rb := range r.json(t)["runbooks"].([]any) {
			out = append(out, str(rb.(map[string]any), "name"))
		}
		return strings.Join(out, " ")
	}
	if got := names(member, ""); got != "CUSTOM_MINE CUSTOM_PUBLIC" {
		t.Errorf("member lists %s", got)
	}
	if got := names(sysReader, ""); got != "CUSTOM_B_OWNED CUSTOM_MINE CUSTOM_PUBLIC" {
		t.Errorf("system reader lists %s", got)
	}
	if got := names(sysReader, "&project=true"); got != "CUSTOM_PUBLIC" {
		t.Errorf("system reader lists with project=true %s", got)
	}
	e.mustPersona(403, member, "GET", "/v1/runbooks?project=true", nil, "Access was denied to the following resource: baremetal:runbook:list_all")
	// A public runbook is seen by anyone; another project's is not.
	e.mustPersona(200, member, "GET", "/v1/runbooks/CUSTOM_PUBLIC", nil, "")
	e.mustPersona(403, member, "GET", "/v1/runbooks/CUSTOM_B_OWNED", nil, "Access was denied to the following resource: %(resource)s")
	if f := e.asPersonaAt(member, v112, "GET", "/v1/runbooks/CUSTOM_PUBLIC/traits", nil).fault(t); f["faultstring"] != "Access was denied to the following resource: baremetal:runbook:get" {
		t.Errorf("member GET a public runbook's traits: %v", f)
	}
	// Updates: the owner's manager; public and owner only system members.
	e.mustPersona(403, member, "PATCH", "/v1/runbooks/CUSTOM_MINE", []map[string]any{{"op": "add", "path": "/extra/a", "value": 1}}, "Access was denied to the following resource: baremetal:runbook:update")
	e.mustPersona(200, manager, "PATCH", "/v1/runbooks/CUSTOM_MINE", []map[string]any{{"op": "add", "path": "/extra/a", "value": 1}}, "")
	e.mustPersona(403, other, "PATCH", "/v1/runbooks/CUSTOM_MINE", []map[string]any{{"op": "add", "path": "/extra/a", "value": 1}}, "Access was denied to the following resource: baremetal:runbook:update")
	e.mustPersona(403, manager, "PATCH", "/v1/runbooks/CUSTOM_MINE", []map[string]any{{"op": "replace", "path": "/public", "value": true}}, "Access was denied to the following resource: baremetal:runbook:update:public")
	e.mustPersona(403, manager, "PATCH", "/v1/runbooks/CUSTOM_MINE", []map[string]any{{"op": "replace", "path": "/owner", "value": "pb"}}, "Access was denied to the following resource: baremetal:runbook:update:owner")
	// Making it public clears its owner.
	p := e.asPersonaAt(sysAdmin, v92, "PATCH", "/v1/runbooks/CUSTOM_MINE", []map[string]any{{"op": "replace", "path": "/public", "value": true}}).json(t)
	if p["owner"] != nil || p["public"] != true {
		t.Errorf("made public: owner %v public %v", p["owner"], p["public"])
	}
	// And an owner may come back with public off, in one patch.
	p = e.asPersonaAt(sysAdmin, v92, "PATCH", "/v1/runbooks/CUSTOM_MINE", []map[string]any{
		{"op": "replace", "path": "/public", "value": false}, {"op": "replace", "path": "/owner", "value": "pa"}}).json(t)
	if p["owner"] != "pa" || p["public"] != false {
		t.Errorf("owned again: owner %v public %v", p["owner"], p["public"])
	}
	e.mustPersona(403, member, "DELETE", "/v1/runbooks/CUSTOM_MINE", nil, "Access was denied to the following resource: baremetal:runbook:delete")
	// Using one: baremetal:runbook:use, the owner's manager or a system
	// member — not a project member, not on a public runbook.
	node := str(e.createNode(map[string]any{"owner": "pa"}), "uuid")
	e.setState(node, "manageable")
	e.must(204, "PUT", "/v1/nodes/"+node+"/traits/CUSTOM_PUBLIC", v92, nil)
	e.mustPersona(403, admin, "PUT", "/v1/nodes/"+node+"/states/provision", map[string]any{"target": "clean", "runbook": public},
		"Access was denied to the following resource: baremetal:runbook:use")
	e.mustPersona(202, sysAdmin, "PUT", "/v1/nodes/"+node+"/states/provision", map[string]any{"target": "clean", "runbook": public}, "")
	e.mustPersona(204, sysAdmin, "DELETE", "/v1/runbooks/"+public, nil, "")
}

// mustPersona sends a request at 1.92 as c, wanting the status and, when
// given, the fault.
func (e *env) mustPersona(status int, c *auth.Credentials, method, path string, body any, fault string) {
	e.t.Helper()
	r := e.asPersonaAt(c, v92, method, path, body)
	if r.code != status {
		e.t.Fatalf("%s %s: status %d, want %d: %s", method, path, r.code, status, r.body)
	}
	if fault != "" {
		if f := r.fault(e.t); f["faultstring"] != fault {
			e.t.Errorf("%s %s: %q, want %q", method, path, f["faultstring"], fault)
		}
	}
}
