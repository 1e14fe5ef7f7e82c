package storetest

import (
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"strconv"
	"testing"
	"time"

	gocmp "github.com/google/go-cmp/cmp"
	"github.com/google/uuid"

	"github.com/ferrometal/ferro/internal/baremetal"
	"github.com/ferrometal/ferro/internal/store"
)

var allocationTests = []test{
	{"CRUDByUUIDOrName", testAllocationCRUD},
	{"ListFiltersAndPages", testAllocationList},
}

var historyTests = []test{
	{"OldestFirstPerNode", testHistory},
}

var inventoryTests = []test{
	{"SaveReplacesAndKeepsNumbers", testInventory},
	{"HistoryKeepsTheNewestPrevious", testInventoryHistory},
}

var conductorTests = []test{
	{"RegisterHeartbeatUnregister", testConductors},
}

var introspectionTests = []test{
	{"SaveAndGet", testIntrospectionSaveGet},
	{"ListNewestFirstFiltersAndPages", testIntrospectionList},
	{"Data", testIntrospectionData},
	{"SaveFromIsACompareAndSwap", testIntrospectionSaveFrom},
	{"LookupByMACAndBMC", testIntrospectionLookup},
}

var ruleTests = []test{
	{"CRUDKeepsBodyBytes", testRules},
}

func testAllocationCRUD(t *testing.T, s store.Store) {
	ctx := t.Context()
	n := createNode(t, s, newNode("n"))
	a := &baremetal.Allocation{
		Name:          "alloc-1",
		ResourceClass: "gold",
		State:         baremetal.AllocationAllocating,
		Owner:         "proj",
	}
	if err := s.CreateAllocation(ctx, a); err != nil {
		t.Fatal(err)
	}
	want := *a
	want.Traits, want.CandidateNodes, want.Extra = []string{}, []string{}, baremetal.JSON{}
	for _, ident := range []string{a.UUID, "alloc-1"} {
		got, err := s.GetAllocation(ctx, ident)
		if err != nil {
			t.Fatalf("GetAllocation(%s): %v", ident, err)
		}
		if diff := gocmp.Diff(&want, got); diff != "" {
			t.Errorf("GetAllocation(%s) mismatch (-want +got):\n%s", ident, diff)
		}
	}
	wantErr(t, s.CreateAllocation(ctx, &baremetal.Allocation{Name: "alloc-1"}), store.ErrConflict, `name "alloc-1"`)

	a.NodeUUID = n.UUID
	a.State = baremetal.AllocationActive
	a.Traits = []string{"CUSTOM_A"}
	if err := s.UpdateAllocation(ctx, a); err != nil {
		t.Fatal(err)
	}
	got, err := s.GetAllocation(ctx, a.UUID)
	if err != nil {
		t.Fatal(err)
	}
	want = *a
	want.CandidateNodes, want.Extra = []string{}, baremetal.JSON{}
	if diff := gocmp.Diff(&want, got); diff != "" || got.UpdatedAt == nil {
		t.Errorf("updated allocation mismatch (-want +got):\n%s", diff)
	}
	if err := s.DeleteAllocation(ctx, a.UUID); err != nil {
		t.Fatal(err)
	}
	_, err = s.GetAllocation(ctx, "alloc-1")
	wantErr(t, err, store.ErrNotFound, "allocation alloc-1 could not be found")
	wantErr(t, s.DeleteAllocation(ctx, a.UUID), store.ErrNotFound, a.UUID)
	wantErr(t, s.UpdateAllocation(ctx, a), store.ErrNotFound, a.UUID)
}

