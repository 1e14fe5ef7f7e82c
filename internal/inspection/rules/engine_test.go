package rules

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/ferrometal/ferro/internal/baremetal"
	"github.com/ferrometal/ferro/internal/inspection/plan"
)

const nodeUUID = "1be26c0b-03f2-4d2e-ae87-c02d7f33c123"

func testEnv(t *testing.T) *Env {
	t.Helper()
	n, err := plan.New(baremetal.Node{UUID: nodeUUID, Name: "n1", Driver: "ipmi", ProvisionState: "inspect wait",
		Properties: baremetal.JSON{"cpus": json.Number("8"), "capabilities": "boot_mode:uefi"},
		DriverInfo: baremetal.JSON{"ipmi_password": "pw"},
		Interfaces: map[string]string{"boot": "ipxe"},
		Traits:     []string{"CUSTOM_OLD"}},
		[]baremetal.Port{{UUID: "0b3a1a4e-0000-4000-8000-000000000001", Address: "52:54:00:00:00:01", PXEEnabled: true}})
	if err != nil {
		t.Fatal(err)
	}
	return &Env{Node: n,
		Inventory: map[string]any{"bmc_address": "192.0.2.10", "cpu": map[string]any{"count": json.Number("32"), "architecture": "x86_64"},
			"interfaces": []any{map[string]any{"name": "eth0", "mac_address": "52:54:00:00:00:01"}},
			"secrets":    map[string]any{"bmc_password": "hunter2", "user": "admin"}},
		PluginData: map[string]any{"auto_discovered": true, "macs": []any{"52:54:00:00:00:01"}}}
}

func mustRule(t *testing.T, body string) *Rule {
	t.Helper()
	r, err := Parse([]byte(body), false)
	if err != nil {
		t.Fatalf("Parse(%s): %v", body, err)
	}
	if r.UUID == "" {
		r.UUID = "5e1d0f1c-0000-4000-8000-000000000001"
	}
	return r
}

func TestFormat(t *testing.T) {
	env := testEnv(t)
	r := &Rule{UUID: "u"}
	vs := r.vars(env)
	for _, tt := range []struct {
		in, want string
	}{
		{"{node.driver}", "ipmi"},
		{"{node.name}-{node.boot_interface}", "n1-ipxe"},
		{"{node.description}", "None"},
		{"{node.properties[cpus]}", "8"},
		{"{inventory[bmc_address]}", "192.0.2.10"},
		{"https://{inventory[bmc_address]}:443", "https://192.0.2.10:443"},
		{"{inventory[cpu][count]}", "32"},
		{"{inventory[interfaces][0][name]}", "eth0"},
		{"{inventory[cpu]}", "{'architecture': 'x86_64', 'count': 32}"},
		{"{plugin_data[auto_discovered]}", "True"},
		{"{plugin_data[macs]!r}", "['52:54:00:00:00:01']"},
		{"{inventory[secrets][bmc_password]}", "***"},
		{"{inventory[secrets]}", "{'bmc_password': '***', 'user': 'admin'}"},
		{"{{literal}} {inventory[cpu][architecture]}", "{literal} x86_64"},
		{"{inventory[cpu][count]:>5}|{inventory[cpu][count]:05d}|{inventory[cpu][architecture]:^8}", "   32|00032| x86_64 "},
		{"{inventory[interfaces][0][name][0]}", "e"},
	} {
		got, err := formatString(tt.in, vs)
		if err != nil || got != tt.want {
			t.Errorf("format(%q) = %q, %v; want %q", tt.in, got, err, tt.want)
		}
	}
	for _, tt := range []struct{ in, kind string }{
		{"{inventory[missing]}", "KeyError"},
		{"{nothing}", "KeyError"},
		{"{inventory.bmc_address}", "AttributeError"},
		{"{node[driver]}", "TypeError"},
		{"{node.no_such_field}", "AttributeError"},
		{"{inventory[interfaces][5]}", "IndexError"},
		{"{inventory[interfaces][x]}", "TypeError"},
		{"{}", "IndexError"},
		{"{0}", "IndexError"},
		{"a}b", "ValueError"},
		{"{a", "ValueError"},
		{"{inventory[cpu]:>5}", "TypeError"},
		{"{inventory[bmc_address]!x}", "ValueError"},
	} {
		_, err := formatString(tt.in, vs)
		fe, ok := err.(*formatError)
		if !ok || fe.kind != tt.kind {
			t.Errorf("format(%q): error %v, want %s", tt.in, err, tt.kind)
		}
	}
	// Without masking the secret shows.
	vs.mask = false
	if got, _ := formatString("{inventory[secrets][bmc_password]}", vs); got != "hunter2" {
		t.Errorf("unmasked: %q", got)
	}
}

