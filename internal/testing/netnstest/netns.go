// Package netnstest gives a test a network namespace of its own with a
// bridge, and runs code or commands inside it. It needs root and the ip(8)
// tool; without them the test is skipped, or fails in CI.
//
// A network namespace belongs to an OS thread in Go: Do runs a function on
// a locked thread that entered the namespace, and that thread is thrown
// away afterwards. Sockets opened there stay in the namespace wherever they
// are used later.
package netnstest

import (
	"context"
	"crypto/rand"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ferrometal/ferro/internal/netns"
	"github.com/ferrometal/ferro/internal/testing/ferrotest"
)

// NS is a network namespace with a bridge.
type NS struct {
	Name string
	// Bridge is the bridge's name, BridgeIP its address ("192.168.77.1"), Prefix its length.
	Bridge, BridgeIP string
	Prefix           int
	t                testing.TB
}

// New creates a namespace with lo up and a bridge br0 holding ip/prefix
// (such as "192.168.77.1", 24), STP and IPv6 DAD off so that ports forward
// at once; the test's cleanup removes it with everything in it.
func New(t testing.TB, ip string, prefix int) *NS {
	t.Helper()
	if os.Geteuid() != 0 {
		ferrotest.SkipOrFail(t, "network namespaces need root")
	}
	ferrotest.RequireTool(t, "ip")
	name := "ferro-" + strings.ToLower(rand.Text()[:8])
	ns := &NS{Name: name, Bridge: "br0", BridgeIP: ip, Prefix: prefix, t: t}
	if err := ip_(t, "netns", "add", name); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ns.remove() })
	PrivateResolvConf(t, name)
	for _, args := range [][]string{
		{"link", "set", "lo", "up"},
		{"link", "add", "br0", "type", "bridge", "stp_state", "0", "forward_delay", "0"},
	} {
		ns.MustIP(args...)
	}
	ns.Sysctl("net.ipv6.conf.br0.accept_dad", "0")
	ns.MustIP("addr", "add", fmt.Sprintf("%s/%d", ip, prefix), "dev", "br0")
	ns.MustIP("link", "set", "br0", "up")
	return ns
}

func ip_(t testing.TB, args ...string) error {
	out, err := exec.Command("ip", args...).CombinedOutput()
	if err != nil {
		return fmt.Errorf("ip %s: %v: %s", strings.Join(args, " "), err, out)
	}
	return nil
}

// MustIP runs `ip -n NS args…` and fails the test on error.
func (ns *NS) MustIP(args ...string) {
	ns.t.Helper()
	if err := ip_(ns.t, append([]string{"-n", ns.Name}, args...)...); err != nil {
		ns.t.Fatal(err)
	}
}

// Sysctl sets a sysctl inside the namespace.
func (ns *NS) Sysctl(key, value string) {
	ns.t.Helper()
	out, err := ns.Command("sysctl", "-qw", key+"="+value).CombinedOutput()
	if err != nil {
		ns.t.Fatalf("sysctl %s=%s: %v: %s", key, value, err, out)
	}
}

// AddVeth adds a veth pair: bridgeEnd joins the bridge, peer stays free
// for a client (with DAD off, up, no address).
func (ns *NS) AddVeth(bridgeEnd, peer string) {
	ns.t.Helper()
	ns.MustIP("link", "add", bridgeEnd, "type", "veth", "peer", "name", peer)
	ns.Sysctl("net.ipv6.conf."+peer+".accept_dad", "0")
	ns.MustIP("link", "set", bridgeEnd, "master", ns.Bridge)
	ns.MustIP("link", "set", bridgeEnd, "up")
	ns.MustIP("link", "set", peer, "up")
}

// AddPeer adds a namespace of its own for a client, joined to the bridge
// by a veth pair: bridgeEnd here, "eth0" there (up, IPv6 DAD off, no
// address). The test's cleanup removes it. A client there has its own
// source address, unlike one in ns, whose packets to the bridge's
// address come from that address.
func (ns *NS) AddPeer(bridgeEnd string) *NS {
	ns.t.Helper()
	name := "ferro-" + strings.ToLower(rand.Text()[:8])
	if err := ip_(ns.t, "netns", "add", name); err != nil {
		ns.t.Fatal(err)
	}
	peer := &NS{Name: name, t: ns.t}
	ns.t.Cleanup(func() { peer.remove() })
	ns.MustIP("link", "add", bridgeEnd, "type", "veth", "peer", "name", "eth0", "netns", name)
	ns.MustIP("link", "set", bridgeEnd, "master", ns.Bridge)
	ns.MustIP("link", "set", bridgeEnd, "up")
	peer.Sysctl("net.ipv6.conf.eth0.accept_dad", "0")
	peer.MustIP("link", "set", "lo", "up")
	peer.MustIP("link", "set", "eth0", "up")
	return peer
}

// AddTap adds a tap device on the bridge, for a QEMU -netdev tap.
func (ns *NS) AddTap(name string) {
	ns.t.Helper()
	ns.MustIP("tuntap", "add", "dev", name, "mode", "tap")
	ns.MustIP("link", "set", name, "master", ns.Bridge)
	ns.MustIP("link", "set", name, "up")
}

// PrivateResolvConf gives the named namespace its own, empty resolv.conf:
// ip netns exec bind-mounts /etc/netns/<name>/resolv.conf over
// /etc/resolv.conf, so a DHCP client run there (udhcpc's scripts, u-root's
// dhclient in ferro-agent) writes that file and not the host's, which
// would leave the machine without DNS for the rest of the run.
func PrivateResolvConf(t testing.TB, name string) {
	t.Helper()
	dir := filepath.Join("/etc/netns", name)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	if err := os.WriteFile(filepath.Join(dir, "resolv.conf"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
}

// Command is exec.Command inside the namespace (ip netns exec).
func (ns *NS) Command(name string, args ...string) *exec.Cmd {
	return exec.Command("ip", append([]string{"netns", "exec", ns.Name, name}, args...)...)
}

// Do runs fn on an OS thread inside the namespace and returns its error.
// Goroutines fn starts run in the host namespace, but sockets fn opens
// stay in this one.
func (ns *NS) Do(fn func() error) error {
	errc := make(chan error, 1)
	go func() { errc <- netns.Do(netns.Path(ns.Name), fn) }()
	return <-errc
}

func (ns *NS) remove() {
	// Processes started with Command must be gone by now (their tests'
	// cleanups run first); deleting the namespace removes its links.
	if err := ip_(ns.t, "netns", "del", ns.Name); err != nil {
		ns.t.Errorf("remove network namespace: %v", err)
	}
}

// HTTPClient is an HTTP client whose connections are made inside the
// namespace, for servers that listen only there.
func (ns *NS) HTTPClient() *http.Client {
	tr := &http.Transport{
		DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
			var c net.Conn
			err := ns.Do(func() error {
				var err error
				c, err = (&net.Dialer{Timeout: 10 * time.Second}).DialContext(ctx, network, addr)
				return err
			})
			return c, err
		},
		ResponseHeaderTimeout: time.Minute,
	}
	return &http.Client{Transport: tr, Timeout: 2 * time.Minute}
}
