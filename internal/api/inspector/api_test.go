package inspector_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/uuid"
	"github.com/gophercloud/gophercloud/v2"
	"github.com/gophercloud/gophercloud/v2/openstack/baremetalintrospection/v1/introspection"
	"go.uber.org/goleak"

	"github.com/ferrometal/ferro/internal/baremetal"
	"github.com/ferrometal/ferro/internal/inspector"
)

const versionHeader = "X-OpenStack-Ironic-Inspector-API-Version"

func TestAPI_VersionNegotiation(t *testing.T) {
	r := newRig(t)
	for _, tc := range []struct {
		requested string
		status    int
		version   string // the negotiated version header; "" when refused
		message   string // the error message when refused
	}{
		{requested: "", status: http.StatusOK, version: "1.18"},
		{requested: "latest", status: http.StatusOK, version: "1.18"},
		{requested: "1.0", status: http.StatusOK, version: "1.0"},
		{requested: "1.12", status: http.StatusOK, version: "1.12"},
		{requested: "1.18", status: http.StatusOK, version: "1.18"},
		{requested: "1.19", status: http.StatusNotAcceptable, message: "Unsupported API version 1.19, supported range is 1.0 to 1.18"},
		{requested: "2.0", status: http.StatusNotAcceptable, message: "Unsupported API version 2.0, supported range is 1.0 to 1.18"},
		{requested: "0.9", status: http.StatusNotAcceptable, message: "Unsupported API version 0.9, supported range is 1.0 to 1.18"},
		{requested: "one.two", status: http.StatusBadRequest, message: "Malformed API version: expected string in form of X.Y or latest"},
	} {
		t.Run(tc.requested, func(t *testing.T) {
			h := http.Header{}
			if tc.requested != "" {
				h.Set(versionHeader, tc.requested)
			}
			resp := r.do(t, http.MethodGet, "/v1/introspection", h, nil)
			if resp.status != tc.status {
				t.Fatalf("status %d, want %d: %s", resp.status, tc.status, resp.body)
			}
			// The supported range is announced on every answer, refusals included.
			if got := resp.header.Get("X-OpenStack-Ironic-Inspector-API-Minimum-Version"); got != "1.0" {
				t.Errorf("minimum version header %q", got)
			}
			if got := resp.header.Get("X-OpenStack-Ironic-Inspector-API-Maximum-Version"); got != "1.18" {
				t.Errorf("maximum version header %q", got)
			}
			if tc.status == http.StatusOK {
				if got := resp.header.Get(versionHeader); got != tc.version {
					t.Errorf("version header %q, want %q", got, tc.version)
				}
				return
			}
			if got := resp.errorMessage(t); got != tc.message {
				t.Errorf("message %q, want %q", got, tc.message)
			}
		})
	}
}

func TestAPI_RootAndV1(t *testing.T) {
	r := newRig(t)
	resp := r.do(t, http.MethodGet, "/", nil, nil)
	var root struct {
		Versions []struct {
			ID     string              `json:"id"`
			Status string              `json:"status"`
			Links  []map[string]string `json:"links"`
		} `json:"versions"`
	}
	if err := json.Unmarshal(resp.body, &root); err != nil || resp.status != http.StatusOK {
		t.Fatalf("GET / = %d %s (%v)", resp.status, resp.body, err)
	}
	want := []map[string]string{{"href": r.srv.URL + "/v1", "rel": "self"}}
	if len(root.Versions) != 1 || root.Versions[0].ID != "1.18" || root.Versions[0].Status != "CURRENT" ||
		!cmp.Equal(root.Versions[0].Links, want) {
		t.Errorf("GET / = %s", resp.body)
	}

	resp = r.do(t, http.MethodGet, "/v1", nil, nil)
	var v1 struct {
		Resources []struct {
			Name  string              `json:"name"`
			Links []map[string]string `json:"links"`
		} `json:"resources"`
	}
	if err := json.Unmarshal(resp.body, &v1); err != nil || resp.status != http.StatusOK {
		t.Fatalf("GET /v1 = %d %s (%v)", resp.status, resp.body, err)
	}
	var names []string
	for _, res := range v1.Resources {
		names = append(names, res.Name)
		if len(res.Links) != 1 || res.Links[0]["href"] != r.srv.URL+"/v1/"+res.Name {
			t.Errorf("resource %s links %v", res.Name, res.Links)
		}
	}
	if diff := cmp.Diff([]string{"introspection", "continue", "rules"}, names); diff != "" {
		t.Errorf("resources (-want +got):\n%s", diff)
	}
}

