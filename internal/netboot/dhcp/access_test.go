package dhcp

import (
	"net"
	"net/netip"
	"path/filepath"
	"testing"
	"time"

	"github.com/insomniacslk/dhcp/dhcpv4"

	"github.com/ferrometal/ferro/internal/baremetal"
	"github.com/ferrometal/ferro/internal/states"
	"github.com/ferrometal/ferro/internal/store"
	sqlstore "github.com/ferrometal/ferro/internal/store/sql"
)

// TestBootFilesAllowed_LeasesAndProxyRequests: in dhcp mode the stored
// leases decide; in proxy mode the address a node's MAC asked the site's
// DHCP for, forgotten when the node leaves inspection.
func TestBootFilesAllowed_LeasesAndProxyRequests(t *testing.T) {
	db, err := sqlstore.Open(t.Context(), "sqlite://"+filepath.Join(t.TempDir(), "ferro.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	const mac = "52:54:00:00:00:01"
	n := &baremetal.Node{UUID: nodeUUID, Driver: "fake-hardware", ProvisionState: states.InspectWait,
		DriverInfo: baremetal.JSON{}, DriverInternalInfo: baremetal.JSON{}, InstanceInfo: baremetal.JSON{}}
	if err := db.CreateNode(t.Context(), n); err != nil {
		t.Fatal(err)
	}
	if err := db.CreatePort(t.Context(), &baremetal.Port{UUID: "8a3c7a52-1f7e-4b8e-9d55-3c0e0f4d2a11", NodeUUID: nodeUUID, Address: mac, PXEEnabled: true}); err != nil {
		t.Fatal(err)
	}
	other := "5d1c9a4e-6f0a-4c55-9a43-0d2f3f1b9e01"
	ip := netip.MustParseAddr("192.168.77.100")
	allowed := func(s *Server, node string, a netip.Addr) bool {
		t.Helper()
		ok, err := s.BootFilesAllowed(t.Context(), node, a)
		if err != nil {
			t.Fatal(err)
		}
		return ok
	}

	s, err := New(Options{Store: db, Params: Params{ServerIP: net.ParseIP("192.168.77.1")},
		RangeStart: net.ParseIP("192.168.77.100"), RangeEnd: net.ParseIP("192.168.77.110")})
	if err != nil {
		t.Fatal(err)
	}
	if allowed(s, nodeUUID, ip) {
		t.Error("allowed before any lease")
	}
	if err := db.SaveLease(t.Context(), &store.Lease{MAC: mac, IP: ip.String(), NodeUUID: nodeUUID, ExpiresAt: time.Now().Add(time.Hour)}); err != nil {
		t.Fatal(err)
	}
	if !allowed(s, nodeUUID, ip) || !allowed(s, nodeUUID, netip.AddrFrom16(ip.As16())) {
		t.Error("the leased address (or its IPv4-mapped form) refused")
	}
	if allowed(s, nodeUUID, netip.MustParseAddr("192.168.77.101")) || allowed(s, other, ip) {
		t.Error("another address, or another node's files, allowed")
	}

	p, err := New(Options{Store: db, Params: Params{ServerIP: net.ParseIP("192.168.77.1"), Proxy: true}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := p.rebuild(t.Context()); err != nil {
		t.Fatal(err)
	}
	hw, _ := net.ParseMAC(mac)
	disc, _ := dhcpv4.NewDiscovery(hw)
	p.learn(mac, nodeUUID, disc)
	if allowed(p, nodeUUID, ip) {
		t.Error("proxy: a DISCOVER (no address) allowed an address; the stored lease must not count either")
	}
	req, _ := dhcpv4.New(dhcpv4.WithMessageType(dhcpv4.MessageTypeRequest), dhcpv4.WithHwAddr(hw),
		dhcpv4.WithOption(dhcpv4.OptRequestedIPAddress(net.ParseIP("192.168.77.55"))))
	p.learn(mac, nodeUUID, req)
	if !allowed(p, nodeUUID, netip.MustParseAddr("192.168.77.55")) || allowed(p, other, netip.MustParseAddr("192.168.77.55")) {
		t.Error("proxy: the requested address is not the node's alone")
	}
	n.ProvisionState = states.Manageable
	if err := db.UpdateNode(t.Context(), n); err != nil {
		t.Fatal(err)
	}
	if _, err := p.rebuild(t.Context()); err != nil {
		t.Fatal(err)
	}
	if allowed(p, nodeUUID, netip.MustParseAddr("192.168.77.55")) {
		t.Error("proxy: still allowed after the node left inspection")
	}
}
