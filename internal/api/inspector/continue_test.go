package inspector_test

import (
	"bytes"
	"encoding/json"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	inspectorapi "github.com/ferrometal/ferro/internal/api/inspector"
	"github.com/ferrometal/ferro/internal/baremetal"
	"github.com/ferrometal/ferro/internal/inspection"
	"github.com/ferrometal/ferro/internal/inspector"
)

// The reference payload's PXE NIC, second NIC and BMC.
const (
	refMAC  = "3c:fd:fe:11:22:30"
	refMAC2 = "3c:fd:fe:11:22:31"
	refBMC  = "198.51.100.121"
)

// TestContinue_BadReportsChangeNothing posts every kind of report
// /v1/continue must refuse. Each gets its status and message, and none
// changes a node, its ports or its introspection, or stores data.
func TestContinue_BadReportsChangeNothing(t *testing.T) {
	r := newRig(t)
	ref := referencePayload(t)
	// waiting is the node the reference payload belongs to; every refused
	// report must leave it as it is.
	waiting := r.node(t, nodeSpec{macs: []string{refMAC}, properties: baremetal.JSON{"cpus": "1"}})
	r.start(t, waiting.UUID, false, "")

	type setup struct {
		body    []byte
		token   string
		watched []string // nodes that must not change, besides waiting
	}
	for _, tc := range []struct {
		name    string
		setup   func(t *testing.T) setup
		status  int
		message func(s setup) string // exact message
		prefix  string               // or its beginning
	}{
		{name: "malformed JSON", status: http.StatusBadRequest, prefix: "Invalid introspection data: invalid JSON: ",
			setup: func(t *testing.T) setup { return setup{body: fixture(t, "bad/malformed.json")} }},
		{name: "truncated reference payload", status: http.StatusBadRequest, prefix: "Invalid introspection data: invalid JSON: ",
			setup: func(t *testing.T) setup { return setup{body: ref[:len(ref)/2]} }},
		{name: "not an object", status: http.StatusBadRequest,
			message: func(setup) string { return "Invalid introspection data: report: expected object, got array" },
			setup:   func(t *testing.T) setup { return setup{body: fixture(t, "bad/not-object.json")} }},
		{name: "larger than 16 MiB", status: http.StatusRequestEntityTooLarge,
			message: func(setup) string { return "Request body is larger than 16777216 bytes" },
			setup: func(t *testing.T) setup {
				// A report that would otherwise match: padded past the limit in an unknown field.
				return setup{body: edit(t, ref, func(m map[string]any) {
					m["padding"] = strings.Repeat("x", inspectorapi.MaxReportBytes)
				})}
			}},
		{name: "nested deeper than 25", status: http.StatusBadRequest,
			message: func(setup) string {
				return "Invalid introspection data: JSON nesting too deep: more than 25 levels of objects and arrays"
			},
			setup: func(t *testing.T) setup {
				deep := strings.Repeat("[", 25) + strings.Repeat("]", 25) // 26 levels inside the report object
				b := bytes.Replace(ref, []byte(`"logs": ""`), []byte(`"logs": "", "data": `+deep), 1)
				return setup{body: b}
			}},
		{name: "nesting fixture", status: http.StatusBadRequest,
			prefix: "Invalid introspection data: JSON nesting too deep",
			setup:  func(t *testing.T) setup { return setup{body: fixture(t, "bad/too-deep.json")} }},
		{name: "wrong type: cpu count", status: http.StatusBadRequest,
			message: func(setup) string {
				return "Invalid introspection data: inventory.cpu.count: expected integer, got string"
			},
			setup: func(t *testing.T) setup {
				return setup{body: edit(t, ref, func(m map[string]any) { inv(m)["cpu"].(map[string]any)["count"] = "32" })}
			}},
		{name: "wrong type: disk size", status: http.StatusBadRequest,
			message: func(setup) string {
				return "Invalid introspection data: inventory.disks[1].size: expected integer, got string"
			},
			setup: func(t *testing.T) setup {
				return setup{body: edit(t, ref, func(m map[string]any) { inv(m)["disks"].([]any)[1].(map[string]any)["size"] = "4TB" })}
			}},
		{name: "wrong type: interfaces", status: http.StatusBadRequest,
			message: func(setup) string {
				return "Invalid introspection data: inventory.interfaces: expected array, got object"
			},
			setup: func(t *testing.T) setup { return setup{body: fixture(t, "bad/wrong-type-interfaces.json")} }},
		{name: "wrong type: lldp TLV not a pair", status: http.StatusBadRequest, prefix: "Invalid introspection data: lldp_raw.eth0[1]",
			setup: func(t *testing.T) setup { return setup{body: fixture(t, "bad/lldp-not-pairs.json")} }},
		{name: "missing inventory", status: http.StatusBadRequest,
			message: func(setup) string { return "Invalid introspection data: inventory: required" },
			setup:   func(t *testing.T) setup { return setup{body: fixture(t, "bad/missing-inventory.json")} }},
		{name: "missing interfaces", status: http.StatusBadRequest,
			message: func(setup) string { return "Invalid introspection data: inventory.interfaces: required" },
			setup:   func(t *testing.T) setup { return setup{body: fixture(t, "bad/missing-interfaces.json")} }},
		{name: "no lookup attributes", status: http.StatusBadRequest,
			message: func(setup) string {
				return "No lookup attributes were found in the introspection data: no valid MAC or BMC address"
			},
			setup: func(t *testing.T) setup {
				return setup{body: []byte(`{"inventory":{"interfaces":[],"bmc_address":"0.0.0.0","bmc_v6address":"::/0"}}`)}
			}},
		{name: "unknown node", status: http.StatusBadRequest,
			message: func(setup) string {
				return "The following failures happened during running pre-processing hooks:\nLook up error: " +
					"Could not find a node for attributes {'bmc_address': ['192.0.2.99'], 'mac': ['3c:fd:fe:99:99:30', '3c:fd:fe:99:99:31']}"
			},
			setup: func(t *testing.T) setup {
				b := withMAC(withMAC(ref, refMAC, "3c:fd:fe:99:99:30"), refMAC2, "3c:fd:fe:99:99:31")
				return setup{body: bytes.ReplaceAll(b, []byte(refBMC), []byte("192.0.2.99"))}
			}},
		{name: "ambiguous lookup by MAC", status: http.StatusBadRequest, prefix: "The following failures happened during running pre-processing hooks:\nLook up error: Multiple nodes match the same number of attributes {'bmc_address': ['192.0.2.98'], 'mac': ['3c:fd:fe:aa:00:30', '3c:fd:fe:aa:00:31']}: ",
			setup: func(t *testing.T) setup {
				// Each of two waiting nodes owns one of the report's NICs.
				a := r.node(t, nodeSpec{macs: []string{"3c:fd:fe:aa:00:30"}})
				b := r.node(t, nodeSpec{macs: []string{"3c:fd:fe:aa:00:31"}})
				r.start(t, a.UUID, false, "")
				r.start(t, b.UUID, false, "")
				body := withMAC(withMAC(ref, refMAC, "3c:fd:fe:aa:00:30"), refMAC2, "3c:fd:fe:aa:00:31")
				return setup{body: bytes.ReplaceAll(body, []byte(refBMC), []byte("192.0.2.98")), watched: []string{a.UUID, b.UUID}}
			}},
		{name: "ambiguous lookup by BMC", status: http.StatusBadRequest, prefix: "The following failures happened during running pre-processing hooks:\nLook up error: Multiple nodes match the same number of attributes {'bmc_address': ['192.0.2.77'], 'mac': ['3c:fd:fe:bb:00:30', '3c:fd:fe:bb:00:31']}: ",
			setup: func(t *testing.T) setup {
				// Two waiting nodes behind the same BMC address (a chassis
				// manager), neither with a port the report names.
				di := func() baremetal.JSON { return baremetal.JSON{"ipmi_address": "192.0.2.77"} }
				a := r.node(t, nodeSpec{driverInfo: di()})
				b := r.node(t, nodeSpec{driverInfo: di()})
				r.start(t, a.UUID, false, "")
				r.start(t, b.UUID, false, "")
				body := withMAC(withMAC(ref, refMAC, "3c:fd:fe:bb:00:30"), refMAC2, "3c:fd:fe:bb:00:31")
				return setup{body: bytes.ReplaceAll(body, []byte(refBMC), []byte("192.0.2.77")), watched: []string{a.UUID, b.UUID}}
			}},
		{name: "wrong token in header", status: http.StatusForbidden,
			message: func(s setup) string { return "Invalid or missing inspection token for node " + s.watched[0] },
			setup: func(t *testing.T) setup {
				n := r.node(t, nodeSpec{macs: []string{"3c:fd:fe:cc:00:30"}})
				r.start(t, n.UUID, false, "the-right-token")
				return setup{body: withMAC(ref, refMAC, "3c:fd:fe:cc:00:30"), token: "a-wrong-token", watched: []string{n.UUID}}
			}},
		{name: "wrong token in inspection_token", status: http.StatusForbidden,
			message: func(s setup) string { return "Invalid or missing inspection token for node " + s.watched[0] },
			setup: func(t *testing.T) setup {
				n := r.node(t, nodeSpec{macs: []string{"3c:fd:fe:cc:01:30"}})
				r.start(t, n.UUID, false, "the-right-token")
				body := edit(t, withMAC(ref, refMAC, "3c:fd:fe:cc:01:30"), func(m map[string]any) { m["inspection_token"] = "the-wrong-token" })
				return setup{body: body, watched: []string{n.UUID}}
			}},
		{name: "missing token", status: http.StatusForbidden,
			message: func(s setup) string { return "Invalid or missing inspection token for node " + s.watched[0] },
			setup: func(t *testing.T) setup {
				n := r.node(t, nodeSpec{macs: []string{"3c:fd:fe:cc:02:30"}})
				r.start(t, n.UUID, false, "the-right-token")
				return setup{body: withMAC(ref, refMAC, "3c:fd:fe:cc:02:30"), watched: []string{n.UUID}}
			}},
		{name: "node finished already", status: http.StatusBadRequest,
			message: func(s setup) string {
				return `Node ` + s.watched[0] + ` is not waiting for introspection (state "finished")`
			},
			setup: func(t *testing.T) setup {
				n := r.node(t, nodeSpec{macs: []string{"3c:fd:fe:dd:00:30"}})
				r.start(t, n.UUID, false, "")
				body := withMAC(ref, refMAC, "3c:fd:fe:dd:00:30")
				if resp := r.continueReport(t, body, ""); resp.status != http.StatusOK {
					t.Fatalf("first report = %d %s", resp.status, resp.body)
				}
				return setup{body: body, watched: []string{n.UUID}}
			}},
		{name: "introspection aborted", status: http.StatusBadRequest,
			message: func(s setup) string {
				return `Node ` + s.watched[0] + ` is not waiting for introspection (state "error")`
			},
			setup: func(t *testing.T) setup {
				n := r.node(t, nodeSpec{macs: []string{"3c:fd:fe:dd:01:30"}})
				r.start(t, n.UUID, false, "")
				if resp := r.do(t, http.MethodPost, "/v1/introspection/"+n.UUID+"/abort", nil, nil); resp.status != http.StatusAccepted {
					t.Fatalf("abort = %d %s", resp.status, resp.body)
				}
				return setup{body: withMAC(ref, refMAC, "3c:fd:fe:dd:01:30"), watched: []string{n.UUID}}
			}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := tc.setup(t)
			before := []snapshot{r.snapshot(t, waiting.UUID)}
			for _, id := range s.watched {
				before = append(before, r.snapshot(t, id))
			}
			resp := r.continueReport(t, s.body, s.token)
			if resp.status != tc.status {
				t.Fatalf("status %d, want %d: %s", resp.status, tc.status, resp.body)
			}
			msg := resp.errorMessage(t)
			switch {
			case tc.message != nil && msg != tc.message(s):
				t.Errorf("message %q\nwant    %q", msg, tc.message(s))
			case tc.prefix != "" && !strings.HasPrefix(msg, tc.prefix):
				t.Errorf("message %q, want it to begin with %q", msg, tc.prefix)
			}
			for _, id := range s.watched {
				if strings.Contains(tc.prefix, "Multiple") && !strings.Contains(msg, id) {
					t.Errorf("message %q does not name node %s", msg, id)
				}
			}
			for _, b := range before {
				r.unchanged(t, b)
			}
		})
	}
}

