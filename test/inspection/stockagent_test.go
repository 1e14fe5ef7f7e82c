package inspection_test

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"encoding/base64"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/ferrometal/ferro/internal/testing/ferrotest"
	"github.com/ferrometal/ferro/internal/testing/neutrontest"
	"github.com/ferrometal/ferro/test/inspection"
)

// ipaPost is ironic-python-agent 9.4's call_inspector
// (ironic_python_agent/inspector.py), the part that talks to the
// inspector: the collected data encoded by its RESTJSONEncoder (json with
// indent 4 and a trailing newline under ipa-debug, compact otherwise) and
// posted with python-requests as `requests.post(url, data=<str>)`, which
// sends no Content-Type header and, IPA knowing nothing of ferro, no
// token. It posts the payload file to every URL given and prints each
// answer as a JSON line.
const ipaPost = `
import json, sys, requests
debug, payload, urls = sys.argv[1] == "1", sys.argv[2], sys.argv[3:]
with open(payload) as f:
    data = json.load(f)
encoded = json.dumps(data, indent=4 if debug else None) + ("\n" if debug else "")
for url in urls:
    resp = requests.post(url, data=encoded)
    print(json.dumps({"status": resp.status_code, "body": resp.text}))
`

// stockReport is the reference report as IPA 9.4 sends it with
// ipa-collect-lldp=1 and the default collectors plus logs: LLDP TLVs in
// inventory.interfaces[].lldp (no lldp_raw), pci_devices, and logs, a
// base64 tarball of the ramdisk's journal.
func stockReport(t *testing.T, macs []string, journal []byte) map[string]any {
	t.Helper()
	rep, err := inspection.Report(macs...)
	if err != nil {
		t.Fatal(err)
	}
	raw, _ := rep["lldp_raw"].(map[string]any)
	for _, iface := range field(rep, "inventory", "interfaces").([]any) {
		iface := iface.(map[string]any)
		if tlvs, ok := raw[iface["name"].(string)]; ok {
			iface["lldp"] = tlvs
		}
	}
	delete(rep, "lldp_raw")
	rep["configuration"] = map[string]any{"collectors": []any{"default", "logs"},
		"managers": []any{map[string]any{"name": "generic_hardware_manager", "version": "1.1"}}}
	rep["pci_devices"] = []any{map[string]any{"vendor_id": "8086", "product_id": "1572", "class": "020000",
		"revision": "02", "bus": "0000:18:00.0", "numa_node_id": nil}}
	var tgz bytes.Buffer
	zw := gzip.NewWriter(&tgz)
	tw := tar.NewWriter(zw)
	tw.WriteHeader(&tar.Header{Name: "journal", Mode: 0o644, Size: int64(len(journal))})
	tw.Write(journal)
	tw.Close()
	zw.Close()
	rep["logs"] = base64.StdEncoding.EncodeToString(tgz.Bytes())
	rep["error"] = nil
	return rep
}