// Interpolation as Ironic's: a value that cannot be formatted is kept as
// it is; a missing key in is-empty is None; nested objects and lists are
// formatted, keys too; non-strings are kept.
func TestInterpolate(t *testing.T) {
	env := testEnv(t)
	r := &Rule{UUID: "u"}
	vs := r.vars(env)
	got, err := r.interpolate(map[string]any{"{inventory[bmc_address]}": []any{"{inventory[cpu][count]}", json.Number("1"), nil, true,
		map[string]any{"k": "{inventory[missing]}"}}}, vs, "set-attribute", false)
	want := map[string]any{"192.0.2.10": []any{"32", json.Number("1"), nil, true, map[string]any{"k": "{inventory[missing]}"}}}
	if err != nil || !cmp.Equal(want, got) {
		t.Errorf("interpolate = %v, %v; want %v", got, err, want)
	}
	if v, _ := r.interpolate("{inventory[missing]}", vs, "is-empty", false); v != nil {
		t.Errorf("is-empty of a missing key: %#v", v)
	}
	// In a loop an item's replacement fields are formatted too.
	vs.item, vs.hasItem = map[string]any{"value": "{inventory[bmc_address]}"}, true
	if v, _ := r.interpolate("{item[value]}", vs, "set-attribute", true); v != "192.0.2.10" {
		t.Errorf("loop item: %#v", v)
	}
	strict := &Rule{UUID: "u", Strict: true}
	if _, err := strict.interpolate("{inventory[missing]}", vs, "set-attribute", false); err == nil ||
		!strings.Contains(err.Error(), "Invalid formatting variable key provided in value {inventory[missing]}: 'missing'") {
		t.Errorf("strict: %v", err)
	}
}

