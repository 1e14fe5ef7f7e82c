package hooks

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestBuild_Defaults(t *testing.T) {
	want := []string{"ramdisk_error", "root_disk_selection", "scheduler", "validate_interfaces", "capabilities", "pci_devices", "lldp_basic", "local_link_connection"}
	if diff := cmp.Diff(want, Default); diff != "" {
		t.Errorf("Default (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(want[:6], UpstreamDefault); diff != "" {
		t.Errorf("UpstreamDefault (-want +got):\n%s", diff)
	}
	hooks := build(t, DefaultConfig(), append(Default, "extra_hardware")...)
	var names []string
	for _, h := range hooks {
		names = append(names, h.Name())
	}
	if diff := cmp.Diff(append(want, "extra_hardware"), names); diff != "" {
		t.Errorf("built hooks (-want +got):\n%s", diff)
	}
}

func TestBuild_Errors(t *testing.T) {
	cfg := func(edit func(*Config)) Config {
		c := DefaultConfig()
		edit(&c)
		return c
	}
	tests := []struct {
		name  string
		hooks []string
		cfg   Config
		want  string
	}{
		{"unknown hook", []string{"ramdisk_error", "raid_device"}, DefaultConfig(), `unknown processing hook "raid_device"`},
		{"dependency after", []string{"lldp_basic", "validate_interfaces"}, DefaultConfig(), "lldp_basic requires validate_interfaces to be enabled before it"},
		{"dependency missing", []string{"local_link_connection"}, DefaultConfig(), "local_link_connection requires validate_interfaces"},
		{"add_ports", UpstreamDefault, cfg(func(c *Config) { c.AddPorts = "some" }), `[processing]add_ports: "some"`},
		{"keep_ports", UpstreamDefault, cfg(func(c *Config) { c.KeepPorts = "none" }), `[processing]keep_ports: "none"`},
		{"disabled and added", UpstreamDefault, cfg(func(c *Config) { c.AddPorts, c.KeepPorts = "disabled", "added" }), "add_ports set to disabled and keep_ports set to added"},
		{"cpu_flags", UpstreamDefault, cfg(func(c *Config) { c.CPUFlags = []string{"vmx"} }), `[capabilities]cpu_flags: "vmx" is not flag:capability`},
		{"alias JSON", UpstreamDefault, cfg(func(c *Config) { c.PCIAliases = []string{"{"} }), "[pci_devices]alias"},
		{"alias keys", UpstreamDefault, cfg(func(c *Config) { c.PCIAliases = []string{`{"vendor_id":"10de","name":"gpu"}`} }), "want exactly the string keys"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Build(tt.hooks, tt.cfg)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("Build: got %v, want an error containing %q", err, tt.want)
			}
		})
	}
}

func TestRamdiskError(t *testing.T) {
	hooks := build(t, DefaultConfig(), "ramdisk_error")
	err := RunBeforeProcessing(context.Background(), hooks, loadData(t, "ramdisk-error.json"))
	want := "Preprocessing hook ramdisk_error: Ramdisk reported error: The following errors were encountered:\n* collector lldp failed: [Errno 19] No such device: 'eth1'"
	if err == nil || err.Error() != want {
		t.Errorf("got %v, want %q", err, want)
	}
	var herr *Error
	if !errors.As(err, &herr) || herr.Hook != "ramdisk_error" {
		t.Errorf("error %v is not a *Error of ramdisk_error", err)
	}
	for _, body := range []string{`{"inventory":{"interfaces":[]},"error":null}`, `{"inventory":{"interfaces":[]},"error":""}`} {
		if err := RunBeforeProcessing(context.Background(), hooks, decodeData(t, []byte(body))); err != nil {
			t.Errorf("%s: %v", body, err)
		}
	}
}

// Upstream runs every pre-processing hook and reports all failures.
func TestRunBeforeProcessing_CollectsAllFailures(t *testing.T) {
	hooks := build(t, DefaultConfig(), "ramdisk_error", "validate_interfaces")
	d := decodeData(t, []byte(`{"inventory":{"interfaces":[{"name":"eth0","mac_address":"bogus"}]},"error":"disk on fire"}`))
	err := RunBeforeProcessing(context.Background(), hooks, d)
	want := "Preprocessing hook ramdisk_error: Ramdisk reported error: disk on fire\nPreprocessing hook validate_interfaces: No interfaces supplied by the ramdisk"
	if err == nil || err.Error() != want {
		t.Errorf("got %v, want %q", err, want)
	}
}

func TestRunBeforeUpdate_StopsAtFirstFailure(t *testing.T) {
	hooks := build(t, DefaultConfig(), "root_disk_selection", "scheduler")
	d := loadData(t, "example.json")
	n := newNode(t, map[string]any{"root_device": map[string]any{"serial": "nope"}})
	err := RunBeforeUpdate(context.Background(), hooks, d, n)
	var herr *Error
	if !errors.As(err, &herr) || herr.Hook != "root_disk_selection" || err.Error() != "No disks satisfied root device hints" {
		t.Fatalf("got %v", err)
	}
	if !n.Changes().IsZero() {
		t.Errorf("planned changes after the failure: %+v", n.Changes())
	}
}
