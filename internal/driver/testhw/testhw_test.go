package testhw_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/gophercloud/gophercloud/v2"
	"github.com/gophercloud/gophercloud/v2/openstack/baremetal/noauth"
	"github.com/gophercloud/gophercloud/v2/openstack/baremetal/v1/drivers"
	"github.com/gophercloud/gophercloud/v2/openstack/baremetal/v1/nodes"

	"github.com/ferrometal/ferro/internal/api/ironic"
	"github.com/ferrometal/ferro/internal/conductor"
	"github.com/ferrometal/ferro/internal/driver"
	"github.com/ferrometal/ferro/internal/driver/fake"
	"github.com/ferrometal/ferro/internal/driver/testhw"
	"github.com/ferrometal/ferro/internal/store/sql"
)

// types stands for cmd/ferro's list with this folder's type added, the
// one line a real type adds there.
var types = []driver.HardwareType{fake.HardwareType, testhw.HardwareType}

// A hardware type declared in one folder is in the [DEFAULT]enabled_*
// defaults, GET /v1/drivers, the driver's properties (`baremetal driver
// property list`), node creation and validation, with no other file
// knowing it. gophercloud, metal3's client, reads the answers.
func TestHardwareType_OneFolderIsEnough(t *testing.T) {
	// The defaults cmd/ferro hands the configuration (config.Hardware).
	e := driver.EnableAll(types)
	if !slices.Contains(e.Types, "test-hardware") || !slices.Contains(e.Interfaces["power"], testhw.Name) ||
		!slices.Contains(e.Interfaces["management"], testhw.Name) {
		t.Fatalf("enabled_* defaults %+v lack the type", e)
	}

	client, base := serve(t, e)
	ctx := t.Context()

	all, err := drivers.ListDrivers(client, drivers.ListDriversOpts{Detail: true}).AllPages(ctx)
	if err != nil {
		t.Fatal(err)
	}
	ds, err := drivers.ExtractDrivers(all)
	if err != nil {
		t.Fatal(err)
	}
	var got *drivers.Driver
	for i := range ds {
		if ds[i].Name == "test-hardware" {
			got = &ds[i]
		}
	}
	if got == nil {
		t.Fatalf("GET /v1/drivers: %+v has no test-hardware", ds)
	}
	if got.DefaultPowerInterface != testhw.Name || got.DefaultBootInterface != "ipxe" ||
		!slices.Equal(got.EnabledManagementInterfaces, []string{testhw.Name}) || len(got.Hosts) != 1 {
		t.Errorf("test-hardware %+v", got)
	}

	props, err := drivers.GetDriverProperties(ctx, client, "test-hardware").Extract()
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range testhw.HardwareType.Properties {
		if (*props)[p.Name] != p.Description {
			t.Errorf("property %s = %q, want %q", p.Name, (*props)[p.Name], p.Description)
		}
	}
	if (*props)["deploy_kernel"] == "" {
		t.Error("the common properties are missing")
	}
	// Another type does not read this one's keys.
	fakeProps, err := drivers.GetDriverProperties(ctx, client, "fake-hardware").Extract()
	if err != nil || (*fakeProps)["test_bmc_address"] != nil {
		t.Errorf("fake-hardware lists test-hardware's keys: %v %v", fakeProps, err)
	}

	// A node gets the type's default interfaces, and validation reads its
	// schema: the required key is missing, then set.
	n, err := nodes.Create(ctx, client, nodes.CreateOpts{Name: "t1", Driver: "test-hardware",
		DriverInfo: map[string]any{"test_bmc_password": "s3cret-test-pw"}}).Extract()
	if err != nil {
		t.Fatal(err)
	}
	if n.PowerInterface != testhw.Name || n.ManagementInterface != testhw.Name {
		t.Errorf("node interfaces power %q management %q", n.PowerInterface, n.ManagementInterface)
	}
	v, err := nodes.Validate(ctx, client, n.UUID).Extract()
	if err != nil {
		t.Fatal(err)
	}
	if v.Power.Result || !strings.Contains(v.Power.Reason, "driver_info[test_bmc_address]") {
		t.Errorf("power validation without the address: %+v", v.Power)
	}
	if _, err := nodes.Update(ctx, client, n.UUID, nodes.UpdateOpts{
		nodes.UpdateOperation{Op: nodes.AddOp, Path: "/driver_info/test_bmc_address", Value: "192.0.2.9"},
	}).Extract(); err != nil {
		t.Fatal(err)
	}
	v, err = nodes.Validate(ctx, client, n.UUID).Extract()
	if err != nil {
		t.Fatal(err)
	}
	if !v.Power.Result || !v.Management.Result {
		t.Errorf("validation with the address: power %+v management %+v", v.Power, v.Management)
	}

	// The schema's secret is never shown.
	resp, err := http.Get(base + "/v1/nodes/" + n.UUID)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	var shown struct {
		DriverInfo map[string]any `json:"driver_info"`
	}
	if err := json.Unmarshal(body, &shown); err != nil {
		t.Fatal(err)
	}
	for _, p := range testhw.HardwareType.Properties {
		if p.Secret && shown.DriverInfo[p.Name] != "******" {
			t.Errorf("secret %s shown as %v", p.Name, shown.DriverInfo[p.Name])
		}
	}
}

// serve runs the bare metal API with ferro's conductor over SQLite, the
// registry built from types as cmd/ferro builds it.
func serve(t *testing.T, e driver.Enabled) (client *gophercloud.ServiceClient, base string) {
	t.Helper()
	db, err := sql.Open(t.Context(), "sqlite://"+filepath.Join(t.TempDir(), "ferro.db"))
	if err != nil {
		t.Fatal(err)
	}
	reg := driver.NewRegistry(types, e)
	fake.Register(reg)
	testhw.Register(reg)
	cond := conductor.New(conductor.Options{Store: db, Registry: reg, Host: "c1", Workers: 4,
		PowerTimeout: time.Minute, HeartbeatTimeout: time.Minute})
	if err := cond.Start(t.Context()); err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(ironic.New(ironic.Options{Store: db, Conductor: cond, MaxLimit: 1000, HeartbeatTimeout: time.Minute, Host: "c1"}))
	t.Cleanup(func() {
		srv.Close()
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := cond.Stop(ctx); err != nil {
			t.Errorf("stop conductor: %v", err)
		}
		db.Close()
	})
	c, err := noauth.NewBareMetalNoAuth(noauth.EndpointOpts{IronicEndpoint: srv.URL + "/v1"})
	if err != nil {
		t.Fatal(err)
	}
	c.Microversion = "1.82"
	return c, srv.URL
}