// TestContinue_RamdiskErrorFailsIntrospection: a report whose error is set
// ends the introspection in error with upstream's messages; the report is
// kept raw, the node is not touched.
func TestContinue_RamdiskErrorFailsIntrospection(t *testing.T) {
	r := newRig(t)
	n := r.node(t, nodeSpec{macs: []string{"52:54:00:12:34:56"}, properties: baremetal.JSON{"cpus": "1"}})
	r.start(t, n.UUID, false, "")
	before := r.snapshot(t, n.UUID)
	body := fixture(t, "ramdisk-error.json")

	resp := r.continueReport(t, body, "")
	failure := "Preprocessing hook ramdisk_error: Ramdisk reported error: The following errors were encountered:\n" +
		"* collector lldp failed: [Errno 19] No such device: 'eth1'"
	if resp.status != http.StatusBadRequest {
		t.Fatalf("status %d: %s", resp.status, resp.body)
	}
	if got, want := resp.errorMessage(t), "The following failures happened during running pre-processing hooks:\n"+failure; got != want {
		t.Errorf("message %q\nwant    %q", got, want)
	}
	in := r.introspection(t, n.UUID)
	if in.State != inspector.StateError || in.FinishedAt == nil || in.Error != failure {
		t.Errorf("introspection state %q finished %v error %q\nwant error %q", in.State, in.FinishedAt, in.Error, failure)
	}
	if raw := r.data(t, n.UUID, "raw"); !sameReportWithoutLogs(t, raw, body) {
		t.Errorf("raw data not stored as posted less its logs (%d bytes)", len(raw))
	}
	if p := r.data(t, n.UUID, "processed"); p != nil {
		t.Errorf("processed data stored for a failed report: %s", p)
	}
	after := r.snapshot(t, n.UUID)
	// The reservation is the conductor's, notified that the introspection ended.
	if diff := cmp.Diff(before.Node, after.Node, cmpopts.IgnoreFields(baremetal.Node{}, "Reservation")); diff != "" {
		t.Errorf("node changed (-before +after):\n%s", diff)
	}
	if diff := cmp.Diff(before.Ports, after.Ports); diff != "" {
		t.Errorf("ports changed (-before +after):\n%s", diff)
	}
	// The status API reports it the same way.
	st := r.do(t, http.MethodGet, "/v1/introspection/"+n.UUID, nil, nil)
	var s struct {
		State    string `json:"state"`
		Finished bool   `json:"finished"`
		Error    string `json:"error"`
	}
	if err := json.Unmarshal(st.body, &s); err != nil || s.State != "error" || !s.Finished || s.Error != failure {
		t.Errorf("status %s", st.body)
	}
}

