package rules

import (
	"context"
	"encoding/json"
	"testing"
)

// FuzzParse checks that no rule body makes the schema decoder panic, that
// what it accepts shows as JSON that parses again to the same rule, and
// that running an accepted rule never panics.
//
//	go test ./internal/inspection/rules -run='^$' -fuzz=FuzzParse -fuzztime=10s
func FuzzParse(f *testing.F) {
	for _, s := range []string{
		`{"actions":[{"op":"fail","args":{"msg":"x"}}]}`,
		`{"priority":5,"description":"d","conditions":[{"op":"!eq","args":{"values":["{node.driver}","ipmi"]},"loop":[1,2],"multiple":"last"}],
		  "actions":[{"op":"set-attribute","args":["/extra/x","{inventory[cpu][count]}"]},{"op":"set-plugin-data","args":{"path":"a.b","value":1}}]}`,
		`{"conditions":[{"op":"in-net","args":{"address":"{inventory[bmc_address]}","subnet":"10.0.0.0/8"}}],"actions":[{"op":"add-trait","args":{"name":"T"}}]}`,
		`{"actions":[{"op":"extend-port-attribute","args":{"port_id":"52:54:00:00:00:01","path":"extra.x","value":"{item}"},"loop":["a"]}]}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		r, err := Parse(body, false)
		if err != nil {
			return
		}
		b, err := json.Marshal(r.Map())
		if err != nil {
			t.Fatal(err)
		}
		again, err := Parse(b, false)
		if err != nil {
			t.Fatalf("the shown rule %s does not parse: %v", b, err)
		}
		b2, _ := json.Marshal(again.Map())
		if string(b) != string(b2) {
			t.Fatalf("not stable:\n%s\n%s", b, b2)
		}
		for _, a := range r.Actions {
			if a.Op == "api-call" {
				return // no network in a fuzz run
			}
		}
		r.UUID = "5e1d0f1c-0000-4000-8000-000000000001"
		_, _ = Apply(context.Background(), []*Rule{r}, testEnv(t), Sequential)
	})
}

// FuzzFormat checks that no format string makes interpolation panic and
// that a string without braces formats to itself.
func FuzzFormat(f *testing.F) {
	for _, s := range []string{"{node.driver}", "{inventory[cpu][count]:>05}", "{{x}}", "{plugin_data[macs][0]!r:^20}", "a}b{", "{item[0][x]}", "{inventory[interfaces][0][name][3]}"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		env := testEnv(t)
		vs := (&Rule{}).vars(env)
		vs.item, vs.hasItem = []any{map[string]any{"x": "y"}}, true
		out, err := formatString(s, vs)
		if err == nil && !containsBrace(s) && out != s {
			t.Fatalf("format(%q) = %q", s, out)
		}
	})
}

func containsBrace(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] == '{' || s[i] == '}' {
			return true
		}
	}
	return false
}
