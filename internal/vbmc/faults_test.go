package vbmc

import (
	"context"
	"encoding/json"
	"net"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/bougou/go-ipmi/pkg/client"
	"github.com/bougou/go-ipmi/pkg/command/chassis"
)

func faultConfig(t *testing.T, f *Faults, requestLog bool) Config {
	return Config{
		Username: "admin", Password: "vbmc-pass",
		Redfish:    RedfishConfig{Listen: "127.0.0.1:0"},
		StateDir:   t.TempDir(),
		RequestLog: requestLog,
		Machines: []MachineConfig{{Name: "f0", Backend: BackendFake, IPMIListen: "127.0.0.1:0",
			CPUs: 2, MemoryMB: 2048, MACs: []string{"52:54:00:fa:00:01"}, DisksGB: []int{10}, Faults: f}},
	}
}

func do(t *testing.T, method, url, body string) int {
	t.Helper()
	req, _ := http.NewRequest(method, url, strings.NewReader(body))
	req.SetBasicAuth("admin", "vbmc-pass")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	return resp.StatusCode
}

func machines(t *testing.T, rd Ready) map[string]MachineState {
	t.Helper()
	req, _ := http.NewRequest("GET", rd.RedfishURL+"/ferro-vbmc/v1/machines", nil)
	req.SetBasicAuth("admin", "vbmc-pass")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET /ferro-vbmc/v1/machines: HTTP %d", resp.StatusCode)
	}
	var body struct {
		Machines map[string]MachineState `json:"machines"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&body); err != nil {
		t.Fatal(err)
	}
	return body.Machines
}

func TestFaults_Redfish500ThenRecovers(t *testing.T) {
	_, rd := startConfig(t, faultConfig(t, &Faults{Redfish500Count: 2}, true))
	sys := rd.RedfishURL + "/redfish/v1/Systems/f0"
	var got []int
	for range 3 {
		got = append(got, do(t, "GET", sys, ""))
	}
	if got[0] != 500 || got[1] != 500 || got[2] != 200 {
		t.Errorf("GET %s answered %v, want 500, 500, 200", sys, got)
	}
	reqs := machines(t, rd)["f0"].Requests
	if len(reqs) != 3 || reqs[0].Status != 500 || reqs[2].Status != 200 || reqs[2].Op != "GET /redfish/v1/Systems/f0" {
		t.Errorf("request log = %+v", reqs)
	}
}

func TestFaults_NeverConfirmPower(t *testing.T) {
	_, rd := startConfig(t, faultConfig(t, &Faults{NeverConfirmPower: true}, true))
	reset := rd.RedfishURL + "/redfish/v1/Systems/f0/Actions/ComputerSystem.Reset"
	if code := do(t, "POST", reset, `{"ResetType":"On"}`); code != http.StatusNoContent {
		t.Fatalf("Reset On: HTTP %d, want the command accepted", code)
	}
	host, port, _ := net.SplitHostPort(rd.IPMI["f0"])
	p, _ := strconv.Atoi(port)
	c, err := client.NewClient(host, p, "admin", "vbmc-pass")
	if err != nil {
		t.Fatal(err)
	}
	c.WithInterface(client.InterfaceLanplus)
	ctx := context.Background()
	if err := c.Connect(ctx); err != nil {
		t.Fatal(err)
	}
	defer c.Close(ctx)
	if _, err := c.ChassisControl(ctx, chassis.ChassisControlPowerUp); err != nil {
		t.Fatalf("chassis control on: %v, want it accepted", err)
	}
	st, err := c.GetChassisStatus(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if st.PowerIsOn {
		t.Error("IPMI reports power on: the fault should keep the machine off")
	}
	m := machines(t, rd)["f0"]
	if m.Power != "Off" {
		t.Errorf("power = %s, want Off", m.Power)
	}
	var ops []string
	for _, r := range m.Requests {
		ops = append(ops, r.Protocol+": "+r.Op)
	}
	want := "redfish: POST /redfish/v1/Systems/f0/Actions/ComputerSystem.Reset|ipmi: chassis control on|ipmi: get chassis status"
	if strings.Join(ops, "|") != want {
		t.Errorf("request log = %q, want %q", strings.Join(ops, "|"), want)
	}
}

func TestRequestLog_OffByDefault(t *testing.T) {
	_, rd := startConfig(t, faultConfig(t, nil, false))
	if code := do(t, "GET", rd.RedfishURL+"/ferro-vbmc/v1/machines", ""); code != http.StatusNotFound {
		t.Errorf("GET /ferro-vbmc/v1/machines without request_log: HTTP %d, want 404", code)
	}
}

// A latency is a lower bound on every answer, never an upper one: the
// test waits for the answers and checks only that none came early.
func TestFaults_LatencyDelaysRedfishAndIPMI(t *testing.T) {
	const latency = 150 * time.Millisecond
	_, rd := startConfig(t, faultConfig(t, &Faults{LatencyMS: int(latency / time.Millisecond)}, false))
	began := time.Now()
	if code := do(t, "GET", rd.RedfishURL+"/redfish/v1/Systems/f0", ""); code != http.StatusOK {
		t.Fatalf("GET the system: HTTP %d", code)
	}
	if took := time.Since(began); took < latency {
		t.Errorf("Redfish answered after %v, before the latency %v", took, latency)
	}
	host, port, _ := net.SplitHostPort(rd.IPMI["f0"])
	p, _ := strconv.Atoi(port)
	c, err := client.NewClient(host, p, "admin", "vbmc-pass")
	if err != nil {
		t.Fatal(err)
	}
	c.WithInterface(client.InterfaceLanplus)
	c.WithTimeout(10 * time.Second)
	ctx := context.Background()
	if err := c.Connect(ctx); err != nil {
		t.Fatal(err)
	}
	defer c.Close(ctx)
	began = time.Now()
	if _, err := c.GetChassisStatus(ctx); err != nil {
		t.Fatal(err)
	}
	if took := time.Since(began); took < latency {
		t.Errorf("IPMI answered after %v, before the latency %v", took, latency)
	}
}