func testAllocationList(t *testing.T, s store.Store) {
	ctx := t.Context()
	n := createNode(t, s, newNode("n"))
	var uuids []string
	for i, a := range []*baremetal.Allocation{
		{Name: "b", ResourceClass: "gold", State: baremetal.AllocationActive, NodeUUID: n.UUID},
		{Name: "a", ResourceClass: "gold", State: baremetal.AllocationError, Owner: "p"},
		{ResourceClass: "silver", State: baremetal.AllocationAllocating, Owner: "p"},
	} {
		if err := s.CreateAllocation(ctx, a); err != nil {
			t.Fatalf("allocation %d: %v", i, err)
		}
		uuids = append(uuids, a.UUID)
	}
	tests := []struct {
		name string
		f    store.AllocationFilter
		want []string
	}{
		{"none", store.AllocationFilter{}, uuids},
		{"node", store.AllocationFilter{NodeUUID: n.UUID}, uuids[:1]},
		{"resource class", store.AllocationFilter{ResourceClass: "gold"}, uuids[:2]},
		{"state", store.AllocationFilter{State: baremetal.AllocationAllocating}, uuids[2:]},
		{"owner", store.AllocationFilter{Owner: "p"}, uuids[1:]},
		{"by name", store.AllocationFilter{Page: store.Page{SortKey: "name"}}, []string{uuids[2], uuids[1], uuids[0]}},
		{"by state desc", store.AllocationFilter{Page: store.Page{SortKey: "state", SortDir: "desc"}}, []string{uuids[1], uuids[2], uuids[0]}},
	}
	for _, tc := range tests {
		got, err := s.ListAllocations(ctx, tc.f)
		if err != nil {
			t.Errorf("%s: %v", tc.name, err)
			continue
		}
		var ids []string
		for _, a := range got {
			ids = append(ids, a.UUID)
		}
		if !slices.Equal(ids, tc.want) {
			t.Errorf("%s: got %v, want %v", tc.name, ids, tc.want)
		}
	}
	list := func(p store.Page) ([]*baremetal.Allocation, error) {
		return s.ListAllocations(ctx, store.AllocationFilter{Page: p})
	}
	checkPaging(t, list, store.Page{SortKey: "name", SortDir: "desc"}, 1,
		func(a *baremetal.Allocation) string { return a.UUID }, []string{uuids[0], uuids[1], uuids[2]})
}

func testHistory(t *testing.T, s store.Store) {
	ctx := t.Context()
	n := createNode(t, s, newNode("n"))
	other := createNode(t, s, newNode("other"))
	base := time.Now().UTC().Truncate(time.Second)
	var added []*baremetal.HistoryEvent
	for i, offset := range []time.Duration{2 * time.Second, 0, time.Second} {
		e := &baremetal.HistoryEvent{
			NodeUUID:  n.UUID,
			Conductor: "c1",
			Event:     "event " + string(rune('a'+i)),
			EventType: "provisioning",
			Severity:  baremetal.SeverityError,
			CreatedAt: base.Add(offset),
		}
		if err := s.AddHistory(ctx, e); err != nil {
			t.Fatal(err)
		}
		if _, err := uuid.Parse(e.UUID); err != nil {
			t.Errorf("AddHistory gave UUID %q", e.UUID)
		}
		added = append(added, e)
	}
	if err := s.AddHistory(ctx, &baremetal.HistoryEvent{NodeUUID: other.UUID, Event: "other"}); err != nil {
		t.Fatal(err)
	}
	got, err := s.ListHistory(ctx, n.UUID)
	if err != nil {
		t.Fatal(err)
	}
	want := []*baremetal.HistoryEvent{added[1], added[2], added[0]}
	if diff := gocmp.Diff(want, got); diff != "" {
		t.Errorf("ListHistory mismatch (-want +got):\n%s", diff)
	}
	none, err := s.ListHistory(ctx, uuid.NewString())
	if err != nil || none == nil || len(none) != 0 {
		t.Errorf("history of an unknown node: %v, %v; want empty", none, err)
	}
	missing := uuid.NewString()
	wantErr(t, s.AddHistory(ctx, &baremetal.HistoryEvent{NodeUUID: missing, Event: "x"}), store.ErrNotFound, missing)
}

