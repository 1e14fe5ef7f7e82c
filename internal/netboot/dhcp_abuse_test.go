package netboot_test

import (
	"context"
	"fmt"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/insomniacslk/dhcp/dhcpv4"

	"github.com/ferrometal/ferro/internal/netboot"
	"github.com/ferrometal/ferro/internal/netboot/dhcp"
	"github.com/ferrometal/ferro/internal/states"
)

// count is how many events of the node's phase were recorded.
func (r *recorder) count(nodeUUID, phase string) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	n := 0
	for _, e := range r.events {
		if strings.HasPrefix(e, nodeUUID+" "+phase+" ") {
			n++
		}
	}
	return n
}

// TestDHCP_NoNodeTakesTheRange: a node given 150 ports (more than the
// 100 addresses of the range), whose MACs a host on the network all
// claims, holds at most [netboot]dhcp_max_leases_per_node addresses; a
// storm of unknown MACs holds none; another node being inspected still
// gets its lease (busybox udhcpc), and keeps it.
func TestDHCP_NoNodeTakesTheRange(t *testing.T) {
	e := newEnv(t)
	e.ns.AddVeth("v0", "v1")
	good := e.addNode(t, "ipxe", states.InspectWait, true, e.ifMAC(t, "v1"))
	var macs []string
	for i := range 150 {
		macs = append(macs, fmt.Sprintf("02:bb:00:00:%02x:%02x", i>>8, i&0xff))
	}
	greedy := e.addNode(t, "ipxe", states.InspectWait, true, macs...)
	e.start(t, e.options(false))

	// The other node first: its lease must survive what follows.
	first, err := e.udhcpc(t, "v1", "PXEClient:Arch:00000:UNDI:002001")
	if err != nil {
		t.Fatal(err)
	}
	discover := func(mac string) []byte {
		hw, _ := net.ParseMAC(mac)
		d, err := dhcpv4.NewDiscovery(hw, dhcpv4.WithOption(dhcpv4.OptClassIdentifier("PXEClient:Arch:00000:UNDI:002001")))
		if err != nil {
			t.Fatal(err)
		}
		return d.ToBytes()
	}
	err = e.ns.Do(func() error {
		c, err := net.ListenUDP("udp4", &net.UDPAddr{IP: net.ParseIP(serverIP)})
		if err != nil {
			return err
		}
		defer c.Close()
		dst := &net.UDPAddr{IP: net.ParseIP(serverIP), Port: 67}
		wait := func(node string, n int) error {
			ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
			defer cancel()
			for e.events.count(node, netboot.PhaseDHCPOffer) < n {
				select {
				case <-e.events.notify:
				case <-ctx.Done():
					return fmt.Errorf("%d offers to node %s, want %d; stats %+v", e.events.count(node, netboot.PhaseDHCPOffer), node, n, e.svc.DHCP().Stats())
				}
			}
			return nil
		}
		// Unknown MACs (the socket may drop some of them), then a DISCOVER
		// of the other node, whose offer says the storm has been read.
		for i := range 2000 {
			c.WriteTo(discover(fmt.Sprintf("02:ee:00:00:%02x:%02x", i>>8, i&0xff)), dst)
		}
		before := e.events.count(good.UUID, netboot.PhaseDHCPOffer)
		c.WriteTo(discover(e.ifMAC(t, "v1")), dst)
		if err := wait(good.UUID, before+1); err != nil {
			return err
		}
		// Then the greedy node's MACs, ten at a time: each batch is
		// answered before the next is sent, so none is lost.
		for i := 0; i < len(macs); i += 10 {
			for _, m := range macs[i : i+10] {
				if _, err := c.WriteTo(discover(m), dst); err != nil {
					return err
				}
			}
			if err := wait(greedy.UUID, i+10); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	byNode := map[string]int{}
	all, err := e.db.ListLeases(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range all {
		byNode[l.NodeUUID]++
	}
	t.Logf("after 150 MACs of one node and 2,000 unknown ones: leases %v (range of 100); stats %+v", byNode, e.svc.DHCP().Stats())
	if byNode[greedy.UUID] > dhcp.DefaultMaxLeasesPerNode || len(byNode) != 2 || byNode[good.UUID] != 1 {
		t.Errorf("leases per node %v, want at most %d for the node with 150 ports, 1 for the other, none for unknown MACs",
			byNode, dhcp.DefaultMaxLeasesPerNode)
	}
	again, err := e.udhcpc(t, "v1", "PXEClient:Arch:00000:UNDI:002001")
	if err != nil {
		t.Fatalf("the other node after the storm: %v", err)
	}
	if again["ip"] != first["ip"] {
		t.Errorf("the other node's address changed from %s to %s", first["ip"], again["ip"])
	}
}
