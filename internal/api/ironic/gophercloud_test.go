package ironic

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/gophercloud/gophercloud/v2"
	"github.com/gophercloud/gophercloud/v2/openstack/baremetal/apiversions"
	"github.com/gophercloud/gophercloud/v2/openstack/baremetal/noauth"
	"github.com/gophercloud/gophercloud/v2/openstack/baremetal/v1/allocations"
	"github.com/gophercloud/gophercloud/v2/openstack/baremetal/v1/conductors"
	"github.com/gophercloud/gophercloud/v2/openstack/baremetal/v1/drivers"
	"github.com/gophercloud/gophercloud/v2/openstack/baremetal/v1/nodes"
	"github.com/gophercloud/gophercloud/v2/openstack/baremetal/v1/portgroups"
	"github.com/gophercloud/gophercloud/v2/openstack/baremetal/v1/ports"
	"github.com/gophercloud/gophercloud/v2/pagination"
	"go.uber.org/goleak"

	"github.com/ferrometal/ferro/internal/store"
)

// gopherEnv serves the API over real HTTP and returns a gophercloud
// client for it, as metal3 talks to Ironic.
func gopherEnv(t *testing.T) (*env, *gophercloud.ServiceClient) {
	t.Helper()
	e := newEnv(t)
	e.opts.PublicEndpoint = ""
	return e, gopherClient(t, New(e.opts))
}

// gopherClient serves h over real HTTP and returns a gophercloud client
// for it at the maximal microversion.
func gopherClient(t *testing.T, h http.Handler) *gophercloud.ServiceClient {
	t.Helper()
	srv := httptest.NewServer(h)
	transport := &http.Transport{}
	t.Cleanup(func() {
		transport.CloseIdleConnections()
		srv.Close()
	})
	client, err := noauth.NewBareMetalNoAuth(noauth.EndpointOpts{IronicEndpoint: srv.URL + "/v1"})
	if err != nil {
		t.Fatal(err)
	}
	client.HTTPClient = http.Client{Transport: transport}
	client.Microversion = maxVersionString
	return client
}

