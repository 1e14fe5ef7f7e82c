package inspection_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/ferrometal/ferro/internal/testing/iparelease"
	"github.com/ferrometal/ferro/internal/testing/ipmisim"
	"github.com/ferrometal/ferro/internal/testing/neutrontest"
	"github.com/ferrometal/ferro/test/inspection"
)

// The agent inspect interface (Ironic master's built-in inspection)
// against a real `ferro serve`: the callback on the kernel command line is
// the bare metal API's /v1/continue_inspection, and the report posted
// there is the stock IPA 12's exact body with its exact headers.

// startAgentLab is startLab for nodes with inspect_interface=agent.
func startAgentLab(t *testing.T, env ...string) *lab {
	t.Helper()
	l := startLab(t, env...)
	l.inspectInterface = "agent"
	l.wantCallback = l.srv.URL + "/v1/continue_inspection"
	return l
}

// ipa12 is IPA 12.0's report and headers (testdata/ipa/releases); its
// NICs are 52:54:22:a0:00:01 (the PXE one) and …:02.
func ipa12(t *testing.T) iparelease.Release {
	t.Helper()
	for _, r := range iparelease.All(t) {
		if r.Release == "12.0.0" {
			return r
		}
	}
	t.Fatal("no IPA 12.0.0 in testdata/ipa/releases")
	return iparelease.Release{}
}

