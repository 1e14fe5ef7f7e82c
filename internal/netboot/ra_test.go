package netboot_test

import (
	"net"
	"regexp"
	"strings"
	"testing"

	"github.com/ferrometal/ferro/internal/testing/ferrotest"
)

// TestRA_AnswersOnceTheBridgeHasItsLinkLocalAddress starts the netboot
// service on a bridge whose only port has no carrier yet, so that the
// bridge has no link-local address, then brings the port's other end up:
// the bridge gets its address, and the client's router solicitations
// (rdisc6, from Debian's ndisc6) are answered from it without a restart.
func TestRA_AnswersOnceTheBridgeHasItsLinkLocalAddress(t *testing.T) {
	rdisc6 := ferrotest.RequireTool(t, "rdisc6")
	e := newEnv(t)
	e.ns.MustIP("link", "add", "br1", "type", "bridge", "stp_state", "0", "forward_delay", "0")
	e.ns.Sysctl("net.ipv6.conf.br1.accept_dad", "0")
	peer := e.ns.AddPeer("p0")
	peer.MustIP("link", "set", "eth0", "down")
	e.ns.MustIP("link", "set", "p0", "master", "br1")
	e.ns.MustIP("link", "set", "br1", "up")
	if ll := e.linkLocal(t, "br1"); ll != "" {
		t.Fatalf("a bridge with no active port has link-local address %s already", ll)
	}
	o := e.options(false)
	o.Interface = "br1"
	e.start(t, o)
	peer.MustIP("link", "set", "eth0", "up")
	// rdisc6 solicits again every second until answered (20 times at most):
	// the client's own retransmissions, as iPXE's.
	out, err := peer.Command(rdisc6, "-1", "-r", "20", "-w", "1000", "eth0").CombinedOutput()
	if err != nil {
		t.Fatalf("rdisc6: %v\n%s\nnetboot log:\n%s", err, out, e.logBuf)
	}
	ll := e.linkLocal(t, "br1")
	if ll == "" || !strings.Contains(string(out), "from "+ll) || !strings.Contains(string(out), "Router lifetime") {
		t.Errorf("rdisc6 output, want an advertisement from the bridge's %s:\n%s", ll, out)
	}
	if !regexp.MustCompile(`Router lifetime\s*:\s*0 `).Match(out) {
		t.Errorf("the advertisement offers a default router:\n%s", out)
	}
	if got := e.svc.RouterAdvertisements(); got == 0 {
		t.Error("no solicitation counted as answered")
	}
}

// linkLocal is an interface's IPv6 link-local address in the namespace, or "".
func (e *env) linkLocal(t *testing.T, name string) string {
	t.Helper()
	var ll string
	err := e.ns.Do(func() error {
		ifi, err := net.InterfaceByName(name)
		if err != nil {
			return err
		}
		addrs, err := ifi.Addrs()
		if err != nil {
			return err
		}
		for _, a := range addrs {
			if n, ok := a.(*net.IPNet); ok && n.IP.To4() == nil && n.IP.IsLinkLocalUnicast() {
				ll = n.IP.String()
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return ll
}
