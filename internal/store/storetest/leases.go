package storetest

import (
	"testing"
	"time"

	gocmp "github.com/google/go-cmp/cmp"

	"github.com/ferrometal/ferro/internal/store"
)

var leaseTests = []test{
	{"SaveGetListDelete", testLeaseCRUD},
	{"AddressTakenIsConflict", testLeaseConflict},
	{"MissingNodeIsNotFound", testLeaseMissingNode},
	{"DeletedWithNode", testLeaseNodeDelete},
}

func testLeaseCRUD(t *testing.T, s store.Store) {
	ctx := t.Context()
	n := createNode(t, s, newNode("n"))
	exp := time.Now().Add(time.Hour).UTC().Truncate(time.Microsecond)
	l := &store.Lease{MAC: "52:54:00:AA:00:01", IP: "192.168.77.10", NodeUUID: n.UUID, ExpiresAt: exp}
	if err := s.SaveLease(ctx, l); err != nil {
		t.Fatal(err)
	}
	got, err := s.GetLease(ctx, "52:54:00:aa:00:01")
	if err != nil {
		t.Fatal(err)
	}
	want := &store.Lease{MAC: "52:54:00:aa:00:01", IP: "192.168.77.10", NodeUUID: n.UUID}
	if diff := gocmp.Diff(want, got, ignoreLeaseTimes); diff != "" {
		t.Errorf("GetLease mismatch (-want +got):\n%s", diff)
	}
	if !got.ExpiresAt.Equal(exp) || got.UpdatedAt.IsZero() {
		t.Errorf("lease times: expires %v (want %v), updated %v", got.ExpiresAt, exp, got.UpdatedAt)
	}
	// Saving again replaces the address and expiry.
	l.IP = "192.168.77.11"
	if err := s.SaveLease(ctx, l); err != nil {
		t.Fatal(err)
	}
	if err := s.SaveLease(ctx, &store.Lease{MAC: "52:54:00:aa:00:02", IP: "192.168.77.9", NodeUUID: n.UUID, ExpiresAt: exp}); err != nil {
		t.Fatal(err)
	}
	all, err := s.ListLeases(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var ips []string
	for _, l := range all {
		ips = append(ips, l.MAC+"="+l.IP)
	}
	if diff := gocmp.Diff([]string{"52:54:00:aa:00:01=192.168.77.11", "52:54:00:aa:00:02=192.168.77.9"}, ips); diff != "" {
		t.Errorf("ListLeases mismatch (-want +got):\n%s", diff)
	}
	if err := s.DeleteLease(ctx, "52:54:00:aa:00:01"); err != nil {
		t.Fatal(err)
	}
	_, err = s.GetLease(ctx, "52:54:00:aa:00:01")
	wantErr(t, err, store.ErrNotFound, "52:54:00:aa:00:01")
	wantErr(t, s.DeleteLease(ctx, "52:54:00:aa:00:01"), store.ErrNotFound, "52:54:00:aa:00:01")
}

var ignoreLeaseTimes = gocmp.FilterPath(func(p gocmp.Path) bool {
	name := p.Last().String()
	return name == ".ExpiresAt" || name == ".UpdatedAt"
}, gocmp.Ignore())

func testLeaseConflict(t *testing.T, s store.Store) {
	ctx := t.Context()
	n := createNode(t, s, newNode("n"))
	exp := time.Now().Add(time.Hour)
	if err := s.SaveLease(ctx, &store.Lease{MAC: "52:54:00:aa:00:01", IP: "10.0.0.5", NodeUUID: n.UUID, ExpiresAt: exp}); err != nil {
		t.Fatal(err)
	}
	err := s.SaveLease(ctx, &store.Lease{MAC: "52:54:00:aa:00:02", IP: "10.0.0.5", NodeUUID: n.UUID, ExpiresAt: exp})
	wantErr(t, err, store.ErrConflict, "10.0.0.5")
}

func testLeaseMissingNode(t *testing.T, s store.Store) {
	err := s.SaveLease(t.Context(), &store.Lease{MAC: "52:54:00:aa:00:01", IP: "10.0.0.5",
		NodeUUID: "00000000-0000-0000-0000-000000000001", ExpiresAt: time.Now()})
	wantErr(t, err, store.ErrNotFound, "00000000-0000-0000-0000-000000000001")
}

func testLeaseNodeDelete(t *testing.T, s store.Store) {
	ctx := t.Context()
	n := createNode(t, s, newNode("n"))
	if err := s.SaveLease(ctx, &store.Lease{MAC: "52:54:00:aa:00:01", IP: "10.0.0.5", NodeUUID: n.UUID, ExpiresAt: time.Now()}); err != nil {
		t.Fatal(err)
	}
	if err := s.DeleteNode(ctx, n.UUID); err != nil {
		t.Fatal(err)
	}
	if all, err := s.ListLeases(ctx); err != nil || len(all) != 0 {
		t.Errorf("leases after the node was deleted: %v, %v", all, err)
	}
}
