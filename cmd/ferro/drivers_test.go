package main

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

// The [DEFAULT]enabled_* defaults come from the hardware types' folders;
// these are the lists ferro has always shipped with, so that a change to a
// folder that changes them is seen.
func TestConfigDefaults_FromTheHardwareTypes(t *testing.T) {
	d := defaultConfig().Default
	want := map[string][]string{
		"hardware_types": {"fake-hardware", "ipmi", "redfish"},
		"boot":           {"fake", "pxe", "ipxe", "redfish-virtual-media"},
		"deploy":         {"fake", "direct"},
		"inspect":        {"fake", "agent", "inspector", "no-inspect", "redfish"},
		"management":     {"fake", "ipmitool", "redfish"},
		"network":        {"noop", "flat", "neutron"},
		"power":          {"fake", "ipmitool", "redfish"},
		"raid":           {"fake", "no-raid", "agent", "redfish"},
		"vendor":         {"fake", "no-vendor", "ipmitool"},
		"console":        {"fake", "no-console"},
		"bios":           {"fake", "no-bios"},
		"firmware":       {"fake", "no-firmware", "redfish"},
		"rescue":         {"fake", "no-rescue"},
		"storage":        {"fake", "noop"},
	}
	got := map[string][]string{"hardware_types": d.EnabledHardwareTypes}
	for kind := range want {
		if kind != "hardware_types" {
			got[kind] = d.Enabled(kind)
		}
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("enabled_* defaults (-want +got):\n%s", diff)
	}
}
