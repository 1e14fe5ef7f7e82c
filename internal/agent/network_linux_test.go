package agent

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ferrometal/ferro/internal/testing/ferrotest"
)

// networkHelperEnv makes the test binary run one Network scenario inside
// the test's namespace (see networkHelper) and print its outcome as JSON.
const networkHelperEnv = "FERRO_AGENT_NETWORK_HELPER"

// The namespace's two NICs: busybox udhcpd serves agent0's link only.
const (
	netMAC0 = "02:00:00:77:00:01"
	netMAC1 = "02:00:00:77:00:02"
)

// networkOutcome is what a helper run reports.
type networkOutcome struct {
	// EarlyLease: agent0 had its address before Wait was called.
	EarlyLease bool
	Err        string
	Addr0      string
	Addr1      string
	Took       float64 // seconds in Wait
}

// networkHelper plays the agent's part: each NIC is handed to Start as its
// driver would make it, then Wait settles the choice. The scenario is
// "BOOTIF-MAC;DHCP-timeout" ("none" for no BOOTIF).
func networkHelper(scenario string) {
	log := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelDebug}))
	bootMAC, timeout, _ := strings.Cut(scenario, ";")
	o := NetworkOptions{}
	o.Timeout, _ = time.ParseDuration(timeout)
	if bootMAC != "none" {
		o.BootMAC, _ = net.ParseMAC(bootMAC)
	}
	n := NewNetwork(context.Background(), log, o)
	var out networkOutcome
	for _, name := range []string{"agent0", "agent1"} {
		if err := LinkUp(name); err != nil {
			out.Err = err.Error()
			json.NewEncoder(os.Stdout).Encode(out)
			os.Exit(0)
		}
		n.Start(name)
	}
	// Started DHCP runs by itself: wait (bounded) for agent0's address
	// when it is a NIC Start must have taken.
	if bootMAC == "none" || bootMAC == netMAC0 {
		for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
			if v4, _ := SystemAddrs("agent0"); v4 != "" {
				out.EarlyLease = true
				break
			}
		}
	}
	t0 := time.Now()
	if err := n.Wait([]string{"agent0", "agent1"}); err != nil {
		out.Err = err.Error()
	}
	out.Took = time.Since(t0).Seconds()
	out.Addr0, _ = SystemAddrs("agent0")
	out.Addr1, _ = SystemAddrs("agent1")
	json.NewEncoder(os.Stdout).Encode(out)
	os.Exit(0)
}

// TestNetwork_DHCPStartsEarlyOnTheChosenNIC runs the agent's DHCP against
// busybox's udhcpd over veth pairs in a namespace the test creates: DHCP
// on the BOOTIF NIC starts when Start is handed it (before Wait), other
// NICs get DHCP only when no NIC has the BOOTIF MAC or there is none, a
// BOOTIF link without a server fails naming it, and without BOOTIF the
// first lease ends the wait.
func TestNetwork_DHCPStartsEarlyOnTheChosenNIC(t *testing.T) {
	bb := ferrotest.RequireTool(t, "busybox")
	n := newTestNamespace(t, "agentnet")
	ns, ip := n.name, n.ip
	ip("-n", ns, "link", "add", "agent0", "address", netMAC0, "type", "veth", "peer", "name", "sw0")
	ip("-n", ns, "link", "add", "agent1", "address", netMAC1, "type", "veth", "peer", "name", "sw1")
	ip("-n", ns, "link", "set", "sw0", "up")
	ip("-n", ns, "link", "set", "sw1", "up")
	ip("-n", ns, "addr", "add", "10.77.0.1/24", "dev", "sw0")

	dir := t.TempDir()
	conf := filepath.Join(dir, "udhcpd.conf")
	os.WriteFile(filepath.Join(dir, "leases"), nil, 0o644)
	if err := os.WriteFile(conf, []byte("start 10.77.0.100\nend 10.77.0.110\ninterface sw0\nmax_leases 10\n"+
		"lease_file "+filepath.Join(dir, "leases")+"\nopt subnet 255.255.255.0\nopt lease 600\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	d := n.command(bb, "udhcpd", "-f", conf)
	var dlog bytes.Buffer
	d.Stdout, d.Stderr = &dlog, &dlog
	if err := d.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { d.Process.Kill(); d.Wait() })

	run := func(t *testing.T, bootMAC string, timeout time.Duration) networkOutcome {
		t.Helper()
		for _, dev := range []string{"agent0", "agent1"} {
			ip("-n", ns, "addr", "flush", "dev", dev)
			ip("-n", ns, "link", "set", dev, "down")
		}
		helper := n.helper(networkHelperEnv + "=" + bootMAC + ";" + timeout.String())
		var stdout, stderr bytes.Buffer
		helper.Stdout, helper.Stderr = &stdout, &stderr
		if err := helper.Run(); err != nil {
			t.Fatalf("helper: %v\n%s\nudhcpd:\n%s", err, stderr.String(), dlog.String())
		}
		var out networkOutcome
		if err := json.Unmarshal(stdout.Bytes(), &out); err != nil {
			t.Fatalf("helper output %q: %v\n%s", stdout.String(), err, stderr.String())
		}
		t.Logf("%+v", out)
		if t.Failed() {
			t.Logf("helper log:\n%s", stderr.String())
		}
		return out
	}
	inRange := func(a string) bool { return strings.HasPrefix(a, "10.77.0.1") && a != "10.77.0.1" }

	t.Run("BOOTIF", func(t *testing.T) {
		out := run(t, netMAC0, time.Minute)
		if out.Err != "" || !inRange(out.Addr0) || out.Addr1 != "" {
			t.Errorf("got %+v, want a lease on agent0 only", out)
		}
		if !out.EarlyLease {
			t.Error("agent0 had no address before Wait: DHCP did not start at Start")
		}
	})
	t.Run("BOOTIF without a server", func(t *testing.T) {
		out := run(t, netMAC1, 3*time.Second)
		if !strings.Contains(out.Err, "dhcp on agent1") || out.Addr0 != "" {
			t.Errorf("got %+v, want a DHCP failure naming agent1 and no DHCP on agent0", out)
		}
	})
	t.Run("BOOTIF on no NIC", func(t *testing.T) {
		out := run(t, "02:00:00:77:00:99", time.Minute)
		if out.Err != "" || !inRange(out.Addr0) {
			t.Errorf("got %+v, want the fallback to all NICs to lease agent0", out)
		}
	})
	t.Run("no BOOTIF", func(t *testing.T) {
		out := run(t, "none", time.Minute)
		if out.Err != "" || !inRange(out.Addr0) || !out.EarlyLease {
			t.Errorf("got %+v, want agent0 leased from Start", out)
		}
		// agent1 has no server: waiting for it would last the whole
		// DHCP timeout; the first lease must end the wait instead.
		if out.Took >= 30 {
			t.Errorf("Wait took %.1f s of the 60 s DHCP timeout: it waited for agent1", out.Took)
		}
	})
}