// capabilities splits a capabilities property into a map; upstream's order
// comes from a Python set and is not defined.
func capabilities(t *testing.T, v any) map[string]string {
	t.Helper()
	s, ok := v.(string)
	if !ok {
		t.Fatalf("capabilities %#v is not a string", v)
	}
	out := map[string]string{}
	for _, kv := range strings.Split(s, ",") {
		k, val, _ := strings.Cut(kv, ":")
		out[k] = val
	}
	return out
}

func TestContinue_ReferencePayloadByBMCWritesPropertiesAndPorts(t *testing.T) {
	r := newRig(t)
	// No port: the node is found by its BMC address alone, and
	// validate_interfaces creates the PXE NIC's port (add_ports=pxe).
	n := r.node(t, nodeSpec{driverInfo: baremetal.JSON{"ipmi_address": refBMC},
		properties: baremetal.JSON{"cpus": "1", "root_device": nil, "vendor": "kept"}})
	r.start(t, n.UUID, false, "")
	resp := r.continueReport(t, referencePayload(t), "")
	if resp.status != http.StatusOK || string(resp.body) != `{"uuid":"`+n.UUID+`"}` {
		t.Fatalf("continue = %d %s", resp.status, resp.body)
	}
	got := r.getNode(t, n.UUID)
	props := got.Properties
	// Upstream writes these as strings: local_gb = 960197124096 // GiB - 1.
	for k, want := range map[string]any{"cpus": "32", "cpu_arch": "x86_64", "memory_mb": "131072", "local_gb": "893", "vendor": "kept"} {
		if props[k] != want {
			t.Errorf("properties[%s] = %#v, want %#v", k, props[k], want)
		}
	}
	wantCaps := map[string]string{"cpu_vt": "true", "cpu_aes": "true", "cpu_hugepages": "true", "cpu_hugepages_1g": "true"}
	if diff := cmp.Diff(wantCaps, capabilities(t, props["capabilities"])); diff != "" {
		t.Errorf("capabilities (-want +got):\n%s", diff)
	}

	ports := r.ports(t, n.UUID)
	if len(ports) != 1 {
		t.Fatalf("ports %+v, want one for the PXE NIC", ports)
	}
	p := ports[0]
	if p.Address != refMAC || !p.PXEEnabled {
		t.Errorf("port %s pxe_enabled %v", p.Address, p.PXEEnabled)
	}
	wantLLC := baremetal.JSON{"switch_id": "b8:59:9f:1a:2b:3c", "port_id": "Ethernet1/12", "switch_info": "leaf-r12a"}
	if diff := cmp.Diff(wantLLC, p.LocalLinkConnection); diff != "" {
		t.Errorf("local_link_connection (-want +got):\n%s", diff)
	}
	in := r.introspection(t, n.UUID)
	if in.State != inspector.StateFinished || in.Error != "" || in.FinishedAt == nil {
		t.Errorf("introspection %+v", in)
	}
}

