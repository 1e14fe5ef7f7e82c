package rules

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/ferrometal/ferro/internal/baremetal"
	"github.com/ferrometal/ferro/internal/inspection"
	"github.com/ferrometal/ferro/internal/inspection/plan"
	irules "github.com/ferrometal/ferro/internal/inspection/rules"
)

// staticRules is a RuleSource of converted rules.
type staticRules []*irules.Rule

func (s staticRules) Rules(context.Context) ([]*irules.Rule, error) { return s, nil }

// convert parses and converts inspector rules.
func convert(t *testing.T, bodies ...string) []*irules.Rule {
	t.Helper()
	var out []*irules.Rule
	for _, b := range bodies {
		r := mustParse(t, b)
		if r.UUID == "" {
			r.UUID = "6f0c4b1e-0000-4000-8000-00000000000" + string(rune('a'+len(out)))
		}
		c, err := Convert(r)
		if err != nil {
			t.Fatalf("Convert(%s): %v", b, err)
		}
		out = append(out, c.Rule)
	}
	return out
}

// process runs ferro's inspector pipeline (its default hooks) on the
// reference example with the rules, as the inspector does.
func process(t *testing.T, props baremetal.JSON, rs []*irules.Rule) (*inspection.Result, error) {
	t.Helper()
	b, err := os.ReadFile("../../../testdata/ipa/example.json")
	if err != nil {
		t.Fatal(err)
	}
	rep, err := inspection.Decode(b)
	if err != nil {
		t.Fatal(err)
	}
	if props == nil {
		props = baremetal.JSON{}
	}
	o := inspection.DefaultOptions(inspection.Inspector)
	o.Hooks = append(append([]string(nil), inspection.InspectorDefaultHooks...), "lldp_basic", "local_link_connection")
	o.Rules = staticRules(rs)
	p, err := inspection.New(o)
	if err != nil {
		t.Fatal(err)
	}
	n := &baremetal.Node{UUID: "6c5c2b8e-2c9f-4d84-9a53-1f0c5d8e2b11", Driver: "ipmi", ProvisionState: "inspect wait",
		Properties: props, DriverInfo: baremetal.JSON{"ipmi_address": "198.51.100.121"}, Traits: []string{"CUSTOM_OLD"}}
	return p.Process(context.Background(), rep, inspection.Target{Node: n})
}

func mustParse(t *testing.T, s string) *Rule {
	t.Helper()
	r, err := Parse([]byte(s))
	if err != nil {
		t.Fatalf("Parse(%s): %v", s, err)
	}
	return r
}

func TestParse(t *testing.T) {
	r := mustParse(t, `{
	  "uuid": "8b1f4c2e-7d1a-4f0e-9c57-4a3cb1d0e6f2",
	  "description": "big memory",
	  "scope": "rack-12",
	  "conditions": [
	    {"op": "ge", "field": "memory_mb", "value": 131072},
	    {"op": "matches", "field": "data://inventory.interfaces[*].mac_address", "value": "3c:.*", "multiple": "all", "invert": false}
	  ],
	  "actions": [{"action": "set-capability", "name": "big_mem", "value": "true"}]
	}`)
	want := &Rule{
		UUID: "8b1f4c2e-7d1a-4f0e-9c57-4a3cb1d0e6f2", Description: "big memory", Scope: "rack-12",
		Conditions: []Condition{
			{Op: "ge", Field: "memory_mb", Multiple: "any", Params: map[string]any{"value": json.Number("131072")}},
			{Op: "matches", Field: "data://inventory.interfaces[*].mac_address", Multiple: "all", Params: map[string]any{"value": "3c:.*"}},
		},
		Actions: []Action{{Action: "set-capability", Params: map[string]any{"name": "big_mem", "value": "true"}}},
	}
	if diff := cmp.Diff(want, r); diff != "" {
		t.Errorf("Parse (-want +got):\n%s", diff)
	}

	b, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	again := mustParse(t, string(b))
	if diff := cmp.Diff(r, again); diff != "" {
		t.Errorf("JSON round trip (-want +got):\n%s", diff)
	}
	var shown map[string]any
	_ = json.Unmarshal(b, &shown)
	if cond := shown["conditions"].([]any)[0].(map[string]any); cond["op"] != "ge" || cond["invert"] != false || cond["multiple"] != "any" || cond["value"] != 131072.0 {
		t.Errorf("condition shown as %v", cond)
	}
	if b, _ := json.Marshal(&Rule{UUID: "u", Actions: []Action{{Action: "fail", Params: map[string]any{"message": "x"}}}}); !strings.Contains(string(b), `"description":null`) || !strings.Contains(string(b), `"scope":null`) {
		t.Errorf("empty description and scope not null: %s", b)
	}
}

