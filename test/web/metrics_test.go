package web_test

import (
	"io"
	"net/http"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/ferrometal/ferro/internal/testing/ferrotest"
	"github.com/ferrometal/ferro/internal/testing/vbmctest"
)

// scrape reads /metrics.
func scrape(t *testing.T, l *lab) string {
	t.Helper()
	resp, err := http.Get(l.srv.URL + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("GET /metrics: %s %v", resp.Status, err)
	}
	return string(b)
}

var sampleLine = regexp.MustCompile(`^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)$`)
var labelPair = regexp.MustCompile(`([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"`)

// sum adds up the samples of name whose labels include want's.
func sum(text, name string, want map[string]string) float64 {
	var total float64
	for line := range strings.Lines(text) {
		m := sampleLine.FindStringSubmatch(strings.TrimSpace(line))
		if m == nil || m[1] != name {
			continue
		}
		labels := map[string]string{}
		for _, p := range labelPair.FindAllStringSubmatch(m[2], -1) {
			labels[p[1]] = p[2]
		}
		ok := true
		for k, v := range want {
			if labels[k] != v {
				ok = false
			}
		}
		if ok {
			v, _ := strconv.ParseFloat(m[3], 64)
			total += v
		}
	}
	return total
}

// TestMetrics_MoveAsInspectionsRun inspects two nodes whose power and boot
// device go to ferro-vbmc, one over Redfish and one over IPMI, fails a
// third by abort and re-inspects one with a disk pulled; the inspection,
// phase, hardware change, BMC, API, store and node series move accordingly,
// and promtool accepts the exposition.
func TestMetrics_MoveAsInspectionsRun(t *testing.T) {
	promtool := ferrotest.RequireTool(t, "promtool")
	machines := vbmctest.FakeMachines("mx", 3)
	v := vbmctest.Start(t, vbmctest.Config{Machines: machines})
	l := startLab(t, "FERRO_IPMI_MIN_COMMAND_INTERVAL=0", "FERRO_IPMI_COMMAND_RETRY_TIMEOUT=5")

	rf := l.enrollWith(map[string]any{"name": "mx-redfish", "power_interface": "redfish", "management_interface": "redfish",
		"driver_info": map[string]any{"redfish_address": v.RedfishURL, "redfish_username": v.Username, "redfish_password": v.Password,
			"redfish_system_id": "/redfish/v1/Systems/mx0"}}, machines[0].MACs[0])
	e := v.IPMI["mx1"]
	ipmi := l.enrollWith(map[string]any{"name": "mx-ipmi", "power_interface": "ipmitool", "management_interface": "ipmitool",
		"driver_info": map[string]any{"ipmi_address": e.Host, "ipmi_port": e.Port, "ipmi_username": v.Username,
			"ipmi_password": v.Password, "ipmi_cipher_suite": "3"}}, machines[1].MACs[0])
	aborted := l.enroll("mx-abort", "", machines[2].MACs[0])

	before := scrape(t, l)
	hw := hw{disks: []disk{{"/dev/sda", "S1", 10 << 30}, {"/dev/sdb", "S2", 20 << 30}}, switch_: "sw", port: "p1", vlans: []int{10}}
	for _, n := range []*node{rf, ipmi, aborted} {
		l.provision(n, "manage")
		l.waitState(n, "manageable")
	}
	for _, n := range []*node{rf, ipmi} {
		bc := l.startInspection(n)
		l.post(bc, report(t, n.macs, hw))
		l.waitState(n, "manageable")
	}
	l.startInspection(aborted)
	l.provision(aborted, "abort")
	l.waitState(aborted, "inspect failed")
	// A re-inspection with a disk pulled.
	pulled := hw
	pulled.disks = hw.disks[:1]
	bc := l.startInspection(ipmi)
	l.post(bc, report(t, ipmi.macs, pulled))
	l.waitState(ipmi, "manageable")
	after := scrape(t, l)

	moved := func(name string, labels map[string]string, want float64) {
		t.Helper()
		if d := sum(after, name, labels) - sum(before, name, labels); d != want {
			t.Errorf("%s%v moved by %v, want %v", name, labels, d, want)
		}
	}
	movedSome := func(name string, labels map[string]string) {
		t.Helper()
		if d := sum(after, name, labels) - sum(before, name, labels); d <= 0 {
			t.Errorf("%s%v did not move", name, labels)
		}
	}
	iface := map[string]string{"inspect_interface": "inspector", "hardware_type": "fake-hardware"}
	moved("ferro_inspections_started_total", iface, 4)
	moved("ferro_inspections_finished_total", iface, 3)
	moved("ferro_inspections_failed_total", iface, 1)
	moved("ferro_inspection_duration_seconds_count", map[string]string{"result": "finished"}, 3)
	// The aborted inspection was powered on and torn down too; it got no report.
	for phase, n := range map[string]float64{"powered_on": 4, "report_received": 3, "processed": 3, "network_removed": 4, "powered_off": 4} {
		moved("ferro_inspection_phase_duration_seconds_count", map[string]string{"phase": phase}, n)
	}
	moved("ferro_hardware_changes_total", map[string]string{"component": "disk", "change": "removed"}, 1)
	// Power off, boot device, power on, power off again: each protocol's
	// operations went to ferro-vbmc and are counted by operation.
	movedSome("ferro_bmc_requests_total", map[string]string{"type": "redfish", "result": "ok", "operation": "POST Systems/{id}/Actions/ComputerSystem.Reset"})
	movedSome("ferro_bmc_requests_total", map[string]string{"type": "redfish", "result": "ok", "operation": "GET Systems/{id}"})
	movedSome("ferro_bmc_request_duration_seconds_count", map[string]string{"type": "redfish"})
	for _, op := range []string{"power on", "power off", "power status", "set boot device"} {
		movedSome("ferro_bmc_requests_total", map[string]string{"type": "ipmi", "result": "ok", "operation": op})
	}
	movedSome("ferro_api_requests_total", map[string]string{"api": "ironic", "route": "/v1/nodes/{node}/states/provision", "method": "PUT", "code": "202"})
	movedSome("ferro_api_requests_total", map[string]string{"api": "inspector", "route": "/v1/continue", "method": "POST", "code": "200"})
	movedSome("ferro_store_operation_duration_seconds_count", map[string]string{"operation": "transaction"})
	if got := sum(after, "ferro_nodes", map[string]string{"provision_state": "manageable"}); got != 2 {
		t.Errorf("ferro_nodes{manageable} = %v, want 2", got)
	}
	if got := sum(after, "ferro_nodes", map[string]string{"provision_state": "inspect failed"}); got != 1 {
		t.Errorf("ferro_nodes{inspect failed} = %v, want 1", got)
	}
	if strings.Contains(after, rf.uuid) || strings.Contains(after, v.Password) {
		t.Error("a node UUID or a BMC password is in the exposition")
	}
	cmd := exec.Command(promtool, "check", "metrics")
	cmd.Stdin = strings.NewReader(after)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Errorf("promtool check metrics: %v\n%s", err, out)
	}
}