func TestContinue_LocalLinkConnectionKeepsOperatorValues(t *testing.T) {
	r := newRig(t)
	n := r.node(t, nodeSpec{})
	r.port(t, n.UUID, refMAC, baremetal.JSON{"port_id": "Te1/0/12"})
	r.start(t, n.UUID, false, "")
	if resp := r.continueReport(t, referencePayload(t), ""); resp.status != http.StatusOK {
		t.Fatalf("continue = %d %s", resp.status, resp.body)
	}
	ports := r.ports(t, n.UUID)
	if len(ports) != 1 {
		t.Fatalf("ports %+v: the existing port should be reused", ports)
	}
	want := baremetal.JSON{"switch_id": "b8:59:9f:1a:2b:3c", "port_id": "Te1/0/12", "switch_info": "leaf-r12a"}
	if diff := cmp.Diff(want, ports[0].LocalLinkConnection); diff != "" {
		t.Errorf("local_link_connection (-want +got):\n%s", diff)
	}
}

func TestContinue_Fixtures(t *testing.T) {
	for _, tc := range []struct {
		file     string
		macs     []string // the node's ports before
		addPorts string
		props    map[string]any
		caps     map[string]string
		ports    int                       // after
		llc      map[string]baremetal.JSON // by port MAC
	}{
		{
			file: "example.json", macs: []string{refMAC},
			props: map[string]any{"cpus": "32", "cpu_arch": "x86_64", "memory_mb": "131072", "local_gb": "893"},
			caps:  map[string]string{"cpu_vt": "true", "cpu_aes": "true", "cpu_hugepages": "true", "cpu_hugepages_1g": "true"},
			ports: 1,
			llc:   map[string]baremetal.JSON{refMAC: {"switch_id": "b8:59:9f:1a:2b:3c", "port_id": "Ethernet1/12", "switch_info": "leaf-r12a"}},
		},
		{
			// A QEMU VM: 20 GiB disk → local_gb 19; the unknown BMC (0.0.0.0) is ignored.
			file: "small-2nic.json", macs: []string{"52:54:00:12:34:56"},
			props: map[string]any{"cpus": "2", "cpu_arch": "x86_64", "memory_mb": "4096", "local_gb": "19"},
			caps:  map[string]string{"cpu_hugepages": "true"},
			ports: 1,
			llc:   map[string]baremetal.JSON{"52:54:00:12:34:56": {"switch_id": "0c:8d:db:4f:2a:80", "port_id": "ge-0/0/7", "switch_info": "sw-lab-01"}},
		},
		{
			// Malformed TLVs are skipped, not fatal.
			file: "lldp-malformed.json", macs: []string{"52:54:00:12:34:56"},
			props: map[string]any{"cpus": "2", "cpu_arch": "x86_64", "memory_mb": "4096", "local_gb": "19"},
			caps:  map[string]string{"cpu_hugepages": "true"},
			ports: 1,
		},
		{
			// 40 NICs, add_ports=all: a port per NIC, each with its switch port.
			file: "large-40nic-24disk.json", macs: []string{"3c:fd:fe:a0:00:00"}, addPorts: "all",
			props: map[string]any{"cpus": "64", "cpu_arch": "x86_64", "memory_mb": "524288", "local_gb": "446"},
			caps: map[string]string{"cpu_vt": "true", "cpu_aes": "true", "cpu_hugepages": "true", "cpu_hugepages_1g": "true",
				"cpu_txt": "true"},
			ports: 40,
			llc:   map[string]baremetal.JSON{"3c:fd:fe:a0:00:00": {"switch_id": "00:1c:73:aa:00:01", "port_id": "Ethernet1/1", "switch_info": "leaf-r12a"}},
		},
	} {
		t.Run(tc.file, func(t *testing.T) {
			r := newRig(t, func(o *inspection.Options) {
				if tc.addPorts != "" {
					o.AddPorts = tc.addPorts
				}
			})
			n := r.node(t, nodeSpec{macs: tc.macs})
			r.start(t, n.UUID, false, "")
			body := fixture(t, tc.file)
			if resp := r.continueReport(t, body, ""); resp.status != http.StatusOK {
				t.Fatalf("continue = %d %s", resp.status, resp.body)
			}
			props := r.getNode(t, n.UUID).Properties
			for k, want := range tc.props {
				if props[k] != want {
					t.Errorf("properties[%s] = %#v, want %#v", k, props[k], want)
				}
			}
			if diff := cmp.Diff(tc.caps, capabilities(t, props["capabilities"])); diff != "" {
				t.Errorf("capabilities (-want +got):\n%s", diff)
			}
			ports := r.ports(t, n.UUID)
			if len(ports) != tc.ports {
				t.Errorf("%d ports, want %d", len(ports), tc.ports)
			}
			withLLC := 0
			for _, p := range ports {
				if want, ok := tc.llc[p.Address]; ok {
					if diff := cmp.Diff(want, p.LocalLinkConnection); diff != "" {
						t.Errorf("port %s local_link_connection (-want +got):\n%s", p.Address, diff)
					}
				}
				if p.LocalLinkConnection["switch_id"] != nil {
					withLLC++
				}
			}
			if tc.addPorts == "all" && withLLC != len(ports) {
				t.Errorf("%d of %d ports have a switch_id from LLDP", withLLC, len(ports))
			}
			if raw := r.data(t, n.UUID, "raw"); !sameReportWithoutLogs(t, raw, body) {
				t.Error("raw data differs from the report less its logs")
			}
			if r.data(t, n.UUID, "processed") == nil {
				t.Error("no processed data")
			}
		})
	}
}