func testInventory(t *testing.T, s store.Store) {
	ctx := t.Context()
	n := createNode(t, s, newNode("n"))
	inv := &baremetal.Inventory{
		NodeUUID: n.UUID,
		Inventory: baremetal.JSON{
			"memory": map[string]any{"physical_mb": json.Number("65536"), "total": json.Number("68719476736")},
			"disks":  []any{map[string]any{"name": "/dev/sda", "size": json.Number("480103981056")}},
		},
		PluginData: baremetal.JSON{"lldp_raw": map[string]any{}},
	}
	if err := s.SaveInventory(ctx, inv); err != nil {
		t.Fatal(err)
	}
	got, err := s.GetInventory(ctx, n.UUID)
	if err != nil {
		t.Fatal(err)
	}
	if diff := gocmp.Diff(inv, got); diff != "" {
		t.Errorf("GetInventory mismatch (-want +got):\n%s", diff)
	}
	replaced := &baremetal.Inventory{NodeUUID: n.UUID, Inventory: baremetal.JSON{"cpu": map[string]any{"count": json.Number("4")}}}
	if err := s.SaveInventory(ctx, replaced); err != nil {
		t.Fatal(err)
	}
	got, err = s.GetInventory(ctx, n.UUID)
	if err != nil {
		t.Fatal(err)
	}
	replaced.PluginData = baremetal.JSON{}
	if diff := gocmp.Diff(replaced, got); diff != "" {
		t.Errorf("replaced inventory mismatch (-want +got):\n%s", diff)
	}
	other := uuid.NewString()
	_, err = s.GetInventory(ctx, other)
	wantErr(t, err, store.ErrNotFound, other)
	wantErr(t, s.SaveInventory(ctx, &baremetal.Inventory{NodeUUID: other}), store.ErrNotFound, other)
}

func testConductors(t *testing.T, s store.Store) {
	ctx := t.Context()
	start := time.Now().Add(-time.Second)
	c1 := &store.Conductor{Hostname: "c1", Group: "west", Drivers: []string{"ipmi", "redfish"}}
	c2 := &store.Conductor{Hostname: "c2", APIOnly: true}
	for _, c := range []*store.Conductor{c2, c1} {
		if err := s.RegisterConductor(ctx, c); err != nil {
			t.Fatal(err)
		}
	}
	got, err := s.ListConductors(ctx, start)
	if err != nil {
		t.Fatal(err)
	}
	c2.Drivers = []string{}
	if diff := gocmp.Diff([]*store.Conductor{c1, c2}, got); diff != "" {
		t.Errorf("ListConductors mismatch (-want +got):\n%s", diff)
	}
	for _, c := range got {
		if !c.Online || c.LastHeartbeat.Before(start) || c.CreatedAt.IsZero() {
			t.Errorf("conductor %s: online %v, heartbeat %v, created %v", c.Hostname, c.Online, c.LastHeartbeat, c.CreatedAt)
		}
	}
	if got, err := s.ListConductors(ctx, time.Now().Add(time.Hour)); err != nil || len(got) != 0 {
		t.Errorf("conductors alive in an hour: %v, %v; want none", got, err)
	}

	// A heartbeat keeps a conductor alive past a deadline its registration missed.
	time.Sleep(5 * time.Millisecond)
	deadline := time.Now()
	time.Sleep(5 * time.Millisecond)
	if err := s.HeartbeatConductor(ctx, "c1"); err != nil {
		t.Fatal(err)
	}
	got, err = s.ListConductors(ctx, deadline)
	if err != nil || len(got) != 1 || got[0].Hostname != "c1" {
		t.Errorf("after c1's heartbeat, alive since then: %v, %v; want c1", got, err)
	}
	wantErr(t, s.HeartbeatConductor(ctx, "c9"), store.ErrNotFound, "c9")

	if err := s.UnregisterConductor(ctx, "c1"); err != nil {
		t.Fatal(err)
	}
	got, err = s.ListConductors(ctx, start)
	if err != nil || len(got) != 1 || got[0].Hostname != "c2" {
		t.Errorf("after unregistering c1: %v, %v; want c2", got, err)
	}
	wantErr(t, s.UnregisterConductor(ctx, "c9"), store.ErrNotFound, "c9")

	// Registering again (a restart) brings it back and keeps its creation time.
	again := &store.Conductor{Hostname: "c1", Group: "east"}
	if err := s.RegisterConductor(ctx, again); err != nil {
		t.Fatal(err)
	}
	if !again.CreatedAt.Equal(c1.CreatedAt) {
		t.Errorf("re-registered conductor created at %v, want the first registration %v", again.CreatedAt, c1.CreatedAt)
	}
	got, err = s.ListConductors(ctx, start)
	if err != nil || len(got) != 2 || got[0].Group != "east" || got[0].APIOnly || !got[1].APIOnly {
		t.Errorf("after registering c1 again: %+v, %v", got, err)
	}
}

