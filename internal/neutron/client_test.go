package neutron

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/ferrometal/ferro/internal/dhcpopt"
	"github.com/ferrometal/ferro/internal/openstack"
)

// request is one request a fake Neutron received.
type request struct {
	Method, Path, Query string
	Header              http.Header
	Body                map[string]any
}

// fakeAPI is a scripted Neutron: answers are looked up by "METHOD /path"
// and consumed in order; the last one repeats.
type fakeAPI struct {
	mu       sync.Mutex
	answers  map[string][]answer
	requests []request
}

type answer struct {
	status int
	body   string
	hangup bool // close the connection without answering
}

func (f *fakeAPI) on(route string, as ...answer) { f.answers[route] = as }

func (f *fakeAPI) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	req := request{Method: r.Method, Path: r.URL.Path, Query: r.URL.RawQuery, Header: r.Header.Clone()}
	if b, _ := io.ReadAll(r.Body); len(b) > 0 {
		_ = json.Unmarshal(b, &req.Body)
	}
	f.requests = append(f.requests, req)
	route := r.Method + " " + r.URL.Path
	as := f.answers[route]
	var a answer
	switch len(as) {
	case 0:
		a = answer{status: 404, body: `{"NeutronError": {"type": "HTTPNotFound", "message": "no route ` + route + `", "detail": ""}}`}
	case 1:
		a = as[0]
	default:
		a, f.answers[route] = as[0], as[1:]
	}
	f.mu.Unlock()
	if a.hangup {
		if c, _, err := w.(http.Hijacker).Hijack(); err == nil {
			c.Close()
		}
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(a.status)
	io.WriteString(w, a.body)
}

func (f *fakeAPI) count(route string) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	n := 0
	for _, r := range f.requests {
		if r.Method+" "+r.Path == route {
			n++
		}
	}
	return n
}

func (f *fakeAPI) last(route string) request {
	f.mu.Lock()
	defer f.mu.Unlock()
	for i := len(f.requests) - 1; i >= 0; i-- {
		if r := f.requests[i]; r.Method+" "+r.Path == route {
			return r
		}
	}
	return request{}
}

