package driver

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

var (
	typeA = HardwareType{Name: "a", Supported: map[string][]string{"power": {"pa", "shared"}, "boot": {"b1"}},
		Interfaces: []string{"pa"}, Properties: []Property{{Name: "a_address", Description: "A. Required.", Required: true}}}
	typeB = HardwareType{Name: "b", Supported: map[string][]string{"power": {"shared", "pb", "pa"}},
		Interfaces: []string{"pb"}, Properties: []Property{{Name: "b_password", Description: "B.", Secret: true}}}
)

// The enabled_* defaults are every type and interface, in the types'
// order, each once.
func TestEnableAll(t *testing.T) {
	e := EnableAll([]HardwareType{typeA, typeB})
	if diff := cmp.Diff([]string{"a", "b"}, e.Types); diff != "" {
		t.Errorf("types (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(map[string][]string{"power": {"pa", "shared", "pb"}, "boot": {"b1"}}, e.Interfaces); diff != "" {
		t.Errorf("interfaces (-want +got):\n%s", diff)
	}
}

// A type lists the common keys and those of every type whose interfaces it
// supports, enabled or not; a disabled type has none.
func TestRegistry_Properties(t *testing.T) {
	r := NewRegistry([]HardwareType{typeA, typeB}, Enabled{Types: []string{"b"}})
	props, ok := r.Properties("b")
	if !ok {
		t.Fatal("b is enabled")
	}
	names := map[string]bool{}
	for _, p := range props {
		names[p.Name] = true
	}
	for _, want := range []string{"a_address", "b_password", "deploy_kernel"} {
		if !names[want] {
			t.Errorf("b's properties lack %s: b supports pa", want)
		}
	}
	if len(props) != len(CommonProperties)+2 {
		t.Errorf("%d properties, want the %d common ones and two", len(props), len(CommonProperties))
	}
	if _, ok := r.Properties("a"); ok {
		t.Error("a disabled type has properties")
	}
}

func TestMissingProperties(t *testing.T) {
	props := []Property{{Name: "x", Required: true}, {Name: "y"}, {Name: "z", Required: true}}
	got := MissingProperties(props, map[string]any{"x": "", "y": nil, "z": "set"})
	if diff := cmp.Diff([]string{"x"}, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

// An enabled interface no hardware type has refuses the start for the
// kinds ferro drives (agent, before it existed, was silently dropped) and
// is a warning for the kinds it only validates.
func TestCheckEnabled(t *testing.T) {
	types := []HardwareType{{Name: "t", Supported: map[string][]string{"inspect": {"agent", "no-inspect"}, "raid": {"no-raid"}}}}
	e := EnableAll(types)
	if w, err := NewRegistry(types, e).CheckEnabled(); err != nil || len(w) != 0 {
		t.Errorf("every interface known: %v, %v", w, err)
	}
	e.Interfaces["raid"] = []string{"no-raid", "redfish"}
	if w, err := NewRegistry(types, e).CheckEnabled(); err != nil || len(w) != 1 || !strings.Contains(w[0], `"redfish" in enabled_raid_interfaces`) {
		t.Errorf("unknown raid interface: %v, %v; want one warning", w, err)
	}
	e.Interfaces["inspect"] = []string{"agent", "inspector-typo"}
	if _, err := NewRegistry(types, e).CheckEnabled(); err == nil || !strings.Contains(err.Error(), `"inspector-typo" in enabled_inspect_interfaces`) {
		t.Errorf("unknown inspect interface: %v, want an error naming it", err)
	}
}