func testIntrospectionSaveGet(t *testing.T, s store.Store) {
	ctx := t.Context()
	node := uuid.NewString() // introspections need no node in this store
	in := &store.Introspection{
		NodeUUID:   node,
		State:      "waiting",
		ManageBoot: true,
		TokenHash:  []byte{0x00, 0xff, 0x10, 0x80},
		LookupMACs: []string{"52:54:00:00:00:01"},
		LookupBMC:  []string{"10.0.0.5"},
	}
	if err := s.SaveIntrospection(ctx, in); err != nil {
		t.Fatal(err)
	}
	if in.StartedAt.IsZero() || in.UpdatedAt.IsZero() {
		t.Errorf("SaveIntrospection left started_at %v, updated_at %v", in.StartedAt, in.UpdatedAt)
	}
	got, err := s.GetIntrospection(ctx, node)
	if err != nil {
		t.Fatal(err)
	}
	if diff := gocmp.Diff(in, got); diff != "" {
		t.Errorf("GetIntrospection mismatch (-want +got):\n%s", diff)
	}

	finished := time.Now()
	in.State, in.Error, in.FinishedAt = "error", "timeout", &finished
	if err := s.SaveIntrospection(ctx, in); err != nil {
		t.Fatal(err)
	}
	got, err = s.GetIntrospection(ctx, node)
	if err != nil {
		t.Fatal(err)
	}
	if diff := gocmp.Diff(in, got); diff != "" {
		t.Errorf("GetIntrospection after update mismatch (-want +got):\n%s", diff)
	}
	other := uuid.NewString()
	_, err = s.GetIntrospection(ctx, other)
	wantErr(t, err, store.ErrNotFound, other)
}

func testIntrospectionList(t *testing.T, s store.Store) {
	ctx := t.Context()
	base := time.Now().UTC().Add(-time.Hour)
	var nodes []string
	for i, state := range []string{"finished", "waiting", "error", "waiting"} {
		in := &store.Introspection{NodeUUID: uuid.NewString(), State: state, StartedAt: base.Add(time.Duration(i) * time.Minute)}
		if state != "waiting" {
			f := in.StartedAt.Add(30 * time.Second)
			in.FinishedAt = &f
		}
		if err := s.SaveIntrospection(ctx, in); err != nil {
			t.Fatal(err)
		}
		nodes = append(nodes, in.NodeUUID)
	}
	ids := func(ins []*store.Introspection) []string {
		out := []string{}
		for _, in := range ins {
			out = append(out, in.NodeUUID)
		}
		return out
	}
	tests := []struct {
		name string
		f    store.IntrospectionFilter
		want []string
	}{
		{"newest first", store.IntrospectionFilter{}, []string{nodes[3], nodes[2], nodes[1], nodes[0]}},
		{"state", store.IntrospectionFilter{State: []string{"waiting", "error"}}, []string{nodes[3], nodes[2], nodes[1]}},
		{"oldest first", store.IntrospectionFilter{Page: store.Page{SortDir: "asc"}}, nodes},
		{"limit", store.IntrospectionFilter{Page: store.Page{Limit: 1}}, nodes[3:]},
		{"by finished_at, unfinished first", store.IntrospectionFilter{Page: store.Page{SortKey: "finished_at", SortDir: "asc"}},
			[]string{nodes[1], nodes[3], nodes[0], nodes[2]}},
	}
	for _, tc := range tests {
		got, err := s.ListIntrospections(ctx, tc.f)
		if err != nil {
			t.Errorf("%s: %v", tc.name, err)
			continue
		}
		if !slices.Equal(ids(got), tc.want) {
			t.Errorf("%s: got %v, want %v", tc.name, ids(got), tc.want)
		}
	}
	list := func(p store.Page) ([]*store.Introspection, error) {
		return s.ListIntrospections(ctx, store.IntrospectionFilter{Page: p})
	}
	uuidOf := func(in *store.Introspection) string { return in.NodeUUID }
	checkPaging(t, list, store.Page{}, 3, uuidOf, []string{nodes[3], nodes[2], nodes[1], nodes[0]})
	checkPaging(t, list, store.Page{SortKey: "finished_at", SortDir: "desc"}, 1, uuidOf, []string{nodes[2], nodes[0], nodes[3], nodes[1]})
	_, err := s.ListIntrospections(ctx, store.IntrospectionFilter{Page: store.Page{Marker: "nope"}})
	wantErr(t, err, store.ErrNotFound, "marker")
}

