package storetest

import (
	"encoding/json"
	"testing"

	gocmp "github.com/google/go-cmp/cmp"

	"github.com/ferrometal/ferro/internal/baremetal"
	"github.com/ferrometal/ferro/internal/store"
)

var inspectionRuleTests = []test{
	{"CRUDFilterAndSort", testInspectionRules},
}

func testInspectionRules(t *testing.T, s store.Store) {
	ctx := t.Context()
	desc := "set the BMC address"
	r := &baremetal.InspectionRule{Description: &desc, Priority: 50, Phase: "main",
		Conditions: []map[string]any{{"op": "!is-empty", "args": map[string]any{"value": "{inventory[bmc_address]}"}}},
		Actions: []map[string]any{{"op": "set-attribute", "args": map[string]any{"path": "/driver_info/ipmi_address",
			"value": "{inventory[bmc_address]}"}}, {"op": "log", "args": []any{"hello", "info"}, "loop": []any{json.Number("1")}}}}
	if err := s.CreateInspectionRule(ctx, r); err != nil {
		t.Fatal(err)
	}
	if r.UUID == "" || r.CreatedAt.IsZero() {
		t.Fatalf("created rule %+v has no UUID or time", r)
	}
	got, err := s.GetInspectionRule(ctx, r.UUID)
	if err != nil {
		t.Fatal(err)
	}
	if diff := gocmp.Diff(r, got); diff != "" {
		t.Errorf("GetInspectionRule mismatch (-want +got):\n%s", diff)
	}
	wantErr(t, s.CreateInspectionRule(ctx, &baremetal.InspectionRule{UUID: r.UUID, Actions: r.Actions}), store.ErrConflict, r.UUID)

	low := &baremetal.InspectionRule{Priority: 1, Sensitive: true, Actions: []map[string]any{{"op": "fail", "args": map[string]any{"msg": "x"}}}}
	if err := s.CreateInspectionRule(ctx, low); err != nil {
		t.Fatal(err)
	}
	if low.Phase != "main" {
		t.Errorf("phase defaults to %q", low.Phase)
	}
	got, err = s.GetInspectionRule(ctx, low.UUID)
	if err != nil || got.Conditions == nil || len(got.Conditions) != 0 || got.Description != nil {
		t.Errorf("rule without conditions or description: %+v, %v", got, err)
	}
	list, err := s.ListInspectionRules(ctx, store.InspectionRuleFilter{Page: store.Page{SortKey: "priority"}, Phase: "main"})
	if err != nil || len(list) != 2 || list[0].UUID != low.UUID {
		t.Fatalf("ListInspectionRules by priority = %v, %v", list, err)
	}
	list, err = s.ListInspectionRules(ctx, store.InspectionRuleFilter{Page: store.Page{Limit: 1}})
	if err != nil || len(list) != 1 || list[0].UUID != r.UUID {
		t.Fatalf("ListInspectionRules first page = %v, %v", list, err)
	}
	list, err = s.ListInspectionRules(ctx, store.InspectionRuleFilter{Page: store.Page{Marker: r.UUID}})
	if err != nil || len(list) != 1 || list[0].UUID != low.UUID {
		t.Fatalf("ListInspectionRules after the marker = %v, %v", list, err)
	}
	if list, err := s.ListInspectionRules(ctx, store.InspectionRuleFilter{Phase: "other"}); err != nil || len(list) != 0 {
		t.Errorf("phase other: %v, %v", list, err)
	}
	list, err = s.ListInspectionRules(ctx, store.InspectionRuleFilter{Page: store.Page{SortKey: "sensitive", SortDir: "desc"}})
	if err != nil || len(list) != 2 || list[0].UUID != low.UUID {
		t.Errorf("ListInspectionRules by sensitive desc = %v, %v", list, err)
	}

	r.Priority, r.Description = 9999, nil
	if err := s.UpdateInspectionRule(ctx, r); err != nil {
		t.Fatal(err)
	}
	got, err = s.GetInspectionRule(ctx, r.UUID)
	if err != nil || got.Priority != 9999 || got.Description != nil || got.UpdatedAt == nil {
		t.Errorf("updated rule %+v, %v", got, err)
	}
	wantErr(t, s.UpdateInspectionRule(ctx, &baremetal.InspectionRule{UUID: "4c1e3d7a-0000-4000-8000-000000000000"}), store.ErrNotFound, "4c1e3d7a")
	if err := s.DeleteInspectionRule(ctx, r.UUID); err != nil {
		t.Fatal(err)
	}
	_, err = s.GetInspectionRule(ctx, r.UUID)
	wantErr(t, err, store.ErrNotFound, r.UUID)
	wantErr(t, s.DeleteInspectionRule(ctx, r.UUID), store.ErrNotFound, r.UUID)
}