func TestGophercloud_NodeLifecycle(t *testing.T) {
	ignore := goleak.IgnoreCurrent()
	// Registered first, so it runs after the server, client and store close.
	t.Cleanup(func() { goleak.VerifyNone(t, ignore) })
	ctx := t.Context()
	_, client := gopherEnv(t)

	n, err := nodes.Create(ctx, client, nodes.CreateOpts{
		Name: "gc-node", Driver: "fake-hardware",
		DriverInfo:    map[string]any{"ipmi_address": "192.0.2.1", "ipmi_password": "hunter2"},
		Properties:    map[string]any{"cpus": 16, "memory_mb": 65536},
		ResourceClass: "compute", BootInterface: "pxe",
	}).Extract()
	if err != nil {
		t.Fatalf("create: %v", err)
	}
	if n.ProvisionState != "enroll" || n.BootInterface != "pxe" || n.PowerInterface != "fake" || n.ResourceClass != "compute" {
		t.Errorf("created %+v", n)
	}
	if n.DriverInfo["ipmi_password"] != "******" || n.DriverInfo["ipmi_address"] != "192.0.2.1" {
		t.Errorf("driver_info %v", n.DriverInfo)
	}
	if n.Properties["cpus"] != float64(16) {
		t.Errorf("cpus %#v", n.Properties["cpus"])
	}
	if n.CreatedAt.IsZero() {
		t.Errorf("created_at not parsed")
	}

	got, err := nodes.Get(ctx, client, "gc-node").Extract()
	if err != nil || got.UUID != n.UUID {
		t.Fatalf("get by name: %v %v", got, err)
	}

	up, err := nodes.Update(ctx, client, n.UUID, nodes.UpdateOpts{
		nodes.UpdateOperation{Op: nodes.AddOp, Path: "/extra/rack", Value: "r12"},
		nodes.UpdateOperation{Op: nodes.ReplaceOp, Path: "/driver_info/ipmi_address", Value: "192.0.2.2"},
		nodes.UpdateOperation{Op: nodes.RemoveOp, Path: "/properties/memory_mb"},
	}).Extract()
	if err != nil {
		t.Fatalf("update: %v", err)
	}
	if up.Extra["rack"] != "r12" || up.DriverInfo["ipmi_address"] != "192.0.2.2" || up.Properties["memory_mb"] != nil {
		t.Errorf("updated %+v", up)
	}

	for _, target := range []nodes.TargetProvisionState{nodes.TargetManage, nodes.TargetInspect, nodes.TargetProvide} {
		if err := nodes.ChangeProvisionState(ctx, client, n.UUID, nodes.ProvisionStateOpts{Target: target}).ExtractErr(); err != nil {
			t.Fatalf("provision %s: %v", target, err)
		}
	}
	got, _ = nodes.Get(ctx, client, n.UUID).Extract()
	if got.ProvisionState != "available" {
		t.Errorf("provision state %s", got.ProvisionState)
	}
	err = nodes.ChangeProvisionState(ctx, client, n.UUID, nodes.ProvisionStateOpts{Target: nodes.TargetInspect}).ExtractErr()
	if !gophercloud.ResponseCodeIs(err, http.StatusBadRequest) {
		t.Errorf("inspect from available: %v", err)
	}

	if err := nodes.ChangePowerState(ctx, client, n.UUID, nodes.PowerStateOpts{Target: nodes.PowerOn, Timeout: 30}).ExtractErr(); err != nil {
		t.Fatalf("power: %v", err)
	}
	got, err = nodes.Get(ctx, client, n.UUID).Extract()
	if err != nil || got.PowerState != "power on" || got.ProvisionState != "available" {
		t.Errorf("after power on: %+v %v", got, err)
	}

	v, err := nodes.Validate(ctx, client, n.UUID).Extract()
	if err != nil || !v.Power.Result || !v.Management.Result {
		t.Errorf("validate %+v %v", v, err)
	}

	if err := nodes.SetBootDevice(ctx, client, n.UUID, nodes.BootDeviceOpts{BootDevice: "pxe", Persistent: true}).ExtractErr(); err != nil {
		t.Fatalf("set boot device: %v", err)
	}
	bd, err := nodes.GetBootDevice(ctx, client, n.UUID).Extract()
	if err != nil || bd.BootDevice != "pxe" || !bd.Persistent {
		t.Errorf("boot device %+v %v", bd, err)
	}
	sup, err := nodes.GetSupportedBootDevices(ctx, client, n.UUID).Extract()
	if err != nil || !slices.Equal(sup, []string{"pxe", "disk"}) {
		t.Errorf("supported %v %v", sup, err)
	}

	if err := nodes.SetMaintenance(ctx, client, n.UUID, nodes.MaintenanceOpts{Reason: "testing"}).ExtractErr(); err != nil {
		t.Fatalf("maintenance: %v", err)
	}
	got, _ = nodes.Get(ctx, client, n.UUID).Extract()
	if !got.Maintenance || got.MaintenanceReason != "testing" {
		t.Errorf("maintenance %v %q", got.Maintenance, got.MaintenanceReason)
	}
	if err := nodes.UnsetMaintenance(ctx, client, n.UUID).ExtractErr(); err != nil {
		t.Fatalf("unset maintenance: %v", err)
	}

	if err := nodes.SetRAIDConfig(ctx, client, n.UUID, nodes.RAIDConfigOpts{
		LogicalDisks: []nodes.LogicalDisk{{SizeGB: intPtr(100), RAIDLevel: nodes.RAID1, IsRootVolume: boolPtr(true)}},
	}).ExtractErr(); err != nil {
		t.Fatalf("raid: %v", err)
	}
	got, _ = nodes.Get(ctx, client, n.UUID).Extract()
	if len(got.TargetRAIDConfig["logical_disks"].([]any)) != 1 {
		t.Errorf("target_raid_config %v", got.TargetRAIDConfig)
	}

	_, err = nodes.GetInventory(ctx, client, n.UUID).Extract()
	if !gophercloud.ResponseCodeIs(err, http.StatusNotFound) {
		t.Errorf("inventory of an uninspected node: %v", err)
	}

	// available nodes may be deleted.
	if err := nodes.Delete(ctx, client, n.UUID).ExtractErr(); err != nil {
		t.Fatalf("delete: %v", err)
	}
	_, err = nodes.Get(ctx, client, n.UUID).Extract()
	if !gophercloud.ResponseCodeIs(err, http.StatusNotFound) {
		t.Errorf("get deleted: %v", err)
	}
}

func intPtr(i int) *int    { return &i }
func boolPtr(b bool) *bool { return &b }

