package storetest

import (
	"encoding/json"
	"fmt"
	"slices"
	"testing"

	gocmp "github.com/google/go-cmp/cmp"
	"github.com/google/uuid"

	"github.com/ferrometal/ferro/internal/baremetal"
	"github.com/ferrometal/ferro/internal/store"
)

var portTests = []test{
	{"CRUDWithLowerCaseAddresses", testPortCRUD},
	{"UniqueAddressAnyCase", testPortConflicts},
	{"NeedsAnExistingNode", testPortMissingNode},
	{"ListFiltersAndPages", testPortList},
}

var portgroupTests = []test{
	{"CRUDByUUIDOrName", testPortgroupCRUD},
	{"UniqueNameAndAddress", testPortgroupConflicts},
	{"DeleteRefusesWhilePortsRemain", testPortgroupDeleteNotEmpty},
	{"ListFiltersAndPages", testPortgroupList},
}

func testPortCRUD(t *testing.T, s store.Store) {
	ctx := t.Context()
	n := createNode(t, s, newNode("n"))
	p := &baremetal.Port{
		NodeUUID:            n.UUID,
		Address:             "52:54:00:AB:CD:EF",
		LocalLinkConnection: baremetal.JSON{"switch_id": "aa:bb:cc:dd:ee:ff", "port_id": "Eth1/7"},
		PXEEnabled:          true,
		PhysicalNetwork:     "physnet1",
	}
	createPort(t, s, p)
	if _, err := uuid.Parse(p.UUID); err != nil || p.CreatedAt.IsZero() {
		t.Errorf("CreatePort gave UUID %q, CreatedAt %v", p.UUID, p.CreatedAt)
	}
	if p.Address != "52:54:00:ab:cd:ef" {
		t.Errorf("address %q, want it in lower case", p.Address)
	}
	want := *p
	want.Extra, want.InternalInfo = baremetal.JSON{}, baremetal.JSON{}

	got, err := s.GetPort(ctx, p.UUID)
	if err != nil {
		t.Fatal(err)
	}
	if diff := gocmp.Diff(&want, got); diff != "" {
		t.Errorf("GetPort mismatch (-want +got):\n%s", diff)
	}
	for _, addr := range []string{"52:54:00:ab:cd:ef", "52:54:00:AB:CD:EF"} {
		got, err := s.GetPortByAddress(ctx, addr)
		if err != nil || got.UUID != p.UUID {
			t.Errorf("GetPortByAddress(%s) = %v, %v", addr, got, err)
		}
	}

	p.Address = "52:54:00:00:00:AA"
	p.InternalInfo = baremetal.JSON{"inspection_vif_port_id": "vif-1"}
	if err := s.UpdatePort(ctx, p); err != nil {
		t.Fatal(err)
	}
	if p.UpdatedAt == nil {
		t.Error("UpdatePort did not set UpdatedAt")
	}
	got, err = s.GetPortByAddress(ctx, "52:54:00:00:00:aa")
	if err != nil {
		t.Fatal(err)
	}
	if got.InternalInfo["inspection_vif_port_id"] != "vif-1" || got.UpdatedAt == nil || !got.CreatedAt.Equal(want.CreatedAt) {
		t.Errorf("updated port: %+v", got)
	}
	if _, err := s.GetPortByAddress(ctx, "52:54:00:ab:cd:ef"); !isNotFound(err) {
		t.Errorf("old address still finds the port: %v", err)
	}

	if err := s.DeletePort(ctx, p.UUID); err != nil {
		t.Fatal(err)
	}
	_, err = s.GetPort(ctx, p.UUID)
	wantErr(t, err, store.ErrNotFound, "port "+p.UUID+" could not be found")
	wantErr(t, s.DeletePort(ctx, p.UUID), store.ErrNotFound, p.UUID)
	wantErr(t, s.UpdatePort(ctx, p), store.ErrNotFound, p.UUID)
	_, err = s.GetPortByAddress(ctx, "52:54:00:00:00:AA")
	wantErr(t, err, store.ErrNotFound, "52:54:00:00:00:AA")
}