func TestParse_Errors(t *testing.T) {
	fail := `[{"action":"fail","message":"no"}]`
	tests := []struct {
		body string
		want string
	}{
		{`[]`, "invalid rule JSON"},
		{`{"actions":` + fail + `,"uuid":"not-a-uuid"}`, `Invalid UUID value "not-a-uuid"`},
		{`{"actions":` + fail + `,"description":5}`, "description: expected a string"},
		{`{"conditions":[]}`, "a rule needs at least one action"},
		{`{"actions":{}}`, "actions must be a list"},
		{`{"actions":["fail"]}`, "actions[0] must be an object"},
		{`{"actions":[{"message":"x"}]}`, "actions[0]: 'action' is a required property"},
		{`{"actions":[{"action":"explode"}]}`, `actions[0]: unknown action "explode" (valid: add-trait, extend-attribute, fail, remove-trait, set-attribute, set-capability)`},
		{`{"actions":[{"action":"fail"}]}`, "Invalid parameters for action fail: missing required parameter(s): message"},
		{`{"actions":[{"action":"fail","message":null}]}`, "Invalid parameters for action fail: missing required parameter(s): message"},
		{`{"actions":[{"action":"fail","message":"x","level":"bad","color":1}]}`, "Invalid parameters for action fail: unexpected parameter(s): color, level"},
		{`{"actions":[{"action":"set-attribute","path":"/extra/x"}]}`, "Invalid parameters for action set-attribute: missing required parameter(s): value"},
		{`{"actions":[{"action":"set-attribute","value":1}]}`, "Invalid parameters for action set-attribute: missing required parameter(s): path"},
		{`{"actions":[{"action":"extend-attribute","path":"/extra/x"}]}`, "Invalid parameters for action extend-attribute: missing required parameter(s): value"},
		{`{"actions":[{"action":"set-capability","value":"x"}]}`, "missing required parameter(s): name"},
		{`{"actions":[{"action":"add-trait"}]}`, "Invalid parameters for action add-trait: missing required parameter(s): name"},
		{`{"conditions":[{"op":"eq","field":"cpus"}],"actions":` + fail + `}`, "Invalid parameters for operator eq: missing required parameter(s): value"},
		{`{"conditions":[{"op":"eq","field":"cpus","value":1,"values":2}],"actions":` + fail + `}`, "Invalid parameters for operator eq: unexpected parameter(s): values"},
		{`{"conditions":[{"op":"equals","field":"cpus","value":1}],"actions":` + fail + `}`, `conditions[0]: unknown operator "equals" (valid: contains, eq, ge, gt, in-net, is-empty, le, lt, matches, ne)`},
		{`{"conditions":[{"field":"cpus","value":1}],"actions":` + fail + `}`, "conditions[0]: 'op' is a required property"},
		{`{"conditions":[{"op":"eq","value":1}],"actions":` + fail + `}`, "conditions[0]: 'field' is a required property"},
		{`{"conditions":[{"op":"eq","field":"cpus","value":1,"multiple":"some"}],"actions":` + fail + `}`, `multiple must be one of all, any, first, not "some"`},
		{`{"conditions":[{"op":"eq","field":"cpus","value":1,"invert":"yes"}],"actions":` + fail + `}`, "invert must be a boolean"},
		{`{"conditions":[{"op":"is-empty","field":"cpus","value":1}],"actions":` + fail + `}`, "Invalid parameters for operator is-empty: unexpected parameter(s): value"},
		{`{"conditions":[{"op":"in-net","field":"ipmi_address","value":"10.0.0.0/33"}],"actions":` + fail + `}`, "Invalid parameters for operator in-net: invalid value"},
		{`{"conditions":[{"op":"matches","field":"cpus","value":"("}],"actions":` + fail + `}`, "Invalid parameters for operator matches: invalid regular expression"},
		{`{"conditions":[{"op":"contains","field":"cpus"}],"actions":` + fail + `}`, "Invalid parameters for operator contains: missing required parameter(s): value"},
		{`{"conditions":[{"op":"eq","field":"file:///etc/passwd","value":1}],"actions":` + fail + `}`, "Unsupported scheme for field: file, valid values are node:// or data://"},
		{`{"conditions":[{"op":"eq","field":"data://inventory..disks","value":1}],"actions":` + fail + `}`, "Unable to parse field JSON path data://inventory..disks"},
		{`{"conditions":[{"op":"eq","field":"data://inventory.disks[x]","value":1}],"actions":` + fail + `}`, "Unable to parse field JSON path"},
	}
	for _, tt := range tests {
		_, err := Parse([]byte(tt.body))
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("Parse(%s): got %v, want an error containing %q", tt.body, err, tt.want)
		}
	}
	// set-attribute accepts an explicit null value
	mustParse(t, `{"actions":[{"action":"set-attribute","path":"/extra/x","value":null}]}`)
}

