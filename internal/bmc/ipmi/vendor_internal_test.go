package ipmi

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/ferrometal/ferro/internal/testing/ferrotest"
)

// The registry is read as ipmitool reads it: a number at the start of a
// line, its organisation on the next line indented by exactly two spaces,
// the first entry winning; 0 and 0xFFFFF are ipmitool's own names.
func TestManufacturerName_ReadsTheRegistryAsIpmitool(t *testing.T) {
	reg := filepath.Join(t.TempDir(), "enterprise-numbers.txt")
	os.WriteFile(reg, []byte(`PRIVATE ENTERPRISE NUMBERS

Decimal
| Organization
0
  Reserved
    Internet Assigned Numbers Authority
674
  Dell Inc.
    David L. Douglas
 42
  Not an entry: the number is indented
43
   Not a name: three spaces
10876
  Super Micro Computer Inc.
10876
  A later duplicate
`), 0o644)
	m := &manufacturerNames{registry: reg, cache: map[uint32]string{}}
	for id, want := range map[uint32]string{
		0: "Unknown", 0x0fffff: "Unspecified", 674: "Dell Inc.", 10876: "Super Micro Computer Inc.",
		42: "Unknown (0x2A)", 43: "Unknown (0x2B)", 343: "Unknown (0x157)",
	} {
		if got := m.name(id); got != want {
			t.Errorf("name(%d) = %q, want %q", id, got, want)
		}
	}
	// Without the registry file, the built-in names stand in.
	m = &manufacturerNames{registry: filepath.Join(t.TempDir(), "none"), cache: map[uint32]string{}}
	if got := m.name(343); got != "Intel Corporation" {
		t.Errorf("built-in name(343) = %q", got)
	}
	if got := m.name(99999); got != "Unknown (0x1869F)" {
		t.Errorf("name(99999) = %q", got)
	}
}

// The built-in names are the registry's, where the registry is installed.
func TestManufacturerName_BuiltInNamesMatchTheRegistry(t *testing.T) {
	if _, err := os.Stat(IANARegistry); err != nil {
		ferrotest.SkipOrFail(t, "no %s (Debian's ipmitool installs it): %v", IANARegistry, err)
	}
	for id, builtin := range serverMakers {
		name, found, err := lookupRegistry(IANARegistry, id)
		if err != nil || !found || name != builtin {
			t.Errorf("%d: built in %q, the registry says %q (found %v, %v)", id, builtin, name, found, err)
		}
	}
}