func TestConditions(t *testing.T) {
	for _, tt := range []struct {
		cond    string
		want    bool
		wantErr string
	}{
		{`{"op":"eq","args":{"values":["{node.driver}","ipmi"]}}`, true, ""},
		{`{"op":"!eq","args":{"values":["{node.driver}","ipmi"]}}`, false, ""},
		{`{"op":"!eq","args":{"values":["{node.driver}","redfish"]}}`, true, ""},
		{`{"op":"eq","args":{"values":["{inventory[cpu][count]}",32]}}`, false, ""}, // a string is not a number
		{`{"op":"eq","args":{"values":["{inventory[cpu][count]}",32],"force_strings":true}}`, true, ""},
		{`{"op":"eq","args":{"values":[1,1,1]}}`, true, ""},
		{`{"op":"eq","args":{"values":[1]}}`, true, ""},
		{`{"op":"lt","args":{"values":[1,2,3]}}`, true, ""},
		{`{"op":"lt","args":{"values":["a","b"]}}`, true, ""},
		{`{"op":"gt","args":{"values":[3,2,2]}}`, false, ""},
		{`{"op":"gt","args":{"values":["{inventory[cpu][count]}",16]}}`, false, "Failed to apply rule"},
		{`{"op":"eq","args":{"values":"x"}}`, false, "Inspection rule condition check failed. Reason: Failed to check condition: 'eq' on values: x: Expected list for 'values', got: str"},
		{`{"op":"eq","args":[["{node.driver}","ipmi"]]}`, true, ""}, // deprecated list args
		{`{"op":"is-empty","args":{"value":"{inventory[missing]}"}}`, true, ""},
		{`{"op":"is-empty","args":{"value":"{plugin_data[macs]}"}}`, false, ""},
		{`{"op":"is-empty","args":{"value":""}}`, true, ""},
		{`{"op":"in-net","args":{"address":"{inventory[bmc_address]}","subnet":"192.0.2.0/24"}}`, true, ""},
		{`{"op":"in-net","args":{"address":"{inventory[bmc_address]}","subnet":"10.0.0.0/8"}}`, false, ""},
		{`{"op":"in-net","args":{"address":"{inventory[bmc_address]}","subnet":"bogus"}}`, false, "invalid value"},
		{`{"op":"in-net","args":{"address":"not-an-ip","subnet":"10.0.0.0/8"}}`, false, "failed to detect a valid IP address"},
		{`{"op":"matches","args":{"value":"{inventory[cpu][architecture]}","regex":"x86"}}`, false, ""},
		{`{"op":"matches","args":{"value":"{inventory[cpu][architecture]}","regex":"x86.*"}}`, true, ""},
		{`{"op":"contains","args":{"value":"{inventory[cpu][architecture]}","regex":"86"}}`, true, ""},
		{`{"op":"contains","args":{"value":"x","regex":"("}}`, false, "invalid regular expression"},
		{`{"op":"one-of","args":{"value":"{node.driver}","values":["redfish","ipmi"]}}`, true, ""},
		{`{"op":"one-of","args":{"value":"{node.driver}"}}`, false, ""},
		{`{"op":"is-none","args":{"value":null}}`, true, ""},
		{`{"op":"is-none","args":{"value":"{node.description}"}}`, false, ""}, // formatted: the string "None"
		{`{"op":"is-true","args":{"value":"{plugin_data[auto_discovered]}"}}`, true, ""},
		{`{"op":"is-true","args":{"value":"yes"}}`, true, ""},
		{`{"op":"is-true","args":{"value":0}}`, false, ""},
		{`{"op":"is-false","args":{"value":"False"}}`, true, ""},
		{`{"op":"is-false","args":{"value":null}}`, true, ""},
		{`{"op":"is-false","args":{"value":1.5}}`, false, ""},
		// loops: item, and how multiple combines
		{`{"op":"eq","args":{"values":["{node.driver}","{item}"]},"loop":["redfish","ipmi"]}`, true, ""},
		{`{"op":"eq","args":{"values":["{node.driver}","{item}"]},"loop":["redfish","ipmi"],"multiple":"all"}`, false, ""},
		{`{"op":"eq","args":{"values":["{node.driver}","{item}"]},"loop":["ipmi","redfish"],"multiple":"last"}`, false, ""},
		{`{"op":"eq","args":{"values":["{node.driver}","{item}"]},"loop":["redfish","ipmi"],"multiple":"first"}`, true, ""},
		{`{"op":"eq","args":{"values":["{inventory[cpu][count]}","{item[n]}"]},"loop":{"n":32}}`, true, ""},
	} {
		env := testEnv(t)
		r := mustRule(t, `{"conditions":[`+tt.cond+`],"actions":[{"op":"add-trait","args":{"name":"CUSTOM_HIT"}}]}`)
		applied, err := Apply(context.Background(), []*Rule{r}, env, Sequential)
		if tt.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("%s: error %v, want %q", tt.cond, err, tt.wantErr)
			}
			continue
		}
		if err != nil || (len(applied) == 1) != tt.want {
			t.Errorf("%s: applied %v, %v; want %v", tt.cond, len(applied) == 1, err, tt.want)
		}
	}
}