func TestConditions(t *testing.T) {
	tests := []struct {
		op      string
		field   any
		value   any
		want    bool
		wantErr bool
	}{
		{op: "eq", field: "32", value: json.Number("32"), want: true}, // coerced to int
		{op: "eq", field: json.Number("32"), value: "32", want: false},
		{op: "eq", field: "1.5", value: json.Number("1.5"), want: true},
		{op: "eq", field: json.Number("1.9"), value: json.Number("1"), want: true}, // int(1.9) == 1
		{op: "eq", field: true, value: json.Number("1"), want: true},
		{op: "eq", field: []any{"a"}, value: []any{"a"}, want: true},
		{op: "eq", field: "abc", value: json.Number("1"), wantErr: true},
		{op: "eq", field: nil, value: json.Number("1"), wantErr: true},
		{op: "ne", field: json.Number("4"), value: json.Number("5"), want: true},
		{op: "ne", field: "x", value: "x", want: false},
		{op: "lt", field: "10", value: json.Number("9.5"), want: false},
		{op: "lt", field: "abc", value: "abd", want: true},
		{op: "lt", field: json.Number("3"), value: "4", wantErr: true},
		{op: "gt", field: json.Number("131072"), value: json.Number("65536"), want: true},
		{op: "le", field: "64", value: json.Number("64"), want: true},
		{op: "ge", field: json.Number("63"), value: json.Number("64"), want: false},
		{op: "in-net", field: "192.0.2.17", value: "192.0.2.0/24", want: true},
		{op: "in-net", field: "192.0.2.17", value: "192.0.2.1/27", want: true},
		{op: "in-net", field: "10.0.0.1", value: "192.0.2.0/24", want: false},
		{op: "in-net", field: "2001:db8::1", value: "2001:db8::/32", want: true},
		{op: "in-net", field: "192.0.2.1", value: "::/0", want: false},
		{op: "in-net", field: "192.0.2.1", value: "192.0.2.1", want: true},
		{op: "in-net", field: "not-an-ip", value: "10.0.0.0/8", wantErr: true},
		{op: "matches", field: "foobar", value: "foo", want: false},
		{op: "matches", field: "foobar", value: "foo.*", want: true},
		{op: "matches", field: "foobar", value: "f.o$", want: false},
		{op: "matches", field: "axyz", value: "a|b", want: true}, // "a|b$": $ binds to b only
		{op: "matches", field: json.Number("42"), value: `4\d`, want: true},
		{op: "matches", field: true, value: "True", want: true},
		{op: "contains", field: "foobar", value: "bar", want: true},
		{op: "contains", field: "foobar", value: "^bar", want: false},
		{op: "contains", field: []any{"a", "b"}, value: "'b'", want: true},
		{op: "is-empty", field: "", want: true},
		{op: "is-empty", field: nil, want: true},
		{op: "is-empty", field: []any{}, want: true},
		{op: "is-empty", field: map[string]any{}, want: true},
		{op: "is-empty", field: json.Number("0"), want: false},
		{op: "is-empty", field: false, want: false},
		{op: "is-empty", field: "x", want: false},
	}
	for _, tt := range tests {
		cond := map[string]any{"op": tt.op, "field": "data://f"}
		if tt.value != nil {
			cond["value"] = tt.value
		}
		b, _ := json.Marshal(map[string]any{"conditions": []any{cond}, "actions": []any{map[string]any{"action": "add-trait", "name": "CUSTOM_HIT"}}})
		rs := convert(t, string(b))
		node, err := plan.New(baremetal.Node{UUID: "n"}, nil)
		if err != nil {
			t.Fatal(err)
		}
		env := &irules.Env{Node: node, Inventory: map[string]any{}, PluginData: map[string]any{"f": tt.field}}
		applied, err := irules.Apply(context.Background(), rs, env, irules.ConditionsFirst)
		if got := len(applied) == 1; (err != nil) != tt.wantErr || got != tt.want {
			t.Errorf("%s(%#v, %#v) = %v, %v; want %v, error %v", tt.op, tt.field, tt.value, got, err, tt.want, tt.wantErr)
		}
	}
}

