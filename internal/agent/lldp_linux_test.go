package agent

import (
	"bytes"
	"context"
	"encoding/hex"
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

	"github.com/ferrometal/ferro/internal/inventory"
	"github.com/ferrometal/ferro/internal/lldp"
	"github.com/ferrometal/ferro/internal/testing/ferrotest"
)

// lldpHelperEnv makes the test binary a capture helper: it runs inside the
// test's network namespace (a Go program cannot move all its threads
// there), captures on the named interface and prints the TLVs as JSON.
const lldpHelperEnv = "FERRO_AGENT_LLDP_HELPER"

func TestMain(m *testing.M) {
	if ifname := os.Getenv(lldpHelperEnv); ifname != "" {
		raw, err := CaptureLLDP(context.Background(), slog.New(slog.DiscardHandler), []string{ifname}, 20*time.Second)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		json.NewEncoder(os.Stdout).Encode(raw)
		os.Exit(0)
	}
	if os.Getenv(carrierHelperEnv) != "" {
		carrierHelper()
	}
	if s := os.Getenv(networkHelperEnv); s != "" {
		networkHelper(s)
	}
	if os.Getenv(ueventHelperEnv) != "" {
		ueventHelper()
	}
	os.Exit(m.Run())
}

// TestCaptureLLDP_FromLLDPD captures what Debian's lldpd sends over a veth
// pair in a network namespace the test creates, and checks the TLVs
// against lldpd's own identity: chassis ID = the sending port's MAC
// (-C), port = the sending interface, system description = -S.
func TestCaptureLLDP_FromLLDPD(t *testing.T) {
	lldpd := ferrotest.RequireTool(t, "lldpd", "/usr/sbin")
	n := newTestNamespace(t, "lldp")
	ns, ip := n.name, n.ip
	ip("-n", ns, "link", "add", "agent0", "type", "veth", "peer", "name", "switch0")
	ip("-n", ns, "link", "set", "agent0", "up")
	ip("-n", ns, "link", "set", "switch0", "up")
	out, err := exec.Command(n.ipTool, "-n", ns, "-br", "link", "show", "switch0").Output()
	if err != nil {
		t.Fatal(err)
	}
	f := strings.Fields(string(out))
	if len(f) < 3 {
		t.Fatalf("ip link: %q", out)
	}
	switchMAC, err := net.ParseMAC(f[2])
	if err != nil {
		t.Fatal(err)
	}

	// The helper listens first; lldpd sends as soon as it starts.
	helper := n.helper(lldpHelperEnv + "=agent0")
	var stdout, stderr bytes.Buffer
	helper.Stdout, helper.Stderr = &stdout, &stderr
	if err := helper.Start(); err != nil {
		t.Fatal(err)
	}
	// lldpd sends on start, then every 30 s: start it only once the
	// helper's packet socket is open.
	waitForPacketSocket(t, helper.Process.Pid)

	// lldpd's lldpcli drops privileges: it must reach the control socket.
	dir := t.TempDir()
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for p := filepath.Dir(dir); p != os.TempDir() && p != "/"; p = filepath.Dir(p) {
		os.Chmod(p, 0o755)
	}
	d := n.command(lldpd, "-d", "-u", filepath.Join(dir, "lldpd.sock"),
		"-I", "switch0", "-C", "switch0", "-S", "ferro test switch")
	var dlog bytes.Buffer
	d.Stdout, d.Stderr = &dlog, &dlog
	if err := d.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { d.Process.Kill(); d.Wait() })

	if err := helper.Wait(); err != nil {
		t.Fatalf("capture helper: %v\n%s\nlldpd:\n%s", err, stderr.String(), dlog.String())
	}
	// The capture listens promiscuously; that ends with its socket.
	out, err = exec.Command(n.ipTool, "-n", ns, "-d", "link", "show", "agent0").Output()
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(out), " promiscuity 0 ") {
		t.Errorf("agent0 after the capture, want promiscuity 0:\n%s", out)
	}
	var raw map[string][]inventory.TLV
	if err := json.Unmarshal(stdout.Bytes(), &raw); err != nil {
		t.Fatalf("helper output %q: %v", stdout.String(), err)
	}
	tlvs := raw["agent0"]
	if len(tlvs) == 0 {
		t.Fatalf("no LLDP frame captured on agent0 within the timeout\nlldpd:\n%s", dlog.String())
	}
	if last := tlvs[len(tlvs)-1]; last.Type != lldp.TypeEnd {
		t.Errorf("last TLV = %+v, want End", last)
	}
	ltlvs := make([]lldp.TLV, len(tlvs))
	for i, x := range tlvs {
		ltlvs[i] = lldp.TLV{Type: x.Type, Value: x.Value}
		if _, err := hex.DecodeString(x.Value); err != nil {
			t.Errorf("TLV %d value %q is not hex", i, x.Value)
		}
	}
	p, warnings := lldp.Parse(ltlvs)
	if len(warnings) > 0 {
		t.Logf("lldp.Parse warnings (a veth has no MAU type): %v", warnings)
	}
	if p.ChassisID == nil || *p.ChassisID != switchMAC.String() {
		t.Errorf("chassis ID = %v, want switch0's MAC %s", deref(p.ChassisID), switchMAC)
	}
	if p.PortID == nil || (*p.PortID != "switch0" && *p.PortID != switchMAC.String()) {
		t.Errorf("port ID = %v, want switch0 or its MAC", deref(p.PortID))
	}
	if p.SystemDescription == nil || *p.SystemDescription != "ferro test switch" {
		t.Errorf("system description = %v", deref(p.SystemDescription))
	}
}