func TestActions(t *testing.T) {
	for _, tt := range []struct {
		name    string
		actions string
		check   func(t *testing.T, env *Env)
		wantErr string
	}{
		{"set-attribute, slash and dot paths", `[{"op":"set-attribute","args":{"path":"/driver_info/ipmi_address","value":"{inventory[bmc_address]}"}},
			{"op":"set-attribute","args":{"path":"extra.rack.row","value":"r12"}}]`, func(t *testing.T, env *Env) {
			want(t, env.Node, []string{"driver_info", "ipmi_address"}, "192.0.2.10")
			want(t, env.Node, []string{"extra", "rack", "row"}, "r12")
		}, ""},
		{"set-attribute in a loop", `[{"op":"set-attribute","args":{"path":"{item[path]}","value":"{item[value]}"},
			"loop":[{"path":"/driver_info/ipmi_username","value":"admin"},{"path":"/driver_info/ipmi_address","value":"{inventory[bmc_address]}"}]}]`,
			func(t *testing.T, env *Env) {
				want(t, env.Node, []string{"driver_info", "ipmi_username"}, "admin")
				want(t, env.Node, []string{"driver_info", "ipmi_address"}, "192.0.2.10")
			}, ""},
		{"set-attribute of a field rules may not change", `[{"op":"set-attribute","args":{"path":"provision_state","value":"active"}}]`, nil,
			"Inspection rule action execution failed. Reason: Failed to set attribute provision_state with value active"},
		{"extend-attribute, unique", `[{"op":"extend-attribute","args":{"path":"/extra/tags","value":"a"}},
			{"op":"extend-attribute","args":{"path":"/extra/tags","value":"a","unique":true}}]`, func(t *testing.T, env *Env) {
			want(t, env.Node, []string{"extra", "tags"}, []any{"a"})
		}, ""},
		{"del-attribute", `[{"op":"del-attribute","args":{"path":"/properties/cpus"}}]`, func(t *testing.T, env *Env) {
			if _, ok := env.Node.Get([]string{"properties", "cpus"}); ok {
				t.Error("cpus still there")
			}
		}, ""},
		{"del-attribute of a missing key", `[{"op":"del-attribute","args":{"path":"/properties/nope"}}]`, nil, "Failed to delete attribute at /properties/nope"},
		{"capabilities: Ironic appends, a duplicate too", `[{"op":"set-capability","args":{"name":"boot_mode","value":"bios"}},
			{"op":"set-capability","args":{"name":"x","value":"{inventory[cpu][architecture]}"}},{"op":"unset-capability","args":{"name":"boot_mode"}}]`,
			func(t *testing.T, env *Env) { want(t, env.Node, []string{"properties", "capabilities"}, "x:x86_64") }, ""},
		{"set-capability of a non-string", `[{"op":"set-capability","args":{"name":"n","value":2}}]`, nil, "Failed to set capability n"},
		{"traits", `[{"op":"add-trait","args":{"name":"CUSTOM_NEW"}},{"op":"remove-trait","args":{"name":"CUSTOM_OLD"}},{"op":"remove-trait","args":{"name":"CUSTOM_NONE"}}]`,
			func(t *testing.T, env *Env) {
				if diff := cmp.Diff([]string{"CUSTOM_NEW"}, env.Node.Traits()); diff != "" {
					t.Errorf("traits (-want +got):\n%s", diff)
				}
			}, ""},
		{"plugin data", `[{"op":"set-plugin-data","args":{"path":"bmc.address","value":"{inventory[bmc_address]}"}},
			{"op":"extend-plugin-data","args":{"path":"bmc.seen","value":"x","unique":true}},
			{"op":"extend-plugin-data","args":{"path":"bmc.seen","value":"x","unique":true}},
			{"op":"unset-plugin-data","args":{"path":"auto_discovered"}},{"op":"unset-plugin-data","args":{"path":"nope.deeper"}}]`,
			func(t *testing.T, env *Env) {
				w := map[string]any{"address": "192.0.2.10", "seen": []any{"x"}}
				if diff := cmp.Diff(w, env.PluginData["bmc"]); diff != "" {
					t.Errorf("plugin_data.bmc (-want +got):\n%s", diff)
				}
				if _, ok := env.PluginData["auto_discovered"]; ok {
					t.Error("auto_discovered not unset")
				}
			}, ""},
		{"unset-plugin-data removes the emptied object", `[{"op":"set-plugin-data","args":{"path":"a.b","value":1}},{"op":"unset-plugin-data","args":{"path":"a.b"}}]`,
			func(t *testing.T, env *Env) {
				if _, ok := env.PluginData["a"]; ok {
					t.Errorf("a: %v", env.PluginData["a"])
				}
			}, ""},
		{"port by MAC and by UUID", `[{"op":"set-port-attribute","args":{"port_id":"52:54:00:00:00:01","path":"local_link_connection/switch_id","value":"aa:bb:cc:dd:ee:ff"}},
			{"op":"extend-port-attribute","args":{"port_id":"0b3a1a4e-0000-4000-8000-000000000001","path":"extra.tags","value":"t"}},
			{"op":"set-port-attribute","args":{"port_id":"52:54:00:00:00:01","path":"physical_network","value":"physnet1"}},
			{"op":"del-port-attribute","args":{"port_id":"52:54:00:00:00:01","path":"physical_network"}}]`,
			func(t *testing.T, env *Env) {
				p, _ := env.Node.PortFieldsOf("52:54:00:00:00:01")
				if p["local_link_connection"].(map[string]any)["switch_id"] != "aa:bb:cc:dd:ee:ff" || !cmp.Equal(p["extra"], map[string]any{"tags": []any{"t"}}) {
					t.Errorf("port %v", p)
				}
				if _, ok := p["physical_network"]; ok {
					t.Error("physical_network not deleted")
				}
			}, ""},
		{"unknown port", `[{"op":"set-port-attribute","args":{"port_id":"52:54:00:00:00:99","path":"extra/x","value":1}}]`, nil, "Port 52:54:00:00:00:99 could not be found."},
		{"log", `[{"op":"log","args":{"msg":"node {node.name}","level":"warning"}}]`, nil, ""},
		{"log at a level that is not one", `[{"op":"log","args":{"msg":"x","level":"loud"}}]`, nil, "Invalid log level: loud"},
		{"fail", `[{"op":"add-trait","args":{"name":"CUSTOM_A"}},{"op":"fail","args":{"msg":"no BMC on {node.name}"}}]`, nil,
			"Failed to inspect hardware. Reason: no BMC on {node.name}"}, // fail's msg is not formatted, as Ironic
	} {
		t.Run(tt.name, func(t *testing.T) {
			env := testEnv(t)
			r := mustRule(t, `{"actions":`+tt.actions+`}`)
			_, err := Apply(context.Background(), []*Rule{r}, env, Sequential)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("error %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if tt.check != nil {
				tt.check(t, env)
			}
		})
	}
}

