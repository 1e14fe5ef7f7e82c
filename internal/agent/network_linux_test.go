package agent

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"log/slog"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"

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

// carrierHelperEnv makes the test binary wait for agent0's carrier inside
// the test's namespace while it multicasts link messages of its own
// (see carrierHelper).
const carrierHelperEnv = "FERRO_AGENT_CARRIER_HELPER"

// carrierHelper waits for the carrier of agent0 (its peer is down) while
// it sends link requests to the rtnetlink link group from a socket of its
// own: the link watch receives them from a sender that is not the kernel,
// which must not end the wait. It then brings the peer up and prints the
// wait's outcome ("ok" or the error).
func carrierHelper() {
	fd, err := unix.Socket(unix.AF_NETLINK, unix.SOCK_RAW|unix.SOCK_CLOEXEC, unix.NETLINK_ROUTE)
	if err != nil {
		fmt.Println(err)
		os.Exit(0)
	}
	agent0, err := net.InterfaceByName("agent0")
	if err != nil {
		fmt.Println(err)
		os.Exit(0)
	}
	// RTM_GETLINK for agent0: harmless for the kernel, which also gets it.
	msg := make([]byte, unix.NLMSG_HDRLEN+unix.SizeofIfInfomsg)
	binary.NativeEndian.PutUint32(msg[0:], uint32(len(msg)))
	binary.NativeEndian.PutUint16(msg[4:], unix.RTM_GETLINK)
	binary.NativeEndian.PutUint16(msg[6:], unix.NLM_F_REQUEST)
	binary.NativeEndian.PutUint32(msg[unix.NLMSG_HDRLEN+4:], uint32(agent0.Index))
	group := &unix.SockaddrNetlink{Family: unix.AF_NETLINK, Groups: 1 << (unix.RTNLGRP_LINK - 1)}
	send := func() error { return unix.Sendto(fd, msg, 0, group) }
	if err := send(); err != nil {
		fmt.Println("multicast:", err)
		os.Exit(0)
	}

	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- waitCarrier(ctx, "agent0") }()
	// The watch subscribes at some point after the call; keep sending, a
	// message every 10 ms for 300 ms before the carrier and after it.
	ticker := time.NewTicker(10 * time.Millisecond)
	defer ticker.Stop()
	peerUp := time.After(300 * time.Millisecond)
	for {
		select {
		case err := <-done:
			if err != nil {
				fmt.Println(err)
			} else {
				fmt.Println("ok")
			}
			os.Exit(0)
		case <-ticker.C:
			send()
		case <-peerUp:
			if out, err := exec.Command("ip", "link", "set", "peer0", "up").CombinedOutput(); err != nil {
				fmt.Printf("ip link set peer0 up: %v %s\n", err, out)
				os.Exit(0)
			}
		}
	}
}

// TestWaitCarrier_SkipsMessagesNotFromTheKernel: a link message from
// another program (multicast to the link group) reached the agent's
// carrier watch in CI and ended the DHCP on that NIC; the watch must skip
// it and still see the carrier.
func TestWaitCarrier_SkipsMessagesNotFromTheKernel(t *testing.T) {
	n := newTestNamespace(t, "carrier")
	n.ip("-n", n.name, "link", "add", "agent0", "type", "veth", "peer", "name", "peer0")
	n.ip("-n", n.name, "link", "set", "agent0", "up")
	out, err := n.helper(carrierHelperEnv + "=1").CombinedOutput()
	if err != nil {
		t.Fatalf("helper: %v\n%s", err, out)
	}
	if got := strings.TrimSpace(string(out)); got != "ok" {
		t.Errorf("carrier wait: %s", got)
	}
}
