package cli_test

import (
	"encoding/json"
	"net/http"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/ferrometal/ferro/internal/testing/ferrotest"
)

// TestBaremetalCLI_FakeBootFallbackValidateAbortDelete checks, with the real
// CLI, what Ironic 21.4 does for the simplest inspectable node
// (fake-hardware, inspect_interface=inspector):
//   - `node validate` lists exactly the non-vendor interfaces of 21.4
//     (bios boot console deploy inspect management network power raid
//     rescue storage: no firmware, no vendor);
//   - `node inspect` takes the fallback path, because upstream's fake boot
//     has no inspection support: the inspector manages boot (PXE, reboot)
//     and the reason is in the node's history;
//   - `node abort` of that unmanaged inspection ends in inspect failed
//     with the node powered off;
//   - `node delete` logs no error about the node's lock.
func TestBaremetalCLI_FakeBootFallbackValidateAbortDelete(t *testing.T) {
	c, srv := start(t, ferrotest.WithEnv("FERRO_INSPECTOR_INTROSPECTION_DELAY=0"))
	node := c.object("node", "create", "--driver", "fake-hardware", "--name", "n1", "--inspect-interface", "inspector")
	uuid, _ := node["uuid"].(string)
	c.run("port", "create", "52:54:00:12:34:56", "--node", uuid)
	c.run("node", "manage", "n1", "--wait", waitSeconds)

	var ifaces []string
	for _, r := range c.rows("node", "validate", "n1") {
		ifaces = append(ifaces, r["Interface"].(string))
		if r["Result"] != true && r["Reason"] == "" {
			t.Errorf("node validate: %s failed without a reason: %v", r["Interface"], r)
		}
	}
	sort.Strings(ifaces)
	want := []string{"bios", "boot", "console", "deploy", "inspect", "management", "network", "power", "raid", "rescue", "storage"}
	if !slices.Equal(ifaces, want) {
		t.Errorf("node validate lists %v, want Ironic 21.4's %v", ifaces, want)
	}

	c.run("node", "inspect", "n1")
	n := waitProvision(t, srv, "n1", "inspect wait")
	if v := field(n, "driver_internal_info", "inspector_manage_boot"); v != false {
		t.Errorf("driver_internal_info[inspector_manage_boot] = %v, want false: fake boot falls back", v)
	}
	// The inspector manages boot: PXE once, then a reboot.
	deadline := time.Now().Add(30 * time.Second)
	for field(apiNode(t, srv, "n1"), "power_state") != "power on" {
		if time.Now().After(deadline) {
			t.Fatalf("the unmanaged inspection did not power the node on")
		}
		time.Sleep(100 * time.Millisecond)
	}
	if uuid, _ := field(n, "uuid").(string); srv.FakeBootDevice(uuid) != "pxe" {
		t.Errorf("boot device = %q, want pxe (set by the inspector)", srv.FakeBootDevice(uuid))
	}
	status, body := apiRequest(t, srv, http.MethodGet, "/v1/nodes/n1/history?detail=true", "")
	var hist struct {
		History []map[string]any `json:"history"`
	}
	if status != http.StatusOK || json.Unmarshal([]byte(body), &hist) != nil {
		t.Fatalf("history: %d %s", status, body)
	}
	fellBack := false
	for _, e := range hist.History {
		ev, _ := e["event"].(string)
		if strings.HasPrefix(ev, "fell back to unmanaged boot") && strings.Contains(ev, "fake boot interface does not support managed inspection") {
			fellBack = true
		}
	}
	if !fellBack {
		t.Errorf("the node's history does not say why it fell back: %v", hist.History)
	}

	c.run("node", "abort", "n1")
	waitProvision(t, srv, "n1", "inspect failed")
	deadline = time.Now().Add(30 * time.Second)
	for {
		waitPowerSettled(t, srv, "n1")
		if field(apiNode(t, srv, "n1"), "power_state") == "power off" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("after abort the node is still %v, want power off; log:\n%s", field(apiNode(t, srv, "n1"), "power_state"), srv.Log())
		}
		time.Sleep(100 * time.Millisecond)
	}
	if strings.Contains(srv.Log(), "cannot power off node") {
		t.Errorf("the power-off after abort was refused:\n%s", srv.Log())
	}

	c.run("node", "delete", "n1")
	if strings.Contains(srv.Log(), "cannot release node lock") {
		t.Errorf("node delete logged a lock error:\n%s", srv.Log())
	}
}

// apiNode reads the node from the API as the CLI does (each CLI run costs
// a Python start, so the polls below go to the API directly).
func apiNode(t *testing.T, srv *ferrotest.Server, name string) map[string]any {
	t.Helper()
	status, body := apiRequest(t, srv, http.MethodGet, "/v1/nodes/"+name, "")
	var n map[string]any
	if status != http.StatusOK || json.Unmarshal([]byte(body), &n) != nil {
		t.Fatalf("GET node %s: %d %s", name, status, body)
	}
	return n
}

// waitProvision polls the node until it is in state.
func waitProvision(t *testing.T, srv *ferrotest.Server, name, state string) map[string]any {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for {
		n := apiNode(t, srv, name)
		if n["provision_state"] == state {
			return n
		}
		if time.Now().After(deadline) {
			t.Fatalf("node %s is %v, want %s; last_error %v", name, n["provision_state"], state, n["last_error"])
		}
		time.Sleep(50 * time.Millisecond)
	}
}
