package dhcp

import (
	"fmt"
	"net"
	"path/filepath"
	"testing"

	"github.com/ferrometal/ferro/internal/baremetal"
	"github.com/ferrometal/ferro/internal/states"
	sqlstore "github.com/ferrometal/ferro/internal/store/sql"
)

// Unknown MACs share one bound of addresses, in memory, and a node's
// lease never takes one of theirs.
func TestDiscoveryLeases_BoundedAndApartFromTheNodes(t *testing.T) {
	db, err := sqlstore.Open(t.Context(), "sqlite://"+filepath.Join(t.TempDir(), "ferro.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if err := db.CreateNode(t.Context(), &baremetal.Node{UUID: nodeUUID, Driver: "fake-hardware", ProvisionState: states.InspectWait,
		DriverInfo: baremetal.JSON{}, DriverInternalInfo: baremetal.JSON{}, InstanceInfo: baremetal.JSON{}}); err != nil {
		t.Fatal(err)
	}
	s, err := New(Options{Store: db, Discovery: true, MaxLeasesPerNode: 3,
		Params:     Params{ServerIP: net.ParseIP("192.0.2.1")},
		RangeStart: net.ParseIP("192.0.2.10"), RangeEnd: net.ParseIP("192.0.2.20")})
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for i := range 20 {
		ip, err := s.lease(t.Context(), fmt.Sprintf("02:00:00:00:00:%02x", i), DiscoveryLeases)
		if err != nil {
			t.Fatal(err)
		}
		seen[ip.String()] = true
	}
	if len(seen) != 3 {
		t.Errorf("20 unknown MACs took %d addresses, want the bound of 3: %v", len(seen), seen)
	}
	if l, _ := db.ListLeases(t.Context()); len(l) != 0 {
		t.Errorf("stored leases %v for unknown MACs", l)
	}
	ip, err := s.lease(t.Context(), "52:54:00:00:00:01", nodeUUID)
	if err != nil {
		t.Fatal(err)
	}
	if seen[ip.String()] {
		t.Errorf("the node's lease %s is one of discovery's %v", ip, seen)
	}
}