func TestAPI_UnknownPathAndWrongMethodAreInspectorErrors(t *testing.T) {
	r := newRig(t)
	for _, tc := range []struct {
		method, path string
		status       int
		message      string
	}{
		{http.MethodGet, "/v1/nothing", http.StatusNotFound, "Not Found: /v1/nothing"},
		{http.MethodDelete, "/v1/introspection/abc", http.StatusMethodNotAllowed, "Method DELETE is not allowed for /v1/introspection/abc"},
		{http.MethodGet, "/v1/continue", http.StatusMethodNotAllowed, "Method GET is not allowed for /v1/continue"},
	} {
		resp := r.do(t, tc.method, tc.path, nil, nil)
		if resp.status != tc.status {
			t.Errorf("%s %s = %d, want %d", tc.method, tc.path, resp.status, tc.status)
			continue
		}
		if got := resp.errorMessage(t); got != tc.message {
			t.Errorf("%s %s: message %q, want %q", tc.method, tc.path, got, tc.message)
		}
	}
}

// statusCode returns the HTTP status of a gophercloud error, 0 if none.
func statusCode(err error) int {
	var e gophercloud.ErrUnexpectedResponseCode
	if errors.As(err, &e) {
		return e.Actual
	}
	return 0
}

// gophercloudMessage returns error.message from a gophercloud error's body.
func gophercloudMessage(t *testing.T, err error) string {
	t.Helper()
	var e gophercloud.ErrUnexpectedResponseCode
	if !errors.As(err, &e) {
		t.Fatalf("error %v is not an unexpected response code", err)
	}
	return response{body: e.Body}.errorMessage(t)
}

func TestGophercloud_StartManagedStatusAbort(t *testing.T) {
	ignore := goleak.IgnoreCurrent()
	// Registered first, so it runs after the rig's parts have stopped.
	t.Cleanup(func() { goleak.VerifyNone(t, ignore) })
	r := newRig(t)
	ctx := t.Context()
	n := r.node(t, nodeSpec{name: "n1", macs: []string{"52:54:00:00:00:01"}})

	// gophercloud drops manage_boot, so this is ironic-inspector's default: manage_boot=true.
	if err := introspection.StartIntrospection(ctx, r.client, "n1", introspection.StartOpts{}).ExtractErr(); err != nil {
		t.Fatalf("start: %v", err)
	}
	r.waitIntrospection(t, n.UUID, inspector.StateWaiting)
	// The old path: the inspector set PXE and rebooted the node through the bare metal API.
	// The conductor switches power in a worker, as Ironic's API does.
	r.waitPower(t, n.UUID, baremetal.PowerOn)
	if dev := r.boots.device(n.UUID); dev != baremetal.BootDevicePXE {
		t.Errorf("boot device %q after a managed start, want pxe", dev)
	}

	st, err := introspection.GetIntrospectionStatus(ctx, r.client, n.UUID).Extract()
	if err != nil {
		t.Fatal(err)
	}
	if st.UUID != n.UUID || st.State != "waiting" || st.Finished || st.Error != "" || st.StartedAt.IsZero() || !st.FinishedAt.IsZero() {
		t.Errorf("status %+v", st)
	}
	wantLinks := []any{map[string]any{"href": r.srv.URL + "/v1/introspection/" + n.UUID, "rel": "self"}}
	if diff := cmp.Diff(wantLinks, st.Links); diff != "" {
		t.Errorf("links (-want +got):\n%s", diff)
	}
	// By name too.
	if byName, err := introspection.GetIntrospectionStatus(ctx, r.client, "n1").Extract(); err != nil || byName.UUID != n.UUID {
		t.Errorf("status by name: %+v %v", byName, err)
	}

	if err := introspection.AbortIntrospection(ctx, r.client, n.UUID).ExtractErr(); err != nil {
		t.Fatalf("abort: %v", err)
	}
	st, err = introspection.GetIntrospectionStatus(ctx, r.client, n.UUID).Extract()
	if err != nil {
		t.Fatal(err)
	}
	if st.State != "error" || !st.Finished || st.Error != "Canceled by operator" || st.FinishedAt.IsZero() {
		t.Errorf("status after abort %+v", st)
	}
	// manage_boot: the inspector powers the node off when it ends, even
	// though the reboot it asked for may still hold the node's lock.
	r.waitPower(t, n.UUID, baremetal.PowerOff)

	// As ironic-inspector 11.1: aborting an ended introspection succeeds
	// and changes nothing.
	if err := introspection.AbortIntrospection(ctx, r.client, n.UUID).ExtractErr(); err != nil {
		t.Fatalf("second abort: %v, want 202", err)
	}
	again, err := introspection.GetIntrospectionStatus(ctx, r.client, n.UUID).Extract()
	if err != nil || again.State != st.State || again.Error != st.Error || !again.FinishedAt.Equal(st.FinishedAt) {
		t.Errorf("status after the second abort %+v %v, want %+v", again, err, st)
	}
}