func newFakeAPI(t *testing.T, retries int) (*fakeAPI, *Client) {
	t.Helper()
	f := &fakeAPI{answers: map[string][]answer{}}
	srv := httptest.NewServer(f)
	t.Cleanup(srv.Close)
	c, err := New(Options{URL: srv.URL, Auth: openstack.Options{AuthType: "none"}, Retries: retries, Timeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	c.backoff = time.Millisecond
	return f, c
}

const (
	netUUID  = "4f1a3e3c-0a7f-4f63-9a0f-9f7b1d3c2e10"
	portUUID = "9a3c1f0e-2b4d-4e6f-8a1b-3c5d7e9f1a2b"
)

func TestNew_Config(t *testing.T) {
	for _, tc := range []struct {
		name string
		o    Options
		want error
	}{
		{"NoauthNeedsURL", Options{Auth: openstack.Options{AuthType: "none"}}, ErrOptions},
		{"PasswordNeedsAuthURL", Options{Auth: openstack.Options{AuthType: "password"}, URL: "http://n:9696"}, ErrOptions},
		{"UnknownAuthType", Options{Auth: openstack.Options{AuthType: "kerberos"}, URL: "http://n:9696"}, ErrOptions},
		{"Noauth", Options{Auth: openstack.Options{AuthType: "noauth"}, URL: "http://n:9696"}, nil},
		{"Token", Options{Auth: openstack.Options{AuthType: "token", AuthURL: "http://k:5000/v3", Token: "t"}}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := New(tc.o)
			if !errors.Is(err, tc.want) || (tc.want == nil && err != nil) {
				t.Errorf("New = %v, want %v", err, tc.want)
			}
		})
	}
}

func TestClient_NoauthSendsNoAuthOrProjectHeaders(t *testing.T) {
	f, c := newFakeAPI(t, 0)
	f.on("GET /v2.0/networks", answer{200, `{"networks": [{"id": "` + netUUID + `", "name": "insp"}]}`, false})
	if _, err := c.FindNetwork(context.Background(), "insp"); err != nil {
		t.Fatal(err)
	}
	r := f.last("GET /v2.0/networks")
	for _, h := range []string{"X-Auth-Token", "X-Project-Id", "X-Tenant-Id", "Authorization"} {
		if v := r.Header.Get(h); v != "" {
			t.Errorf("noauth request carries %s: %q", h, v)
		}
	}
	if r.Query != "name=insp" {
		t.Errorf("query = %q, want name=insp", r.Query)
	}
}

func TestClient_URLWithVersionSuffix(t *testing.T) {
	f := &fakeAPI{answers: map[string][]answer{}}
	srv := httptest.NewServer(f)
	defer srv.Close()
	c, err := New(Options{URL: srv.URL + "/v2.0/", Auth: openstack.Options{AuthType: "none"}})
	if err != nil {
		t.Fatal(err)
	}
	f.on("DELETE /v2.0/ports/"+portUUID, answer{204, "", false})
	if err := c.DeletePort(context.Background(), portUUID); err != nil {
		t.Fatal(err)
	}
}

func TestFindNetwork(t *testing.T) {
	notFound := answer{404, `{"NeutronError": {"type": "NetworkNotFound", "message": "Network could not be found.", "detail": ""}}`, false}
	for _, tc := range []struct {
		name    string
		arg     string
		byID    answer
		byName  answer
		wantID  string
		wantErr []error
	}{
		{name: "ByUUID", arg: netUUID, byID: answer{200, `{"network": {"id": "` + netUUID + `", "name": "x", "provider:physical_network": "physnet1"}}`, false}, wantID: netUUID},
		{name: "ByName", arg: "insp", byName: answer{200, `{"networks": [{"id": "n1", "name": "insp"}]}`, false}, wantID: "n1"},
		{name: "UUIDShapedName", arg: netUUID, byID: notFound, byName: answer{200, `{"networks": [{"id": "n2", "name": "` + netUUID + `"}]}`, false}, wantID: "n2"},
		{name: "NotFound", arg: "insp", byName: answer{200, `{"networks": []}`, false}, wantErr: []error{ErrNotFound}},
		{name: "UUIDNotFound", arg: netUUID, byID: notFound, byName: answer{200, `{"networks": []}`, false}, wantErr: []error{ErrNotFound}},
		{name: "Ambiguous", arg: "insp", byName: answer{200, `{"networks": [{"id": "n1", "name": "insp"}, {"id": "n2", "name": "insp"}]}`, false}},
		{name: "ServerError", arg: "insp", byName: answer{500, `{"NeutronError": {"type": "Boom", "message": "boom", "detail": ""}}`, false}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f, c := newFakeAPI(t, 0)
			if tc.byID.status != 0 {
				f.on("GET /v2.0/networks/"+netUUID, tc.byID)
			}
			if tc.byName.status != 0 {
				f.on("GET /v2.0/networks", tc.byName)
			}
			n, err := c.FindNetwork(context.Background(), tc.arg)
			if tc.wantID != "" {
				if err != nil || n.ID != tc.wantID {
					t.Fatalf("FindNetwork = %+v, %v; want id %s", n, err, tc.wantID)
				}
				return
			}
			if err == nil {
				t.Fatalf("FindNetwork = %+v, want an error", n)
			}
			for _, want := range tc.wantErr {
				if !errors.Is(err, want) {
					t.Errorf("error %v does not wrap %v", err, want)
				}
			}
			_, ambiguous := errors.AsType[*AmbiguousError](err)
			if ambiguous != (tc.name == "Ambiguous") {
				t.Errorf("error %v: ambiguous %t", err, ambiguous)
			}
			if tc.name == "ServerError" && errors.Is(err, ErrNotFound) {
				t.Errorf("a server error %v must not read as not found", err)
			}
		})
	}
}

func TestClient_Retries(t *testing.T) {
	ok := answer{204, "", false}
	e503 := answer{503, `{"NeutronError": {"type": "ServiceUnavailable", "message": "busy", "detail": ""}}`, false}
	e409 := answer{409, `{"NeutronError": {"type": "MacAddressInUse", "message": "in use", "detail": ""}}`, false}
	e400 := answer{400, `{"NeutronError": {"type": "BadRequest", "message": "bad", "detail": ""}}`, false}
	hang := answer{hangup: true}
	for _, tc := range []struct {
		name      string
		retries   int
		answers   []answer
		wantCalls int
		wantErr   bool
	}{
		{"5xxThenOK", 3, []answer{e503, e503, ok}, 3, false},
		{"ConflictThenOK", 3, []answer{e409, ok}, 2, false},
		{"ConnectionDropThenOK", 3, []answer{hang, ok}, 2, false},
		{"BadRequestIsNotRetried", 3, []answer{e400, ok}, 1, true},
		{"Bounded", 2, []answer{e503}, 3, true},
		{"NoRetries", 0, []answer{e503, ok}, 1, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f, c := newFakeAPI(t, tc.retries)
			f.on("DELETE /v2.0/ports/"+portUUID, tc.answers...)
			err := c.DeletePort(context.Background(), portUUID)
			if (err != nil) != tc.wantErr {
				t.Errorf("DeletePort = %v, want error: %v", err, tc.wantErr)
			}
			if got := f.count("DELETE /v2.0/ports/" + portUUID); got != tc.wantCalls {
				t.Errorf("%d requests, want %d", got, tc.wantCalls)
			}
		})
	}
}

