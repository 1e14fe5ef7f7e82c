package driver

import (
	"encoding/json"
	"strings"

	"github.com/ferrometal/ferro/internal/baremetal"
)

// Boot modes, as Ironic names them.
const (
	BootModeBIOS = "bios"
	BootModeUEFI = "uefi"
)

// BootMode returns the boot mode a node boots in, searched as Ironic's
// boot_mode_utils.get_boot_mode: secure boot requested in
// instance_info.capabilities means uefi; then instance_info.capabilities
// boot_mode, instance_info.deploy_boot_mode, properties.capabilities
// boot_mode, driver_internal_info.deploy_boot_mode; else def
// ([deploy]default_boot_mode).
func BootMode(n *baremetal.Node, def string) string {
	if v, _ := Capability(n.InstanceInfo["capabilities"], "secure_boot"); strings.EqualFold(v, "true") {
		return BootModeUEFI
	}
	if v, ok := Capability(n.InstanceInfo["capabilities"], "boot_mode"); ok {
		return v
	}
	if v, ok := n.InstanceInfo["deploy_boot_mode"].(string); ok && v != "" {
		return v
	}
	if v, ok := Capability(n.Properties["capabilities"], "boot_mode"); ok {
		return v
	}
	if v, ok := n.DriverInternalInfo["deploy_boot_mode"].(string); ok && v != "" {
		return v
	}
	return def
}

// Capability returns one capability from a capabilities value: Ironic's
// "key:value,key:value" string, a JSON object in a string, or an object.
// Malformed entries are skipped, as Ironic does.
func Capability(caps any, name string) (string, bool) {
	switch c := caps.(type) {
	case map[string]any:
		v, ok := c[name]
		if !ok || v == nil {
			return "", false
		}
		if s, ok := v.(string); ok {
			return s, s != ""
		}
		b, _ := json.Marshal(v)
		return string(b), true
	case string:
		if strings.HasPrefix(strings.TrimSpace(c), "{") {
			var m map[string]any
			if json.Unmarshal([]byte(c), &m) == nil {
				return Capability(m, name)
			}
		}
		for _, e := range strings.Split(c, ",") {
			k, v, ok := strings.Cut(e, ":")
			if !ok || strings.Contains(v, ":") {
				continue
			}
			if k, v = strings.TrimSpace(k), strings.TrimSpace(v); k == name && v != "" {
				return v, true
			}
		}
	}
	return "", false
}
