package storetest

import (
	"cmp"
	"encoding/json"
	"errors"
	"slices"
	"testing"
	"time"

	gocmp "github.com/google/go-cmp/cmp"
	"github.com/google/uuid"

	"github.com/ferrometal/ferro/internal/baremetal"
	"github.com/ferrometal/ferro/internal/store"
)

var nodeTests = []test{
	{"CreateThenGetByUUIDAndName", testNodeCreateGet},
	{"CreateFillsDefaults", testNodeCreateDefaults},
	{"JSONKeepsNumberTypes", testNodeJSONTypes},
	{"UniqueUUIDNameInstanceUUID", testNodeConflicts},
	{"UnknownNodeIsNotFound", testNodeNotFound},
	{"UpdateKeepsCreatedAtAndReservation", testNodeUpdate},
	{"UpdateFencedByReservation", testNodeUpdateFencedByReservation},
	{"GetPrefersUUIDOverName", testNodeGetPrefersUUID},
	{"DeleteCascades", testNodeDeleteCascades},
	{"ListFilters", testNodeListFilters},
	{"ListSearchAndProject", testNodeListSearchProject},
	{"ListSortsAndPages", testNodeListPaging},
	{"ListRejectsBadPage", testNodeListBadPage},
}

func testNodeCreateGet(t *testing.T, s store.Store) {
	ctx := t.Context()
	started := time.Date(2025, 3, 1, 10, 0, 0, 123456000, time.FixedZone("CET", 3600))
	n := &baremetal.Node{
		UUID:           uuid.NewString(),
		Name:           "node-1",
		Driver:         "ipmi",
		Description:    "rack 4",
		ResourceClass:  "baremetal",
		ConductorGroup: "west",
		Owner:          "proj-a",
		Lessee:         "proj-b",
		Shard:          "s1",
		ParentNode:     "7a5e2b52-5b2c-4e5b-9c07-3a3c1a9b2d10",
		InstanceName:   "web-1",
		Health:         "OK",
		DriverInfo: baremetal.JSON{
			"ipmi_address":  "10.0.0.5",
			"ipmi_password": "secret",
			"ipmi_port":     json.Number("623"),
		},
		DriverInternalInfo:  baremetal.JSON{"inspector_manage_boot": true},
		Properties:          baremetal.JSON{"cpus": json.Number("8"), "cpu_arch": "x86_64"},
		Extra:               baremetal.JSON{"tags": []any{"a", "b"}},
		InstanceInfo:        baremetal.JSON{},
		Interfaces:          map[string]string{"boot": "pxe", "power": "ipmitool", "inspect": "inspector"},
		Traits:              []string{"CUSTOM_GPU"},
		ProvisionState:      "manageable",
		PowerState:          baremetal.PowerOff,
		Maintenance:         true,
		MaintenanceReason:   "fan",
		AutomatedClean:      ptr(false),
		DisablePowerOff:     true,
		InspectionStartedAt: &started,
		Firmware: []baremetal.FirmwareComponent{{Component: "bios", InitialVersion: "1.0", CurrentVersion: "1.1",
			CreatedAt: time.Date(2025, 3, 1, 9, 0, 0, 0, time.UTC)}},
	}
	createNode(t, s, n)
	if n.InspectionStartedAt.Location() != time.UTC {
		t.Errorf("CreateNode left inspection_started_at in %v, want UTC", n.InspectionStartedAt.Location())
	}
	want := *n
	want.NetworkData, want.TargetRAIDConfig, want.RAIDConfig = baremetal.JSON{}, baremetal.JSON{}, baremetal.JSON{}
	want.CleanStep, want.DeployStep, want.ServiceStep = baremetal.JSON{}, baremetal.JSON{}, baremetal.JSON{}
	for _, ident := range []string{n.UUID, n.Name} {
		got, err := s.GetNode(ctx, ident)
		if err != nil {
			t.Fatalf("GetNode(%s): %v", ident, err)
		}
		if diff := gocmp.Diff(&want, got); diff != "" {
			t.Errorf("GetNode(%s) mismatch (-want +got):\n%s", ident, diff)
		}
	}
}

