package dhcp

import (
	"path/filepath"
	"testing"
	"time"

	"github.com/ferrometal/ferro/internal/baremetal"
	"github.com/ferrometal/ferro/internal/states"
	"github.com/ferrometal/ferro/internal/store"
	sqlstore "github.com/ferrometal/ferro/internal/store/sql"
)

// TestReleaseNode_DeletesOnlyThatNodesLeases: the teardown releases the
// node's leases in the shared store and leaves the other nodes' alone.
func TestReleaseNode_DeletesOnlyThatNodesLeases(t *testing.T) {
	db, err := sqlstore.Open(t.Context(), "sqlite://"+filepath.Join(t.TempDir(), "ferro.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	other := "5d1c9a4e-6f0a-4c55-9a43-0d2f3f1b9e01"
	for _, id := range []string{nodeUUID, other} {
		if err := db.CreateNode(t.Context(), &baremetal.Node{UUID: id, Driver: "fake-hardware", ProvisionState: states.InspectWait,
			DriverInfo: baremetal.JSON{}, DriverInternalInfo: baremetal.JSON{}, InstanceInfo: baremetal.JSON{}}); err != nil {
			t.Fatal(err)
		}
	}
	exp := time.Now().Add(time.Hour)
	for _, l := range []*store.Lease{
		{MAC: "52:54:00:00:00:01", IP: "192.168.77.100", NodeUUID: nodeUUID, ExpiresAt: exp},
		{MAC: "52:54:00:00:00:02", IP: "192.168.77.101", NodeUUID: nodeUUID, ExpiresAt: exp},
		{MAC: "52:54:00:00:00:03", IP: "192.168.77.102", NodeUUID: other, ExpiresAt: exp},
	} {
		if err := db.SaveLease(t.Context(), l); err != nil {
			t.Fatal(err)
		}
	}
	released, err := ReleaseNode(t.Context(), db, nodeUUID)
	if err != nil || len(released) != 2 {
		t.Fatalf("ReleaseNode: %v, %v; want the node's 2 leases", released, err)
	}
	left, err := db.ListLeases(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if len(left) != 1 || left[0].NodeUUID != other {
		t.Fatalf("leases left %v, want only node %s's", left, other)
	}
	if released, err := ReleaseNode(t.Context(), db, nodeUUID); err != nil || len(released) != 0 {
		t.Fatalf("a second ReleaseNode: %v, %v; want nothing and no error", released, err)
	}
}