func TestContinue_Tokens(t *testing.T) {
	r := newRig(t)
	ref := referencePayload(t)
	for _, tc := range []struct {
		name         string
		startToken   string
		header       string
		field        string
		wantAccepted bool
	}{
		{name: "header", startToken: "tok-1", header: "tok-1", wantAccepted: true},
		{name: "inspection_token field", startToken: "tok-2", field: "tok-2", wantAccepted: true},
		{name: "header wins over a wrong field", startToken: "tok-3", header: "tok-3", field: "nope", wantAccepted: true},
		{name: "started without a token: none needed", wantAccepted: true},
		{name: "started without a token: any accepted", header: "whatever", wantAccepted: true},
		{name: "prefix of the token", startToken: "tok-4-long", header: "tok-4", wantAccepted: false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			mac := macFor(tc.name)
			n := r.node(t, nodeSpec{macs: []string{mac}})
			r.start(t, n.UUID, false, tc.startToken)
			body := withMAC(ref, refMAC, mac)
			if tc.field != "" {
				body = edit(t, body, func(m map[string]any) { m["inspection_token"] = tc.field })
			}
			resp := r.continueReport(t, body, tc.header)
			if tc.wantAccepted != (resp.status == http.StatusOK) {
				t.Fatalf("continue = %d %s, accepted %v", resp.status, resp.body, tc.wantAccepted)
			}
			if tc.wantAccepted {
				if got := r.getNode(t, n.UUID).Properties["cpus"]; got != "32" {
					t.Errorf("cpus %#v", got)
				}
			} else if resp.status != http.StatusForbidden {
				t.Errorf("status %d, want 403", resp.status)
			}
		})
	}
}