func testNodeCreateDefaults(t *testing.T, s store.Store) {
	before := time.Now().Add(-time.Second)
	n := &baremetal.Node{Driver: "fake-hardware", ProvisionState: "enroll"}
	createNode(t, s, n)
	if _, err := uuid.Parse(n.UUID); err != nil {
		t.Errorf("CreateNode gave UUID %q: %v", n.UUID, err)
	}
	if n.CreatedAt.Before(before) || n.CreatedAt.After(time.Now().Add(time.Second)) {
		t.Errorf("CreatedAt = %v, want about now", n.CreatedAt)
	}
	got, err := s.GetNode(t.Context(), n.UUID)
	if err != nil {
		t.Fatal(err)
	}
	if !got.CreatedAt.Equal(n.CreatedAt) {
		t.Errorf("stored CreatedAt %v, CreateNode set %v", got.CreatedAt, n.CreatedAt)
	}
	if got.UpdatedAt != nil {
		t.Errorf("UpdatedAt = %v, want nil before any update", got.UpdatedAt)
	}
	for name, m := range map[string]baremetal.JSON{
		"driver_info": got.DriverInfo, "driver_internal_info": got.DriverInternalInfo,
		"properties": got.Properties, "extra": got.Extra, "instance_info": got.InstanceInfo,
		"network_data": got.NetworkData, "target_raid_config": got.TargetRAIDConfig,
		"raid_config": got.RAIDConfig, "clean_step": got.CleanStep, "deploy_step": got.DeployStep,
	} {
		if m == nil {
			t.Errorf("%s is nil, want an empty object", name)
		}
	}
	if got.Traits == nil || got.Interfaces == nil {
		t.Errorf("traits %v, interfaces %v: want empty, not nil", got.Traits, got.Interfaces)
	}
	b, _ := json.Marshal(got)
	var m map[string]any
	json.Unmarshal(b, &m)
	if string(mustJSON(t, m["driver_info"])) != "{}" || string(mustJSON(t, m["traits"])) != "[]" {
		t.Errorf("node JSON has driver_info %s, traits %s; want {} and []", mustJSON(t, m["driver_info"]), mustJSON(t, m["traits"]))
	}
}