func testPortConflicts(t *testing.T, s store.Store) {
	ctx := t.Context()
	n := createNode(t, s, newNode("n"))
	p := createPort(t, s, newPort(n.UUID, "aa:bb:cc:dd:ee:01"))
	wantErr(t, s.CreatePort(ctx, newPort(n.UUID, "AA:BB:CC:DD:EE:01")), store.ErrConflict,
		`port with address "aa:bb:cc:dd:ee:01" already exists`)
	same := newPort(n.UUID, "aa:bb:cc:dd:ee:02")
	same.UUID = p.UUID
	wantErr(t, s.CreatePort(ctx, same), store.ErrConflict, p.UUID)

	q := createPort(t, s, newPort(n.UUID, "aa:bb:cc:dd:ee:03"))
	q.Address = "aa:bb:cc:dd:ee:01"
	wantErr(t, s.UpdatePort(ctx, q), store.ErrConflict, "aa:bb:cc:dd:ee:01")
}

func testPortMissingNode(t *testing.T, s store.Store) {
	missing := uuid.NewString()
	wantErr(t, s.CreatePort(t.Context(), newPort(missing, "aa:bb:cc:dd:ee:01")), store.ErrNotFound, missing)
}

func testPortList(t *testing.T, s store.Store) {
	ctx := t.Context()
	n1 := createNode(t, s, newNode("n1"))
	n2 := createNode(t, s, newNode("n2"))
	pg := &baremetal.Portgroup{NodeUUID: n1.UUID, Name: "bond0"}
	if err := s.CreatePortgroup(ctx, pg); err != nil {
		t.Fatal(err)
	}
	var all []*baremetal.Port
	for i, addr := range []string{"52:54:00:ab:00:05", "52:54:00:ab:00:01", "52:54:00:ab:00:04", "52:54:00:ab:00:02", "52:54:00:ab:00:03"} {
		p := newPort(n1.UUID, addr)
		if i >= 3 {
			p.NodeUUID = n2.UUID
		}
		if i == 1 || i == 2 {
			p.PortgroupUUID = pg.UUID
		}
		all = append(all, createPort(t, s, p))
	}
	addrs := func(ps []*baremetal.Port) []string {
		out := make([]string, len(ps))
		for i, p := range ps {
			out[i] = p.Address[len(p.Address)-2:]
		}
		return out
	}
	tests := []struct {
		name string
		f    store.PortFilter
		want []string
	}{
		{"none", store.PortFilter{}, []string{"05", "01", "04", "02", "03"}},
		{"node", store.PortFilter{NodeUUID: n2.UUID}, []string{"02", "03"}},
		{"address in upper case", store.PortFilter{Address: "52:54:00:AB:00:04"}, []string{"04"}},
		{"portgroup", store.PortFilter{PortgroupUUID: pg.UUID}, []string{"01", "04"}},
		{"addresses", store.PortFilter{Addresses: []string{"52:54:00:AB:00:03", "52:54:00:ab:00:05", "FF:FF:FF:FF:FF:FF"}}, []string{"05", "03"}},
		{"node and addresses", store.PortFilter{NodeUUID: n1.UUID, Addresses: []string{"52:54:00:ab:00:03", "52:54:00:ab:00:05"}}, []string{"05"}},
		{"sorted by address", store.PortFilter{Page: store.Page{SortKey: "address"}}, []string{"01", "02", "03", "04", "05"}},
		{"sorted by address desc, limit", store.PortFilter{Page: store.Page{SortKey: "address", SortDir: "desc", Limit: 2}}, []string{"05", "04"}},
	}
	for _, tc := range tests {
		got, err := s.ListPorts(ctx, tc.f)
		if err != nil {
			t.Errorf("%s: %v", tc.name, err)
			continue
		}
		if !slices.Equal(addrs(got), tc.want) {
			t.Errorf("%s: got %v, want %v", tc.name, addrs(got), tc.want)
		}
	}
	list := func(p store.Page) ([]*baremetal.Port, error) { return s.ListPorts(ctx, store.PortFilter{Page: p}) }
	uuidOf := func(p *baremetal.Port) string { return p.UUID }
	checkPaging(t, list, store.Page{SortKey: "address"}, 2, uuidOf,
		[]string{all[1].UUID, all[3].UUID, all[4].UUID, all[2].UUID, all[0].UUID})
	checkPaging(t, list, store.Page{}, 3, uuidOf,
		[]string{all[0].UUID, all[1].UUID, all[2].UUID, all[3].UUID, all[4].UUID})
	_, err := s.ListPorts(ctx, store.PortFilter{Page: store.Page{Marker: n1.UUID}})
	wantErr(t, err, store.ErrNotFound, "marker")
	_, err = s.ListPorts(ctx, store.PortFilter{Page: store.Page{SortKey: "provision_state"}})
	wantErr(t, err, store.ErrInvalidInput)
}

