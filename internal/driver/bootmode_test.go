package driver

import (
	"testing"

	"github.com/ferrometal/ferro/internal/baremetal"
)

func TestBootMode(t *testing.T) {
	for _, tc := range []struct {
		name string
		node baremetal.Node
		want string
	}{
		{"default", baremetal.Node{}, "uefi"},
		{"properties string", baremetal.Node{Properties: baremetal.JSON{"capabilities": "cpu_vt:true,boot_mode:bios"}}, "bios"},
		{"properties object", baremetal.Node{Properties: baremetal.JSON{"capabilities": map[string]any{"boot_mode": "bios"}}}, "bios"},
		{"malformed entry skipped", baremetal.Node{Properties: baremetal.JSON{"capabilities": "x,boot_mode:bios"}}, "bios"},
		{"instance_info wins", baremetal.Node{
			InstanceInfo: baremetal.JSON{"capabilities": `{"boot_mode": "uefi"}`},
			Properties:   baremetal.JSON{"capabilities": "boot_mode:bios"}}, "uefi"},
		{"secure boot", baremetal.Node{
			InstanceInfo: baremetal.JSON{"capabilities": map[string]any{"secure_boot": "true"}},
			Properties:   baremetal.JSON{"capabilities": "boot_mode:bios"}}, "uefi"},
		{"driver_internal_info last", baremetal.Node{DriverInternalInfo: baremetal.JSON{"deploy_boot_mode": "bios"}}, "bios"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := BootMode(&tc.node, "uefi"); got != tc.want {
				t.Errorf("BootMode = %q, want %q", got, tc.want)
			}
		})
	}
}
