package hooks

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/ferrometal/ferro/internal/baremetal"
	"github.com/google/go-cmp/cmp"
)

// body builds a payload from interface JSON objects and a BOOTIF.
func body(bootif string, ifaces ...string) []byte {
	return fmt.Appendf(nil, `{"inventory":{"interfaces":[%s],"bmc_address":"0.0.0.0","bmc_v6address":"fd00::9"},"boot_interface":%q}`,
		strings.Join(ifaces, ","), bootif)
}

func TestValidateInterfaces_Selection(t *testing.T) {
	eth0 := `{"name":"eth0","mac_address":"52:54:00:00:00:01","ipv4_address":"192.0.2.1"}`
	eth1 := `{"name":"eth1","mac_address":"52:54:00:00:00:02"}`
	eth2 := `{"name":"eth2","mac_address":"52:54:00:00:00:03","ipv6_address":"fe80::1%eth2","client_id":"ff:00:00:00:01"}`
	lo := `{"name":"lo","mac_address":"00:00:00:00:00:00","ipv4_address":"127.0.0.1"}`
	dummy := `{"name":"dummy0","mac_address":"52:54:00:00:00:04","ipv4_address":"127.0.0.2"}`
	bad := `{"name":"ib0","mac_address":"80:00:02:08:fe:80:00:00:00:00:00:00"}`
	noMAC := `{"name":"tun0","mac_address":null,"ipv4_address":"10.8.0.1"}`
	noName := `{"mac_address":"52:54:00:00:00:05"}`

	tests := []struct {
		name     string
		addPorts string
		body     []byte
		wantAll  []string // name/pxe/ip
		wantSel  []string
		wantErr  string
	}{
		{
			name: "pxe takes the BOOTIF interface", addPorts: "pxe",
			body:    body("01-52-54-00-00-00-01", eth0, eth1, eth2),
			wantAll: []string{"eth0 pxe 192.0.2.1", "eth1 -", "eth2 - fe80::1"},
			wantSel: []string{"eth0 pxe 192.0.2.1"},
		},
		{
			name: "pxe without BOOTIF takes every interface with an IP", addPorts: "pxe",
			body:    body("", eth0, eth1, eth2),
			wantAll: []string{"eth0 - 192.0.2.1", "eth1 -", "eth2 - fe80::1"},
			wantSel: []string{"eth0 - 192.0.2.1", "eth2 - fe80::1"},
		},
		{
			name: "BOOTIF in colon form, upper case", addPorts: "pxe",
			body:    body("52:54:00:00:00:03", eth0, eth1, eth2),
			wantAll: []string{"eth0 - 192.0.2.1", "eth1 -", "eth2 pxe fe80::1"},
			wantSel: []string{"eth2 pxe fe80::1"},
		},
		{
			name: "pxe skips the BOOTIF interface when it has no IP", addPorts: "pxe",
			body:    body("01-52-54-00-00-00-02", eth0, eth1),
			wantErr: "No suitable interfaces found in eth0 (mac 52:54:00:00:00:01",
		},
		{
			name: "active takes the interfaces with an IP", addPorts: "active",
			body:    body("01-52-54-00-00-00-02", eth0, eth1, eth2),
			wantAll: []string{"eth0 - 192.0.2.1", "eth1 pxe", "eth2 - fe80::1"},
			wantSel: []string{"eth0 - 192.0.2.1", "eth2 - fe80::1"},
		},
		{
			name: "all takes every valid interface", addPorts: "all",
			body:    body("01-52-54-00-00-00-01", eth0, eth1, eth2, lo, dummy, bad, noMAC, noName),
			wantAll: []string{"eth0 pxe 192.0.2.1", "eth1 -", "eth2 - fe80::1", "lo - 127.0.0.1", "dummy0 - 127.0.0.2"},
			wantSel: []string{"eth0 pxe 192.0.2.1", "eth1 -", "eth2 - fe80::1"},
		},
		{
			name: "disabled still selects, as active", addPorts: "disabled",
			body:    body("01-52-54-00-00-00-01", eth0, eth1),
			wantAll: []string{"eth0 pxe 192.0.2.1", "eth1 -"},
			wantSel: []string{"eth0 pxe 192.0.2.1"},
		},
		{
			name: "no valid interface", addPorts: "all",
			body:    body("", bad, noMAC),
			wantErr: "No interfaces supplied by the ramdisk",
		},
		{
			name: "only loopback", addPorts: "all",
			body:    body("", lo),
			wantErr: "No suitable interfaces found",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := DefaultConfig()
			cfg.AddPorts = tt.addPorts
			d := decodeData(t, tt.body)
			err := build(t, cfg, "validate_interfaces")[0].BeforeProcessing(context.Background(), d)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("got %v, want an error containing %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			show := func(ifaces []*Interface) []string {
				var out []string
				for _, i := range ifaces {
					s := i.Name + " -"
					if i.PXE {
						s = i.Name + " pxe"
					}
					if i.IP != "" {
						s += " " + i.IP
					}
					out = append(out, s)
				}
				return out
			}
			if diff := cmp.Diff(tt.wantAll, show(d.AllInterfaces)); diff != "" {
				t.Errorf("all_interfaces (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.wantSel, show(d.Interfaces)); diff != "" {
				t.Errorf("interfaces (-want +got):\n%s", diff)
			}
			var macs []string
			for _, i := range d.Interfaces {
				macs = append(macs, i.MAC)
			}
			if diff := cmp.Diff(macs, d.MACs); diff != "" {
				t.Errorf("macs (-want +got):\n%s", diff)
			}
			if d.IPMIAddress != "" || d.IPMIv6Address != "fd00::9" {
				t.Errorf("ipmi addresses: %q %q", d.IPMIAddress, d.IPMIv6Address)
			}
		})
	}
}