func TestStart_ManageBootFalseOnlyWaits(t *testing.T) {
	r := newRig(t)
	n := r.node(t, nodeSpec{macs: []string{"52:54:00:00:00:01"}})
	// A raw POST: gophercloud v2.16's StartIntrospection builds the
	// manage_boot query and then drops it.
	resp := r.do(t, http.MethodPost, "/v1/introspection/"+n.UUID+"?manage_boot=false", nil, nil)
	if resp.status != http.StatusAccepted || string(resp.body) != "{}" {
		t.Fatalf("start = %d %q, want 202 {} as ironic-inspector", resp.status, resp.body)
	}
	// Synchronous: waiting as soon as the call returned.
	in := r.introspection(t, n.UUID)
	if in == nil || in.State != inspector.StateWaiting || in.ManageBoot || in.TokenHash != nil {
		t.Fatalf("introspection %+v", in)
	}
	if diff := cmp.Diff([]string{"52:54:00:00:00:01"}, in.LookupMACs); diff != "" {
		t.Errorf("lookup MACs (-want +got):\n%s", diff)
	}
	// No power or boot device action, even later.
	time.Sleep(50 * time.Millisecond)
	got := r.getNode(t, n.UUID)
	if got.PowerState != baremetal.PowerOff || r.boots.device(n.UUID) != "" {
		t.Errorf("manage_boot=false touched the node: power %q, boot device %q", got.PowerState, r.boots.device(n.UUID))
	}
	// The token header of the conductor's client is kept as a hash only.
	n2 := r.node(t, nodeSpec{macs: []string{"52:54:00:00:00:02"}})
	r.start(t, n2.UUID, false, "s3cret")
	if in := r.introspection(t, n2.UUID); len(in.TokenHash) != 32 {
		t.Errorf("token hash %x", in.TokenHash)
	}
}

