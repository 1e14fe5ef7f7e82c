// Package testhw is a hardware type that exists for its test: it shows
// that a hardware type is one folder. Its declaration, its interfaces and
// the test that sees it in the API are all here; no other file names it
// (the layering test in internal/layers_test.go keeps it out of every
// binary), so ferro never ships it.
//
// A real type adds one more thing: its entry in cmd/ferro/drivers.go's
// list and its Register call there (docs/development.md).
package testhw

import (
	"context"
	"fmt"
	"strings"

	"github.com/ferrometal/ferro/internal/driver"
	"github.com/ferrometal/ferro/internal/driver/fake"
)

// Name is the name of its power and management interfaces.
const Name = "test-bmc"

// HardwareType is test-hardware: its own power and management, the shared
// boot, network and inspect interfaces.
var HardwareType = driver.HardwareType{
	Name: "test-hardware",
	Supported: driver.SharedInterfaces(map[string][]string{
		"power": {Name}, "management": {Name}, "boot": {"ipxe", "pxe"}, "inspect": {"no-inspect", "inspector"},
	}),
	Interfaces: []string{Name},
	Properties: []driver.Property{
		{Name: "test_bmc_address", Description: "Address of the test BMC. Required.", Required: true},
		{Name: "test_bmc_username", Description: "User name on the test BMC. Optional."},
		{Name: "test_bmc_password", Description: "Password on the test BMC. Optional.", Secret: true},
	},
}

// Register adds the power and management interfaces to r.
func Register(r *driver.Registry) {
	r.RegisterPower(Name, Power{})
	r.RegisterManagement(Name, Management{})
}

// validate checks driver_info against the schema.
func validate(t *driver.Task) error {
	if missing := driver.MissingProperties(HardwareType.Properties, t.Node.DriverInfo); len(missing) > 0 {
		return fmt.Errorf("%w: the test BMC needs driver_info[%s]", driver.ErrMissingParameter, strings.Join(missing, "], driver_info["))
	}
	return nil
}

// Power keeps the power state on the node, as fake does, once driver_info
// validates.
type Power struct{ fake.Power }

// Validate checks driver_info.
func (Power) Validate(_ context.Context, t *driver.Task) error { return validate(t) }

// Management keeps the boot device on the node, as fake does.
type Management struct{ fake.Management }

// Validate checks driver_info.
func (Management) Validate(_ context.Context, t *driver.Task) error { return validate(t) }