func TestCheck_FieldsAndMultiple(t *testing.T) {
	tests := []struct {
		name string
		cond string
		want bool
	}{
		{"bare field is data", `{"op":"eq","field":"cpus","value":32}`, true},
		{"data path", `{"op":"eq","field":"data://inventory.cpu.model_name","value":"AMD EPYC 7313 16-Core Processor"}`, true},
		{"root-anchored path", `{"op":"eq","field":"$.inventory.disks[1].name","value":"/dev/sda"}`, true},
		{"node path", `{"op":"eq","field":"node://properties.cpus","value":32}`, true},
		{"node driver_info", `{"op":"in-net","field":"node://driver_info.ipmi_address","value":"198.51.100.0/24"}`, true},
		{"processed data", `{"op":"eq","field":"all_interfaces.eno1.lldp_processed.switch_port_id","value":"Ethernet1/12"}`, true},
		{"any of several", `{"op":"eq","field":"inventory.interfaces[*].name","value":"eno2"}`, true},
		{"all of several", `{"op":"matches","field":"inventory.interfaces[*].name","value":"eno.","multiple":"all"}`, true},
		{"not all of several", `{"op":"eq","field":"inventory.interfaces[*].name","value":"eno2","multiple":"all"}`, false},
		{"first of several", `{"op":"eq","field":"inventory.interfaces[*].name","value":"eno2","multiple":"first"}`, false},
		{"inverted", `{"op":"eq","field":"inventory.interfaces[*].name","value":"eno2","multiple":"first","invert":true}`, true},
		{"inverted any", `{"op":"eq","field":"inventory.interfaces[*].name","value":"eno1","invert":true}`, true},
		{"object wildcard", `{"op":"contains","field":"inventory.system_vendor.*","value":"R6515"}`, true},
		{"slice", `{"op":"eq","field":"inventory.disks[1:].name","value":"/dev/sda","multiple":"all"}`, true},
		{"missing field fails the rule", `{"op":"ne","field":"inventory.gpu","value":1}`, false},
		{"missing field is empty", `{"op":"is-empty","field":"inventory.gpu"}`, true},
		{"missing field is not empty, inverted", `{"op":"is-empty","field":"inventory.gpu","invert":true}`, false},
		{"null field is empty", `{"op":"is-empty","field":"inventory.disks[0].vendor"}`, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rs := convert(t, `{"conditions":[`+tt.cond+`],"actions":[{"action":"add-trait","name":"CUSTOM_HIT"}]}`)
			res, err := process(t, baremetal.JSON{"cpus_wanted": "32"}, rs)
			if err != nil {
				t.Fatal(err)
			}
			if got := len(res.Rules) == 1; got != tt.want {
				t.Errorf("applied %v, want %v", got, tt.want)
			}
		})
	}
}

func TestCheck_Errors(t *testing.T) {
	rs := convert(t, `{"conditions":[{"op":"lt","field":"inventory.cpu.model_name","value":5}],"actions":[{"action":"fail","message":"x"}]}`)
	if _, err := process(t, nil, rs); err == nil || !strings.Contains(err.Error(), "invalid literal for int()") {
		t.Errorf("got %v", err)
	}
}

// cpuCaps is what the capabilities hook adds for the example's CPU.
const cpuCaps = "cpu_vt:true,cpu_aes:true,cpu_hugepages:true,cpu_hugepages_1g:true"

