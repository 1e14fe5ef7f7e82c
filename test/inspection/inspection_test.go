package inspection_test

import (
	"encoding/json"
	"net/http"
	"net/url"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/ferrometal/ferro/internal/testing/neutrontest"
	"github.com/ferrometal/ferro/test/inspection"
)

// wantProperties are what the example report makes of a node.
var wantProperties = map[string]string{"cpus": "32", "memory_mb": "131072", "local_gb": "893", "cpu_arch": "x86_64"}

// lldpLink is the local_link_connection the example report's LLDP gives
// its first NIC.
var lldpLink = map[string]any{"switch_id": "b8:59:9f:1a:2b:3c", "port_id": "Ethernet1/12", "switch_info": "leaf-r12a"}

func checkProperties(t *testing.T, got map[string]any) {
	t.Helper()
	props, _ := got["properties"].(map[string]any)
	for k, want := range wantProperties {
		if str(props[k]) != want {
			t.Errorf("properties[%s] = %v, want %s (properties: %v)", k, props[k], want, props)
		}
	}
}

// TestInspection_Neutron runs managed inspections against one real
// neutron-server: success with the neutron and the flat interface, and the
// three ways an inspection fails (inspector error, timeout, abort), each of
// which must leave no Neutron port and no boot file. Neutron makes about
// one port change a second, so the inspections run in parallel and there
// are five of them.
func TestInspection_Neutron(t *testing.T) {
	ntr := neutrontest.Start(t)
	netID := ntr.CreateNetwork(t, neutrontest.NetworkOpts{Name: "inspection", CIDR: "192.168.60.0/24"})
	// These inspections boot ferro-agent, which presents the callback
	// token; TestInspection_StockAgent runs without one.
	neutronEnv := []string{"FERRO_NEUTRON_URL=" + ntr.URL, "FERRO_DHCP_DHCP_PROVIDER=neutron", "FERRO_INSPECTOR_AGENT=ferro-agent"}

	// neutronPort returns the Neutron port recorded for a bare metal port
	// and checks what every inspection port has.
	neutronPort := func(t *testing.T, l *lab, n *node, i int) map[string]any {
		t.Helper()
		p := l.portsOf(n)[n.portUUIDs[i]]
		vif, _ := field(p, "internal_info", "inspection_vif_port_id").(string)
		if vif == "" {
			t.Fatalf("port %s has no internal_info[inspection_vif_port_id] in inspect wait: %v", n.portUUIDs[i], p["internal_info"])
		}
		np := ntr.Port(t, vif)
		if np == nil {
			t.Fatalf("neutron port %s recorded on port %s does not exist", vif, n.portUUIDs[i])
		}
		for k, want := range map[string]any{
			"network_id": netID, "mac_address": n.ports[i].mac, "device_id": n.uuid, "device_owner": "baremetal:none",
			"binding:host_id": n.uuid, "binding:vnic_type": "baremetal", "admin_state_up": true,
		} {
			if np[k] != want {
				t.Errorf("neutron port %s: %s = %v, want %v", vif, k, np[k], want)
			}
		}
		return np
	}
	// checkNeutronClean checks that the node has no port on the network.
	checkNeutronClean := func(t *testing.T, n *node, vifs ...string) {
		t.Helper()
		for _, vif := range vifs {
			if p := ntr.Port(t, vif); p != nil {
				t.Errorf("neutron port %s left behind: %v", vif, p)
			}
		}
		if ps := ntr.Ports(t, url.Values{"network_id": {netID}, "device_id": {n.uuid}}); len(ps) != 0 {
			t.Errorf("node %s still has %d neutron port(s) on the inspection network: %v", n.uuid, len(ps), ps)
		}
	}

	t.Run("IPXENeutron_InspectsBindsAndLeavesNothing", func(t *testing.T) {
		t.Parallel()
		l := startLab(t, append(neutronEnv,
			"FERRO_NEUTRON_INSPECTION_NETWORK=inspection",
			"FERRO_INSPECTOR_EXTRA_KERNEL_PARAMS=ipa-collect-lldp=1 ipa-inspection-collectors=default,lldp")...)
		llc := map[string]any{"switch_id": "aa:bb:cc:00:00:01", "port_id": "Ethernet1/7", "switch_info": "tor-1"}
		n := l.enroll(nodeSpec{boot: "ipxe", network: "neutron",
			driverInfo: map[string]any{"inspector_extra_kernel_params": "ipa-debug=1"},
			// The second port has no local_link_connection: the neutron
			// interface skips it.
			ports: []portSpec{{mac: newMAC(), llc: llc}, {mac: newMAC()}}})
		// The agent row makes the baremetal mechanism driver bind the port.
		ntr.AddBaremetalAgent(t, n.uuid)

		got := l.inspect(n)
		if v := field(got, "driver_internal_info", "inspector_manage_boot"); v != true {
			t.Errorf("driver_internal_info[inspector_manage_boot] = %v, want true", v)
		}
		if got["power_state"] != "power on" {
			t.Errorf("power_state in inspect wait = %v, want power on", got["power_state"])
		}
		if v := l.srv.FakeBootDevice(n.uuid); v != "pxe" {
			t.Errorf("boot device = %q, want pxe", v)
		}

		bc := l.bootConfig(n, "ipxe")
		// [pxe]kernel_append_params, [inspector]extra_kernel_params,
		// driver_info's, then ferro's token and callback.
		wantOrder := []string{"nofb", "nomodeset", "vga=normal", "ipa-collect-lldp=1", "ipa-inspection-collectors=default,lldp",
			"ipa-debug=1", inspection.TokenParam + "=" + bc.Token, inspection.CallbackParam + "=" + bc.Callback}
		if !slices.Equal(bc.Cmdline[:len(wantOrder)], wantOrder) {
			t.Errorf("kernel command line = %q, want it to start %q", bc.Cmdline, wantOrder)
		}

		np := neutronPort(t, l, n, 0)
		vif := np["id"].(string)
		if diff := cmp.Diff([]any{llc}, field(np, "binding:profile", "local_link_information")); diff != "" {
			t.Errorf("binding:profile.local_link_information (-want +got):\n%s", diff)
		}
		wantOpts := map[string]string{"tag:!ipxe,67": "undionly.kpxe", "tag:ipxe,67": httpURL + "/boot.ipxe"}
		gotOpts := map[string]string{}
		for _, o := range np["extra_dhcp_opts"].([]any) {
			o := o.(map[string]any)
			gotOpts[o["opt_name"].(string)] = o["opt_value"].(string)
		}
		if diff := cmp.Diff(wantOpts, gotOpts); diff != "" {
			t.Errorf("extra_dhcp_opts (-want +got):\n%s", diff)
		}
		if v := field(l.portsOf(n)[n.portUUIDs[1]], "internal_info", "inspection_vif_port_id"); v != nil {
			t.Errorf("port without local_link_connection got a neutron port %v", v)
		}
		bound := ntr.WaitPortStatus(t, vif, "ACTIVE", 30*time.Second)
		if bound["binding:vif_type"] != "other" {
			t.Errorf("binding:vif_type = %v, want other (bound by the baremetal mechanism driver)", bound["binding:vif_type"])
		}

		// A report without the token, or with another one, changes nothing.
		rep := report(t, n)
		if code, body := l.post(bc.Callback, "", rep); code != http.StatusForbidden {
			t.Errorf("report without the token: HTTP %d %s, want 403", code, body)
		}
		if code, body := l.post(bc.Callback, strings.Repeat("0", len(bc.Token)), rep); code != http.StatusForbidden {
			t.Errorf("report with a wrong token: HTTP %d %s, want 403", code, body)
		}
		if st := l.get(n)["provision_state"]; st != "inspect wait" {
			t.Fatalf("after rejected reports the node is in %v, want inspect wait", st)
		}

		if code, body := l.post(bc.Callback, bc.Token, rep); code != http.StatusOK {
			t.Fatalf("report: HTTP %d %s", code, body)
		}
		got = l.waitState(n, "manageable")
		if got["last_error"] != nil {
			t.Errorf("last_error = %v, want null", got["last_error"])
		}
		checkProperties(t, got)
		l.checkLeftClean(n, got)
		checkNeutronClean(t, n, vif)

		var inv struct {
			Inventory map[string]any `json:"inventory"`
		}
		l.must(http.MethodGet, "/v1/nodes/"+n.uuid+"/inventory", nil, &inv)
		if v := field(inv.Inventory, "cpu", "count"); str(v) != "32" {
			t.Errorf("stored inventory cpu.count = %v, want 32", v)
		}
		// The CLI sees the same node.
		var shown map[string]any
		if err := json.Unmarshal([]byte(l.baremetal("node", "show", n.uuid, "-f", "json")), &shown); err != nil {
			t.Fatal(err)
		}
		if shown["provision_state"] != "manageable" || str(field(shown, "properties", "cpus")) != "32" {
			t.Errorf("baremetal node show: provision_state %v, properties %v", shown["provision_state"], shown["properties"])
		}
	})

	t.Run("PXEFlat_InspectsAndLearnsLocalLinkConnection", func(t *testing.T) {
		t.Parallel()
		l := startLab(t, append(neutronEnv, "FERRO_PXE_TFTP_SERVER=192.0.2.10")...)
		// flat needs no local_link_connection; the inspection network is
		// the node's, by UUID.
		n := l.enroll(nodeSpec{boot: "pxe", network: "flat",
			driverInfo: map[string]any{"inspection_network": netID},
			ports:      []portSpec{{mac: newMAC()}}})
		l.inspect(n)
		bc := l.bootConfig(n, "pxe")
		if bc.Cmdline[0] != "initrd="+n.uuid+"/deploy_ramdisk" || bc.Cmdline[len(bc.Cmdline)-1] != inspection.CallbackParam+"="+bc.Callback {
			t.Errorf("PXELINUX append line = %q, want initrd first and the callback URL last", bc.Cmdline)
		}
		np := neutronPort(t, l, n, 0)
		vif := np["id"].(string)
		gotOpts := map[string]string{}
		for _, o := range np["extra_dhcp_opts"].([]any) {
			o := o.(map[string]any)
			gotOpts[o["opt_name"].(string)] = o["opt_value"].(string)
		}
		wantOpts := map[string]string{"67": "pxelinux.0", "66": "192.0.2.10", "150": "192.0.2.10", "255": "192.0.2.10"}
		if diff := cmp.Diff(wantOpts, gotOpts); diff != "" {
			t.Errorf("extra_dhcp_opts (-want +got):\n%s", diff)
		}

		// The agent sends the token in the report this time.
		rep := report(t, n)
		rep["inspection_token"] = bc.Token
		if code, body := l.post(bc.Callback, "", rep); code != http.StatusOK {
			t.Fatalf("report: HTTP %d %s", code, body)
		}
		got := l.waitState(n, "manageable")
		checkProperties(t, got)
		l.checkLeftClean(n, got)
		checkNeutronClean(t, n, vif)
		// What a first inspection on a flat network is for: LLDP gave the
		// port its switch connection.
		if diff := cmp.Diff(lldpLink, l.portsOf(n)[n.portUUIDs[0]]["local_link_connection"]); diff != "" {
			t.Errorf("port local_link_connection after inspection (-want +got):\n%s", diff)
		}
	})

	t.Run("PXENeutron_InspectorErrorTearsDown", func(t *testing.T) {
		t.Parallel()
		l := startLab(t, neutronEnv...)
		n := l.enroll(nodeSpec{boot: "pxe", network: "neutron",
			driverInfo: map[string]any{"inspection_network": "inspection"},
			ports:      []portSpec{{mac: newMAC(), llc: map[string]any{"switch_id": "aa:bb:cc:00:00:02", "port_id": "Ethernet1/8"}}}})
		l.inspect(n)
		bc := l.bootConfig(n, "pxe")
		vif := neutronPort(t, l, n, 0)["id"].(string)

		rep := report(t, n)
		rep["error"] = "boom"
		if code, body := l.post(bc.Callback, bc.Token, rep); code < 400 {
			t.Errorf("report with an error: HTTP %d %s, want an error", code, body)
		}
		got := l.waitState(n, "inspect failed")
		if le, _ := got["last_error"].(string); !strings.Contains(le, "boom") {
			t.Errorf("last_error = %q, want the agent's error boom", le)
		}
		l.checkLeftClean(n, got)
		checkNeutronClean(t, n, vif)
	})

	t.Run("IPXENeutron_TimeoutTearsDown", func(t *testing.T) {
		t.Parallel()
		l := startLab(t, append(neutronEnv,
			"FERRO_NEUTRON_INSPECTION_NETWORK=inspection",
			"FERRO_CONDUCTOR_INSPECT_WAIT_TIMEOUT=2",
			"FERRO_CONDUCTOR_CHECK_PROVISION_STATE_INTERVAL=1")...)
		n := l.enroll(nodeSpec{boot: "ipxe", network: "neutron",
			ports: []portSpec{{mac: newMAC(), llc: map[string]any{"switch_id": "aa:bb:cc:00:00:03", "port_id": "Ethernet1/9"}}}})
		// Creating the Neutron port alone takes longer than the timeout,
		// so inspect wait may last a moment only: watch the Neutron port
		// and the boot entry from the start instead of looking in inspect
		// wait.
		w := watch(ntr, netID, n.uuid, inspection.MACEntry("ipxe", l.httpRoot, n.ports[0].mac))
		l.baremetal("node", "inspect", n.uuid)
		got := l.waitState(n, "inspect failed")
		vifs, sawEntry := w.stop(t)
		if len(vifs) == 0 || !sawEntry {
			t.Errorf("during the inspection: neutron ports %v, boot entry seen %v; want both", vifs, sawEntry)
		}
		if le, _ := got["last_error"].(string); !strings.Contains(le, "timeout") {
			t.Errorf("last_error = %q, want a timeout", le)
		}
		l.checkLeftClean(n, got)
		checkNeutronClean(t, n, vifs...)
	})

	t.Run("PXENeutron_AbortTearsDown", func(t *testing.T) {
		t.Parallel()
		l := startLab(t, append(neutronEnv, "FERRO_NEUTRON_INSPECTION_NETWORK="+netID)...)
		n := l.enroll(nodeSpec{boot: "pxe", network: "neutron",
			ports: []portSpec{{mac: newMAC(), llc: map[string]any{"switch_id": "aa:bb:cc:00:00:04", "port_id": "Ethernet1/10"}}}})
		l.inspect(n)
		l.bootConfig(n, "pxe")
		np := neutronPort(t, l, n, 0)
		vif := np["id"].(string)
		// No agent row for this node: Neutron could not bind the port.
		if np["binding:vif_type"] != "binding_failed" {
			t.Errorf("binding:vif_type without an agent = %v, want binding_failed", np["binding:vif_type"])
		}

		l.baremetal("node", "abort", n.uuid)
		got := l.waitState(n, "inspect failed")
		if le, _ := got["last_error"].(string); !strings.Contains(strings.ToLower(le), "abort") {
			t.Errorf("last_error = %q, want it to say the inspection was aborted", le)
		}
		l.checkLeftClean(n, got)
		checkNeutronClean(t, n, vif)
	})
}

