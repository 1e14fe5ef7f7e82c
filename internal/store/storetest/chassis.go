package storetest

import (
	"fmt"
	"testing"

	gocmp "github.com/google/go-cmp/cmp"

	"github.com/ferrometal/ferro/internal/baremetal"
	"github.com/ferrometal/ferro/internal/store"
)

var chassisTests = []test{
	{"CRUD", testChassisCRUD},
	{"DeleteWhileNodesNameIt", testChassisDeleteNotEmpty},
	{"ListPaging", testChassisList},
	{"SortOnBodyFieldsAndNodeIDs", testSortOnBodyFields},
}

func testChassisCRUD(t *testing.T, s store.Store) {
	ctx := t.Context()
	c := &baremetal.Chassis{Description: "rack 1 ♡", Extra: baremetal.JSON{"row": "b"}}
	if err := s.CreateChassis(ctx, c); err != nil {
		t.Fatal(err)
	}
	if c.UUID == "" || c.CreatedAt.IsZero() {
		t.Errorf("CreateChassis left uuid %q, created_at %v", c.UUID, c.CreatedAt)
	}
	got, err := s.GetChassis(ctx, c.UUID)
	if err != nil {
		t.Fatal(err)
	}
	if diff := gocmp.Diff(c, got); diff != "" {
		t.Errorf("GetChassis mismatch (-want +got):\n%s", diff)
	}
	wantErr(t, s.CreateChassis(ctx, &baremetal.Chassis{UUID: c.UUID}), store.ErrConflict, c.UUID)
	c.Description, c.Extra = "", nil
	if err := s.UpdateChassis(ctx, c); err != nil {
		t.Fatal(err)
	}
	got, err = s.GetChassis(ctx, c.UUID)
	if err != nil {
		t.Fatal(err)
	}
	if got.Description != "" || len(got.Extra) != 0 || got.Extra == nil || got.UpdatedAt == nil {
		t.Errorf("updated chassis: %+v", got)
	}
	if err := s.DeleteChassis(ctx, c.UUID); err != nil {
		t.Fatal(err)
	}
	_, err = s.GetChassis(ctx, c.UUID)
	wantErr(t, err, store.ErrNotFound, c.UUID)
	wantErr(t, s.DeleteChassis(ctx, c.UUID), store.ErrNotFound, c.UUID)
	wantErr(t, s.UpdateChassis(ctx, c), store.ErrNotFound, c.UUID)
}

func testChassisDeleteNotEmpty(t *testing.T, s store.Store) {
	ctx := t.Context()
	c := &baremetal.Chassis{}
	if err := s.CreateChassis(ctx, c); err != nil {
		t.Fatal(err)
	}
	n := newNode("n")
	n.ChassisUUID = c.UUID
	n = createNode(t, s, n)
	wantErr(t, s.DeleteChassis(ctx, c.UUID), store.ErrConflict, c.UUID)
	n.ChassisUUID = ""
	if err := s.UpdateNode(ctx, n); err != nil {
		t.Fatal(err)
	}
	if err := s.DeleteChassis(ctx, c.UUID); err != nil {
		t.Errorf("deleting the emptied chassis: %v", err)
	}
}

func testChassisList(t *testing.T, s store.Store) {
	ctx := t.Context()
	var ids []string
	for range 3 {
		c := &baremetal.Chassis{}
		if err := s.CreateChassis(ctx, c); err != nil {
			t.Fatal(err)
		}
		ids = append(ids, c.UUID)
	}
	page, err := s.ListChassis(ctx, store.Page{Limit: 2})
	if err != nil {
		t.Fatal(err)
	}
	if len(page) != 2 || page[0].UUID != ids[0] || page[1].UUID != ids[1] {
		t.Fatalf("first page = %v, want %v", uuids(page), ids[:2])
	}
	rest, err := s.ListChassis(ctx, store.Page{Marker: page[1].UUID})
	if err != nil {
		t.Fatal(err)
	}
	if len(rest) != 1 || rest[0].UUID != ids[2] {
		t.Errorf("after the marker = %v, want %v", uuids(rest), ids[2:])
	}
	desc, err := s.ListChassis(ctx, store.Page{SortKey: "uuid", SortDir: "desc"})
	if err != nil {
		t.Fatal(err)
	}
	if len(desc) != 3 || desc[0].UUID < desc[1].UUID || desc[1].UUID < desc[2].UUID {
		t.Errorf("sorted by uuid desc = %v", uuids(desc))
	}
}

func uuids(cs []*baremetal.Chassis) []string {
	out := make([]string, len(cs))
	for i, c := range cs {
		out[i] = c.UUID
	}
	return out
}

// testSortOnBodyFields sorts on fields kept only in the JSON body (a
// chassis' description, a port's pxe_enabled) and on the id of a port's
// node, as Ironic sorts on those columns: an absent value first, ties in id
// order, in the same direction; pages follow markers.
func testSortOnBodyFields(t *testing.T, s store.Store) {
	ctx := t.Context()
	var ids []string
	for _, d := range []string{"b", "", "a", "b"} {
		c := &baremetal.Chassis{Description: d}
		if err := s.CreateChassis(ctx, c); err != nil {
			t.Fatal(err)
		}
		ids = append(ids, c.UUID)
	}
	chassis := func(p store.Page) ([]*baremetal.Chassis, error) { return s.ListChassis(ctx, p) }
	chassisID := func(c *baremetal.Chassis) string { return c.UUID }
	checkPaging(t, chassis, store.Page{SortKey: "description"}, 1, chassisID, []string{ids[1], ids[2], ids[0], ids[3]})
	checkPaging(t, chassis, store.Page{SortKey: "description", SortDir: "desc"}, 1, chassisID, []string{ids[3], ids[0], ids[2], ids[1]})

	// The node created first has the greater UUID: node_id is not node_uuid.
	first := newNode("first")
	first.UUID = "ffffffff-0000-4000-8000-000000000000"
	createNode(t, s, first)
	second := newNode("second")
	second.UUID = "00000000-0000-4000-8000-000000000000"
	createNode(t, s, second)
	var ports []string
	for i, n := range []string{second.UUID, first.UUID, second.UUID} {
		p := newPort(n, fmt.Sprintf("52:54:00:cd:00:0%d", i))
		p.PXEEnabled = i != 1
		ports = append(ports, createPort(t, s, p).UUID)
	}
	list := func(p store.Page) ([]*baremetal.Port, error) { return s.ListPorts(ctx, store.PortFilter{Page: p}) }
	portID := func(p *baremetal.Port) string { return p.UUID }
	checkPaging(t, list, store.Page{SortKey: "node_id"}, 1, portID, []string{ports[1], ports[0], ports[2]})
	checkPaging(t, list, store.Page{SortKey: "node_id", SortDir: "desc"}, 2, portID, []string{ports[2], ports[0], ports[1]})
	checkPaging(t, list, store.Page{SortKey: "pxe_enabled"}, 1, portID, []string{ports[1], ports[0], ports[2]})
	checkPaging(t, list, store.Page{SortKey: "pxe_enabled", SortDir: "desc"}, 1, portID, []string{ports[2], ports[0], ports[1]})
}
