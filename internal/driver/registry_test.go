package driver

import (
	"slices"
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

// A type lists, as Ironic's get_properties, the keys of its default
// interfaces: a folder's keys when its interface is the default of a kind
// (the configured default first), the common keys when its default boot
// or deploy interface is a real one; a disabled type has none.
func TestRegistry_Properties(t *testing.T) {
	typeV := HardwareType{Name: "v", Supported: map[string][]string{"boot": {"fake"}, "vendor": {"fake"}, "power": {"fake"}},
		Interfaces: []string{"fake"}, Properties: []Property{{Name: "V1", Description: "V1.", Kind: "vendor"}}}
	names := func(r *Registry, hw string) []string {
		t.Helper()
		props, ok := r.Properties(hw)
		if !ok {
			t.Fatalf("%s is enabled", hw)
		}
		var out []string
		for _, p := range props {
			out = append(out, p.Name)
		}
		return out
	}
	common := func(extra ...string) []string {
		out := extra
		for _, p := range CommonProperties {
			out = append(out, p.Name)
		}
		slices.Sort(out)
		return out
	}
	all := EnableAll([]HardwareType{typeA, typeB, typeV})
	r := NewRegistry([]HardwareType{typeA, typeB, typeV}, all)
	if diff := cmp.Diff(common("a_address"), names(r, "a")); diff != "" {
		t.Errorf("a (default power pa, boot b1) (-want +got):\n%s", diff)
	}
	// b's default power is shared: b_password (pb) and a_address (pa,
	// supported but not the default) are not listed.
	if got := names(r, "b"); len(got) != 0 {
		t.Errorf("b (default power shared) lists %v, want nothing", got)
	}
	if diff := cmp.Diff([]string{"V1"}, names(r, "v")); diff != "" {
		t.Errorf("v (all fake) (-want +got):\n%s", diff)
	}
	all.Defaults = map[string]string{"power": "pb"}
	if diff := cmp.Diff([]string{"b_password"}, names(NewRegistry([]HardwareType{typeA, typeB, typeV}, all), "b")); diff != "" {
		t.Errorf("b with [DEFAULT]default_power_interface=pb (-want +got):\n%s", diff)
	}
	if _, ok := NewRegistry([]HardwareType{typeA, typeB}, Enabled{Types: []string{"b"}}).Properties("a"); ok {
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