func testIntrospectionData(t *testing.T, s store.Store) {
	ctx := t.Context()
	node := uuid.NewString()
	raw := []byte{0x7b, 0x00, 0xff, 0xfe, 0x7d} // not even UTF-8
	processed := []byte(`{"inventory": {"cpu": {"count": 4}}}`)
	in := &store.Introspection{NodeUUID: node, State: "processing"}
	if err := s.SaveIntrospection(ctx, in, store.IntrospectionData{Kind: "raw", Data: raw}); err != nil {
		t.Fatal(err)
	}
	if err := s.SaveIntrospection(ctx, in, store.IntrospectionData{Kind: "processed", Data: []byte("old")}); err != nil {
		t.Fatal(err)
	}
	in.State = "finished"
	if err := s.SaveIntrospection(ctx, in, store.IntrospectionData{Kind: "processed", Data: processed}); err != nil {
		t.Fatal(err)
	}
	for kind, want := range map[string][]byte{"raw": raw, "processed": processed} {
		got, err := s.GetIntrospectionData(ctx, node, kind)
		if err != nil {
			t.Fatal(err)
		}
		if string(got) != string(want) {
			t.Errorf("%s data = %q, want %q", kind, got, want)
		}
	}
	_, err := s.GetIntrospectionData(ctx, uuid.NewString(), "raw")
	wantErr(t, err, store.ErrNotFound, "raw")
}

func testIntrospectionSaveFrom(t *testing.T, s store.Store) {
	ctx := t.Context()
	node := uuid.NewString()
	in := &store.Introspection{NodeUUID: node, State: "waiting", LookupMACs: []string{"52:54:00:aa:bb:01"}}
	if err := s.SaveIntrospection(ctx, in); err != nil {
		t.Fatal(err)
	}
	// Two inspectors read the introspection waiting; the first moves it.
	first, second := *in, *in
	first.State, second.State = "processing", "processing"
	if err := s.SaveIntrospectionFrom(ctx, &first, []string{"starting", "waiting"}, store.IntrospectionData{Kind: "raw", Data: []byte("first")}); err != nil {
		t.Fatal(err)
	}
	before := second
	err := s.SaveIntrospectionFrom(ctx, &second, []string{"starting", "waiting"}, store.IntrospectionData{Kind: "raw", Data: []byte("second")})
	wantErr(t, err, store.ErrConflict, node)
	if !reflect.DeepEqual(second, before) {
		t.Errorf("the losing introspection was changed: %+v, was %+v", second, before)
	}
	got, err := s.GetIntrospection(ctx, node)
	if err != nil || got.State != "processing" || !got.UpdatedAt.Equal(first.UpdatedAt) {
		t.Errorf("introspection = %+v, %v; want the first inspector's", got, err)
	}
	if raw, err := s.GetIntrospectionData(ctx, node, "raw"); err != nil || string(raw) != "first" {
		t.Errorf("raw data = %q, %v; want the first inspector's", raw, err)
	}
	// No introspection at all is no state to move from either.
	err = s.SaveIntrospectionFrom(ctx, &store.Introspection{NodeUUID: uuid.NewString(), State: "processing"}, []string{"waiting"})
	wantErr(t, err, store.ErrConflict)
	err = s.SaveIntrospectionFrom(ctx, &first, nil)
	wantErr(t, err, store.ErrInvalidInput)
}