func TestActions(t *testing.T) {
	tests := []struct {
		name    string
		props   baremetal.JSON
		actions string
		check   func(t *testing.T, n map[string]any, c plan.Changes)
		wantErr string
	}{
		{
			name:    "set-attribute with formatting",
			actions: `[{"action":"set-attribute","path":"/extra/cpu","value":"{data[inventory][cpu][count]} x {data[inventory][cpu][model_name]!r}"}]`,
			check:   extra("cpu", "32 x 'AMD EPYC 7313 16-Core Processor'"),
		},
		{
			name:    "set-attribute formats inside objects and lists, keys too",
			actions: `[{"action":"set-attribute","path":"/extra/nics","value":{"{data[inventory][interfaces][0][name]}":["{data[macs][0]}", 1, {"literal": "{{x}}"}]}}]`,
			check:   extra("nics", map[string]any{"eno1": []any{"3c:fd:fe:11:22:30", json.Number("1"), map[string]any{"literal": "{x}"}}}),
		},
		{
			name:    "set-attribute with node formatting (ferro)",
			actions: `[{"action":"set-attribute","path":"/extra/old","value":"{node[driver]}"}]`,
			check:   extra("old", "ipmi"),
		},
		{
			name:    "set-attribute creates the objects on the way (Ironic's)",
			actions: `[{"action":"set-attribute","path":"/extra/a/b","value":1}]`,
			check:   extra("a", map[string]any{"b": json.Number("1")}),
		},
		{
			name:    "set-capability replaces and appends",
			props:   baremetal.JSON{"capabilities": "boot_option:local,gpus:0"},
			actions: `[{"action":"set-capability","name":"gpus","value":"{data[inventory][cpu][socket_count]}"},{"action":"set-capability","name":"n","value":2}]`,
			check:   capabilities("boot_option:local," + cpuCaps + ",gpus:1,n:2"),
		},
		{
			name:    "set-capability without value removes it",
			props:   baremetal.JSON{"capabilities": "boot_option:local,gpus:1"},
			actions: `[{"action":"set-capability","name":"gpus"}]`,
			check:   capabilities("boot_option:local," + cpuCaps),
		},
		{
			name:    "extend-attribute creates the list",
			actions: `[{"action":"extend-attribute","path":"/extra/tags","value":"{data[inventory][system_vendor][manufacturer]}"}]`,
			check:   extra("tags", []any{"Dell Inc."}),
		},
		{
			name:    "extend-attribute appends, unique or not",
			actions: `[{"action":"set-attribute","path":"/extra/tags","value":["a"]},{"action":"extend-attribute","path":"/extra/tags","value":"a","unique":true},{"action":"extend-attribute","path":"extra/tags","value":"a"}]`,
			check:   extra("tags", []any{"a", "a"}),
		},
		{
			name:    "extend-attribute of a non-list",
			props:   baremetal.JSON{"tags": "a"},
			actions: `[{"action":"extend-attribute","path":"/properties/tags","value":"b"}]`,
			wantErr: "not a list",
		},
		{
			name:    "traits",
			actions: `[{"action":"add-trait","name":"CUSTOM_GPU"},{"action":"remove-trait","name":"CUSTOM_OLD"},{"action":"remove-trait","name":"CUSTOM_NONE"}]`,
			check: func(t *testing.T, _ map[string]any, c plan.Changes) {
				if diff := cmp.Diff([]string{"CUSTOM_GPU"}, c.AddTraits); diff != "" || !cmp.Equal(c.RemoveTraits, []string{"CUSTOM_OLD"}) {
					t.Errorf("traits %v %v", c.AddTraits, c.RemoveTraits)
				}
			},
		},
		{name: "unknown format key", actions: `[{"action":"set-attribute","path":"/extra/x","value":"{data[nope]}"}]`, wantErr: "Invalid formatting variable key provided in value {plugin_data[nope]}: 'nope'"},
		{name: "unknown format variable", actions: `[{"action":"set-attribute","path":"/extra/x","value":"{nothing}"}]`, wantErr: "'nothing'"},
		{name: "positional format field", actions: `[{"action":"set-attribute","path":"/extra/x","value":"{}"}]`, wantErr: "Replacement index 0 out of range"},
		{name: "attribute of the data", actions: `[{"action":"set-attribute","path":"/extra/x","value":"{data.inventory}"}]`, wantErr: "'data'"},
		{name: "single brace", actions: `[{"action":"set-attribute","path":"/extra/x","value":"a}b"}]`, wantErr: "Single '}'"},
		{name: "format spec", actions: `[{"action":"set-attribute","path":"/extra/x","value":"{data[cpus]:>5}"}]`, check: extra("x", "   32")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, err := process(t, tt.props, convert(t, `{"actions":`+tt.actions+`}`))
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("got %v, want an error containing %q", err, tt.wantErr)
				}
				if res != nil && !res.Changes.IsZero() {
					t.Error("a failed report has changes to apply")
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			tt.check(t, applyPatch(t, res.Changes), res.Changes)
		})
	}
}

