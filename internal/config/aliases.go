package config

import "gopkg.in/ini.v1"

// aliases are deprecated option names and the options they stand for:
// ironic-inspector's names of what Ironic now has under [inspector]. The
// new name wins when both are set.
var aliases = []struct{ oldSection, oldKey, section, key string }{
	{"processing", "add_ports", "inspector", "add_ports"},
	{"processing", "keep_ports", "inspector", "keep_ports"},
	{"processing", "update_pxe_enabled", "inspector", "update_pxe_enabled"},
	{"capabilities", "cpu_flags", "inspector", "cpu_capabilities"},
	{"pci_devices", "alias", "inspector", "pci_device_alias"},
}

// applyAliases copies each deprecated option set in f (file or
// environment) to its new name when that is not set.
func applyAliases(f *ini.File) {
	for _, a := range aliases {
		old, err := f.GetSection(a.oldSection)
		if err != nil || !old.HasKey(a.oldKey) {
			continue
		}
		sec := f.Section(a.section)
		if sec.HasKey(a.key) {
			continue
		}
		_, _ = sec.NewKey(a.key, old.Key(a.oldKey).String())
	}
}