func want(t *testing.T, n *plan.Node, path []string, v any) {
	t.Helper()
	got, ok := n.Get(path)
	if !ok || !cmp.Equal(v, got) {
		t.Errorf("%v = %#v, %v; want %#v", path, got, ok, v)
	}
}

// Rules run by priority, highest first; Sequential sees what earlier rules
// did, ConditionsFirst does not; a failure stops them with the rule's
// message.
func TestApply_OrderAndFailure(t *testing.T) {
	mk := func(uuid, body string) *Rule {
		r := mustRule(t, body)
		r.UUID = uuid
		return r
	}
	rs := []*Rule{
		mk("00000000-0000-4000-8000-000000000001", `{"priority":1,"conditions":[{"op":"eq","args":{"values":["{node.extra[tag]}","set"]}}],"actions":[{"op":"add-trait","args":{"name":"CUSTOM_SAW"}}]}`),
		mk("00000000-0000-4000-8000-000000000002", `{"priority":90,"actions":[{"op":"set-attribute","args":{"path":"/extra/tag","value":"set"}}]}`),
	}
	env := testEnv(t)
	applied, err := Apply(context.Background(), rs, env, Sequential)
	if err != nil || len(applied) != 2 || applied[0].Priority != 90 {
		t.Errorf("sequential: %v, %v", applied, err)
	}
	env = testEnv(t)
	applied, err = Apply(context.Background(), rs, env, ConditionsFirst)
	if err != nil || len(applied) != 1 {
		t.Errorf("conditions first: %v, %v", applied, err)
	}
	failing := mk("00000000-0000-4000-8000-000000000003", `{"priority":50,"actions":[{"op":"fail","args":{"msg":"stop"}}]}`)
	_, err = Apply(context.Background(), append(rs, failing), testEnv(t), Sequential)
	f, ok := err.(*Failure)
	if !ok || f.Kind != KindFail || f.Reason != "stop" || f.Rule != failing || InspectorMessage(err) != "stop" {
		t.Errorf("failure %#v", err)
	}
}

// mask_secrets: always (default) and sensitive for a rule that is not
// sensitive hide the secrets, never and sensitive for a sensitive rule
// show them.
func TestMaskSecrets(t *testing.T) {
	for _, tt := range []struct {
		mask      string
		sensitive bool
		want      string
	}{{"always", false, "***"}, {"always", true, "***"}, {"never", false, "hunter2"}, {"sensitive", false, "***"}, {"sensitive", true, "hunter2"}} {
		env := testEnv(t)
		env.Mask = tt.mask
		r := mustRule(t, `{"sensitive":`+map[bool]string{true: "true", false: "false"}[tt.sensitive]+`,
			"actions":[{"op":"set-plugin-data","args":{"path":"pw","value":"{inventory[secrets][bmc_password]}"}}]}`)
		if _, err := Apply(context.Background(), []*Rule{r}, env, Sequential); err != nil {
			t.Fatal(err)
		}
		if env.PluginData["pw"] != tt.want {
			t.Errorf("mask %s, sensitive %v: %v", tt.mask, tt.sensitive, env.PluginData["pw"])
		}
	}
}