// applyPatch returns the node doc the changes' patch leads to, from an
// empty extra and the example's properties.
func applyPatch(t *testing.T, c plan.Changes) map[string]any {
	t.Helper()
	n, err := plan.New(baremetal.Node{UUID: "n"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, op := range c.NodePatch {
		if err := n.Patch(op); err != nil {
			t.Fatalf("replay %+v: %v", op, err)
		}
	}
	return n.Fields()
}

func extra(key string, want any) func(*testing.T, map[string]any, plan.Changes) {
	return func(t *testing.T, n map[string]any, _ plan.Changes) {
		t.Helper()
		if diff := cmp.Diff(want, n["extra"].(map[string]any)[key]); diff != "" {
			t.Errorf("extra[%s] (-want +got):\n%s", key, diff)
		}
	}
}

func capabilities(want string) func(*testing.T, map[string]any, plan.Changes) {
	return func(t *testing.T, _ map[string]any, c plan.Changes) {
		t.Helper()
		var last any
		for _, op := range c.NodePatch {
			if op.Path == "/properties/capabilities" {
				last = op.Value
			}
		}
		if last != want {
			t.Errorf("capabilities %v, want %s", last, want)
		}
	}
}

func TestApply(t *testing.T) {
	rs := convert(t,
		`{"description":"tag AMD","conditions":[{"op":"contains","field":"inventory.cpu.model_name","value":"AMD"}],
			"actions":[{"action":"set-attribute","path":"/properties/vendor_tag","value":"amd"}]}`,
		// evaluated before the first rule's actions: it does not see vendor_tag
		`{"description":"sees tag","conditions":[{"op":"eq","field":"node://properties.vendor_tag","value":"amd"}],
			"actions":[{"action":"add-trait","name":"CUSTOM_SEEN"}]}`,
		`{"description":"other rack","scope":"rack-13","actions":[{"action":"add-trait","name":"CUSTOM_R13"}]}`,
		`{"description":"this rack","scope":"rack-12","actions":[{"action":"add-trait","name":"CUSTOM_R12"}]}`,
		`{"uuid":"0f5d2c1a-3b4e-4f6a-8b9c-0d1e2f3a4b5c","conditions":[],"actions":[{"action":"add-trait","name":"CUSTOM_ALL"}]}`,
	)
	res, err := process(t, baremetal.JSON{"inspection_scope": "rack-12"}, rs)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{rs[0].UUID, rs[3].UUID, "0f5d2c1a-3b4e-4f6a-8b9c-0d1e2f3a4b5c"}, res.Rules); diff != "" {
		t.Errorf("applied (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"CUSTOM_R12", "CUSTOM_ALL"}, res.Changes.AddTraits); diff != "" {
		t.Errorf("traits (-want +got):\n%s", diff)
	}
	if applyPatch(t, res.Changes)["properties"].(map[string]any)["vendor_tag"] != "amd" {
		t.Errorf("vendor_tag not set")
	}
}

// A fail action fails the report with its message, as the inspector
// words it, and nothing of the plan is to be applied.
func TestApply_Fail(t *testing.T) {
	rs := convert(t, `{"description":"too small","conditions":[{"op":"lt","field":"memory_mb","value":262144}],
			"actions":[{"action":"add-trait","name":"CUSTOM_SMALL"},{"action":"fail","message":"not enough memory"},{"action":"add-trait","name":"CUSTOM_AFTER"}]}`)
	res, err := process(t, nil, rs)
	var f *inspection.Failure
	if !errors.As(err, &f) || err.Error() != "not enough memory" || res != nil {
		t.Fatalf("got %v, %v", res, err)
	}
	rf, ok := f.RuleFailure()
	if !ok || rf.Kind != irules.KindFail || rf.Reason != "not enough memory" || rf.Rule.Name != "too small" {
		t.Errorf("rule failure %+v", rf)
	}
}
