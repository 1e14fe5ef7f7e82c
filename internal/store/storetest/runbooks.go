package storetest

import (
	"encoding/json"
	"testing"

	gocmp "github.com/google/go-cmp/cmp"

	"github.com/ferrometal/ferro/internal/baremetal"
	"github.com/ferrometal/ferro/internal/store"
)

var runbookTests = []test{
	{"CRUDAndUniqueName", testRunbooks},
	{"ProjectFilterAndSort", testRunbookList},
}

func testRunbooks(t *testing.T, s store.Store) {
	ctx := t.Context()
	desc := "wipe disks"
	rb := &baremetal.Runbook{Name: "CUSTOM_WIPE", Description: &desc, DisableRamdisk: true, Owner: ptr("p1"),
		Traits: []string{"CUSTOM_B", "CUSTOM_A"},
		Steps: []baremetal.RunbookStep{
			{Interface: "deploy", Step: "erase_devices", Args: baremetal.JSON{"passes": json.Number("2")}, Order: 2},
			{Interface: "bios", Step: "apply_configuration", Order: 1},
		}}
	if err := s.CreateRunbook(ctx, rb); err != nil {
		t.Fatal(err)
	}
	// What a client expects of unset free-form fields: empty, not null;
	// the steps keep the order they were given in.
	rb.Extra = baremetal.JSON{}
	rb.Steps[1].Args = baremetal.JSON{}
	for _, ident := range []string{rb.UUID, "CUSTOM_WIPE"} {
		got, err := s.GetRunbook(ctx, ident)
		if err != nil {
			t.Fatalf("GetRunbook(%s): %v", ident, err)
		}
		if diff := gocmp.Diff(rb, got); diff != "" {
			t.Errorf("GetRunbook(%s) mismatch (-want +got):\n%s", ident, diff)
		}
	}
	wantErr(t, s.CreateRunbook(ctx, &baremetal.Runbook{Name: "CUSTOM_WIPE"}), store.ErrConflict, "CUSTOM_WIPE")
	wantErr(t, s.CreateRunbook(ctx, &baremetal.Runbook{UUID: rb.UUID, Name: "other"}), store.ErrConflict, rb.UUID)
	other := &baremetal.Runbook{Name: "other"}
	if err := s.CreateRunbook(ctx, other); err != nil {
		t.Fatal(err)
	}
	if other.Traits == nil {
		other.Traits = []string{}
	}
	other.Name = "CUSTOM_WIPE"
	wantErr(t, s.UpdateRunbook(ctx, other), store.ErrConflict, "CUSTOM_WIPE")
	other.Name, other.Public, other.Traits = "other2", true, []string{"CUSTOM_X"}
	if err := s.UpdateRunbook(ctx, other); err != nil {
		t.Fatal(err)
	}
	got, err := s.GetRunbook(ctx, "other2")
	if err != nil || !got.Public || gocmp.Diff([]string{"CUSTOM_X"}, got.Traits) != "" || got.UpdatedAt == nil {
		t.Fatalf("GetRunbook after update = %+v, %v", got, err)
	}
	if err := s.DeleteRunbook(ctx, rb.UUID); err != nil {
		t.Fatal(err)
	}
	_, err = s.GetRunbook(ctx, "CUSTOM_WIPE")
	wantErr(t, err, store.ErrNotFound, "CUSTOM_WIPE")
	wantErr(t, s.DeleteRunbook(ctx, rb.UUID), store.ErrNotFound, rb.UUID)
	wantErr(t, s.UpdateRunbook(ctx, rb), store.ErrNotFound, rb.UUID)
}

func testRunbookList(t *testing.T, s store.Store) {
	ctx := t.Context()
	for _, rb := range []*baremetal.Runbook{
		{Name: "c-mine", Owner: ptr("p1")},
		{Name: "a-theirs", Owner: ptr("p2")},
		{Name: "b-public", Public: true},
		{Name: "d-nobody"},
		{Name: "e-empty", Owner: ptr("")}, // kept, not made null
	} {
		if err := s.CreateRunbook(ctx, rb); err != nil {
			t.Fatal(err)
		}
	}
	names := func(f store.RunbookFilter) []string {
		t.Helper()
		list, err := s.ListRunbooks(ctx, f)
		if err != nil {
			t.Fatalf("ListRunbooks(%+v): %v", f, err)
		}
		var out []string
		for _, rb := range list {
			out = append(out, rb.Name)
		}
		return out
	}
	for _, tc := range []struct {
		f    store.RunbookFilter
		want []string
	}{
		{store.RunbookFilter{}, []string{"c-mine", "a-theirs", "b-public", "d-nobody", "e-empty"}},
		{store.RunbookFilter{Project: "p1"}, []string{"c-mine", "b-public"}},
		{store.RunbookFilter{Project: "p3"}, []string{"b-public"}},
		{store.RunbookFilter{Page: store.Page{SortKey: "name"}}, []string{"a-theirs", "b-public", "c-mine", "d-nobody", "e-empty"}},
		{store.RunbookFilter{Page: store.Page{SortKey: "owner", SortDir: "desc", Limit: 2}}, []string{"a-theirs", "c-mine"}},
		{store.RunbookFilter{Page: store.Page{SortKey: "public", SortDir: "desc", Limit: 1}}, []string{"b-public"}},
	} {
		if diff := gocmp.Diff(tc.want, names(tc.f)); diff != "" {
			t.Errorf("ListRunbooks(%+v) (-want +got):\n%s", tc.f, diff)
		}
	}
	for ident, want := range map[string]*string{"e-empty": ptr(""), "d-nobody": nil} {
		rb, err := s.GetRunbook(ctx, ident)
		if err != nil || gocmp.Diff(want, rb.Owner) != "" {
			t.Errorf("GetRunbook(%s).Owner = %v, %v; want %v", ident, rb.Owner, err, want)
		}
	}
}