// postRaw posts body to url with exactly the headers given, as the agent
// does, and returns the status and the answer.
func postRaw(t *testing.T, url string, h http.Header, body []byte) (int, string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header = h.Clone()
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("post to %s: %v", url, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// builtInRules writes [inspection_rules]built_in_rules.
func builtInRules(t *testing.T, yaml string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "rules.yaml")
	if err := os.WriteFile(p, []byte(yaml), 0o644); err != nil {
		t.Fatal(err)
	}
	return "FERRO_INSPECTION_RULES_BUILT_IN_RULES=" + p
}

// inventoryOf is GET /v1/nodes/{n}/inventory.
func (l *lab) inventoryOf(n *node) (map[string]any, map[string]any) {
	l.t.Helper()
	var inv struct {
		Inventory  map[string]any `json:"inventory"`
		PluginData map[string]any `json:"plugin_data"`
	}
	l.must(http.MethodGet, "/v1/nodes/"+n.uuid+"/inventory", nil, &inv)
	return inv.Inventory, inv.PluginData
}

// TestAgent_IPMIStockIPA12 inspects an ipmi node whose BMC is Debian's
// ipmi_sim through the agent interface: managed iPXE boot, the callback
// the API's, IPA 12's report answered 202 {"uuid"}, processed to
// manageable with plugin_data in Ironic's shape, and nothing left behind.
func TestAgent_IPMIStockIPA12(t *testing.T) {
	rel := ipa12(t)
	sim := ipmisim.Start(t)
	l := startAgentLab(t, append(ipmiEnv, "FERRO_INSPECTOR_HOOKS=$default_hooks,parse-lldp,local-link-connection")...)
	n := l.enroll(nodeSpec{driver: "ipmi", boot: "ipxe", network: "noop",
		driverInfo: ipmiDriverInfo(sim, sim.Password), ports: []portSpec{{mac: rel.MACs[0]}}})
	got := l.inspect(n)
	if field(got, "driver_internal_info", "inspector_manage_boot") != true {
		t.Errorf("driver_internal_info %v, want managed boot", got["driver_internal_info"])
	}
	if addrs := field(got, "driver_internal_info", "lookup_bmc_addresses"); addrs != nil {
		t.Errorf("lookup_bmc_addresses = %v: ipmi_sim is on loopback, which is never cached", addrs)
	}
	if !sim.PowerOn(t) || sim.BootDevice(t) != "pxe" {
		t.Error("ipmi_sim is not powered on into PXE while the node waits for its report")
	}
	bc := l.bootConfig(n, "ipxe")

	code, body := postRaw(t, bc.Callback, rel.Header(), rel.Body(t))
	if code != http.StatusAccepted || body != `{"uuid": "`+n.uuid+`"}` {
		t.Fatalf("IPA 12's report: HTTP %d %s, want 202 {\"uuid\"}", code, body)
	}
	got = l.waitState(n, "manageable")
	if got["last_error"] != nil || field(got, "properties", "cpu_arch") != "x86_64" {
		t.Errorf("last_error %v, properties %v", got["last_error"], got["properties"])
	}
	if sim.PowerOn(t) {
		t.Error("ipmi_sim is still powered on after the inspection")
	}
	l.checkLeftClean(n, got)
	for _, k := range []string{"lookup_bmc_addresses", "ferro_inspection_token_sha256"} {
		if v := field(got, "driver_internal_info", k); v != nil {
			t.Errorf("driver_internal_info[%s] = %v left behind", k, v)
		}
	}

	inv, pd := l.inventoryOf(n)
	var sent map[string]any
	json.Unmarshal(rel.Body(t), &sent)
	if diff := cmp.Diff(sent["inventory"], inv); diff != "" {
		t.Errorf("stored inventory is not the report's (-sent +stored):\n%s", diff)
	}
	if v := field(pd, "all_interfaces", "enp1s0", "pxe_enabled"); v != true {
		t.Errorf("plugin_data.all_interfaces.enp1s0.pxe_enabled = %v", v)
	}
	if v := field(pd, "all_interfaces", "enp2s0", "pxe_enabled"); v != false {
		t.Errorf("plugin_data.all_interfaces.enp2s0.pxe_enabled = %v", v)
	}
	if _, ok := pd["logs"]; ok {
		t.Error("the ramdisk logs are in plugin_data")
	}
	// The CLI reads the node as any client would.
	var shown map[string]any
	if err := json.Unmarshal([]byte(l.baremetal("node", "show", n.uuid, "-f", "json")), &shown); err != nil {
		t.Fatal(err)
	}
	if shown["provision_state"] != "manageable" || shown["inspect_interface"] != "agent" {
		t.Errorf("baremetal node show: %v, %v", shown["provision_state"], shown["inspect_interface"])
	}
}

// TestAgent_Neutron runs managed agent inspections against one real
// neutron-server: success, and the three ways one fails after it started
// — a rule's fail, the inspect wait timeout, an abort — each of which
// leaves no Neutron port, no boot file and no lock.
func TestAgent_Neutron(t *testing.T) {
	ntr := neutrontest.Start(t)
	netID := ntr.CreateNetwork(t, neutrontest.NetworkOpts{Name: "inspection", CIDR: "192.168.61.0/24"})
	rules := builtInRules(t, `
- description: machines named fail-me are refused
  priority: 10
  conditions:
    - op: eq
      args: {values: ["{node.name}", "fail-me"]}
  actions:
    - op: fail
      args: {msg: "this machine is refused by policy"}
`)
	env := []string{"FERRO_NEUTRON_URL=" + ntr.URL, "FERRO_DHCP_DHCP_PROVIDER=neutron", "FERRO_NEUTRON_INSPECTION_NETWORK=inspection",
		"FERRO_INSPECTOR_AGENT=ferro-agent", "FERRO_INSPECTOR_HOOKS=$default_hooks,cpus,memory,root-device", rules}
	checkNeutronClean := func(t *testing.T, n *node, vifs ...string) {
		t.Helper()
		for _, vif := range vifs {
			if p := ntr.Port(t, vif); vif != "" && p != nil {
				t.Errorf("neutron port %s left behind: %v", vif, p)
			}
		}
		if ps := ntr.Ports(t, url.Values{"network_id": {netID}, "device_id": {n.uuid}}); len(ps) != 0 {
			t.Errorf("node %s still has %d neutron port(s) on the inspection network", n.uuid, len(ps))
		}
	}
	// start enrolls a neutron node and starts its inspection, returning
	// it with its boot config and its Neutron port.
	start := func(t *testing.T, l *lab, name string) (*node, string, string) {
		t.Helper()
		n := l.enroll(nodeSpec{boot: "ipxe", network: "neutron",
			ports: []portSpec{{mac: newMAC(), llc: map[string]any{"switch_id": "aa:bb:cc:00:01:01", "port_id": "Ethernet2/1"}}}})
		if name != "" {
			l.must(http.MethodPatch, "/v1/nodes/"+n.uuid, []map[string]any{{"op": "add", "path": "/name", "value": name}}, nil)
		}
		l.inspect(n)
		bc := l.bootConfig(n, "ipxe")
		vif, _ := field(l.portsOf(n)[n.portUUIDs[0]], "internal_info", "inspection_vif_port_id").(string)
		if ntr.Port(t, vif) == nil {
			t.Fatalf("no neutron port %q in inspect wait", vif)
		}
		return n, bc.Callback, bc.Token
	}

	t.Run("Success", func(t *testing.T) {
		t.Parallel()
		l := startAgentLab(t, env...)
		n, cb, token := start(t, l, "")
		rep := report(t, n)
		// The ferro-agent token is required: without it, or with another,
		// the report is the generic 404 and changes nothing.
		for _, tok := range []string{"", strings.Repeat("0", len(token))} {
			if code, body := l.post(cb, tok, rep); code != http.StatusNotFound {
				t.Errorf("report with token %q: HTTP %d %s, want 404", tok, code, body)
			}
		}
		if st := l.get(n)["provision_state"]; st != "inspect wait" {
			t.Fatalf("after refused reports the node is in %v", st)
		}
		if code, body := l.post(cb, token, rep); code != http.StatusAccepted {
			t.Fatalf("report: HTTP %d %s", code, body)
		}
		got := l.waitState(n, "manageable")
		checkProperties(t, got)
		l.checkLeftClean(n, got)
		checkNeutronClean(t, n, "")
	})
	t.Run("RuleFails", func(t *testing.T) {
		t.Parallel()
		l := startAgentLab(t, env...)
		n, cb, token := start(t, l, "fail-me")
		vif, _ := field(l.portsOf(n)[n.portUUIDs[0]], "internal_info", "inspection_vif_port_id").(string)
		if code, body := l.post(cb, token, report(t, n)); code != http.StatusAccepted {
			t.Fatalf("report: HTTP %d %s", code, body)
		}
		got := l.waitState(n, "inspect failed")
		if le, _ := got["last_error"].(string); le != "Failed to finish inspection: Failed to inspect hardware. Reason: this machine is refused by policy" {
			t.Errorf("last_error = %q, want the rule's message", le)
		}
		// Nothing of the report reached the node.
		if props, _ := got["properties"].(map[string]any); len(props) != 0 {
			t.Errorf("properties = %v after a failed rule", props)
		}
		if code, _ := l.do(http.MethodGet, "/v1/nodes/"+n.uuid+"/inventory", nil); code != http.StatusNotFound {
			t.Errorf("inventory stored after a failed rule: HTTP %d", code)
		}
		l.checkLeftClean(n, got)
		checkNeutronClean(t, n, vif)
	})
	t.Run("Timeout", func(t *testing.T) {
		t.Parallel()
		l := startAgentLab(t, append(env, "FERRO_CONDUCTOR_INSPECT_WAIT_TIMEOUT=2", "FERRO_CONDUCTOR_CHECK_PROVISION_STATE_INTERVAL=1")...)
		n := l.enroll(nodeSpec{boot: "ipxe", network: "neutron",
			ports: []portSpec{{mac: newMAC(), llc: map[string]any{"switch_id": "aa:bb:cc:00:01:02", "port_id": "Ethernet2/2"}}}})
		// inspect wait may last a moment only: watch the Neutron port and
		// the boot entry from the start.
		w := watch(ntr, netID, n.uuid, inspection.MACEntry("ipxe", l.httpRoot, n.ports[0].mac))
		l.baremetal("node", "inspect", n.uuid)
		got := l.waitState(n, "inspect failed")
		vifs, sawEntry := w.stop(t)
		if len(vifs) == 0 || !sawEntry {
			t.Errorf("during the inspection: neutron ports %v, boot entry seen %v; want both", vifs, sawEntry)
		}
		if le, _ := got["last_error"].(string); !strings.Contains(le, "timed out") {
			t.Errorf("last_error = %q, want the timeout", le)
		}
		l.checkLeftClean(n, got)
		checkNeutronClean(t, n, vifs...)
		// A late report is the generic 404.
		if code, body := l.post(l.wantCallback, "", report(t, n)); code != http.StatusNotFound {
			t.Errorf("report after the timeout: HTTP %d %s, want 404", code, body)
		}
	})
	t.Run("Abort", func(t *testing.T) {
		t.Parallel()
		l := startAgentLab(t, env...)
		n, cb, token := start(t, l, "")
		vif, _ := field(l.portsOf(n)[n.portUUIDs[0]], "internal_info", "inspection_vif_port_id").(string)
		l.baremetal("node", "abort", n.uuid)
		got := l.waitState(n, "inspect failed")
		l.checkLeftClean(n, got)
		checkNeutronClean(t, n, vif)
		if code, body := l.post(cb, token, report(t, n)); code != http.StatusNotFound {
			t.Errorf("report after the abort: HTTP %d %s, want 404", code, body)
		}
	})
}

// TestAgent_BadInputChangesNothing: Ironic's answers to what the agent
// must not send, against a node that waits for its report — which stays
// waiting, untouched.
func TestAgent_BadInputChangesNothing(t *testing.T) {
	rel := ipa12(t)
	l := startAgentLab(t, "FERRO_API_MAX_JSON_BODY_SIZE_INSPECTION=64")
	n := l.enroll(nodeSpec{boot: "ipxe", network: "noop", ports: []portSpec{{mac: rel.MACs[0]}}})
	l.inspect(n)
	cb := l.srv.URL + "/v1/continue_inspection"
	var rep map[string]any
	json.Unmarshal(rel.Body(t), &rep)
	withMACs := func(macs ...string) []byte {
		var ifaces []any
		for _, m := range macs {
			ifaces = append(ifaces, map[string]any{"name": "x", "mac_address": m})
		}
		b, _ := json.Marshal(map[string]any{"inventory": map[string]any{"interfaces": ifaces, "bmc_address": nil}})
		return b
	}
	for _, tc := range []struct {
		name    string
		body    []byte
		version string
		status  int
		want    string
	}{
		{"unknown MAC", withMACs("52:54:00:ff:ff:01"), "", 404, "Resource could not be found."},
		{"no address at all", withMACs("not-a-mac"), "", 400, "No lookup information provided"},
		{"past the limit", append(rel.Body(t)[:len(rel.Body(t))-1], []byte(`, "x": "`+strings.Repeat("A", 64<<10)+`"}`)...), "", 413, "Request body is too large."},
		{"an unknown microversion", rel.Body(t), "1.999", 406, ""},
		{"a version between 1.1 and 1.84", rel.Body(t), "1.50", 404, "API version 1.84 or newer is required"},
		{"no interfaces", []byte(`{"inventory": {"interfaces": []}}`), "", 400, "[] should be non-empty"},
	} {
		h := rel.Header()
		if tc.version != "" {
			h.Set("X-OpenStack-Ironic-API-Version", tc.version)
		}
		code, body := postRaw(t, cb, h, tc.body)
		if code != tc.status || !strings.Contains(body, tc.want) {
			t.Errorf("%s: HTTP %d %s, want %d %q", tc.name, code, body, tc.status, tc.want)
		}
	}
	got := l.get(n)
	if got["provision_state"] != "inspect wait" || len(got["properties"].(map[string]any)) != 0 || got["last_error"] != nil {
		t.Errorf("after bad reports: %v, properties %v, last_error %v", got["provision_state"], got["properties"], got["last_error"])
	}
	// The real report still finishes it.
	if code, body := postRaw(t, cb, rel.Header(), rel.Body(t)); code != http.StatusAccepted {
		t.Fatalf("HTTP %d %s", code, body)
	}
	l.checkLeftClean(n, l.waitState(n, "manageable"))
}

// TestAgent_Discovery: off, an unknown machine's report is the generic
// 404 and no node appears; on, it is enrolled in enroll with
// plugin_data.auto_discovered, and a built-in rule keyed on that fills in
// its BMC.
func TestAgent_Discovery(t *testing.T) {
	rel := ipa12(t)
	l := startAgentLab(t)
	if code, body := postRaw(t, l.srv.URL+"/v1/continue_inspection", rel.Header(), rel.Body(t)); code != http.StatusNotFound {
		t.Errorf("discovery off: HTTP %d %s", code, body)
	}
	var list struct {
		Nodes []map[string]any `json:"nodes"`
	}
	l.must(http.MethodGet, "/v1/nodes", nil, &list)
	if len(list.Nodes) != 0 {
		t.Fatalf("discovery off enrolled %v", list.Nodes)
	}

	rules := builtInRules(t, `
- description: fill in the BMC of discovered machines
  priority: 50
  conditions:
    - op: is-true
      args: {value: "{plugin_data[auto_discovered]}"}
  actions:
    - op: set-attribute
      args: {path: /driver, value: ipmi}
    - op: set-attribute
      args: {path: /driver_info/ipmi_address, value: "192.0.2.77"}
    - op: set-attribute
      args: {path: /driver_info/ipmi_username, value: admin}
`)
	l = startAgentLab(t, "FERRO_AUTO_DISCOVERY_ENABLED=true", "FERRO_AUTO_DISCOVERY_DRIVER=fake-hardware",
		"FERRO_DEFAULT_DEFAULT_INSPECT_INTERFACE=agent", "FERRO_DEFAULT_DEFAULT_RESOURCE_CLASS=discovered", rules)
	code, body := postRaw(t, l.srv.URL+"/v1/continue_inspection", rel.Header(), rel.Body(t))
	if code != http.StatusAccepted {
		t.Fatalf("discovery on: HTTP %d %s", code, body)
	}
	var acc struct {
		UUID string `json:"uuid"`
	}
	json.Unmarshal([]byte(body), &acc)
	n := &node{uuid: acc.UUID}
	var got map[string]any
	deadline := time.Now().Add(stateTimeout)
	for {
		got = l.get(n)
		if got["reservation"] == nil && field(got, "driver_info", "ipmi_address") != nil || time.Now().After(deadline) {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	if got["provision_state"] != "enroll" || got["driver"] != "ipmi" || got["resource_class"] != "discovered" ||
		field(got, "driver_info", "ipmi_address") != "192.0.2.77" || got["power_interface"] != "ipmitool" {
		t.Errorf("discovered node: state %v, driver %v, resource_class %v, driver_info %v, power %v",
			got["provision_state"], got["driver"], got["resource_class"], got["driver_info"], got["power_interface"])
	}
	_, pd := l.inventoryOf(n)
	if pd["auto_discovered"] != true {
		t.Errorf("plugin_data.auto_discovered = %v", pd["auto_discovered"])
	}
	var ports struct {
		Ports []map[string]any `json:"ports"`
	}
	l.must(http.MethodGet, "/v1/ports?node="+n.uuid, nil, &ports)
	if len(ports.Ports) != 1 || ports.Ports[0]["address"] != rel.MACs[0] {
		t.Errorf("ports of the discovered node: %v", ports.Ports)
	}
}

// TestAgent_PXEFilterHostsdir: [pxe_filter]dhcp_hostsdir follows a node's
// inspection, read back as an external dnsmasq would.
func TestAgent_PXEFilterHostsdir(t *testing.T) {
	rel := ipa12(t)
	dir := t.TempDir()
	l := startAgentLab(t, "FERRO_PXE_FILTER_DHCP_HOSTSDIR="+dir, "FERRO_PXE_FILTER_SYNC_PERIOD=1")
	n := l.enroll(nodeSpec{boot: "ipxe", network: "noop", ports: []portSpec{{mac: rel.MACs[0]}}})
	waitFile := func(name, want string) {
		t.Helper()
		deadline := time.Now().Add(stateTimeout)
		for {
			b, _ := os.ReadFile(filepath.Join(dir, name))
			if string(b) == want {
				return
			}
			if time.Now().After(deadline) {
				t.Fatalf("%s = %q, want %q", name, b, want)
			}
			time.Sleep(100 * time.Millisecond)
		}
	}
	waitFile(rel.MACs[0], rel.MACs[0]+",ignore\n")
	waitFile("unknown_hosts_filter", "*:*:*:*:*:*,ignore\n")
	l.inspect(n)
	waitFile(rel.MACs[0], rel.MACs[0]+"\n")
	waitFile("unknown_hosts_filter", "*:*:*:*:*:*\n")
	if code, body := postRaw(t, l.srv.URL+"/v1/continue_inspection", rel.Header(), rel.Body(t)); code != http.StatusAccepted {
		t.Fatalf("HTTP %d %s", code, body)
	}
	l.waitState(n, "manageable")
	waitFile(rel.MACs[0], rel.MACs[0]+",ignore\n")
	waitFile("unknown_hosts_filter", "*:*:*:*:*:*,ignore\n")
}
