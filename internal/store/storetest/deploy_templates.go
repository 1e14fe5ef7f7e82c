package storetest

import (
	"encoding/json"
	"testing"

	gocmp "github.com/google/go-cmp/cmp"

	"github.com/ferrometal/ferro/internal/baremetal"
	"github.com/ferrometal/ferro/internal/store"
)

var deployTemplateTests = []test{
	{"CRUDAndUniqueName", testDeployTemplates},
}

func testDeployTemplates(t *testing.T, s store.Store) {
	ctx := t.Context()
	dt := &baremetal.DeployTemplate{Name: "CUSTOM_RAID1", Steps: []baremetal.DeployStep{
		{Interface: "raid", Step: "create_configuration", Args: baremetal.JSON{"size_gb": json.Number("100")}, Priority: 10},
	}}
	if err := s.CreateDeployTemplate(ctx, dt); err != nil {
		t.Fatal(err)
	}
	dt.Extra = baremetal.JSON{}
	for _, ident := range []string{dt.UUID, "CUSTOM_RAID1"} {
		got, err := s.GetDeployTemplate(ctx, ident)
		if err != nil {
			t.Fatalf("GetDeployTemplate(%s): %v", ident, err)
		}
		if diff := gocmp.Diff(dt, got); diff != "" {
			t.Errorf("GetDeployTemplate(%s) mismatch (-want +got):\n%s", ident, diff)
		}
	}
	wantErr(t, s.CreateDeployTemplate(ctx, &baremetal.DeployTemplate{Name: "CUSTOM_RAID1"}), store.ErrConflict, "CUSTOM_RAID1")
	other := &baremetal.DeployTemplate{Name: "CUSTOM_BIOS"}
	if err := s.CreateDeployTemplate(ctx, other); err != nil {
		t.Fatal(err)
	}
	other.Name = "CUSTOM_RAID1"
	wantErr(t, s.UpdateDeployTemplate(ctx, other), store.ErrConflict, "CUSTOM_RAID1")
	other.Name = "CUSTOM_BIOS2"
	if err := s.UpdateDeployTemplate(ctx, other); err != nil {
		t.Fatal(err)
	}
	list, err := s.ListDeployTemplates(ctx, store.Page{SortKey: "name"})
	if err != nil || len(list) != 2 || list[0].Name != "CUSTOM_BIOS2" {
		t.Fatalf("ListDeployTemplates by name = %v, %v", list, err)
	}
	if err := s.DeleteDeployTemplate(ctx, dt.UUID); err != nil {
		t.Fatal(err)
	}
	_, err = s.GetDeployTemplate(ctx, "CUSTOM_RAID1")
	wantErr(t, err, store.ErrNotFound, "CUSTOM_RAID1")
	wantErr(t, s.DeleteDeployTemplate(ctx, dt.UUID), store.ErrNotFound, dt.UUID)
}