// TestInspection_StockAgent runs managed inspections, on a real
// neutron-server, whose report comes exactly as the stock
// ironic-python-agent sends it: no token (ferro issued none, [inspector]agent
// being its default), no Content-Type, posted by python-requests. PXE with
// the flat interface learns the port's local_link_connection from LLDP;
// iPXE with the neutron interface binds the port and adds the second NIC's
// port ([processing]add_ports=all). Each ends manageable with properties,
// ports and local_link_connection, no Neutron port and no boot file; the
// ramdisk's logs are written to [processing]ramdisk_logs_dir and kept out
// of the processed data and the node's inventory.
func TestInspection_StockAgent(t *testing.T) {
	python := ferrotest.RequireTool(t, "python3")
	if out, err := exec.Command(python, "-c", "import requests").CombinedOutput(); err != nil {
		ferrotest.SkipOrFail(t, "python3 cannot import requests (Debian's python3-requests): %v\n%s", err, out)
	}
	ntr := neutrontest.Start(t)
	netID := ntr.CreateNetwork(t, neutrontest.NetworkOpts{Name: "inspection", CIDR: "192.168.61.0/24"})

	// capture records what the agent's HTTP client sends, to show the
	// report really comes without a Content-Type and without a token.
	type captured struct {
		header http.Header
		body   []byte
	}
	captures := make(chan captured, 4)
	capture := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		captures <- captured{r.Header.Clone(), b}
		w.Write([]byte(`{"uuid": "capture"}`))
	}))
	t.Cleanup(capture.Close)

	for _, tc := range []struct {
		name, boot, network string
		debug               bool
		env                 []string
		llc                 map[string]any // the port's local_link_connection before inspection
		wantLLC             map[string]any
		wantPorts           int
	}{
		{name: "PXEFlat", boot: "pxe", network: "flat", wantLLC: lldpLink, wantPorts: 1},
		{name: "IPXENeutron", boot: "ipxe", network: "neutron", debug: true,
			env: []string{"FERRO_PROCESSING_ADD_PORTS=all"},
			llc: map[string]any{"switch_id": "aa:bb:cc:00:00:11", "port_id": "Ethernet1/11"},
			// LLDP adds the switch's name; it never overwrites what the operator set.
			wantLLC:   map[string]any{"switch_id": "aa:bb:cc:00:00:11", "port_id": "Ethernet1/11", "switch_info": "leaf-r12a"},
			wantPorts: 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			logsDir := filepath.Join(t.TempDir(), "ramdisk-logs")
			env := append([]string{"FERRO_NEUTRON_URL=" + ntr.URL, "FERRO_DHCP_DHCP_PROVIDER=neutron",
				"FERRO_NEUTRON_INSPECTION_NETWORK=" + netID,
				"FERRO_PROCESSING_RAMDISK_LOGS_DIR=" + logsDir, "FERRO_PROCESSING_ALWAYS_STORE_RAMDISK_LOGS=true"}, tc.env...)
			l := startLab(t, env...)
			if l.tokens {
				t.Fatal("the lab is set up for ferro-agent; this test is about the default")
			}
			n := l.enroll(nodeSpec{boot: tc.boot, network: tc.network,
				driverInfo: map[string]any{"inspector_extra_kernel_params": "ipa-collect-lldp=1"},
				ports:      []portSpec{{mac: newMAC(), llc: tc.llc}}})
			if tc.network == "neutron" {
				ntr.AddBaremetalAgent(t, n.uuid)
			}
			if v := field(l.inspect(n), "driver_internal_info", "inspector_manage_boot"); v != true {
				t.Fatalf("driver_internal_info[inspector_manage_boot] = %v, want true (managed)", v)
			}
			bc := l.bootConfig(n, tc.boot) // checks: no token on the command line
			vifs := ntr.Ports(t, url.Values{"network_id": {netID}, "device_id": {n.uuid}})
			if len(vifs) != 1 {
				t.Fatalf("neutron ports of the node in inspect wait: %v, want one", vifs)
			}

			journal := []byte("Dec 01 09:00:00 localhost ironic-python-agent[321]: inspection started\n")
			// Both NICs of the machine; only the first has a port.
			rep := stockReport(t, []string{n.ports[0].mac, newMAC()}, journal)
			payload := filepath.Join(t.TempDir(), "payload.json")
			b, _ := json.Marshal(rep)
			if err := os.WriteFile(payload, b, 0o600); err != nil {
				t.Fatal(err)
			}
			debug := "0"
			if tc.debug {
				debug = "1"
			}
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			out, err := exec.CommandContext(ctx, python, "-c", ipaPost, debug, payload, capture.URL, bc.Callback).CombinedOutput()
			if err != nil {
				t.Fatalf("the agent's post: %v\n%s", err, out)
			}
			got := <-captures
			if ct := got.header.Get("Content-Type"); ct != "" {
				t.Errorf("the agent sent Content-Type %q; IPA sends none", ct)
			}
			for h := range got.header {
				if strings.Contains(strings.ToLower(h), "token") {
					t.Errorf("the agent sent a %s header", h)
				}
			}
			if ua := got.header.Get("User-Agent"); !strings.HasPrefix(ua, "python-requests/") {
				t.Errorf("User-Agent %q, want python-requests'", ua)
			}
			lines := strings.Split(strings.TrimSpace(string(out)), "\n")
			var answer struct {
				Status int    `json:"status"`
				Body   string `json:"body"`
			}
			if err := json.Unmarshal([]byte(lines[len(lines)-1]), &answer); err != nil || answer.Status != http.StatusOK {
				t.Fatalf("ferro answered the stock agent: %s (%v)", lines[len(lines)-1], err)
			}
			if !strings.Contains(answer.Body, n.uuid) {
				t.Errorf("answer %s, want the node's uuid", answer.Body)
			}

			done := l.waitState(n, "manageable")
			if done["last_error"] != nil {
				t.Errorf("last_error = %v", done["last_error"])
			}
			checkProperties(t, done)
			l.checkLeftClean(n, done)
			if ps := ntr.Ports(t, url.Values{"network_id": {netID}, "device_id": {n.uuid}}); len(ps) != 0 {
				t.Errorf("neutron ports left behind: %v", ps)
			}
			// The inspection's progress, in the node's history, in order.
			var hist struct {
				History []map[string]any `json:"history"`
			}
			l.must(http.MethodGet, "/v1/nodes/"+n.uuid+"/history?detail=true", nil, &hist)
			var phases []string
			for _, e := range hist.History {
				if e["event_type"] == "inspection progress" {
					ev, _ := e["event"].(string)
					phase, _, _ := strings.Cut(ev, ":")
					phases = append(phases, phase)
				}
			}
			if diff := cmp.Diff([]string{"powered on", "report received", "processed", "network removed", "powered off"}, phases); diff != "" {
				t.Errorf("inspection progress in the node history (-want +got):\n%s\nhistory: %v", diff, hist.History)
			}

			ports := l.portsOf(n)
			if len(ports) != tc.wantPorts {
				t.Errorf("ports after inspection: %d, want %d: %v", len(ports), tc.wantPorts, ports)
			}
			if diff := cmp.Diff(tc.wantLLC, ports[n.portUUIDs[0]]["local_link_connection"]); diff != "" {
				t.Errorf("local_link_connection of the PXE port (-want +got):\n%s", diff)
			}

			// The logs: in ramdisk_logs_dir as ironic-inspector names them,
			// nowhere in the stored data.
			files, _ := filepath.Glob(filepath.Join(logsDir, n.uuid+"_*.tar.gz"))
			if len(files) != 1 {
				t.Fatalf("ramdisk logs files %v, want one <uuid>_<time>.tar.gz", files)
			}
			if tgz, err := os.ReadFile(files[0]); err != nil || base64.StdEncoding.EncodeToString(tgz) != rep["logs"] {
				t.Errorf("stored logs differ from the agent's (%v)", err)
			}
			var inv map[string]any
			l.must(http.MethodGet, "/v1/nodes/"+n.uuid+"/inventory", nil, &inv)
			if _, ok := field(inv, "plugin_data").(map[string]any)["logs"]; ok {
				t.Errorf("the node's inventory plugin_data keeps the ramdisk logs")
			}
			resp, err := http.Get(strings.TrimSuffix(l.callback, "/continue") + "/introspection/" + n.uuid + "/data")
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			var processed map[string]any
			if err := json.NewDecoder(resp.Body).Decode(&processed); err != nil || resp.StatusCode != http.StatusOK {
				t.Fatalf("processed data: %d %v", resp.StatusCode, err)
			}
			if _, ok := processed["logs"]; ok {
				t.Errorf("processed data keeps the ramdisk logs")
			}
			if processed["pci_devices"] == nil {
				t.Errorf("processed data lost pci_devices")
			}
		})
	}
}
