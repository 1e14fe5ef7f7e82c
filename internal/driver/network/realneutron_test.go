package network_test

import (
	"context"
	"errors"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/uuid"

	"github.com/ferrometal/ferro/internal/baremetal"
	"github.com/ferrometal/ferro/internal/dhcpopt"
	"github.com/ferrometal/ferro/internal/driver"
	"github.com/ferrometal/ferro/internal/driver/network"
	"github.com/ferrometal/ferro/internal/neutron"
	"github.com/ferrometal/ferro/internal/openstack"
	"github.com/ferrometal/ferro/internal/testing/neutrontest"
)

// TestRealNeutron_InspectionPortsLifecycle runs the flat and neutron
// interfaces and the neutron DHCP provider against a real neutron-server,
// and checks the result on Neutron's own API. Neutron manages about one
// port operation per second, so this test does as few as it can.
func TestRealNeutron_InspectionPortsLifecycle(t *testing.T) {
	began := time.Now()
	srv := neutrontest.Start(t)
	started := time.Now()
	ctx := context.Background()

	netID := srv.CreateNetwork(t, neutrontest.NetworkOpts{Name: "inspection", CIDR: "192.168.50.0/24"})
	sg := srv.CreateSecurityGroup(t, "inspection")
	cfg := network.Options{SecurityGroups: []string{sg}}
	client, err := neutron.New(neutron.Options{URL: srv.URL, Auth: openstack.Options{AuthType: "none"}, Retries: 1, Timeout: 30 * time.Second})
	if err != nil {
		t.Fatal(err)
	}

	// neutron: node A has one port with local_link_connection and one
	// without; its agent row exists, so the port binds.
	llc := baremetal.JSON{"switch_id": "aa:bb:cc:dd:ee:ff", "port_id": "Ethernet1/7", "switch_info": "tor-1"}
	taskA := newTask(uuid.NewString(),
		&baremetal.Port{UUID: uuid.NewString(), Address: "52:54:00:00:0a:01", PXEEnabled: true, LocalLinkConnection: llc},
		&baremetal.Port{UUID: uuid.NewString(), Address: "52:54:00:00:0a:02", PXEEnabled: true},
	)
	taskA.Node.DriverInfo = baremetal.JSON{"inspection_network": "inspection"}
	srv.AddBaremetalAgent(t, taskA.Node.UUID)
	iface := network.NewNeutron(client, cfg)

	if err := iface.Validate(ctx, taskA); err != nil {
		t.Fatalf("Validate: %v", err)
	}
	if err := iface.ValidateInspection(ctx, taskA); err != nil {
		t.Fatalf("ValidateInspection: %v", err)
	}
	missing := newTask(uuid.NewString(), &baremetal.Port{UUID: uuid.NewString(), Address: "52:54:00:00:0c:01", PXEEnabled: true})
	missing.Node.DriverInfo = baremetal.JSON{"inspection_network": "no-such-network"}
	if err := iface.ValidateInspection(ctx, missing); !errors.Is(err, driver.ErrInvalidParameter) {
		t.Fatalf("ValidateInspection with an unknown network = %v, want ErrInvalidParameter", err)
	}

	if err := iface.AddInspectionNetwork(ctx, taskA); err != nil {
		t.Fatalf("AddInspectionNetwork: %v", err)
	}
	vif, _ := taskA.Ports[0].InternalInfo[driver.InspectionVIFKey].(string)
	if vif == "" {
		t.Fatalf("port with local_link_connection has no %s: %v", driver.InspectionVIFKey, taskA.Ports[0].InternalInfo)
	}
	if v, ok := taskA.Ports[1].InternalInfo[driver.InspectionVIFKey]; ok {
		t.Errorf("port without local_link_connection got a VIF %v; the neutron interface must skip it", v)
	}

	dhcp := network.NeutronDHCP{Provider: neutron.NewDHCPProvider(client, 0)}
	opts := []dhcpopt.Option{
		{Name: "tag:!ipxe,67", Value: "undionly.kpxe", IPVersion: 4},
		{Name: "tag:ipxe,67", Value: "http://192.168.50.1:8080/boot.ipxe", IPVersion: 4},
		{Name: "66", Value: "192.168.50.1", IPVersion: 4},
		{Name: "59", Value: "http://[fd00::1]/boot.ipxe", IPVersion: 6},
	}
	if err := dhcp.UpdateDHCPOptions(ctx, taskA, opts); err != nil {
		t.Fatalf("UpdateDHCPOptions: %v", err)
	}

	port := srv.WaitPortStatus(t, vif, "ACTIVE", 60*time.Second)
	got := map[string]any{
		"network_id":        port["network_id"],
		"mac_address":       port["mac_address"],
		"device_id":         port["device_id"],
		"device_owner":      port["device_owner"],
		"binding:host_id":   port["binding:host_id"],
		"binding:vnic_type": port["binding:vnic_type"],
		"binding:profile":   port["binding:profile"],
		"security_groups":   port["security_groups"],
		"admin_state_up":    port["admin_state_up"],
	}
	want := map[string]any{
		"network_id":        netID,
		"mac_address":       "52:54:00:00:0a:01",
		"device_id":         taskA.Node.UUID,
		"device_owner":      "baremetal:none",
		"binding:host_id":   taskA.Node.UUID,
		"binding:vnic_type": "baremetal",
		"binding:profile": map[string]any{"local_link_information": []any{map[string]any{
			"switch_id": "aa:bb:cc:dd:ee:ff", "port_id": "Ethernet1/7", "switch_info": "tor-1"}}},
		"security_groups": []any{sg},
		"admin_state_up":  true,
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("neutron port (-want +got):\n%s", diff)
	}
	if vt := port["binding:vif_type"]; vt == "binding_failed" || vt == "unbound" {
		t.Errorf("binding:vif_type = %v with the baremetal agent row present", vt)
	}
	type opt struct{ Name, Value string }
	var gotOpts []opt
	for _, o := range port["extra_dhcp_opts"].([]any) {
		m := o.(map[string]any)
		if v, _ := m["ip_version"].(float64); v != 4 {
			t.Errorf("extra_dhcp_opt %v: ip_version %v, want 4", m["opt_name"], m["ip_version"])
		}
		gotOpts = append(gotOpts, opt{m["opt_name"].(string), m["opt_value"].(string)})
	}
	slices.SortFunc(gotOpts, func(a, b opt) int { return strings.Compare(a.Name, b.Name) })
	wantOpts := []opt{{"66", "192.168.50.1"}, {"tag:!ipxe,67", "undionly.kpxe"}, {"tag:ipxe,67", "http://192.168.50.1:8080/boot.ipxe"}}
	if diff := cmp.Diff(wantOpts, gotOpts); diff != "" {
		t.Errorf("extra_dhcp_opts (-want +got; the IPv6 option must be filtered out):\n%s", diff)
	}

	// flat: node B has no local_link_connection and no agent row. Its port
	// is made anyway and stays unbound (binding_failed), as upstream's.
	taskB := newTask(uuid.NewString(), &baremetal.Port{UUID: uuid.NewString(), Address: "52:54:00:00:0b:01", PXEEnabled: true})
	flat := network.NewFlat(client, network.Options{InspectionNetwork: netID})
	if err := flat.ValidateInspection(ctx, taskB); err != nil {
		t.Fatalf("flat ValidateInspection by UUID: %v", err)
	}
	if err := flat.AddInspectionNetwork(ctx, taskB); err != nil {
		t.Fatalf("flat AddInspectionNetwork: %v", err)
	}
	vifB, _ := taskB.Ports[0].InternalInfo[driver.InspectionVIFKey].(string)
	portB := srv.Port(t, vifB)
	if portB == nil {
		t.Fatalf("flat: neutron port %q does not exist", vifB)
	}
	if portB["binding:vif_type"] != "binding_failed" {
		t.Errorf("flat port without an agent row: binding:vif_type = %v, want binding_failed", portB["binding:vif_type"])
	}
	if sgs, _ := portB["security_groups"].([]any); slices.Contains(sgs, any(sg)) {
		t.Errorf("flat port has the inspection security group %s; only neutron applies it", sg)
	}

	for _, tc := range []struct {
		name  string
		iface driver.Network
		task  *driver.Task
		vif   string
	}{{"neutron", iface, taskA, vif}, {"flat", flat, taskB, vifB}} {
		if err := tc.iface.RemoveInspectionNetwork(ctx, tc.task); err != nil {
			t.Fatalf("%s RemoveInspectionNetwork: %v", tc.name, err)
		}
		if p := srv.Port(t, tc.vif); p != nil {
			t.Errorf("%s: neutron port %s still exists after removal", tc.name, tc.vif)
		}
		for _, p := range tc.task.Ports {
			if _, ok := p.InternalInfo[driver.InspectionVIFKey]; ok {
				t.Errorf("%s: port %s still has %s", tc.name, p.UUID, driver.InspectionVIFKey)
			}
		}
		if err := tc.iface.RemoveInspectionNetwork(ctx, tc.task); err != nil {
			t.Errorf("%s: second RemoveInspectionNetwork: %v", tc.name, err)
		}
	}
	if left := srv.Ports(t, url.Values{"network_id": {netID}, "device_owner": {"baremetal:none"}}); len(left) != 0 {
		t.Errorf("ports left on the inspection network: %v", left)
	}
	t.Logf("real Neutron lane: %v (neutron-server start %v, test %v)",
		time.Since(began).Round(time.Millisecond), started.Sub(began).Round(time.Millisecond), time.Since(started).Round(time.Millisecond))
}
