package main

import (
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/ferrometal/ferro/internal/inspection"
)

func TestPipelineOptions(t *testing.T) {
	cfg := defaultConfig()
	cfg.Inspector.Hooks = []string{"$default_hooks", "parse-lldp", "local-link-connection"}
	cfg.Inspector.AddPorts = "all"
	o, err := pipelineOptions(cfg, inspection.Ironic, nil)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"ramdisk-error", "validate-interfaces", "ports", "architecture", "parse-lldp", "local-link-connection"}
	if !slices.Equal(o.Hooks, want) || o.AddPorts != "all" || len(o.CPUCapabilities) != 6 {
		t.Errorf("agent pipeline options: %+v", o)
	}
	if _, err := inspection.New(o); err != nil {
		t.Errorf("default agent pipeline: %v", err)
	}
	legacy, err := pipelineOptions(cfg, inspection.Inspector, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(legacy.Hooks, "lldp_basic") || legacy.AddPorts != "all" {
		t.Errorf("inspector pipeline options: %+v", legacy)
	}

	// A hook whose dependency is not before it refuses the start.
	cfg.Inspector.Hooks = []string{"ramdisk-error", "ports", "validate-interfaces"}
	o, err = pipelineOptions(cfg, inspection.Ironic, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := inspection.New(o); err == nil || !strings.Contains(err.Error(), "Hook ports requires these missing hooks to be enabled before it: validate-interfaces") {
		t.Errorf("ports before validate-interfaces: %v", err)
	}
	cfg.Inspector.Hooks = []string{"$default_hooks", "no-such-hook"}
	o, _ = pipelineOptions(cfg, inspection.Ironic, nil)
	if _, err := inspection.New(o); err == nil || !strings.Contains(err.Error(), "The following hook(s) are missing or failed to load: no-such-hook") {
		t.Errorf("unknown hook: %v", err)
	}
}

// [inspection_rules]built_in_rules is loaded into the agent pipeline; a
// file that does not parse refuses the start.
func TestPipelineOptions_BuiltInRules(t *testing.T) {
	dir := t.TempDir()
	good := dir + "/rules.yaml"
	if err := os.WriteFile(good, []byte("- priority: -10\n  actions: [{op: log, args: {msg: hello}}]\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg := defaultConfig()
	cfg.InspectionRules.BuiltInRules = good
	o, err := pipelineOptions(cfg, inspection.Ironic, nil)
	if err != nil || len(o.BuiltInRules) != 1 || o.BuiltInRules[0].Priority != -10 {
		t.Fatalf("built-in rules %v, %v", o.BuiltInRules, err)
	}
	if _, err := inspection.New(o); err != nil {
		t.Fatal(err)
	}
	if o, _ := pipelineOptions(cfg, inspection.Inspector, nil); len(o.BuiltInRules) != 0 {
		t.Error("the inspector path got built-in rules")
	}
	bad := dir + "/bad.yaml"
	if err := os.WriteFile(bad, []byte("- actions: []\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg.InspectionRules.BuiltInRules = bad
	if _, err := pipelineOptions(cfg, inspection.Ironic, nil); err == nil || !strings.Contains(err.Error(), "[inspection_rules]built_in_rules") {
		t.Errorf("bad file: %v", err)
	}
}