func TestGophercloud_PagingAndFilters(t *testing.T) {
	ctx := t.Context()
	e, client := gopherEnv(t)
	e.opts.MaxLimit = 1000
	var created []string
	for i := range 12 {
		rc := "small"
		if i%3 == 0 {
			rc = "large"
		}
		n, err := nodes.Create(ctx, client, nodes.CreateOpts{Name: fmt.Sprintf("page-%02d", i), Driver: "fake-hardware", ResourceClass: rc}).Extract()
		if err != nil {
			t.Fatal(err)
		}
		created = append(created, n.UUID)
	}
	var seen []string
	pages := 0
	err := nodes.ListDetail(client, nodes.ListOpts{Limit: 5}).EachPage(ctx, func(_ context.Context, p pagination.Page) (bool, error) {
		ns, err := nodes.ExtractNodes(p)
		if err != nil {
			return false, err
		}
		pages++
		for _, n := range ns {
			seen = append(seen, n.UUID)
			if n.Driver != "fake-hardware" {
				return false, fmt.Errorf("detail list lacks driver: %+v", n)
			}
		}
		return true, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if pages != 3 {
		t.Errorf("%d pages, want 3", pages)
	}
	if d := cmp.Diff(created, seen); d != "" {
		t.Errorf("paged (-created +seen):\n%s", d)
	}

	all, err := nodes.List(client, nodes.ListOpts{ResourceClass: "large", Fields: []string{"uuid", "name", "resource_class"}}).AllPages(ctx)
	if err != nil {
		t.Fatal(err)
	}
	large, _ := nodes.ExtractNodes(all)
	if len(large) != 4 || large[0].ResourceClass != "large" {
		t.Errorf("large nodes %+v", large)
	}
	all, err = nodes.List(client, nodes.ListOpts{ProvisionState: nodes.Enroll, SortKey: "name", SortDir: "desc", Limit: 2}).AllPages(ctx)
	if err != nil {
		t.Fatal(err)
	}
	desc, _ := nodes.ExtractNodes(all)
	if len(desc) != 12 || desc[0].Name != "page-11" || desc[11].Name != "page-00" {
		t.Errorf("sorted desc: %d first %q", len(desc), desc[0].Name)
	}
}

func TestGophercloud_PortsPortgroupsAllocationsDrivers(t *testing.T) {
	ctx := t.Context()
	e, client := gopherEnv(t)
	n, err := nodes.Create(ctx, client, nodes.CreateOpts{Name: "net-node", Driver: "fake-hardware", ResourceClass: "gold"}).Extract()
	if err != nil {
		t.Fatal(err)
	}

	pg, err := portgroups.Create(ctx, client, portgroups.CreateOpts{NodeUUID: n.UUID, Name: "bond0", Address: "52:54:00:10:00:00", Mode: "802.3ad"}).Extract()
	if err != nil {
		t.Fatalf("portgroup: %v", err)
	}
	if pg.Mode != "802.3ad" || !pg.StandalonePortsSupported {
		t.Errorf("portgroup %+v", pg)
	}
	pxe := true
	p, err := ports.Create(ctx, client, ports.CreateOpts{
		NodeUUID: n.UUID, Address: "52:54:00:10:00:01", PXEEnabled: &pxe, PortGroupUUID: pg.UUID,
		LocalLinkConnection: map[string]any{"switch_id": "0a:1b:2c:3d:4e:5f", "port_id": "Ethernet1/1"},
		PhysicalNetwork:     "physnet1",
	}).Extract()
	if err != nil {
		t.Fatalf("port: %v", err)
	}
	if p.PortGroupUUID != pg.UUID || p.LocalLinkConnection["port_id"] != "Ethernet1/1" || !p.PXEEnabled {
		t.Errorf("port %+v", p)
	}
	_, err = ports.Create(ctx, client, ports.CreateOpts{NodeUUID: n.UUID, Address: "52:54:00:10:00:01"}).Extract()
	if !gophercloud.ResponseCodeIs(err, http.StatusConflict) {
		t.Errorf("duplicate address: %v", err)
	}
	all, err := ports.ListDetail(client, ports.ListOpts{NodeUUID: n.UUID}).AllPages(ctx)
	if err != nil {
		t.Fatal(err)
	}
	ps, _ := ports.ExtractPorts(all)
	if len(ps) != 1 || ps[0].Address != "52:54:00:10:00:01" || ps[0].PhysicalNetwork != "physnet1" {
		t.Errorf("ports %+v", ps)
	}
	pu, err := ports.Update(ctx, client, p.UUID, ports.UpdateOpts{
		ports.UpdateOperation{Op: ports.ReplaceOp, Path: "/extra", Value: map[string]any{"a": "b"}},
	}).Extract()
	if err != nil || pu.Extra["a"] != "b" {
		t.Errorf("port update %+v %v", pu, err)
	}
	pgAll, err := portgroups.List(client, portgroups.ListOpts{Node: n.UUID}).AllPages(ctx)
	if err != nil {
		t.Fatal(err)
	}
	pgs, _ := portgroups.ExtractPortGroups(pgAll)
	if len(pgs) != 1 || pgs[0].Name != "bond0" {
		t.Errorf("portgroups %+v", pgs)
	}
	if err := ports.Delete(ctx, client, p.UUID).ExtractErr(); err != nil {
		t.Fatal(err)
	}
	if err := portgroups.Delete(ctx, client, pg.UUID).ExtractErr(); err != nil {
		t.Fatal(err)
	}

	// Allocations.
	e.setState(n.UUID, "available")
	a, err := allocations.Create(ctx, client, allocations.CreateOpts{ResourceClass: "gold", Name: "alloc"}).Extract()
	if err != nil {
		t.Fatalf("allocation: %v", err)
	}
	if a, err = allocations.Get(ctx, client, a.UUID).Extract(); err != nil {
		t.Fatal(err)
	}
	if a.State != "active" || a.NodeUUID != n.UUID {
		t.Errorf("allocation %+v", a)
	}
	aAll, err := allocations.List(client, allocations.ListOpts{Node: n.UUID}).AllPages(ctx)
	if err != nil {
		t.Fatal(err)
	}
	as, _ := allocations.ExtractAllocations(aAll)
	if len(as) != 1 || as[0].UUID != a.UUID {
		t.Errorf("allocations %+v", as)
	}
	if err := allocations.Delete(ctx, client, a.UUID).ExtractErr(); err != nil {
		t.Fatal(err)
	}
	_, err = allocations.Get(ctx, client, a.UUID).Extract()
	if !gophercloud.ResponseCodeIs(err, http.StatusNotFound) {
		t.Errorf("deleted allocation: %v", err)
	}

	// Drivers and conductors.
	dAll, err := drivers.ListDrivers(client, drivers.ListDriversOpts{Detail: true}).AllPages(ctx)
	if err != nil {
		t.Fatal(err)
	}
	ds, _ := drivers.ExtractDrivers(dAll)
	if len(ds) != 3 || ds[0].Name != "fake-hardware" || ds[0].DefaultPowerInterface != "fake" || len(ds[0].Hosts) != 1 {
		t.Errorf("drivers %+v", ds)
	}
	d, err := drivers.GetDriverDetails(ctx, client, "ipmi").Extract()
	if err != nil || d.DefaultManagementInterface != "ipmitool" {
		t.Errorf("ipmi %+v %v", d, err)
	}
	props, err := drivers.GetDriverProperties(ctx, client, "redfish").Extract()
	if err != nil || (*props)["redfish_address"] == "" {
		t.Errorf("properties %v %v", props, err)
	}
	if err := e.store.RegisterConductor(ctx, &store.Conductor{Hostname: "cond-1", Drivers: []string{"fake-hardware"}}); err != nil {
		t.Fatal(err)
	}
	cAll, err := conductors.List(client, conductors.ListOpts{Detail: true}).AllPages(ctx)
	if err != nil {
		t.Fatal(err)
	}
	cs, _ := conductors.ExtractConductors(cAll)
	if len(cs) != 1 || cs[0].Hostname != "cond-1" || !cs[0].Alive || !slices.Equal(cs[0].Drivers, []string{"fake-hardware"}) {
		t.Errorf("conductors %+v", cs)
	}
}

func TestGophercloud_APIVersions(t *testing.T) {
	ctx := t.Context()
	_, client := gopherEnv(t)
	root := *client
	root.Endpoint = strings.TrimSuffix(client.Endpoint, "v1/")
	all, err := apiversions.List(ctx, &root).Extract()
	if err != nil {
		t.Fatal(err)
	}
	if all.DefaultVersion.Version != "1.115" || all.DefaultVersion.MinVersion != "1.1" || len(all.Versions) != 1 {
		t.Errorf("versions %+v", all)
	}
	v, err := apiversions.Get(ctx, &root, "v1").Extract()
	if err != nil || v.ID != "v1" || v.Version != "1.115" || v.Status != "CURRENT" {
		t.Errorf("v1 %+v %v", v, err)
	}
}

func TestGophercloud_ErrorsCarryIronicFault(t *testing.T) {
	ctx := t.Context()
	_, client := gopherEnv(t)
	_, err := nodes.Get(ctx, client, "8ab8a4cc-2bba-4e1f-9b3e-7ba3ff2d4c11").Extract()
	var ue gophercloud.ErrUnexpectedResponseCode
	if !errors.As(err, &ue) || ue.Actual != 404 {
		t.Fatalf("error %v", err)
	}
	want := `{"error_message": "{\"faultcode\": \"Client\", \"faultstring\": \"Node 8ab8a4cc-2bba-4e1f-9b3e-7ba3ff2d4c11 could not be found.\", \"debuginfo\": null}"}`
	if string(ue.Body) != want {
		t.Errorf("body %s", ue.Body)
	}
}
