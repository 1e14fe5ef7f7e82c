package config

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// The [processing] names of the port options, [capabilities]cpu_flags and
// [pci_devices]alias keep working as aliases of Ironic's [inspector]
// options; the [inspector] name wins when both are set.
func TestLoad_DeprecatedAliases(t *testing.T) {
	load := func(t *testing.T, conf string, env ...string) *Config {
		t.Helper()
		path := filepath.Join(t.TempDir(), "ferro.conf")
		if err := os.WriteFile(path, []byte(conf), 0o600); err != nil {
			t.Fatal(err)
		}
		cfg, _, err := Load(path, env, testHardware)
		if err != nil {
			t.Fatal(err)
		}
		return cfg
	}
	cfg := load(t, "[processing]\nadd_ports = all\nkeep_ports = present\nupdate_pxe_enabled = false\n[capabilities]\ncpu_flags = vmx:virt\n")
	if cfg.Inspector.AddPorts != "all" || cfg.Inspector.KeepPorts != "present" || cfg.Inspector.UpdatePXEEnabled ||
		!slices.Equal(cfg.Inspector.CPUCapabilities, []string{"vmx:virt"}) {
		t.Errorf("aliases not applied: %+v", cfg.Inspector)
	}
	cfg = load(t, "[processing]\nadd_ports = all\n[inspector]\nadd_ports = active\n")
	if cfg.Inspector.AddPorts != "active" {
		t.Errorf("[inspector]add_ports %q, want the [inspector] value to win", cfg.Inspector.AddPorts)
	}
	cfg = load(t, "", "FERRO_PROCESSING_KEEP_PORTS=added")
	if cfg.Inspector.KeepPorts != "added" {
		t.Errorf("alias from the environment: keep_ports %q", cfg.Inspector.KeepPorts)
	}
	cfg = load(t, "")
	if cfg.Inspector.AddPorts != "pxe" || cfg.Inspector.KeepPorts != "all" || !cfg.Inspector.UpdatePXEEnabled ||
		cfg.InspectionRules.MaskSecrets != "always" || !slices.Equal(cfg.Inspector.Hooks, []string{"$default_hooks"}) {
		t.Errorf("defaults: %+v %+v", cfg.Inspector, cfg.InspectionRules)
	}
	if _, _, err := Load("", []string{"FERRO_INSPECTION_RULES_MASK_SECRETS=sometimes"}, testHardware); err == nil {
		t.Error("mask_secrets=sometimes accepted")
	}
}