// api-call: a GET with the formatted URL (only the URL is formatted, as
// Ironic's FORMATTED_ARGS) and the headers, retried on 503,
// failing on 404, following redirects on the URL's host only.
func TestAPICall(t *testing.T) {
	var calls atomic.Int32
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { t.Error("redirect off the host was followed") }))
	defer other.Close()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/flaky":
			if calls.Add(1) == 1 {
				w.WriteHeader(http.StatusServiceUnavailable)
				return
			}
			if r.Header.Get("X-Node") != "n1" || r.URL.Query().Get("bmc") != "192.0.2.10" {
				t.Errorf("request %s %v", r.URL, r.Header)
			}
		case "/away":
			http.Redirect(w, r, other.URL+"/x", http.StatusFound)
		case "/here":
			http.Redirect(w, r, "/flaky?"+r.URL.RawQuery, http.StatusFound)
		default:
			http.NotFound(w, r)
		}
	}))
	defer srv.Close()
	for _, tt := range []struct {
		path, wantErr string
	}{
		{"/flaky?bmc={inventory[bmc_address]}", ""},
		{"/here?bmc={inventory[bmc_address]}", ""},
		{"/missing", "404"},
		{"/away", "redirect to"},
	} {
		env := testEnv(t)
		r := mustRule(t, `{"actions":[{"op":"api-call","args":{"url":"`+srv.URL+tt.path+`","headers":{"X-Node":"n1"},"backoff_factor":0.01,"timeout":10}}]}`)
		_, err := Apply(context.Background(), []*Rule{r}, env, Sequential)
		if tt.wantErr == "" && err != nil || tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr)) {
			t.Errorf("%s: %v, want %q", tt.path, err, tt.wantErr)
		}
	}
	env := testEnv(t)
	r := mustRule(t, `{"actions":[{"op":"api-call","args":{"url":"http://x","timeout":0}}]}`)
	if _, err := Apply(context.Background(), []*Rule{r}, env, Sequential); err == nil || !strings.Contains(err.Error(), "timeout must be greater than zero") {
		t.Errorf("timeout 0: %v", err)
	}
}

func TestParse_Schema(t *testing.T) {
	fail := `[{"op":"fail","args":{"msg":"x"}}]`
	for _, tt := range []struct {
		body    string
		builtIn bool
		want    string
	}{
		{`{}`, false, "'actions' is a required property"},
		{`{"actions":[]}`, false, "[] should be non-empty"},
		{`{"actions":` + fail + `,"scope":"x"}`, false, "Additional properties are not allowed ('scope' was unexpected)"},
		{`{"actions":[{"op":"explode","args":{}}]}`, false, `"explode" is not a valid action operator`},
		{`{"actions":[{"op":"fail"}]}`, false, "'args' is a required property"},
		{`{"actions":[{"op":"fail","args":"x"}]}`, false, "is not of type 'array', 'object'"},
		{`{"actions":[{"op":"fail","args":{}}]}`, false, "Invalid parameters for action operator fail: Inspection rule validation failed. Reason: missing required argument(s): msg"},
		{`{"actions":[{"op":"fail","args":{"msg":"x","extra":1}}]}`, false, "unexpected argument(s): extra"},
		{`{"actions":` + fail + `,"conditions":[{"op":"!!eq","args":{"values":[]}}]}`, false, "is not a valid condition operator"},
		{`{"actions":` + fail + `,"conditions":[{"op":"eq","args":{"values":[]},"multiple":"some"}]}`, false, "is not one of ['any', 'all', 'first', 'last']"},
		{`{"actions":` + fail + `,"priority":-1}`, false, "-1 is less than the minimum of 0"},
		{`{"actions":` + fail + `,"priority":10000}`, false, "Priority must be between 0 and 9999 for user-defined rules."},
		{`{"actions":` + fail + `,"phase":"early"}`, false, "Invalid phase: early. Valid phases are: main"},
		{`{"actions":` + fail + `,"description":"` + strings.Repeat("d", 256) + `"}`, false, "is too long"},
		{`{"actions":` + fail + `,"uuid":"not-a-uuid"}`, false, "is not a 'uuid'"},
		{`{"actions":[{"op":"fail","args":{}}],"phase":"early"}`, false, "Multiple validation errors occurred"},
		{`{"actions":[{"op":"eq","args":{}}]}`, false, "is not a valid action operator"},
		// Ironic's schema lists "!eq", not "! eq", whatever its parser takes.
		{`{"actions":` + fail + `,"conditions":[{"op":"! eq","args":{"values":[]}}]}`, false, "is not a valid condition operator"},
	} {
		if _, err := Parse([]byte(tt.body), tt.builtIn); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("Parse(%.60s): %v, want %q", tt.body, err, tt.want)
		}
	}
	// Built-in rules may have any priority; plugin-data actions get their
	// plugin_data argument, as Ironic stores them.
	r, err := Parse([]byte(`{"priority":20000,"actions":[{"op":"set-plugin-data","args":{"path":"a","value":1}}],
		"conditions":[{"op":"!eq","args":[[1,2]],"loop":[1],"multiple":"all"}],"description":"d"}`), true)
	if err != nil {
		t.Fatal(err)
	}
	m := r.Map()
	b, _ := json.Marshal(m)
	wantJSON := `{"actions":[{"args":{"path":"a","plugin_data":{},"value":1},"op":"set-plugin-data"}],"conditions":[{"args":[[1,2]],"loop":[1],"multiple":"all","op":"!eq"}],"description":"d","phase":"main","priority":20000,"sensitive":false,"uuid":""}`
	if string(b) != wantJSON {
		t.Errorf("Map = %s\nwant %s", b, wantJSON)
	}
	r.Sensitive = true
	if m := r.Map(); m["conditions"] != nil || m["actions"] != nil {
		t.Errorf("sensitive rule shows %v", m)
	}
}