func testRules(t *testing.T, s store.Store) {
	ctx := t.Context()
	bodies := []string{
		`{"description": "first", "conditions": [{"op": "eq", "field": "memory_mb", "value": 1024}], "actions": []}`,
		`{"z": 1, "a": 2.50}`,
	}
	var rules []*store.Rule
	for i, b := range bodies {
		r := &store.Rule{Description: "rule " + string(rune('0'+i)), Scope: "s", Body: []byte(b)}
		if err := s.CreateRule(ctx, r); err != nil {
			t.Fatal(err)
		}
		if r.UUID == "" || r.CreatedAt.IsZero() {
			t.Errorf("CreateRule left uuid %q, created_at %v", r.UUID, r.CreatedAt)
		}
		rules = append(rules, r)
	}
	got, err := s.GetRule(ctx, rules[1].UUID)
	if err != nil {
		t.Fatal(err)
	}
	if diff := gocmp.Diff(rules[1], got); diff != "" {
		t.Errorf("GetRule mismatch (-want +got):\n%s", diff)
	}
	wantErr(t, s.CreateRule(ctx, &store.Rule{UUID: rules[0].UUID, Body: []byte(`{}`)}), store.ErrConflict, rules[0].UUID)

	all, err := s.ListRules(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if diff := gocmp.Diff(rules, all); diff != "" {
		t.Errorf("ListRules mismatch (-want +got):\n%s", diff)
	}
	if err := s.DeleteRule(ctx, rules[0].UUID); err != nil {
		t.Fatal(err)
	}
	wantErr(t, s.DeleteRule(ctx, rules[0].UUID), store.ErrNotFound, rules[0].UUID)
	_, err = s.GetRule(ctx, rules[0].UUID)
	wantErr(t, err, store.ErrNotFound, rules[0].UUID)
	if err := s.DeleteAllRules(ctx); err != nil {
		t.Fatal(err)
	}
	if all, err := s.ListRules(ctx); err != nil || len(all) != 0 {
		t.Errorf("after DeleteAllRules: %v, %v", all, err)
	}
}

func testIntrospectionLookup(t *testing.T, s store.Store) {
	ctx := t.Context()
	a, b, c := "aaaaaaaa-0000-0000-0000-000000000000", "bbbbbbbb-0000-0000-0000-000000000000", "cccccccc-0000-0000-0000-000000000000"
	finished := time.Now()
	for _, in := range []*store.Introspection{
		{NodeUUID: a, State: "waiting", LookupMACs: []string{"52:54:00:00:00:01", "52:54:00:00:00:02"}, LookupBMC: []string{"10.0.0.1"}},
		{NodeUUID: b, State: "waiting", LookupMACs: []string{"52:54:00:00:00:0A"}, LookupBMC: []string{"10.0.0.1"}},
		{NodeUUID: c, State: "finished", FinishedAt: &finished, LookupMACs: []string{"52:54:00:00:00:01"}},
	} {
		if err := s.SaveIntrospection(ctx, in); err != nil {
			t.Fatal(err)
		}
	}
	tests := []struct {
		name       string
		macs, bmcs []string
		want       []store.IntrospectionMatch
	}{
		{"nothing asked", nil, nil, []store.IntrospectionMatch{}},
		{"no match", []string{"52:54:00:00:00:99"}, []string{"10.9.9.9"}, []store.IntrospectionMatch{}},
		{"macs in any case", []string{"52:54:00:00:00:01", "52:54:00:00:00:02", "52:54:00:00:00:0a"}, nil, []store.IntrospectionMatch{
			{NodeUUID: a, Matches: 2}, {NodeUUID: b, Matches: 1}, {NodeUUID: c, Matches: 1, Finished: true},
		}},
		{"macs and bmc", []string{"52:54:00:00:00:02"}, []string{"10.0.0.1"}, []store.IntrospectionMatch{
			{NodeUUID: a, Matches: 2}, {NodeUUID: b, Matches: 1},
		}},
	}
	for _, tc := range tests {
		got, err := s.LookupIntrospections(ctx, tc.macs, tc.bmcs)
		if err != nil {
			t.Errorf("%s: %v", tc.name, err)
			continue
		}
		if diff := gocmp.Diff(tc.want, got); diff != "" {
			t.Errorf("%s: mismatch (-want +got):\n%s", tc.name, diff)
		}
	}

	// Saving again replaces the lookup attributes.
	in, err := s.GetIntrospection(ctx, a)
	if err != nil {
		t.Fatal(err)
	}
	in.LookupMACs, in.LookupBMC = []string{"52:54:00:00:00:03"}, nil
	if err := s.SaveIntrospection(ctx, in); err != nil {
		t.Fatal(err)
	}
	got, err := s.LookupIntrospections(ctx, []string{"52:54:00:00:00:01", "52:54:00:00:00:03"}, []string{"10.0.0.1"})
	if err != nil {
		t.Fatal(err)
	}
	want := []store.IntrospectionMatch{{NodeUUID: a, Matches: 1}, {NodeUUID: b, Matches: 1}, {NodeUUID: c, Matches: 1, Finished: true}}
	if diff := gocmp.Diff(want, got); diff != "" {
		t.Errorf("after replacing a's attributes: mismatch (-want +got):\n%s", diff)
	}

	// Saving with the same attributes (in another case) keeps them; saving
	// as many attributes but other ones replaces them.
	for _, step := range []struct {
		name string
		macs []string
		want map[string]int // MAC → matches of a
	}{
		{"state change only", []string{"52:54:00:00:00:03"}, map[string]int{"52:54:00:00:00:03": 1, "52:54:00:00:00:0d": 0}},
		{"another MAC", []string{"52:54:00:00:00:0d"}, map[string]int{"52:54:00:00:00:03": 0, "52:54:00:00:00:0d": 1}},
		{"same MAC in upper case", []string{"52:54:00:00:00:0D"}, map[string]int{"52:54:00:00:00:03": 0, "52:54:00:00:00:0d": 1}},
	} {
		in.State, in.LookupMACs = "processing", step.macs
		if err := s.SaveIntrospection(ctx, in); err != nil {
			t.Fatal(err)
		}
		for mac, n := range step.want {
			got, err := s.LookupIntrospections(ctx, []string{mac}, nil)
			if err != nil {
				t.Fatal(err)
			}
			want := []store.IntrospectionMatch{}
			if n > 0 {
				want = append(want, store.IntrospectionMatch{NodeUUID: a, Matches: n})
			}
			if diff := gocmp.Diff(want, got); diff != "" {
				t.Errorf("%s: lookup of %s: mismatch (-want +got):\n%s", step.name, mac, diff)
			}
		}
	}
}

// keptInventories is the store's default history length
// (sql.DefaultInventoryHistory): the suite opens stores without options.
const keptInventories = 5

func testInventoryHistory(t *testing.T, s store.Store) {
	ctx := t.Context()
	n := createNode(t, s, newNode("n"))
	other := createNode(t, s, newNode("other"))
	if h, err := s.ListInventoryHistory(ctx, n.UUID); err != nil || len(h) != 0 {
		t.Fatalf("history of a node never inspected = %v, %v; want none", h, err)
	}
	save := func(node string, i int) {
		t.Helper()
		inv := &baremetal.Inventory{NodeUUID: node, Inventory: baremetal.JSON{"cpu": map[string]any{"count": json.Number(strconv.Itoa(i))}},
			PluginData: baremetal.JSON{"n": json.Number(strconv.Itoa(i))}}
		if err := s.SaveInventory(ctx, inv); err != nil {
			t.Fatal(err)
		}
	}
	const saves = keptInventories + 3
	for i := 1; i <= saves; i++ {
		save(n.UUID, i)
		if i == 1 {
			save(other.UUID, 100)
		}
	}
	h, err := s.ListInventoryHistory(ctx, n.UUID)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, r := range h {
		got = append(got, fmt.Sprint(r.Inventory.Inventory["cpu"].(map[string]any)["count"], "/", r.PluginData["n"]))
		if r.SavedAt.IsZero() || r.NodeUUID != n.UUID {
			t.Errorf("history record %+v: want its node and when it was saved", r)
		}
	}
	// The current inventory is saves; the history holds the ones before it, newest first.
	var want []string
	for i := saves - 1; i > saves-1-keptInventories; i-- {
		want = append(want, fmt.Sprint(i, "/", i))
	}
	if diff := gocmp.Diff(want, got); diff != "" {
		t.Errorf("inventory history (-want +got):\n%s", diff)
	}
	if h, _ := s.ListInventoryHistory(ctx, other.UUID); len(h) != 0 {
		t.Errorf("another node's history = %d records, want none (it was saved once)", len(h))
	}
	if err := s.DeleteNode(ctx, n.UUID); err != nil {
		t.Fatal(err)
	}
	if h, err := s.ListInventoryHistory(ctx, n.UUID); err != nil || len(h) != 0 {
		t.Errorf("history of a deleted node = %d records, %v; want none", len(h), err)
	}
}
