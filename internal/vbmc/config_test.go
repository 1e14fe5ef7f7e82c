package vbmc

import (
	"strings"
	"testing"
)

const goodConfig = `{"username": "admin", "password": "secret",
 "redfish": {"listen": "127.0.0.1:8000"},
 "machines": [{"name": "m1", "backend": "fake", "ipmi_listen": "127.0.0.1:6230",
   "cpus": 2, "memory_mb": 2048, "macs": ["52:54:00:aa:00:01"], "disks_gb": [20]}]}`

func TestParseConfig_AcceptsTheDocumentedExampleWithDefaults(t *testing.T) {
	cfg, err := ParseConfig([]byte(goodConfig))
	if err != nil {
		t.Fatal(err)
	}
	m := cfg.Machines[0]
	if cfg.MaxImageMB != 2048 || m.Manufacturer != "ferro" || m.Serial != "m1" {
		t.Errorf("defaults: max_image_mb %d, manufacturer %q, serial %q", cfg.MaxImageMB, m.Manufacturer, m.Serial)
	}
	q, err := ParseConfig([]byte(strings.Replace(goodConfig, `"backend": "fake"`, `"backend": "qemu", "qemu": {"firmware": "uefi"}`, 1)))
	if err != nil {
		t.Fatal(err)
	}
	if qc := q.Machines[0].QEMU; qc.Binary != "qemu-system-x86_64" || qc.Machine != "pc" || qc.OVMFCode == "" || qc.NICModel != "virtio-net-pci" {
		t.Errorf("qemu defaults: %+v", qc)
	}
}

func TestParseConfig_NamesEveryBadField(t *testing.T) {
	cases := []struct {
		name, from, to, want string
	}{
		{"unknown field", `"cpus": 2`, `"cpus": 2, "gpus": 1`, `unknown field "gpus"`},
		{"memory not GiB", `"memory_mb": 2048`, `"memory_mb": 1500`, "machines[0].memory_mb: 1500 must be a positive multiple of 1024"},
		{"no cpus", `"cpus": 2`, `"cpus": 0`, "machines[0].cpus: 0 is not between 1"},
		{"bad mac", `52:54:00:aa:00:01`, `52:54:00:aa:00`, `machines[0].macs[0]: "52:54:00:aa:00" is not a MAC address`},
		{"multicast mac", `52:54:00:aa:00:01`, `01:54:00:aa:00:01`, "machines[0].macs[0]: 01:54:00:aa:00:01 is a multicast address"},
		{"bad backend", `"backend": "fake"`, `"backend": "kvm"`, `machines[0].backend: "kvm" is not "fake" or "qemu"`},
		{"qemu without section", `"backend": "fake"`, `"backend": "qemu"`, "machines[0].qemu: backend \"qemu\" needs a qemu section"},
		{"qemu section on fake", `"disks_gb": [20]`, `"disks_gb": [20], "qemu": {}`, `machines[0].qemu: only for backend "qemu"`},
		{"bad name", `"name": "m1"`, `"name": "m/1"`, `machines[0].name: "m/1" must be`},
		{"bad listen", `127.0.0.1:8000`, `8000`, "redfish.listen:"},
		{"host name listen", `127.0.0.1:6230`, `bmc.example:6230`, "machines[0].ipmi_listen:"},
		{"no password", `"password": "secret"`, `"password": ""`, "password: must be 1 to 20 characters"},
		{"sku with comma", `"disks_gb": [20]`, `"disks_gb": [20], "sku": "a,b"`, "machines[0].sku: at most 64 characters, no commas"},
		{"zero disk", `"disks_gb": [20]`, `"disks_gb": [0]`, "machines[0].disks_gb[0]: 0 is not between 1"},
		{"no machines", `"machines": [{`, `"machines": [], "x": [{`, `unknown field "x"`},
		{"trailing data", `}]}`, `}]} {}`, "trailing data"},
		{"firmware", `"backend": "fake"`, `"backend": "qemu", "qemu": {"firmware": "coreboot"}`, `machines[0].qemu.firmware: "coreboot" is not "bios" or "uefi"`},
		{"taps count", `"backend": "fake"`, `"backend": "qemu", "qemu": {"taps": ["tap0", "tap1"]}`, "machines[0].qemu.taps: 2 tap devices for 1 MAC addresses"},
	}
	for _, tc := range cases {
		data := strings.Replace(goodConfig, tc.from, tc.to, 1)
		if data == goodConfig {
			t.Fatalf("%s: replacement %q not found", tc.name, tc.from)
		}
		_, err := ParseConfig([]byte(data))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want it to contain %q", tc.name, err, tc.want)
		}
	}

	two := strings.Replace(goodConfig, `"disks_gb": [20]}]`, `"disks_gb": [20]}, {"name": "m1", "backend": "fake", "ipmi_listen": "127.0.0.1:6230", "cpus": 1, "memory_mb": 1024, "macs": ["52:54:00:AA:00:01"]}]`, 1)
	_, err := ParseConfig([]byte(two))
	for _, want := range []string{`machines[1].name: "m1" is already machines[0]'s`, "machines[1].ipmi_listen: 127.0.0.1:6230 is already machines[0]'s", "machines[1].macs[0]: 52:54:00:AA:00:01 is already machines[0].macs[0]'s"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("duplicates: error %v, want it to contain %q", err, want)
		}
	}
}