func TestClient_TimeoutPerRequest(t *testing.T) {
	block := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-block:
		case <-r.Context().Done():
		}
	}))
	defer srv.Close()
	defer close(block)
	c, err := New(Options{URL: srv.URL, Auth: openstack.Options{AuthType: "none"}, Timeout: time.Second, Retries: 0})
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	if _, err := c.GetPort(context.Background(), portUUID); err == nil {
		t.Fatal("GetPort succeeded against a server that never answers")
	}
	if d := time.Since(start); d > 10*time.Second {
		t.Errorf("the request took %v; [neutron]timeout is 1s", d)
	}
}

func TestDeletePort_NotFoundIsFine(t *testing.T) {
	f, c := newFakeAPI(t, 3)
	f.on("DELETE /v2.0/ports/"+portUUID, answer{404, `{"NeutronError": {"type": "PortNotFound", "message": "gone", "detail": ""}}`, false})
	if err := c.DeletePort(context.Background(), portUUID); err != nil {
		t.Errorf("DeletePort of a missing port = %v", err)
	}
	if n := f.count("DELETE /v2.0/ports/" + portUUID); n != 1 {
		t.Errorf("%d requests; a 404 is not retried", n)
	}
	_, err := c.GetPort(context.Background(), portUUID)
	if !errors.Is(err, ErrNotFound) {
		t.Errorf("GetPort of a missing port = %v, want ErrNotFound", err)
	}
}

func TestCreateAndUpdatePort_Bodies(t *testing.T) {
	f, c := newFakeAPI(t, 0)
	portJSON := `{"port": {"id": "` + portUUID + `", "network_id": "` + netUUID + `", "mac_address": "52:54:00:00:00:0a",
		"fixed_ips": [{"subnet_id": "s1", "ip_address": "10.0.0.5"}], "binding:vif_type": "other",
		"extra_dhcp_opts": [{"opt_name": "66", "opt_value": "10.0.0.1", "ip_version": 4}]}}`
	f.on("POST /v2.0/ports", answer{201, portJSON, false})
	f.on("PUT /v2.0/ports/"+portUUID, answer{200, portJSON, false})
	ctx := context.Background()

	p, err := c.CreatePort(ctx, PortCreate{
		NetworkID: netUUID, DeviceID: "node-1", VNICType: "baremetal", AdminStateUp: true,
		SecurityGroups: []string{"sg-1"}, NoFixedIPs: true,
		ExtraDHCPOpts: []dhcpopt.Option{{Name: "61", Value: "ff:00"}},
	})
	if err != nil {
		t.Fatal(err)
	}
	want := Port{ID: portUUID, NetworkID: netUUID, MACAddress: "52:54:00:00:00:0a",
		FixedIPs: []FixedIP{{SubnetID: "s1", IPAddress: "10.0.0.5"}}, VIFType: "other",
		ExtraDHCPOpts: []DHCPOpt{{Name: "66", Value: "10.0.0.1", IPVersion: 4}}}
	if diff := cmp.Diff(want, p); diff != "" {
		t.Errorf("created port (-want +got):\n%s", diff)
	}
	wantCreate := map[string]any{"port": map[string]any{
		"network_id": netUUID, "device_id": "node-1", "admin_state_up": true,
		"binding:vnic_type": "baremetal", "security_groups": []any{"sg-1"}, "fixed_ips": []any{},
		"extra_dhcp_opts": []any{map[string]any{"opt_name": "61", "opt_value": "ff:00", "ip_version": 4.0}},
	}}
	if diff := cmp.Diff(wantCreate, f.last("POST /v2.0/ports").Body); diff != "" {
		t.Errorf("create body (-want +got):\n%s", diff)
	}

	owner, host, mac := "baremetal:none", "node-1", "52:54:00:00:00:0a"
	llc := map[string]any{"switch_id": "aa:bb:cc:dd:ee:ff", "port_id": "Eth1/1"}
	if _, err := c.UpdatePort(ctx, portUUID, PortUpdate{
		DeviceOwner: &owner, HostID: &host, MACAddress: &mac,
		Profile:       map[string]any{"local_link_information": []any{llc}},
		ExtraDHCPOpts: []dhcpopt.Option{{Name: "tag:ipxe,67", Value: "http://x/boot.ipxe", IPVersion: 4}},
	}); err != nil {
		t.Fatal(err)
	}
	wantUpdate := map[string]any{"port": map[string]any{
		"device_owner": "baremetal:none", "binding:host_id": "node-1", "mac_address": "52:54:00:00:00:0a",
		"binding:profile": map[string]any{"local_link_information": []any{llc}},
		"extra_dhcp_opts": []any{map[string]any{"opt_name": "tag:ipxe,67", "opt_value": "http://x/boot.ipxe", "ip_version": 4.0}},
	}}
	if diff := cmp.Diff(wantUpdate, f.last("PUT /v2.0/ports/"+portUUID).Body); diff != "" {
		t.Errorf("update body (-want +got):\n%s", diff)
	}
}