// TestInspection_FallsBackToUnmanagedWithoutDeployImages: with no deploy
// kernel and ramdisk the pxe interface cannot manage boot, so the
// inspector is asked to (manage_boot=true): it sets the boot device and
// reboots the node through the API, ferro writes no boot files, and a
// report without a token is accepted.
func TestInspection_FallsBackToUnmanagedWithoutDeployImages(t *testing.T) {
	l := startLab(t)
	n := l.enroll(nodeSpec{boot: "pxe", network: "noop",
		driverInfo: map[string]any{"deploy_kernel": nil, "deploy_ramdisk": nil},
		ports:      []portSpec{{mac: newMAC()}}})
	// Fake power, as Ironic's, reports none until the first power action.
	if st := l.get(n)["power_state"]; st != nil {
		t.Fatalf("power_state before inspection = %v, want none (null)", st)
	}
	got := l.inspect(n)
	if v, ok := field(got, "driver_internal_info").(map[string]any)["inspector_manage_boot"]; !ok || v != false {
		t.Errorf("driver_internal_info[inspector_manage_boot] = %v (set: %v), want false", v, ok)
	}
	// The inspector's reboot runs in the background once the node waits.
	deadline := time.Now().Add(10 * time.Second)
	for l.srv.FakeBootDevice(n.uuid) != "pxe" || got["power_state"] != "power on" {
		if time.Now().After(deadline) {
			t.Fatalf("the inspector did not set PXE and reboot: boot device %q, power_state %v",
				l.srv.FakeBootDevice(n.uuid), got["power_state"])
		}
		time.Sleep(50 * time.Millisecond)
		got = l.get(n)
	}
	l.checkNoBootFiles(n)

	if code, body := l.post(l.callback, "", report(t, n)); code != http.StatusOK {
		t.Fatalf("report: HTTP %d %s", code, body)
	}
	got = l.waitState(n, "manageable")
	checkProperties(t, got)
	// The inspector managed boot, so it powers the node off.
	deadline = time.Now().Add(10 * time.Second)
	for got["power_state"] != "power off" && time.Now().Before(deadline) {
		time.Sleep(50 * time.Millisecond)
		got = l.get(n)
	}
	l.checkLeftClean(n, got)
}