func TestStart_Refusals(t *testing.T) {
	r := newRig(t)
	available := r.node(t, nodeSpec{state: "available", macs: []string{"52:54:00:00:00:01"}})
	bare := r.node(t, nodeSpec{})
	ok := r.node(t, nodeSpec{macs: []string{"52:54:00:00:00:02"}})
	missing := uuid.NewString()
	for _, tc := range []struct {
		name, path string
		status     int
		message    string
	}{
		{"unknown node", "/v1/introspection/" + missing, http.StatusNotFound, "Node " + missing + " was not found"},
		{"wrong state", "/v1/introspection/" + available.UUID, http.StatusBadRequest,
			`Node ` + available.UUID + ` has invalid provision state "available", valid states are enroll, manageable, inspecting, inspect wait, inspect failed`},
		{"no lookup attributes", "/v1/introspection/" + bare.UUID + "?manage_boot=false", http.StatusBadRequest,
			"No lookup attributes were found for node " + bare.UUID + ", inspector won't be able to find it after introspection, consider creating ironic ports or providing an IPMI address"},
		{"bad boolean", "/v1/introspection/" + ok.UUID + "?manage_boot=maybe", http.StatusBadRequest, "Invalid boolean value for manage_boot: maybe"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			resp := r.do(t, http.MethodPost, tc.path, nil, nil)
			if resp.status != tc.status {
				t.Fatalf("status %d, want %d: %s", resp.status, tc.status, resp.body)
			}
			if got := resp.errorMessage(t); got != tc.message {
				t.Errorf("message %q\nwant    %q", got, tc.message)
			}
		})
	}
	for _, n := range []*baremetal.Node{available, bare, ok} {
		if in := r.introspection(t, n.UUID); in != nil {
			t.Errorf("refused start left an introspection for %s: %+v", n.UUID, in)
		}
	}

	// Through gophercloud: a 404 is a 404.
	err := introspection.StartIntrospection(t.Context(), r.client, missing, introspection.StartOpts{}).ExtractErr()
	if statusCode(err) != http.StatusNotFound {
		t.Errorf("gophercloud start of an unknown node: %v", err)
	}
	_, err = introspection.GetIntrospectionStatus(t.Context(), r.client, ok.UUID).Extract()
	if statusCode(err) != http.StatusNotFound || gophercloudMessage(t, err) != "Could not find node "+ok.UUID+" in cache" {
		t.Errorf("status of a node never introspected: %v", err)
	}
}

func TestStart_ManagedBootRefusedWhenInstallationCannotManageBoot(t *testing.T) {
	r := newRig(t, func(o *inspector.Options) { o.CanManageBoot = false })
	n := r.node(t, nodeSpec{macs: []string{"52:54:00:00:00:01"}})
	err := introspection.StartIntrospection(t.Context(), r.client, n.UUID, introspection.StartOpts{}).ExtractErr()
	if statusCode(err) != http.StatusBadRequest {
		t.Fatalf("start: %v, want 400", err)
	}
	if msg := gophercloudMessage(t, err); !strings.Contains(msg, "cannot manage boot") {
		t.Errorf("message %q", msg)
	}
	// manage_boot=false is still fine.
	r.start(t, n.UUID, false, "")
}