func TestParseBuiltIn(t *testing.T) {
	rs, err := ParseBuiltIn([]byte(`
- description: discovered Dell
  priority: 100
  sensitive: true
  conditions:
    - op: contains
      args: {value: "{inventory[system_vendor][manufacturer]}", regex: "(?i)dell"}
  actions:
    - op: set-attribute
      args: {path: /driver_info/redfish_address, value: "https://{inventory[bmc_address]}"}
- uuid: rule-by-name
  priority: -5
  actions:
    - op: log
      args: {msg: hi}
- actions:
    - op: log
      args: {msg: second}
`), "rules.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if len(rs) != 3 || rs[0].UUID != "00000000-0000-0000-0000-000000000000" || rs[1].UUID != "rule-by-name" || rs[1].Priority != -5 ||
		rs[2].UUID != "00000000-0000-0000-0000-000000000001" || !rs[0].Sensitive || !rs[0].BuiltIn {
		t.Errorf("built-in rules %+v %+v %+v", rs[0], rs[1], rs[2])
	}
	for _, bad := range []string{"{}", "- actions: []", "- priority: x\n  actions: [{op: fail, args: {msg: x}}]", ": :"} {
		if _, err := ParseBuiltIn([]byte(bad), "rules.yaml"); err == nil {
			t.Errorf("ParseBuiltIn(%q) accepted", bad)
		}
	}
}

// Formatted fields are cached between rules; an action that changes what
// a field reads drops it, so a later rule sees the change.
func TestApply_CacheSeesChanges(t *testing.T) {
	env := testEnv(t)
	mk := func(uuid string, prio int, cond, action string) *Rule {
		r := mustRule(t, fmt.Sprintf(`{"priority":%d,"conditions":[%s],"actions":[%s]}`, prio, cond, action))
		r.UUID = uuid
		return r
	}
	rs := []*Rule{
		mk("00000000-0000-4000-8000-000000000001", 90, `{"op":"is-empty","args":{"value":"{plugin_data[flag]}"}}`,
			`{"op":"set-plugin-data","args":{"path":"flag","value":"on"}}`),
		mk("00000000-0000-4000-8000-000000000002", 80, `{"op":"eq","args":{"values":["{plugin_data[flag]}","on"]}}`,
			`{"op":"add-trait","args":{"name":"CUSTOM_FLAG"}}`),
		mk("00000000-0000-4000-8000-000000000003", 70, `{"op":"eq","args":{"values":["{node.traits}","['CUSTOM_OLD', 'CUSTOM_FLAG']"]}}`,
			`{"op":"set-attribute","args":{"path":"/extra/done","value":"yes"}}`),
	}
	applied, err := Apply(context.Background(), rs, env, Sequential)
	if err != nil || len(applied) != 3 {
		t.Fatalf("applied %d, %v; want all three", len(applied), err)
	}
}
