package storetest

import (
	"testing"

	"github.com/ferrometal/ferro/internal/baremetal"
	"github.com/ferrometal/ferro/internal/store"
)

var volumeTests = []test{
	{"ConnectorCRUDAndConflicts", testVolumeConnectors},
	{"TargetCRUDAndConflicts", testVolumeTargets},
}

func testVolumeConnectors(t *testing.T, s store.Store) {
	ctx := t.Context()
	n := createNode(t, s, newNode("n"))
	c := &baremetal.VolumeConnector{NodeUUID: n.UUID, Type: "iqn", ConnectorID: "iqn.2026-12.org.example:n", Extra: baremetal.JSON{"k": "v"}}
	if err := s.CreateVolumeConnector(ctx, c); err != nil {
		t.Fatal(err)
	}
	got, err := s.GetVolumeConnector(ctx, c.UUID)
	if err != nil {
		t.Fatal(err)
	}
	if got.Type != "iqn" || got.ConnectorID != c.ConnectorID || got.Extra["k"] != "v" || got.NodeUUID != n.UUID {
		t.Errorf("GetVolumeConnector = %+v", got)
	}
	// (type, connector_id) is unique; the same id with another type is not.
	wantErr(t, s.CreateVolumeConnector(ctx, &baremetal.VolumeConnector{NodeUUID: n.UUID, Type: "iqn", ConnectorID: c.ConnectorID}), store.ErrConflict)
	other := &baremetal.VolumeConnector{NodeUUID: n.UUID, Type: "ip", ConnectorID: c.ConnectorID}
	if err := s.CreateVolumeConnector(ctx, other); err != nil {
		t.Fatal(err)
	}
	wantErr(t, s.CreateVolumeConnector(ctx, &baremetal.VolumeConnector{NodeUUID: "missing-node", Type: "mac", ConnectorID: "x"}), store.ErrNotFound, "missing-node")
	other.Type = "iqn"
	wantErr(t, s.UpdateVolumeConnector(ctx, other), store.ErrConflict)
	other.Type = "wwpn"
	if err := s.UpdateVolumeConnector(ctx, other); err != nil {
		t.Fatal(err)
	}
	list, err := s.ListVolumeConnectors(ctx, store.VolumeFilter{NodeUUID: n.UUID, Page: store.Page{Limit: 1}})
	if err != nil || len(list) != 1 || list[0].UUID != c.UUID {
		t.Fatalf("ListVolumeConnectors(limit 1) = %v, %v", list, err)
	}
	if err := s.DeleteVolumeConnector(ctx, c.UUID); err != nil {
		t.Fatal(err)
	}
	wantErr(t, s.DeleteVolumeConnector(ctx, c.UUID), store.ErrNotFound, c.UUID)
	// Deleting the node deletes its connectors.
	if err := s.DeleteNode(ctx, n.UUID); err != nil {
		t.Fatal(err)
	}
	_, err = s.GetVolumeConnector(ctx, other.UUID)
	wantErr(t, err, store.ErrNotFound, other.UUID)
}

func testVolumeTargets(t *testing.T, s store.Store) {
	ctx := t.Context()
	a := createNode(t, s, newNode("a"))
	b := createNode(t, s, newNode("b"))
	vt := &baremetal.VolumeTarget{NodeUUID: a.UUID, VolumeType: "iscsi", VolumeID: "vol-1", BootIndex: 0, Properties: baremetal.JSON{"lun": "1"}}
	if err := s.CreateVolumeTarget(ctx, vt); err != nil {
		t.Fatal(err)
	}
	got, err := s.GetVolumeTarget(ctx, vt.UUID)
	if err != nil {
		t.Fatal(err)
	}
	if got.VolumeType != "iscsi" || got.VolumeID != "vol-1" || got.Properties["lun"] != "1" || got.Extra == nil {
		t.Errorf("GetVolumeTarget = %+v", got)
	}
	// boot_index is unique per node only.
	wantErr(t, s.CreateVolumeTarget(ctx, &baremetal.VolumeTarget{NodeUUID: a.UUID, VolumeType: "x", BootIndex: 0}), store.ErrConflict)
	if err := s.CreateVolumeTarget(ctx, &baremetal.VolumeTarget{NodeUUID: b.UUID, VolumeType: "x", BootIndex: 0}); err != nil {
		t.Fatal(err)
	}
	second := &baremetal.VolumeTarget{NodeUUID: a.UUID, VolumeType: "x", BootIndex: 1}
	if err := s.CreateVolumeTarget(ctx, second); err != nil {
		t.Fatal(err)
	}
	second.BootIndex = 0
	wantErr(t, s.UpdateVolumeTarget(ctx, second), store.ErrConflict)
	list, err := s.ListVolumeTargets(ctx, store.VolumeFilter{NodeUUID: a.UUID})
	if err != nil || len(list) != 2 {
		t.Fatalf("ListVolumeTargets(node a) = %d, %v; want 2", len(list), err)
	}
	if err := s.DeleteVolumeTarget(ctx, vt.UUID); err != nil {
		t.Fatal(err)
	}
	_, err = s.GetVolumeTarget(ctx, vt.UUID)
	wantErr(t, err, store.ErrNotFound, vt.UUID)
}