// watcher records what existed while an inspection ran.
type watcher struct {
	done     chan struct{}
	wg       sync.WaitGroup
	mu       sync.Mutex
	vifs     []string
	sawEntry bool
	errs     []string
}

// watch polls Neutron for the node's ports on the network and the file
// system for a boot entry, every 100 ms, until stop. Both live for seconds
// during a managed inspection, so a poll cannot miss them.
func watch(ntr *neutrontest.Server, netID, nodeUUID, entry string) *watcher {
	w := &watcher{done: make(chan struct{})}
	q := url.Values{"network_id": {netID}, "device_id": {nodeUUID}}
	w.wg.Add(1)
	go func() {
		defer w.wg.Done()
		for {
			var out struct {
				Ports []struct {
					ID string `json:"id"`
				} `json:"ports"`
			}
			resp, err := http.Get(ntr.URL + "/v2.0/ports?" + q.Encode())
			if err == nil {
				err = json.NewDecoder(resp.Body).Decode(&out)
				resp.Body.Close()
			}
			_, serr := os.Lstat(entry)
			w.mu.Lock()
			if err != nil {
				w.errs = append(w.errs, err.Error())
			}
			for _, p := range out.Ports {
				if !slices.Contains(w.vifs, p.ID) {
					w.vifs = append(w.vifs, p.ID)
				}
			}
			w.sawEntry = w.sawEntry || serr == nil
			w.mu.Unlock()
			select {
			case <-w.done:
				return
			case <-time.After(100 * time.Millisecond):
			}
		}
	}()
	return w
}

// stop ends the watch and returns the Neutron port ids seen and whether the
// boot entry was.
func (w *watcher) stop(t *testing.T) ([]string, bool) {
	t.Helper()
	close(w.done)
	w.wg.Wait()
	if len(w.errs) > 0 {
		t.Logf("watching Neutron: %d failed polls, first: %s", len(w.errs), w.errs[0])
	}
	return w.vifs, w.sawEntry
}