func testPortgroupCRUD(t *testing.T, s store.Store) {
	ctx := t.Context()
	n := createNode(t, s, newNode("n"))
	pg := &baremetal.Portgroup{
		NodeUUID:                 n.UUID,
		Name:                     "bond0",
		Address:                  "52:54:00:FF:00:01",
		Mode:                     "802.3ad",
		Properties:               baremetal.JSON{"miimon": json.Number("100")},
		StandalonePortsSupported: true,
	}
	if err := s.CreatePortgroup(ctx, pg); err != nil {
		t.Fatal(err)
	}
	if pg.UUID == "" || pg.CreatedAt.IsZero() || pg.Address != "52:54:00:ff:00:01" {
		t.Errorf("CreatePortgroup left uuid %q, created_at %v, address %q", pg.UUID, pg.CreatedAt, pg.Address)
	}
	want := *pg
	want.Extra, want.InternalInfo = baremetal.JSON{}, baremetal.JSON{}
	for _, ident := range []string{pg.UUID, "bond0"} {
		got, err := s.GetPortgroup(ctx, ident)
		if err != nil {
			t.Fatalf("GetPortgroup(%s): %v", ident, err)
		}
		if diff := gocmp.Diff(&want, got); diff != "" {
			t.Errorf("GetPortgroup(%s) mismatch (-want +got):\n%s", ident, diff)
		}
	}
	pg.Name = ""
	pg.Extra = baremetal.JSON{"k": "v"}
	if err := s.UpdatePortgroup(ctx, pg); err != nil {
		t.Fatal(err)
	}
	got, err := s.GetPortgroup(ctx, pg.UUID)
	if err != nil {
		t.Fatal(err)
	}
	if got.Name != "" || got.Extra["k"] != "v" || got.UpdatedAt == nil {
		t.Errorf("updated portgroup: %+v", got)
	}
	_, err = s.GetPortgroup(ctx, "bond0")
	wantErr(t, err, store.ErrNotFound, "portgroup bond0 could not be found")
	if err := s.DeletePortgroup(ctx, pg.UUID); err != nil {
		t.Fatal(err)
	}
	wantErr(t, s.DeletePortgroup(ctx, pg.UUID), store.ErrNotFound, pg.UUID)
	wantErr(t, s.UpdatePortgroup(ctx, pg), store.ErrNotFound, pg.UUID)
	wantErr(t, s.CreatePortgroup(ctx, &baremetal.Portgroup{NodeUUID: "missing-node"}), store.ErrNotFound, "missing-node")
}