// macFor derives a distinct MAC for a test case.
func macFor(name string) string {
	var h byte
	for _, c := range []byte(name) {
		h = h*31 + c
	}
	b := []byte{0x3c, 0xfd, 0xfe, 0xee, byte(len(name)), h}
	const hexd = "0123456789abcdef"
	var parts []string
	for _, x := range b {
		parts = append(parts, string([]byte{hexd[x>>4], hexd[x&15]}))
	}
	return strings.Join(parts, ":")
}

// TestContinue_ConcurrentReportsForOneNode: the agent retries; of several
// identical reports racing, one is processed and the others are refused.
func TestContinue_ConcurrentReportsForOneNode(t *testing.T) {
	r := newRig(t)
	n := r.node(t, nodeSpec{macs: []string{refMAC}})
	r.start(t, n.UUID, false, "")
	body := referencePayload(t)
	statuses := make(chan int, 4)
	for range 4 {
		go func() {
			resp, err := r.srv.Client().Post(r.srv.URL+"/v1/continue", "application/json", bytes.NewReader(body))
			if err != nil {
				t.Error(err)
				statuses <- 0
				return
			}
			resp.Body.Close()
			statuses <- resp.StatusCode
		}()
	}
	var got []int
	for range 4 {
		got = append(got, <-statuses)
	}
	slices.Sort(got)
	if diff := cmp.Diff([]int{200, 400, 400, 400}, got); diff != "" {
		t.Errorf("statuses (-want +got):\n%s", diff)
	}
	if ports := r.ports(t, n.UUID); len(ports) != 1 {
		t.Errorf("%d ports after concurrent reports", len(ports))
	}
}

// sameReportWithoutLogs reports whether stored is the posted report less
// its ramdisk logs, which are never kept in the data.
func sameReportWithoutLogs(t *testing.T, stored, posted []byte) bool {
	t.Helper()
	var got, want map[string]any
	if err := json.Unmarshal(stored, &got); err != nil {
		t.Errorf("stored report: %v", err)
		return false
	}
	if err := json.Unmarshal(posted, &want); err != nil {
		t.Fatalf("posted report: %v", err)
	}
	delete(want, "logs")
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("stored report (-posted less logs +stored):\n%s", diff)
		return false
	}
	return true
}