func mustJSON(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func testNodeJSONTypes(t *testing.T, s store.Store) {
	n := newNode("json")
	n.Properties = baremetal.JSON{
		"cpus":      4,
		"memory_mb": int64(480103981056),
		"local_gb":  json.Number("18446744073709551617"),
		"ratio":     1.5,
		"flag":      true,
		"none":      nil,
		"nested":    map[string]any{"list": []any{1, "a", false, nil, 2.25}},
		"html":      "<a&b>",
	}
	const odd = "nul\x00 quote\" backslash\\ newline\n emoji \U0001F600 e\u0301 <&>"
	n.DriverInfo = baremetal.JSON{"ipmi_port": 623, "deploy_kernel": "http://x/k?a=1&b=2", "odd": odd}
	n.Description = odd
	createNode(t, s, n)
	got, err := s.GetNode(t.Context(), n.UUID)
	if err != nil {
		t.Fatal(err)
	}
	const want = `{"cpus":4,"flag":true,"html":"\u003ca\u0026b\u003e","local_gb":18446744073709551617,"memory_mb":480103981056,` +
		`"nested":{"list":[1,"a",false,null,2.25]},"none":null,"ratio":1.5}`
	if b := mustJSON(t, got.Properties); string(b) != want {
		t.Errorf("properties round-trip:\n got %s\nwant %s", b, want)
	}
	for key, wantNum := range map[string]json.Number{"cpus": "4", "memory_mb": "480103981056", "ratio": "1.5"} {
		if v, ok := got.Properties[key].(json.Number); !ok || v != wantNum {
			t.Errorf("properties[%s] = %#v, want json.Number(%q)", key, got.Properties[key], wantNum)
		}
	}
	if v, ok := got.DriverInfo["ipmi_port"].(json.Number); !ok || v != "623" {
		t.Errorf("driver_info[ipmi_port] = %#v, want json.Number(623)", got.DriverInfo["ipmi_port"])
	}
	if got.DriverInfo["deploy_kernel"] != "http://x/k?a=1&b=2" {
		t.Errorf("driver_info[deploy_kernel] = %q", got.DriverInfo["deploy_kernel"])
	}
	if got.DriverInfo["odd"] != odd || got.Description != odd {
		t.Errorf("strings with NUL, escapes and emoji came back as %q and %q, want %q", got.DriverInfo["odd"], got.Description, odd)
	}
}

func testNodeConflicts(t *testing.T, s store.Store) {
	ctx := t.Context()
	a := newNode("dup")
	a.InstanceUUID = uuid.NewString()
	createNode(t, s, a)

	sameUUID := newNode("other")
	sameUUID.UUID = a.UUID
	wantErr(t, s.CreateNode(ctx, sameUUID), store.ErrConflict, a.UUID, "already exists")

	wantErr(t, s.CreateNode(ctx, newNode("dup")), store.ErrConflict, `name "dup"`, "already exists")

	sameInstance := newNode("inst")
	sameInstance.InstanceUUID = a.InstanceUUID
	wantErr(t, s.CreateNode(ctx, sameInstance), store.ErrConflict, a.InstanceUUID)

	// Unset names and instance UUIDs never collide.
	createNode(t, s, newNode(""))
	createNode(t, s, newNode(""))

	b := createNode(t, s, newNode("b"))
	b.Name = "dup"
	wantErr(t, s.UpdateNode(ctx, b), store.ErrConflict, `name "dup"`)

	nodes, err := s.ListNodes(ctx, store.NodeFilter{})
	if err != nil {
		t.Fatal(err)
	}
	if got := names(nodes); !slices.Equal(got, []string{"dup", "", "", "b"}) {
		t.Errorf("after conflicts the nodes are %q, want the four created", got)
	}
}

func testNodeNotFound(t *testing.T, s store.Store) {
	ctx := t.Context()
	_, err := s.GetNode(ctx, "missing")
	wantErr(t, err, store.ErrNotFound, "node missing could not be found")
	id := uuid.NewString()
	n := newNode("x")
	n.UUID = id
	wantErr(t, s.UpdateNode(ctx, n), store.ErrNotFound, id)
	wantErr(t, s.DeleteNode(ctx, id), store.ErrNotFound, id)
}

// UpdateNode writes only for the holder of the node's lock as the caller
// read it: a conductor whose lock was taken over, or released, or a
// writer without the lock, changes nothing.
func testNodeUpdateFencedByReservation(t *testing.T, s store.Store) {
	ctx := t.Context()
	n := createNode(t, s, newNode("fenced"))
	stale := *n // read with no lock
	held, err := s.ReserveNode(ctx, n.UUID, "conductor-1")
	if err != nil {
		t.Fatal(err)
	}
	stale.ProvisionState = "manageable"
	wantErr(t, s.UpdateNode(ctx, &stale), store.ErrNodeLocked, "conductor-1")
	// The lock is taken over: released and taken by another conductor.
	if err := s.ReleaseNode(ctx, n.UUID, "conductor-1"); err != nil {
		t.Fatal(err)
	}
	wasHeld := *held
	wasHeld.ProvisionState = "inspect failed"
	wantErr(t, s.UpdateNode(ctx, &wasHeld), store.ErrNodeLocked, "released")
	if _, err := s.ReserveNode(ctx, n.UUID, "conductor-2"); err != nil {
		t.Fatal(err)
	}
	wantErr(t, s.UpdateNode(ctx, &wasHeld), store.ErrNodeLocked, "conductor-2")
	got, err := s.GetNode(ctx, n.UUID)
	if err != nil {
		t.Fatal(err)
	}
	if got.ProvisionState != n.ProvisionState || got.Reservation != "conductor-2" {
		t.Errorf("after fenced updates: %q reserved by %q, want %q reserved by conductor-2", got.ProvisionState, got.Reservation, n.ProvisionState)
	}
	ghost := *n
	ghost.UUID = uuid.NewString()
	wantErr(t, s.UpdateNode(ctx, &ghost), store.ErrNotFound, ghost.UUID)
}

func testNodeUpdate(t *testing.T, s store.Store) {
	ctx := t.Context()
	n := createNode(t, s, newNode("upd"))
	created := n.CreatedAt
	if _, err := s.ReserveNode(ctx, n.UUID, "conductor-1"); err != nil {
		t.Fatal(err)
	}

	n.Name = "renamed"
	n.ProvisionState = "manageable"
	n.Properties = baremetal.JSON{"cpus": json.Number("2")}
	n.Reservation = "conductor-1"              // the lock held: not written, checked
	n.CreatedAt = created.Add(-72 * time.Hour) // not written
	n.InstanceUUID = uuid.NewString()
	if err := s.UpdateNode(ctx, n); err != nil {
		t.Fatal(err)
	}
	if n.UpdatedAt == nil || n.UpdatedAt.Before(created) {
		t.Errorf("UpdateNode set UpdatedAt to %v, want a time after creation %v", n.UpdatedAt, created)
	}
	got, err := s.GetNode(ctx, "renamed")
	if err != nil {
		t.Fatal(err)
	}
	if got.Reservation != "conductor-1" {
		t.Errorf("reservation = %q after update, want it untouched", got.Reservation)
	}
	if !got.CreatedAt.Equal(created) {
		t.Errorf("created_at = %v after update, want %v", got.CreatedAt, created)
	}
	if got.UpdatedAt == nil || !got.UpdatedAt.Equal(*n.UpdatedAt) {
		t.Errorf("stored updated_at %v, UpdateNode set %v", got.UpdatedAt, n.UpdatedAt)
	}
	if got.ProvisionState != "manageable" || got.Properties["cpus"] != json.Number("2") || got.InstanceUUID != n.InstanceUUID {
		t.Errorf("update not stored: %+v", got)
	}
	if _, err := s.GetNode(ctx, "upd"); err == nil {
		t.Errorf("the old name still finds the node")
	}
	// The filter columns follow the update too.
	nodes, err := s.ListNodes(ctx, store.NodeFilter{ProvisionState: []string{"manageable"}, Associated: ptr(true)})
	if err != nil {
		t.Fatal(err)
	}
	if len(nodes) != 1 || nodes[0].UUID != n.UUID {
		t.Errorf("filtering on updated columns found %q", names(nodes))
	}
}

func testNodeGetPrefersUUID(t *testing.T, s store.Store) {
	a := createNode(t, s, newNode(""))
	b := newNode(a.UUID) // a name that is another node's UUID
	createNode(t, s, b)
	got, err := s.GetNode(t.Context(), a.UUID)
	if err != nil {
		t.Fatal(err)
	}
	if got.UUID != a.UUID {
		t.Errorf("GetNode(%s) returned the node named so, not the node with that UUID", a.UUID)
	}
}

func testNodeDeleteCascades(t *testing.T, s store.Store) {
	ctx := t.Context()
	doomed := createNode(t, s, newNode("doomed"))
	kept := createNode(t, s, newNode("kept"))
	for _, n := range []*baremetal.Node{doomed, kept} {
		pg := &baremetal.Portgroup{NodeUUID: n.UUID, Name: "bond-" + n.Name}
		if err := s.CreatePortgroup(ctx, pg); err != nil {
			t.Fatal(err)
		}
		p := newPort(n.UUID, "52:54:00:00:00:0"+map[bool]string{true: "1", false: "2"}[n == doomed])
		p.PortgroupUUID = pg.UUID
		createPort(t, s, p)
		if err := s.AddHistory(ctx, &baremetal.HistoryEvent{NodeUUID: n.UUID, Event: "created", Severity: baremetal.SeverityInfo}); err != nil {
			t.Fatal(err)
		}
		if err := s.SaveInventory(ctx, &baremetal.Inventory{NodeUUID: n.UUID, Inventory: baremetal.JSON{"cpu": "x"}}); err != nil {
			t.Fatal(err)
		}
		if err := s.CreateAllocation(ctx, &baremetal.Allocation{Name: "alloc-" + n.Name, NodeUUID: n.UUID, State: baremetal.AllocationActive}); err != nil {
			t.Fatal(err)
		}
	}

	if err := s.DeleteNode(ctx, doomed.UUID); err != nil {
		t.Fatal(err)
	}
	if _, err := s.GetNode(ctx, doomed.UUID); !isNotFound(err) {
		t.Errorf("GetNode after delete: %v, want not found", err)
	}
	for what, n := range map[string]*baremetal.Node{"deleted": doomed, "kept": kept} {
		want := 0
		if n == kept {
			want = 1
		}
		ports, err := s.ListPorts(ctx, store.PortFilter{NodeUUID: n.UUID})
		if err != nil || len(ports) != want {
			t.Errorf("%s node: %d ports (err %v), want %d", what, len(ports), err, want)
		}
		pgs, err := s.ListPortgroups(ctx, store.PortgroupFilter{NodeUUID: n.UUID})
		if err != nil || len(pgs) != want {
			t.Errorf("%s node: %d portgroups (err %v), want %d", what, len(pgs), err, want)
		}
		hist, err := s.ListHistory(ctx, n.UUID)
		if err != nil || len(hist) != want {
			t.Errorf("%s node: %d history events (err %v), want %d", what, len(hist), err, want)
		}
		allocs, err := s.ListAllocations(ctx, store.AllocationFilter{NodeUUID: n.UUID})
		if err != nil || len(allocs) != want {
			t.Errorf("%s node: %d allocations (err %v), want %d", what, len(allocs), err, want)
		}
		_, err = s.GetInventory(ctx, n.UUID)
		if (err == nil) != (want == 1) {
			t.Errorf("%s node: GetInventory: %v", what, err)
		}
	}
	// The deleted port's address is free again.
	other := createNode(t, s, newNode("other"))
	createPort(t, s, newPort(other.UUID, "52:54:00:00:00:01"))
	wantErr(t, s.DeleteNode(ctx, doomed.UUID), store.ErrNotFound, doomed.UUID)
}

func isNotFound(err error) bool { return err != nil && errors.Is(err, store.ErrNotFound) }

func testNodeListFilters(t *testing.T, s store.Store) {
	ctx := t.Context()
	mk := func(name string, edit func(n *baremetal.Node)) {
		n := newNode(name)
		edit(n)
		createNode(t, s, n)
	}
	inst := uuid.NewString()
	mk("a", func(n *baremetal.Node) { n.ProvisionState = "manageable"; n.Maintenance = true; n.Owner = "o1" })
	mk("b", func(n *baremetal.Node) {
		n.ProvisionState = "available"
		n.Driver = "ipmi"
		n.InstanceUUID = inst
		n.ResourceClass = "gold"
		n.Lessee = "l1"
	})
	mk("c", func(n *baremetal.Node) {
		n.Driver = "redfish"
		n.ConductorGroup = "east"
		n.Fault = "power failure"
		n.Retired = true
		n.Shard = "s1"
	})
	mk("d", func(n *baremetal.Node) {
		n.Driver = "ipmi"
		n.Shard = "s2"
		n.Owner = "o1"
		n.Maintenance = true
		n.ParentNode = "parent-1"
	})
	for _, r := range []struct{ node, holder string }{{"a", "h1"}, {"c", "h2"}} {
		if _, err := s.ReserveNode(ctx, r.node, r.holder); err != nil {
			t.Fatal(err)
		}
	}
	all, err := s.ListNodes(ctx, store.NodeFilter{})
	if err != nil {
		t.Fatal(err)
	}
	nameOf, groupOf, uuids := map[string]string{}, map[string]string{}, map[string]string{}
	for _, n := range all {
		nameOf[n.UUID], groupOf[n.UUID], uuids[n.Name] = n.Name, n.ConductorGroup, n.UUID
	}
	uuidOf := func(name string) string { return uuids[name] }

	tests := []struct {
		name string
		f    store.NodeFilter
		want []string
	}{
		{"none", store.NodeFilter{}, []string{"a", "b", "c", "d"}},
		{"provision state", store.NodeFilter{ProvisionState: []string{"manageable", "available"}}, []string{"a", "b"}},
		{"driver", store.NodeFilter{Driver: "ipmi"}, []string{"b", "d"}},
		{"maintenance", store.NodeFilter{Maintenance: ptr(true)}, []string{"a", "d"}},
		{"not maintenance", store.NodeFilter{Maintenance: ptr(false)}, []string{"b", "c"}},
		{"associated", store.NodeFilter{Associated: ptr(true)}, []string{"b"}},
		{"not associated", store.NodeFilter{Associated: ptr(false)}, []string{"a", "c", "d"}},
		{"resource class", store.NodeFilter{ResourceClass: "gold"}, []string{"b"}},
		{"conductor group", store.NodeFilter{ConductorGroup: ptr("east")}, []string{"c"}},
		{"default conductor group", store.NodeFilter{ConductorGroup: ptr("")}, []string{"a", "b", "d"}},
		{"fault", store.NodeFilter{Fault: "power failure"}, []string{"c"}},
		{"owner", store.NodeFilter{Owner: "o1"}, []string{"a", "d"}},
		{"lessee", store.NodeFilter{Lessee: "l1"}, []string{"b"}},
		{"instance uuid", store.NodeFilter{InstanceUUID: inst}, []string{"b"}},
		{"reserved", store.NodeFilter{Reserved: ptr(true)}, []string{"a", "c"}},
		{"not reserved", store.NodeFilter{Reserved: ptr(false)}, []string{"b", "d"}},
		{"reserved by", store.NodeFilter{ReservedBy: "h2"}, []string{"c"}},
		{"retired", store.NodeFilter{Retired: ptr(true)}, []string{"c"}},
		{"not retired", store.NodeFilter{Retired: ptr(false)}, []string{"a", "b", "d"}},
		{"shard", store.NodeFilter{Shard: []string{"s1", "s2"}}, []string{"c", "d"}},
		{"parent node", store.NodeFilter{ParentNode: ptr("parent-1")}, []string{"d"}},
		{"no parent", store.NodeFilter{ParentNode: ptr("")}, []string{"a", "b", "c"}},
		{"combined", store.NodeFilter{Driver: "ipmi", Maintenance: ptr(true), Owner: "o1"}, []string{"d"}},
		{"nothing matches", store.NodeFilter{Driver: "ipmi", Retired: ptr(true)}, []string{}},
		{"filter and limit", store.NodeFilter{Driver: "ipmi", Page: store.Page{Limit: 1}}, []string{"b"}},
		{"uuids", store.NodeFilter{UUIDs: []string{uuidOf("a"), uuidOf("d"), uuid.NewString()}}, []string{"a", "d"}},
		{"uuids and a filter", store.NodeFilter{UUIDs: []string{uuidOf("a"), uuidOf("b")}, Maintenance: ptr(false)}, []string{"b"}},
	}
	// ListNodeRefs selects as ListNodes does, without the bodies, in any
	// order and ignoring the page; the power sync's filter among them.
	for _, tc := range append(tests[:len(tests):len(tests)], struct {
		name string
		f    store.NodeFilter
		want []string
	}{"power sync", store.NodeFilter{ProvisionState: []string{"manageable", "available", "enroll"}, Maintenance: ptr(false), Reserved: ptr(false)}, []string{"b"}}) {
		refs, err := s.ListNodeRefs(ctx, tc.f)
		if err != nil {
			t.Errorf("refs, %s: %v", tc.name, err)
			continue
		}
		want := tc.want
		if tc.f.Limit > 0 {
			want = []string{"b", "d"} // the page is ignored
		}
		var got []string
		for _, r := range refs {
			got = append(got, nameOf[r.UUID])
			if r.ConductorGroup != groupOf[r.UUID] {
				t.Errorf("refs, %s: node %s in group %q, want %q", tc.name, nameOf[r.UUID], r.ConductorGroup, groupOf[r.UUID])
			}
		}
		slices.Sort(got)
		if !slices.Equal(got, want) {
			t.Errorf("refs, %s: got %q, want %q", tc.name, got, want)
		}
	}
	for _, tc := range tests {
		got, err := s.ListNodes(ctx, tc.f)
		if err != nil {
			t.Errorf("%s: %v", tc.name, err)
			continue
		}
		if got == nil {
			t.Errorf("%s: nil slice, want empty", tc.name)
		}
		if !slices.Equal(names(got), tc.want) {
			t.Errorf("%s: got %q, want %q", tc.name, names(got), tc.want)
		}
	}

	// An update moves a node under a parent: the column follows the body.
	c, err := s.GetNode(ctx, "c")
	if err != nil {
		t.Fatal(err)
	}
	c.ParentNode = "parent-1"
	if err := s.UpdateNode(ctx, c); err != nil {
		t.Fatal(err)
	}
	got, err := s.ListNodes(ctx, store.NodeFilter{ParentNode: ptr("parent-1")})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(names(got), []string{"c", "d"}) {
		t.Errorf("parent node after update: got %q, want [c d]", names(got))
	}
}

// testNodeListPaging checks every sort key in both directions: the full
// list is in key order with ties in creation order, and walking it in pages
// with markers gives the same list.
func testNodeListPaging(t *testing.T, s store.Store) {
	ctx := t.Context()
	states := []string{"enroll", "manageable", "available"}
	drivers := []string{"ipmi", "redfish"}
	var created []*baremetal.Node
	for i := range 11 {
		name := ""
		if i%4 != 3 { // some nodes have no name
			name = string(rune('k' - i)) // names in reverse creation order
		}
		n := newNode(name)
		n.ProvisionState = states[i%len(states)]
		n.Driver = drivers[i%len(drivers)]
		created = append(created, createNode(t, s, n))
	}
	// Update some nodes, not in creation order, so updated_at differs from
	// created_at order and some are NULL.
	for _, i := range []int{7, 2, 9, 0} {
		if err := s.UpdateNode(ctx, created[i]); err != nil {
			t.Fatal(err)
		}
	}

	keys := map[string]func(a, b *baremetal.Node) int{
		"id":              func(a, b *baremetal.Node) int { return 0 },
		"created_at":      func(a, b *baremetal.Node) int { return a.CreatedAt.Compare(b.CreatedAt) },
		"updated_at":      func(a, b *baremetal.Node) int { return cmpTimePtr(a.UpdatedAt, b.UpdatedAt) },
		"uuid":            func(a, b *baremetal.Node) int { return cmp.Compare(a.UUID, b.UUID) },
		"name":            func(a, b *baremetal.Node) int { return cmp.Compare(a.Name, b.Name) },
		"provision_state": func(a, b *baremetal.Node) int { return cmp.Compare(a.ProvisionState, b.ProvisionState) },
		"driver":          func(a, b *baremetal.Node) int { return cmp.Compare(a.Driver, b.Driver) },
	}
	uuidOf := func(n *baremetal.Node) string { return n.UUID }
	for key, compare := range keys {
		asc := slices.Clone(created)
		slices.SortStableFunc(asc, compare) // ties stay in creation (id) order
		for _, dir := range []string{"asc", "desc"} {
			want := make([]string, len(asc))
			for i, n := range asc {
				want[i] = n.UUID
			}
			if dir == "desc" {
				slices.Reverse(want)
			}
			list := func(p store.Page) ([]*baremetal.Node, error) {
				return s.ListNodes(ctx, store.NodeFilter{Page: p})
			}
			p := store.Page{SortKey: key, SortDir: dir}
			all, err := list(p)
			if err != nil {
				t.Fatalf("sort by %s %s: %v", key, dir, err)
			}
			got := make([]string, len(all))
			for i, n := range all {
				got[i] = n.UUID
			}
			if !slices.Equal(got, want) {
				t.Errorf("sort by %s %s:\n got %v\nwant %v", key, dir, got, want)
			}
			for _, limit := range []int{1, 3, 11, 20} {
				checkPaging(t, list, p, limit, uuidOf, want)
			}
		}
	}

	// The default order is creation order, and a page starts after its marker.
	nodes, err := s.ListNodes(ctx, store.NodeFilter{Page: store.Page{Limit: 2, Marker: created[4].UUID}})
	if err != nil {
		t.Fatal(err)
	}
	if len(nodes) != 2 || nodes[0].UUID != created[5].UUID || nodes[1].UUID != created[6].UUID {
		t.Errorf("page after node 4 is %v, want nodes 5 and 6", nodes)
	}
	// A page after the last item is empty, not an error.
	nodes, err = s.ListNodes(ctx, store.NodeFilter{Page: store.Page{Marker: created[10].UUID}})
	if err != nil || len(nodes) != 0 {
		t.Errorf("page after the last node: %d nodes, error %v; want none", len(nodes), err)
	}
}

func cmpTimePtr(a, b *time.Time) int {
	switch {
	case a == nil && b == nil:
		return 0
	case a == nil:
		return -1
	case b == nil:
		return 1
	}
	return a.Compare(*b)
}

func testNodeListBadPage(t *testing.T, s store.Store) {
	ctx := t.Context()
	createNode(t, s, newNode("n"))
	_, err := s.ListNodes(ctx, store.NodeFilter{Page: store.Page{SortKey: "body; DROP TABLE nodes"}})
	wantErr(t, err, store.ErrInvalidInput, "sort")
	_, err = s.ListNodes(ctx, store.NodeFilter{Page: store.Page{SortKey: "name", SortDir: "sideways"}})
	wantErr(t, err, store.ErrInvalidInput, "sideways")
	_, err = s.ListNodes(ctx, store.NodeFilter{Page: store.Page{Limit: -1}})
	wantErr(t, err, store.ErrInvalidInput, "limit")
	missing := uuid.NewString()
	_, err = s.ListNodes(ctx, store.NodeFilter{Page: store.Page{Marker: missing, Limit: 10}})
	wantErr(t, err, store.ErrNotFound, "marker", missing)
	// Upper case works too.
	if _, err := s.ListNodes(ctx, store.NodeFilter{Page: store.Page{SortKey: "name", SortDir: "DESC"}}); err != nil {
		t.Errorf("sort direction DESC: %v", err)
	}
}

func testNodeListSearchProject(t *testing.T, s store.Store) {
	ctx := t.Context()
	a := newNode("Rack1-Node_7")
	a.Owner = "p1"
	b := newNode("rack1-node17")
	b.Lessee = "p1"
	c := newNode("other%")
	createNode(t, s, a)
	createNode(t, s, b)
	createNode(t, s, c)
	names := func(f store.NodeFilter) []string {
		t.Helper()
		nodes, err := s.ListNodes(ctx, f)
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, n := range nodes {
			out = append(out, n.Name)
		}
		slices.Sort(out)
		return out
	}
	for _, tc := range []struct {
		f    store.NodeFilter
		want []string
	}{
		{store.NodeFilter{Search: "RACK1"}, []string{"Rack1-Node_7", "rack1-node17"}},
		{store.NodeFilter{Search: "node_7"}, []string{"Rack1-Node_7"}}, // _ is no wildcard
		{store.NodeFilter{Search: "%"}, []string{"other%"}},
		{store.NodeFilter{Search: a.UUID[:8]}, []string{"Rack1-Node_7"}},
		{store.NodeFilter{Project: "p1"}, []string{"Rack1-Node_7", "rack1-node17"}},
		{store.NodeFilter{Project: "p1", Search: "node17"}, []string{"rack1-node17"}},
	} {
		if diff := gocmp.Diff(tc.want, names(tc.f)); diff != "" {
			t.Errorf("ListNodes(%+v) (-want +got):\n%s", tc.f, diff)
		}
	}
}
