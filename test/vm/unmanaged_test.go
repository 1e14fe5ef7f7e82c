package vm_test

import (
	"bytes"
	"context"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	sqlstore "github.com/ferrometal/ferro/internal/store/sql"
)

// unmanagedNode enrols a fake-hardware node with the fake boot interface,
// which cannot prepare a ramdisk, so that its inspection takes the
// unmanaged path (the inspector manages boot, the node waits in inspect
// wait and the built-in netboot answers it), and starts its inspection.
func (l *lab) unmanagedNode(t *testing.T, mac string) string {
	t.Helper()
	uuid := strings.TrimSpace(l.baremetal("node", "create", "--driver", "fake-hardware", "--boot-interface", "fake",
		"--network-interface", "noop", "--inspect-interface", "inspector", "-f", "value", "-c", "uuid"))
	l.baremetal("port", "create", mac, "--node", uuid, "--pxe-enabled", "true")
	l.baremetal("node", "manage", uuid, "--wait", "60")
	l.baremetal("node", "inspect", uuid)
	ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
	defer cancel()
	n, err := l.waitState(ctx, uuid, "inspect wait")
	if err != nil {
		t.Fatal(err)
	}
	if dii, _ := n["driver_internal_info"].(map[string]any); dii["inspector_manage_boot"] != false {
		t.Fatalf("driver_internal_info %v: the inspection did not take the unmanaged path", dii)
	}
	return uuid
}

// leases returns the node's lease rows, read from ferro's database.
func (l *lab) leases(t *testing.T, uuid string) []string {
	t.Helper()
	db, err := sqlstore.Open(t.Context(), "sqlite://"+filepath.Join(l.dir, "data", "ferro.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	all, err := db.ListLeases(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	var ips []string
	for _, le := range all {
		if le.NodeUUID == uuid {
			ips = append(ips, le.MAC+"="+le.IP)
		}
	}
	return ips
}

// TestFault_UnmanagedPathReleasesLeases: on the unmanaged path the
// built-in netboot leases an address to the node's firmware (busybox
// udhcpc as a PXE ROM); when the introspection ends — report processed,
// report with an agent error, abort, and [conductor]inspect_wait_timeout —
// the lease row is gone by the time the node has left inspect wait,
// released by the end of the inspection itself (logged as such), not by
// the netboot's periodic sweep, which stays the backstop.
func TestFault_UnmanagedPathReleasesLeases(t *testing.T) {
	l := startFaultLab(t)
	report, err := os.ReadFile("../../testdata/ipa/small-2nic.json")
	if err != nil {
		t.Fatal(err)
	}
	// post sends the node's IPA report (its NICs renamed to the node's) to
	// the callback, without a token as the stock agent does.
	post := func(t *testing.T, mac, other, agentError string) (int, []byte) {
		body := bytes.ReplaceAll(report, []byte("52:54:00:12:34:56"), []byte(mac))
		body = bytes.ReplaceAll(body, []byte("52:54:00:12:34:57"), []byte(other))
		body = bytes.ReplaceAll(body, []byte("01-52-54-00-12-34-56"), []byte("01-"+strings.ReplaceAll(mac, ":", "-")))
		if agentError != "" {
			body = bytes.Replace(body, []byte(`"error": null`), []byte(`"error": "`+agentError+`"`), 1)
		}
		req, _ := http.NewRequest(http.MethodPost, "http://"+bridgeIP+":5050/v1/continue", bytes.NewReader(body))
		return l.do(req)
	}
	cases := []struct {
		name, ifname, mac, other string
		end                      func(t *testing.T, uuid, mac, other string)
		want                     string
		lastError                string
	}{
		{"finished", "un1", "52:54:00:77:30:01", "52:54:00:77:31:01", func(t *testing.T, uuid, mac, other string) {
			if code, b := post(t, mac, other, ""); code != 200 {
				t.Fatalf("report: %d %s", code, b)
			}
		}, "manageable", ""},
		{"agent error", "un2", "52:54:00:77:30:02", "52:54:00:77:31:02", func(t *testing.T, uuid, mac, other string) {
			if code, b := post(t, mac, other, "disk controller on fire"); code != 400 {
				t.Fatalf("report with an error: %d %s, want 400", code, b)
			}
		}, "inspect failed", "disk controller on fire"},
		// After an abort or a timeout the inspector (manage_boot) powers
		// the node off; that power action keeps the conductor's reason.
		{"abort", "un3", "52:54:00:77:30:03", "52:54:00:77:31:03", func(t *testing.T, uuid, mac, other string) {
			l.baremetal("node", "abort", uuid)
		}, "inspect failed", "Inspection was aborted by request."},
		{"timeout", "un4", "52:54:00:77:30:04", "52:54:00:77:31:04", func(t *testing.T, uuid, mac, other string) {},
			"inspect failed", "([conductor]inspect_wait_timeout)"},
	}
	// One node at a time: each ends well within the lab's short
	// inspect_wait_timeout, except the one that waits for it.
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			l.veth(t, c.ifname, c.mac)
			uuid := l.unmanagedNode(t, c.mac)
			lease, err := l.udhcpc(t, c.ifname)
			if err != nil {
				t.Fatalf("the unmanaged node's firmware got no lease: %v", err)
			}
			if got := l.leases(t, uuid); len(got) != 1 || !strings.HasSuffix(got[0], "="+lease["ip"]) {
				t.Fatalf("lease rows %v, want the one of %s", got, lease["ip"])
			}

			c.end(t, uuid, c.mac, c.other)
			ctx, cancel := context.WithTimeout(t.Context(), 90*time.Second)
			defer cancel()
			n, err := l.waitState(ctx, uuid, c.want)
			if err != nil {
				t.Fatal(err)
			}
			if c.want == "inspect failed" {
				// The inspector's power-off comes after the state change.
				if n, err = l.waitPowerOff(ctx, uuid); err != nil {
					t.Fatal(err)
				}
			}
			if msg := str(n["last_error"]); !strings.Contains(msg, c.lastError) {
				t.Errorf("last_error %q, want it to say %q", msg, c.lastError)
			}
			if left := l.leases(t, uuid); len(left) != 0 {
				t.Errorf("lease rows left once the node is %s: %v", c.want, left)
			}
			// The conductor logs the release before it saves the node's
			// new state, so the line is there already; the sweep's line
			// does not say "on teardown".
			if !regexp.MustCompile(`dhcp: lease released on teardown.*node=` + uuid + `.*mac=` + c.mac).MatchString(l.out.String()) {
				t.Errorf("the lease was not released by the end of the inspection (no \"lease released on teardown\" for node %s)", uuid)
			}
		})
	}
}