func TestGophercloud_ListWithMarkerLimitAndState(t *testing.T) {
	r := newRig(t)
	ctx := t.Context()
	var all []string
	for i := range 5 {
		n := r.node(t, nodeSpec{macs: []string{fmt.Sprintf("52:54:00:00:01:%02x", i)}})
		r.start(t, n.UUID, false, "")
		all = append(all, n.UUID)
		time.Sleep(2 * time.Millisecond) // distinct started_at, so "newest first" is an order
	}
	for _, id := range all[:2] {
		if err := introspection.AbortIntrospection(ctx, r.client, id).ExtractErr(); err != nil {
			t.Fatal(err)
		}
	}
	newestFirst := slices.Clone(all)
	slices.Reverse(newestFirst)

	// Page through with gophercloud: limit 2, marker = the last UUID of the previous page.
	var paged []string
	marker := ""
	for range 10 {
		page, err := introspection.ListIntrospections(r.client, introspection.ListIntrospectionsOpts{Limit: 2, Marker: marker}).AllPages(ctx)
		if err != nil {
			t.Fatal(err)
		}
		ins, err := introspection.ExtractIntrospections(page)
		if err != nil {
			t.Fatal(err)
		}
		if len(ins) > 2 {
			t.Fatalf("page of %d with limit 2", len(ins))
		}
		if len(ins) == 0 {
			break
		}
		for _, in := range ins {
			paged = append(paged, in.UUID)
		}
		marker = ins[len(ins)-1].UUID
	}
	if diff := cmp.Diff(newestFirst, paged); diff != "" {
		t.Errorf("paged list, newest first (-want +got):\n%s", diff)
	}

	listStates := func(query string) []string {
		t.Helper()
		resp := r.do(t, http.MethodGet, "/v1/introspection"+query, nil, nil)
		if resp.status != http.StatusOK {
			t.Fatalf("list %s: %d %s", query, resp.status, resp.body)
		}
		var out struct {
			Introspection []struct {
				UUID  string `json:"uuid"`
				State string `json:"state"`
			} `json:"introspection"`
		}
		if err := json.Unmarshal(resp.body, &out); err != nil {
			t.Fatal(err)
		}
		var ids []string
		for _, in := range out.Introspection {
			ids = append(ids, in.UUID)
		}
		return ids
	}
	if diff := cmp.Diff([]string{all[1], all[0]}, listStates("?state=error")); diff != "" {
		t.Errorf("state=error (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(newestFirst[:3], listStates("?state=waiting")); diff != "" {
		t.Errorf("state=waiting (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(newestFirst, listStates("?state=waiting,error")); diff != "" {
		t.Errorf("state=waiting,error (-want +got):\n%s", diff)
	}
	if got := listStates("?state=finished"); len(got) != 0 {
		t.Errorf("state=finished: %v", got)
	}

	for _, tc := range []struct{ query, message string }{
		// ironic-inspector 11.1's api_tools words.
		{"?limit=-1", `Bad request: Limit cannot be negative`},
		{"?limit=x", `Bad request: invalid literal for int() with base 10: 'x'`},
		{"?limit=1001", `Bad request: Limit over 1000`},
		{"?marker=nope", `Bad request: Marker not UUID-like`},
		{"?marker=", `Bad request: Marker not UUID-like`},
		{"?state=bogus", `Bad request: State(s) "bogus" are not valid`},
		{"?state=waiting,bogus,nope", `Bad request: State(s) "bogus, nope" are not valid`},
	} {
		resp := r.do(t, http.MethodGet, "/v1/introspection"+tc.query, nil, nil)
		if resp.status != http.StatusBadRequest || resp.errorMessage(t) != tc.message {
			t.Errorf("list %s = %d %s, want 400 %q", tc.query, resp.status, resp.body, tc.message)
		}
	}
	unknown := uuid.NewString()
	if resp := r.do(t, http.MethodGet, "/v1/introspection?marker="+unknown, nil, nil); resp.status != http.StatusNotFound ||
		resp.errorMessage(t) != "Node not found for marker: "+unknown {
		t.Errorf("unknown marker = %d %s, want 404 as ironic-inspector", resp.status, resp.body)
	}
}

func TestGophercloud_DataUnprocessedDataAndReapply(t *testing.T) {
	r := newRig(t)
	ctx := t.Context()
	n := r.node(t, nodeSpec{name: "r6515", macs: []string{"3c:fd:fe:11:22:30"}})

	_, err := introspection.GetIntrospectionData(ctx, r.client, n.UUID).Extract()
	if statusCode(err) != http.StatusNotFound {
		t.Errorf("data before any introspection: %v, want 404", err)
	}

	r.start(t, n.UUID, false, "")
	body := referencePayload(t)
	if resp := r.continueReport(t, body, ""); resp.status != http.StatusOK || string(resp.body) != `{"uuid":"`+n.UUID+`"}` {
		t.Fatalf("continue = %d %s", resp.status, resp.body)
	}
	st, err := introspection.GetIntrospectionStatus(ctx, r.client, n.UUID).Extract()
	if err != nil || st.State != "finished" || !st.Finished || st.Error != "" || st.FinishedAt.IsZero() {
		t.Fatalf("status %+v %v", st, err)
	}

	data, err := introspection.GetIntrospectionData(ctx, r.client, "r6515").Extract()
	if err != nil {
		t.Fatalf("data by name: %v", err)
	}
	if data.CPUs != 32 || data.CPUArch != "x86_64" || data.MemoryMB != 131072 || data.LocalGB != 893 ||
		data.BootInterface != "01-3c-fd-fe-11-22-30" || data.IPMIAddress != "198.51.100.121" {
		t.Errorf("processed data: cpus %d arch %q memory %d local_gb %d boot_interface %q ipmi %q",
			data.CPUs, data.CPUArch, data.MemoryMB, data.LocalGB, data.BootInterface, data.IPMIAddress)
	}
	if diff := cmp.Diff([]string{"3c:fd:fe:11:22:30"}, data.MACs); diff != "" {
		t.Errorf("macs (-want +got):\n%s", diff)
	}
	if len(data.AllInterfaces) != 2 || data.AllInterfaces["eno1"].MAC != "3c:fd:fe:11:22:30" || !data.AllInterfaces["eno1"].PXE ||
		data.AllInterfaces["eno2"].PXE || len(data.Interfaces) != 1 {
		t.Errorf("all_interfaces %+v interfaces %+v", data.AllInterfaces, data.Interfaces)
	}
	if data.Inventory.CPU.Count != 32 || len(data.Inventory.Disks) != 2 || data.RootDisk.Name != "/dev/nvme0n1" {
		t.Errorf("inventory cpu %+v disks %d root %+v", data.Inventory.CPU, len(data.Inventory.Disks), data.RootDisk)
	}

	resp := r.do(t, http.MethodGet, "/v1/introspection/"+n.UUID+"/data/unprocessed", nil, nil)
	if resp.status != http.StatusOK || !sameReportWithoutLogs(t, resp.body, body) {
		t.Errorf("unprocessed data is not the report as posted (less its logs): %d, %d bytes of %d", resp.status, len(resp.body), len(body))
	}
	if ct := resp.header.Get("Content-Type"); ct != "application/json" {
		t.Errorf("unprocessed data content type %q", ct)
	}

	// Reapply runs processing again on the stored report: properties an
	// operator removed come back.
	node := r.getNode(t, n.UUID)
	delete(node.Properties, "cpus")
	node.Properties["memory_mb"] = "1"
	if err := r.store.UpdateNode(ctx, node); err != nil {
		t.Fatal(err)
	}
	if err := introspection.ReApplyIntrospection(ctx, r.client, n.UUID).ExtractErr(); err != nil {
		t.Fatalf("reapply: %v", err)
	}
	in := r.waitIntrospection(t, n.UUID, inspector.StateFinished)
	if in.Error != "" {
		t.Errorf("reapply error %q", in.Error)
	}
	props := r.getNode(t, n.UUID).Properties
	if props["cpus"] != "32" || props["memory_mb"] != "131072" {
		t.Errorf("properties after reapply: cpus %#v memory_mb %#v", props["cpus"], props["memory_mb"])
	}

	// A body is user data, which ironic-inspector does not take either.
	resp = r.do(t, http.MethodPost, "/v1/introspection/"+n.UUID+"/data/unprocessed", nil, []byte(`{"inventory":{}}`))
	if resp.status != http.StatusBadRequest {
		t.Errorf("reapply with a body = %d %s, want 400", resp.status, resp.body)
	}
	// A running introspection cannot be reapplied.
	r.start(t, n.UUID, false, "")
	err = introspection.ReApplyIntrospection(ctx, r.client, n.UUID).ExtractErr()
	if statusCode(err) != http.StatusConflict {
		t.Errorf("reapply while waiting: %v, want 409", err)
	}
}

func TestData_NotStoredWhenStoreDataIsNone(t *testing.T) {
	r := newRig(t, func(o *inspector.Options) { o.StoreData = false })
	n := r.node(t, nodeSpec{macs: []string{"3c:fd:fe:11:22:30"}})
	r.start(t, n.UUID, false, "")
	if resp := r.continueReport(t, referencePayload(t), ""); resp.status != http.StatusOK {
		t.Fatalf("continue = %d %s", resp.status, resp.body)
	}
	if r.data(t, n.UUID, "raw") != nil || r.data(t, n.UUID, "processed") != nil {
		t.Error("data stored with [processing]store_data=none")
	}
	for _, path := range []string{"/data", "/data/unprocessed"} {
		resp := r.do(t, http.MethodGet, "/v1/introspection/"+n.UUID+path, nil, nil)
		want := "Inspector is not configured to store data. Set the [processing]store_data configuration option to change this."
		if resp.status != http.StatusNotFound || resp.errorMessage(t) != want {
			t.Errorf("GET %s = %d %s", path, resp.status, resp.body)
		}
	}
	// Processing still wrote the node.
	if got := r.getNode(t, n.UUID).Properties["cpus"]; got != "32" {
		t.Errorf("cpus %#v", got)
	}
}

func TestRules_CRUD(t *testing.T) {
	r := newRig(t)
	rule := `{"description":"rack r12","conditions":[{"op":"eq","field":"data://cpu_arch","value":"x86_64"}],
		"actions":[{"action":"set-attribute","path":"/extra/rack","value":"r12"}]}`
	resp := r.do(t, http.MethodPost, "/v1/rules", nil, []byte(rule))
	if resp.status != http.StatusCreated {
		t.Fatalf("create = %d %s", resp.status, resp.body)
	}
	var created map[string]any
	if err := json.Unmarshal(resp.body, &created); err != nil {
		t.Fatal(err)
	}
	id, _ := created["uuid"].(string)
	if _, err := uuid.Parse(id); err != nil {
		t.Fatalf("created rule uuid %q", id)
	}
	want := map[string]any{
		"uuid": id, "description": "rack r12", "scope": nil,
		"conditions": []any{map[string]any{"op": "eq", "field": "data://cpu_arch", "value": "x86_64"}},
		"actions":    []any{map[string]any{"action": "set-attribute", "path": "/extra/rack", "value": "r12"}},
		"links":      []any{map[string]any{"href": r.srv.URL + "/v1/rules/" + id, "rel": "self"}},
	}
	if diff := cmp.Diff(want, created); diff != "" {
		t.Errorf("created rule (-want +got):\n%s", diff)
	}

	resp = r.do(t, http.MethodGet, "/v1/rules/"+id, nil, nil)
	var got map[string]any
	if err := json.Unmarshal(resp.body, &got); err != nil || resp.status != http.StatusOK {
		t.Fatalf("get = %d %s", resp.status, resp.body)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("got rule (-want +got):\n%s", diff)
	}

	// Before 1.6 creation answered 200; a given UUID is kept; a second one with it conflicts.
	fixed := uuid.NewString()
	old := http.Header{versionHeader: {"1.5"}}
	second := `{"uuid":"` + fixed + `","scope":"rack-a","conditions":[],"actions":[{"action":"add-trait","name":"CUSTOM_X"}]}`
	if resp := r.do(t, http.MethodPost, "/v1/rules", old, []byte(second)); resp.status != http.StatusOK {
		t.Errorf("create at 1.5 = %d %s, want 200", resp.status, resp.body)
	}
	resp = r.do(t, http.MethodPost, "/v1/rules", nil, []byte(second))
	if resp.status != http.StatusConflict || !strings.Contains(resp.errorMessage(t), fixed) {
		t.Errorf("duplicate uuid = %d %s, want 409", resp.status, resp.body)
	}
	for _, bad := range []string{`{"conditions":[],"actions":[{"action":"no-such-action"}]}`, `{"actions":`, `[]`} {
		if resp := r.do(t, http.MethodPost, "/v1/rules", nil, []byte(bad)); resp.status != http.StatusBadRequest {
			t.Errorf("invalid rule %s = %d %s, want 400", bad, resp.status, resp.body)
		} else {
			resp.errorMessage(t)
		}
	}

	resp = r.do(t, http.MethodGet, "/v1/rules", nil, nil)
	var list struct {
		Rules []map[string]any `json:"rules"`
	}
	if err := json.Unmarshal(resp.body, &list); err != nil || resp.status != http.StatusOK {
		t.Fatalf("list = %d %s", resp.status, resp.body)
	}
	var ids []string
	for _, ru := range list.Rules {
		ids = append(ids, ru["uuid"].(string))
		if _, full := ru["conditions"]; full {
			t.Errorf("list shows a rule in full: %v", ru)
		}
	}
	slices.Sort(ids)
	wantIDs := []string{id, fixed}
	slices.Sort(wantIDs)
	if diff := cmp.Diff(wantIDs, ids); diff != "" {
		t.Errorf("listed rules (-want +got):\n%s", diff)
	}

	if resp := r.do(t, http.MethodDelete, "/v1/rules/"+id, nil, nil); resp.status != http.StatusNoContent {
		t.Errorf("delete = %d %s", resp.status, resp.body)
	}
	for _, m := range []string{http.MethodGet, http.MethodDelete} {
		resp := r.do(t, m, "/v1/rules/"+id, nil, nil)
		if resp.status != http.StatusNotFound || resp.errorMessage(t) != "Rule "+id+" was not found" {
			t.Errorf("%s deleted rule = %d %s", m, resp.status, resp.body)
		}
	}
	if resp := r.do(t, http.MethodDelete, "/v1/rules", nil, nil); resp.status != http.StatusNoContent {
		t.Errorf("delete all = %d %s", resp.status, resp.body)
	}
	if resp := r.do(t, http.MethodGet, "/v1/rules", nil, nil); string(resp.body) != `{"rules":[]}` {
		t.Errorf("rules after delete all: %s", resp.body)
	}
}

func TestRules_AppliedWhenProcessingAndFailActionFailsIntrospection(t *testing.T) {
	r := newRig(t)
	for _, rule := range []string{
		`{"description":"rack","conditions":[{"op":"eq","field":"data://cpu_arch","value":"x86_64"}],
		  "actions":[{"action":"set-attribute","path":"/extra/rack","value":"r12"},{"action":"add-trait","name":"CUSTOM_EPYC"}]}`,
		`{"description":"too small","scope":"small","conditions":[{"op":"lt","field":"memory_mb","value":262144}],
		  "actions":[{"action":"fail","message":"not enough memory"}]}`,
	} {
		if resp := r.do(t, http.MethodPost, "/v1/rules", nil, []byte(rule)); resp.status != http.StatusCreated {
			t.Fatalf("create rule = %d %s", resp.status, resp.body)
		}
	}
	big := r.node(t, nodeSpec{macs: []string{"3c:fd:fe:11:22:30"}})
	r.start(t, big.UUID, false, "")
	if resp := r.continueReport(t, referencePayload(t), ""); resp.status != http.StatusOK {
		t.Fatalf("continue = %d %s", resp.status, resp.body)
	}
	got := r.getNode(t, big.UUID)
	if got.Extra["rack"] != "r12" || !slices.Contains(got.Traits, "CUSTOM_EPYC") {
		t.Errorf("global rule not applied: extra %v traits %v", got.Extra, got.Traits)
	}

	// The scoped fail rule applies only to nodes in scope "small".
	small := r.node(t, nodeSpec{macs: []string{"3c:fd:fe:11:22:40"}, properties: baremetal.JSON{"inspection_scope": "small"}})
	r.start(t, small.UUID, false, "")
	resp := r.continueReport(t, withMAC(referencePayload(t), "3c:fd:fe:11:22:30", "3c:fd:fe:11:22:40"), "")
	if resp.status != http.StatusBadRequest || !strings.Contains(resp.errorMessage(t), "not enough memory") {
		t.Errorf("continue with a failing rule = %d %s", resp.status, resp.body)
	}
	in := r.introspection(t, small.UUID)
	if in.State != inspector.StateError || !strings.Contains(in.Error, "not enough memory") {
		t.Errorf("introspection %+v", in)
	}
	if p := r.getNode(t, small.UUID).Properties; p["cpus"] != nil {
		t.Errorf("a failed rule still wrote properties: %v", p)
	}
}
