package main

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	irules "github.com/ferrometal/ferro/internal/inspection/rules"
)

// ferro rules convert prints rules Ironic's schema accepts, warns where
// they behave differently, and fails on what it cannot convert.
func TestRulesConvert(t *testing.T) {
	in := `{"rules":[
	  {"uuid":"2c7f5e0a-4b1d-4e57-9a0e-1a2b3c4d5e6f","description":"rack","scope":"small",
	   "conditions":[{"op":"ne","field":"data://inventory.system_vendor.manufacturer","value":"QEMU"},
	                 {"op":"ge","field":"memory_mb","value":131072}],
	   "actions":[{"action":"set-attribute","path":"/extra/rack","value":"{data[inventory][bmc_address]}"},
	              {"action":"add-trait","name":"CUSTOM_BIG"}]},
	  {"conditions":[{"op":"bogus","field":"cpus","value":1}],"actions":[{"action":"fail","message":"x"}]}]}`
	var stdout, stderr bytes.Buffer
	out, warnings, err := convertRules(strings.NewReader(in))
	if err == nil || !strings.Contains(err.Error(), "rule 1") {
		t.Errorf("error %v, want one for rule 1", err)
	}
	if len(out) != 1 {
		t.Fatalf("%d rules converted, want 1", len(out))
	}
	b, _ := json.Marshal(out[0])
	r, perr := irules.Parse(b, false)
	if perr != nil {
		t.Fatalf("Ironic's schema refuses the converted rule %s: %v", b, perr)
	}
	if r.UUID != "2c7f5e0a-4b1d-4e57-9a0e-1a2b3c4d5e6f" || len(r.Conditions) != 3 || !r.Conditions[1].Invert || r.Conditions[1].Op != "eq" {
		t.Errorf("converted rule %s", b)
	}
	if len(warnings) != 1 || !strings.Contains(warnings[0], "memory_mb") {
		t.Errorf("warnings %q", warnings)
	}
	if rc := run(t.Context(), []string{"rules", "--help"}, &stdout, &stderr); rc != 0 || !strings.Contains(stdout.String(), "ferro rules convert") {
		t.Errorf("rules --help: %d %q", rc, stdout.String())
	}
}
