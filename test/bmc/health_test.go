package bmc_test

import (
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/ferrometal/ferro/internal/testing/vbmctest"
)

// TestHealth_FromTheBMCThroughTheAPI: a managed redfish node gets the
// health its BMC reports (ferro-vbmc's System says OK) from the periodic
// power-state sync, shown from 1.109 and recorded in its history; an ipmi
// node, whose interface has no health (as Ironic's), keeps null.
func TestHealth_FromTheBMCThroughTheAPI(t *testing.T) {
	l := startLab(t, vbmctest.FakeMachines("h", 2), append(faultEnv, "FERRO_CONDUCTOR_SYNC_POWER_STATE_INTERVAL=1")...)
	rf := l.create("health-redfish", "redfish", l.redfishInfo("h0", bmcPassword)).UUID
	ipmi := l.create("health-ipmi", "ipmi", l.ipmiInfo("h1", bmcPassword)).UUID
	for _, id := range []string{rf, ipmi} {
		if code, b := l.provision(id, "manage"); code != http.StatusAccepted {
			t.Fatalf("manage: HTTP %d %s", code, b)
		}
	}
	l.srv.WaitLog(t, "node health status changed", time.Minute)

	health := func(id, version string) (any, bool) {
		t.Helper()
		code, b := send(t, l.srv.URL, "/v1/nodes/"+id, version)
		if code != http.StatusOK {
			t.Fatalf("GET node at %s: HTTP %d %s", version, code, b)
		}
		var n map[string]any
		if err := json.Unmarshal(b, &n); err != nil {
			t.Fatal(err)
		}
		h, ok := n["health"]
		return h, ok
	}
	if h, _ := health(rf, "1.109"); h != "OK" {
		t.Errorf("redfish node health %v, want OK", h)
	}
	if _, ok := health(rf, "1.108"); ok {
		t.Errorf("health shown at 1.108")
	}
	// The ipmi node was synced too (it reached manageable before the
	// redfish node's health was logged, or is synced within a cycle).
	l.waitStable(ipmi, time.Minute)
	if h, ok := health(ipmi, "1.109"); !ok || h != nil {
		t.Errorf("ipmi node health %v (shown %v), want null", h, ok)
	}
	code, b := send(t, l.srv.URL, "/v1/nodes/"+rf+"/history", "1.78")
	if code != http.StatusOK || !strings.Contains(string(b), `Node health status changed: health='OK' (previously 'None')`) {
		t.Errorf("history: HTTP %d %s", code, b)
	}
}

// send is a GET at a microversion.
func send(t *testing.T, base, path, version string) (int, []byte) {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), http.MethodGet, base+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("X-OpenStack-Ironic-API-Version", version)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, b
}