func testPortgroupConflicts(t *testing.T, s store.Store) {
	ctx := t.Context()
	n := createNode(t, s, newNode("n"))
	if err := s.CreatePortgroup(ctx, &baremetal.Portgroup{NodeUUID: n.UUID, Name: "bond0", Address: "aa:aa:aa:aa:aa:01"}); err != nil {
		t.Fatal(err)
	}
	wantErr(t, s.CreatePortgroup(ctx, &baremetal.Portgroup{NodeUUID: n.UUID, Name: "bond0"}), store.ErrConflict, `name "bond0"`)
	wantErr(t, s.CreatePortgroup(ctx, &baremetal.Portgroup{NodeUUID: n.UUID, Address: "AA:AA:AA:AA:AA:01"}), store.ErrConflict,
		`address "aa:aa:aa:aa:aa:01"`)
	// Portgroups without name or address do not collide.
	for range 2 {
		if err := s.CreatePortgroup(ctx, &baremetal.Portgroup{NodeUUID: n.UUID}); err != nil {
			t.Fatal(err)
		}
	}
}

func testPortgroupDeleteNotEmpty(t *testing.T, s store.Store) {
	ctx := t.Context()
	n := createNode(t, s, newNode("n"))
	pg := &baremetal.Portgroup{NodeUUID: n.UUID, Name: "bond0"}
	if err := s.CreatePortgroup(ctx, pg); err != nil {
		t.Fatal(err)
	}
	p := newPort(n.UUID, "aa:aa:aa:aa:aa:01")
	p.PortgroupUUID = pg.UUID
	createPort(t, s, p)
	wantErr(t, s.DeletePortgroup(ctx, pg.UUID), store.ErrConflict, pg.UUID)
	if err := s.DeletePort(ctx, p.UUID); err != nil {
		t.Fatal(err)
	}
	if err := s.DeletePortgroup(ctx, pg.UUID); err != nil {
		t.Errorf("deleting the emptied portgroup: %v", err)
	}
}

func testPortgroupList(t *testing.T, s store.Store) {
	ctx := t.Context()
	n1 := createNode(t, s, newNode("n1"))
	n2 := createNode(t, s, newNode("n2"))
	var uuids []string
	for i, name := range []string{"c", "", "a", "b"} {
		pg := &baremetal.Portgroup{NodeUUID: n1.UUID, Name: name, Address: fmt.Sprintf("aa:aa:aa:aa:aa:%02d", i)}
		if i == 3 {
			pg.NodeUUID = n2.UUID
		}
		if err := s.CreatePortgroup(ctx, pg); err != nil {
			t.Fatal(err)
		}
		uuids = append(uuids, pg.UUID)
	}
	got, err := s.ListPortgroups(ctx, store.PortgroupFilter{NodeUUID: n2.UUID})
	if err != nil || len(got) != 1 || got[0].UUID != uuids[3] {
		t.Errorf("filter by node: %v, %v", got, err)
	}
	got, err = s.ListPortgroups(ctx, store.PortgroupFilter{Address: "AA:AA:AA:AA:AA:02"})
	if err != nil || len(got) != 1 || got[0].UUID != uuids[2] {
		t.Errorf("filter by address: %v, %v", got, err)
	}
	list := func(p store.Page) ([]*baremetal.Portgroup, error) {
		return s.ListPortgroups(ctx, store.PortgroupFilter{Page: p})
	}
	uuidOf := func(pg *baremetal.Portgroup) string { return pg.UUID }
	// Unnamed portgroups sort first by name.
	checkPaging(t, list, store.Page{SortKey: "name"}, 1, uuidOf, []string{uuids[1], uuids[2], uuids[3], uuids[0]})
	checkPaging(t, list, store.Page{SortKey: "name", SortDir: "desc"}, 3, uuidOf, []string{uuids[0], uuids[3], uuids[2], uuids[1]})
	checkPaging(t, list, store.Page{SortKey: "address", SortDir: "desc"}, 2, uuidOf, []string{uuids[3], uuids[2], uuids[1], uuids[0]})
}
