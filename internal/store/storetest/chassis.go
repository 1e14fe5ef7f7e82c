package storetest

import (
	"testing"

	gocmp "github.com/google/go-cmp/cmp"

	"github.com/ferrometal/ferro/internal/baremetal"
	"github.com/ferrometal/ferro/internal/store"
)

var chassisTests = []test{
	{"CRUD", testChassisCRUD},
	{"DeleteWhileNodesNameIt", testChassisDeleteNotEmpty},
	{"ListPaging", testChassisList},
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