func TestValidateInterfaces_ProcessedData(t *testing.T) {
	d := loadData(t, "example.json")
	run(t, build(t, DefaultConfig(), "validate_interfaces"), d, newNode(t, nil))
	m := d.Map()
	want := map[string]any{
		"eno1": map[string]any{"ip": "198.51.100.21", "mac": "3c:fd:fe:11:22:30", "client_id": nil, "pxe": true},
		"eno2": map[string]any{"ip": nil, "mac": "3c:fd:fe:11:22:31", "client_id": nil, "pxe": false},
	}
	if diff := cmp.Diff(want, m["all_interfaces"]); diff != "" {
		t.Errorf("all_interfaces (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(map[string]any{"eno1": want["eno1"]}, m["interfaces"]); diff != "" {
		t.Errorf("interfaces (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]any{"3c:fd:fe:11:22:30"}, m["macs"]); diff != "" {
		t.Errorf("macs (-want +got):\n%s", diff)
	}
	if m["ipmi_address"] != "198.51.100.121" || m["ipmi_v6address"] != nil {
		t.Errorf("ipmi addresses: %v %v", m["ipmi_address"], m["ipmi_v6address"])
	}
}

func bmPort(uuid, mac string, pxe bool) baremetal.Port {
	return baremetal.Port{UUID: uuid, Address: mac, PXEEnabled: pxe}
}

func TestValidateInterfaces_Ports(t *testing.T) {
	// eth0 (PXE, IP, client-id) and eth1 (IP), BOOTIF absent so add_ports=pxe
	// takes both, and upstream marks neither as PXE.
	eth0 := `{"name":"eth0","mac_address":"52:54:00:00:00:01","ipv4_address":"192.0.2.1","client_id":"ff:00:00:00:01"}`
	eth1 := `{"name":"eth1","mac_address":"52:54:00:00:00:02","ipv4_address":"192.0.2.2"}`
	eth2 := `{"name":"eth2","mac_address":"52:54:00:00:00:03"}`
	withBootif := body("01-52-54-00-00-00-01", eth0, eth1, eth2)

	tests := []struct {
		name  string
		cfg   func(*Config)
		body  []byte
		state string
		ports []baremetal.Port
		want  Changes
	}{
		{
			name: "creates the PXE port with its client-id",
			body: withBootif,
			want: Changes{CreatePorts: []PortCreate{{Address: "52:54:00:00:00:01", PXEEnabled: true, Extra: map[string]any{"client-id": "ff:00:00:00:01"}}}},
		},
		{
			name: "without BOOTIF creates ports for every interface with an IP, not PXE enabled",
			body: body("", eth0, eth1, eth2),
			want: Changes{CreatePorts: []PortCreate{
				{Address: "52:54:00:00:00:01", PXEEnabled: false, Extra: map[string]any{"client-id": "ff:00:00:00:01"}},
				{Address: "52:54:00:00:00:02", PXEEnabled: false},
			}},
		},
		{
			name:  "does not recreate an existing port, fixes its pxe_enabled",
			body:  withBootif,
			ports: []baremetal.Port{bmPort("p1", "52:54:00:00:00:01", false), bmPort("p9", "52:54:00:00:00:99", true)},
			want: Changes{PatchPorts: []PortPatch{{PortRef: PortRef{UUID: "p1", Address: "52:54:00:00:00:01"},
				Ops: []PatchOp{{Op: "replace", Path: "/pxe_enabled", Value: true}}}}},
		},
		{
			name:  "an existing port with the right pxe_enabled is left alone",
			body:  withBootif,
			ports: []baremetal.Port{bmPort("p1", "52:54:00:00:00:01", true)},
			want:  Changes{},
		},
		{
			name:  "without update_pxe_enabled",
			cfg:   func(c *Config) { c.UpdatePXEEnabled = false },
			body:  withBootif,
			ports: []baremetal.Port{bmPort("p1", "52:54:00:00:00:01", false)},
			want:  Changes{},
		},
		{
			name:  "without overwrite_existing",
			cfg:   func(c *Config) { c.OverwriteExisting = false },
			body:  withBootif,
			ports: []baremetal.Port{bmPort("p1", "52:54:00:00:00:01", false)},
			want:  Changes{},
		},
		{
			name:  "keep_ports present deletes ports of absent MACs",
			cfg:   func(c *Config) { c.KeepPorts = "present" },
			body:  withBootif,
			ports: []baremetal.Port{bmPort("p2", "52:54:00:00:00:02", false), bmPort("p3", "52:54:00:00:00:03", false), bmPort("p9", "52:54:00:00:00:99", false)},
			want: Changes{
				CreatePorts: []PortCreate{{Address: "52:54:00:00:00:01", PXEEnabled: true, Extra: map[string]any{"client-id": "ff:00:00:00:01"}}},
				DeletePorts: []PortRef{{UUID: "p9", Address: "52:54:00:00:00:99"}},
			},
		},
		{
			name:  "keep_ports added keeps only the selected interfaces' ports",
			cfg:   func(c *Config) { c.KeepPorts = "added" },
			body:  withBootif,
			ports: []baremetal.Port{bmPort("p1", "52:54:00:00:00:01", true), bmPort("p2", "52:54:00:00:00:02", false), bmPort("p9", "52:54:00:00:00:99", false)},
			want: Changes{DeletePorts: []PortRef{
				{UUID: "p2", Address: "52:54:00:00:00:02"},
				{UUID: "p9", Address: "52:54:00:00:00:99"},
			}},
		},
		{
			name:  "active node: ports created, none deleted or fixed",
			cfg:   func(c *Config) { c.KeepPorts = "present" },
			body:  body("01-52-54-00-00-00-02", eth0, eth1),
			state: "active",
			ports: []baremetal.Port{bmPort("p1", "52:54:00:00:00:01", true), bmPort("p9", "52:54:00:00:00:99", false)},
			want:  Changes{CreatePorts: []PortCreate{{Address: "52:54:00:00:00:02", PXEEnabled: true}}},
		},
		{
			name:  "add_ports disabled creates nothing",
			cfg:   func(c *Config) { c.AddPorts = "disabled" },
			body:  withBootif,
			ports: []baremetal.Port{bmPort("p1", "52:54:00:00:00:01", false)},
			want: Changes{PatchPorts: []PortPatch{{PortRef: PortRef{UUID: "p1", Address: "52:54:00:00:00:01"},
				Ops: []PatchOp{{Op: "replace", Path: "/pxe_enabled", Value: true}}}}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := DefaultConfig()
			if tt.cfg != nil {
				tt.cfg(&cfg)
			}
			n := newNode(t, nil, tt.ports...)
			if tt.state != "" {
				n.doc["provision_state"] = tt.state
			}
			run(t, build(t, cfg, "validate_interfaces"), decodeData(t, tt.body), n)
			if diff := cmp.Diff(tt.want, n.Changes()); diff != "" {
				t.Errorf("changes (-want +got):\n%s", diff)
			}
		})
	}
}