func TestListPorts(t *testing.T) {
	f, c := newFakeAPI(t, 0)
	f.on("GET /v2.0/ports", answer{200, `{"ports": [{"id": "p1"}, {"id": "p2"}]}`, false})
	ports, err := c.ListPorts(context.Background(), PortFilter{NetworkID: netUUID, MACAddress: "52:54:00:00:00:0a"})
	if err != nil || len(ports) != 2 {
		t.Fatalf("ListPorts = %v, %v", ports, err)
	}
	q := f.last("GET /v2.0/ports").Query
	if !strings.Contains(q, "network_id="+netUUID) || !strings.Contains(q, "mac_address=52%3A54%3A00%3A00%3A00%3A0a") {
		t.Errorf("query %q lacks the filters", q)
	}
	if _, err := c.ListPorts(context.Background(), PortFilter{MACAddress: "52:54:00:00:00:0a"}); err == nil {
		t.Error("ListPorts without network_id or device_id must be refused")
	}
}

func TestCheckSecurityGroups(t *testing.T) {
	f, c := newFakeAPI(t, 0)
	f.on("GET /v2.0/security-groups/sg-1", answer{200, `{"security_group": {"id": "sg-1"}}`, false})
	ctx := context.Background()
	if err := c.CheckSecurityGroups(ctx, []string{"sg-1"}); err != nil {
		t.Errorf("existing group: %v", err)
	}
	err := c.CheckSecurityGroups(ctx, []string{"sg-1", "sg-2", "sg-3"})
	if !errors.Is(err, ErrNotFound) || !strings.Contains(err.Error(), "sg-2, sg-3") {
		t.Errorf("missing groups: %v, want ErrNotFound naming sg-2 and sg-3", err)
	}
	if err := c.CheckSecurityGroups(ctx, nil); err != nil {
		t.Errorf("no groups: %v", err)
	}
}

// TestClient_KeystonePassword authenticates against a fake Keystone and
// finds Neutron in the catalog.
func TestClient_KeystonePassword(t *testing.T) {
	var mu sync.Mutex
	var authBody map[string]any
	var neutronToken string
	mux := http.NewServeMux()
	srv := httptest.NewServer(mux)
	defer srv.Close()
	mux.HandleFunc("POST /v3/auth/tokens", func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		json.NewDecoder(r.Body).Decode(&authBody)
		mu.Unlock()
		w.Header().Set("X-Subject-Token", "tok-123")
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusCreated)
		io.WriteString(w, `{"token": {"expires_at": "2999-01-01T00:00:00.000000Z", "catalog": [
			{"type": "network", "name": "neutron", "endpoints": [
				{"interface": "public", "region": "RegionOne", "region_id": "RegionOne", "url": "`+srv.URL+`/public-network"},
				{"interface": "internal", "region": "RegionOne", "region_id": "RegionOne", "url": "`+srv.URL+`/network"}]}]}}`)
	})
	// gophercloud checks the catalog endpoint's versions, as Neutron's GET / answers them.
	mux.HandleFunc("GET /network/{$}", func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, `{"versions": [{"id": "v2.0", "status": "CURRENT", "links": [{"href": "`+srv.URL+`/network/v2.0/", "rel": "self"}]}]}`)
	})
	mux.HandleFunc("GET /network/v2.0/networks", func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		neutronToken = r.Header.Get("X-Auth-Token")
		mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"networks": [{"id": "n1", "name": "insp"}]}`)
	})
	c, err := New(Options{Auth: openstack.Options{
		AuthType: "password", AuthURL: srv.URL + "/v3", Username: "ironic", Password: "secret",
		UserDomainName: "Default", ProjectName: "service", ProjectDomainName: "Default", RegionName: "RegionOne",
	}})
	if err != nil {
		t.Fatal(err)
	}
	n, err := c.FindNetwork(context.Background(), "insp")
	if err != nil || n.ID != "n1" {
		t.Fatalf("FindNetwork = %+v, %v", n, err)
	}
	mu.Lock()
	defer mu.Unlock()
	if neutronToken != "tok-123" {
		t.Errorf("Neutron request carried token %q, want tok-123", neutronToken)
	}
	want := map[string]any{"auth": map[string]any{
		"identity": map[string]any{"methods": []any{"password"}, "password": map[string]any{"user": map[string]any{
			"name": "ironic", "password": "secret", "domain": map[string]any{"name": "Default"}}}},
		"scope": map[string]any{"project": map[string]any{"name": "service", "domain": map[string]any{"name": "Default"}}},
	}}
	if diff := cmp.Diff(want, authBody); diff != "" {
		t.Errorf("keystone auth body (-want +got):\n%s", diff)
	}
}