// waitForPacketSocket waits until process pid has an AF_PACKET socket
// open, read from /proc (the helper opens it right at start).
func waitForPacketSocket(t *testing.T, pid int) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		if n := packetSockets(pid); n > 0 {
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatal("capture helper opened no packet socket within 30 s")
}

// packetSockets counts the packet sockets among a process tree's open
// files: `ip netns exec` execs the helper in place, so pid is the helper.
func packetSockets(pid int) int {
	inodes := map[string]bool{}
	fds, _ := filepath.Glob(fmt.Sprintf("/proc/%d/fd/*", pid))
	for _, fd := range fds {
		if l, err := os.Readlink(fd); err == nil && strings.HasPrefix(l, "socket:[") {
			inodes[strings.Trim(l[len("socket:"):], "[]")] = true
		}
	}
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/net/packet", pid))
	if err != nil {
		return 0
	}
	n := 0
	for _, line := range strings.Split(string(b), "\n")[1:] {
		f := strings.Fields(line)
		if len(f) > 8 && inodes[f[8]] {
			n++
		}
	}
	return n
}

func deref(s *string) string {
	if s == nil {
		return "<nil>"
	}
	return *s
}

func TestParseLLDPFrame_RejectsNonLLDPAndTruncated(t *testing.T) {
	hdr := append(bytes.Repeat([]byte{0xff}, 12), 0x88, 0xcc)
	good := append(append([]byte{}, hdr...), 0x02, 0x07, 0x04, 1, 2, 3, 4, 5, 6, 0x00, 0x00, 0xaa, 0xbb)
	tlvs, err := ParseLLDPFrame(good)
	if err != nil || len(tlvs) != 2 || tlvs[0].Type != 1 || tlvs[0].Value != "04010203040506" || tlvs[1].Type != 0 {
		t.Errorf("good frame: %v %+v", err, tlvs)
	}
	ipv4 := append(append(bytes.Repeat([]byte{0xff}, 12), 0x08, 0x00), good[14:]...)
	for name, f := range map[string][]byte{
		"short":     good[:10],
		"not lldp":  ipv4,
		"truncated": append(append([]byte{}, hdr...), 0x02, 0x07, 0x04, 1),
	} {
		if _, err := ParseLLDPFrame(f); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
}
