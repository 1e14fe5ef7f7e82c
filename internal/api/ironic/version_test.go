package ironic

import (
	"net/http"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestRoot_DescribesVersionOne(t *testing.T) {
	e := newEnv(t)
	r := e.must(http.StatusOK, "GET", "/", "", nil)
	got := r.json(t)
	want := map[string]any{
		"name":        "OpenStack Ironic API",
		"description": "Ironic is an OpenStack project which enables the provision and management of baremetal machines.",
		"default_version": map[string]any{
			"id":          "v1",
			"links":       []any{map[string]any{"href": "http://ferro.test:6385/v1/", "rel": "self"}},
			"status":      "CURRENT",
			"min_version": "1.1",
			"version":     "1.115",
		},
	}
	want["versions"] = []any{want["default_version"]}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("GET / (-want +got):\n%s", d)
	}
	if r.header.Get("X-OpenStack-Ironic-API-Minimum-Version") != "1.1" || r.header.Get("X-OpenStack-Ironic-API-Maximum-Version") != "1.115" {
		t.Errorf("version range headers: %v", r.header)
	}
}

func TestV1_LinksFollowVersion(t *testing.T) {
	e := newEnv(t)
	old := e.must(http.StatusOK, "GET", "/v1", "1.1", nil).json(t)
	for _, k := range []string{"portgroups", "allocations", "conductors", "shards", "heartbeat", "volume", "deploy_templates", "continue_inspection", "inspection_rules"} {
		if _, ok := old[k]; ok {
			t.Errorf("GET /v1 at 1.1 has %q", k)
		}
	}
	cur := e.must(http.StatusOK, "GET", "/v1/", latest, nil).json(t)
	for _, k := range []string{"id", "links", "media_types", "chassis", "nodes", "ports", "portgroups", "drivers", "allocations", "conductors", "version",
		"heartbeat", "volume", "deploy_templates"} {
		if _, ok := cur[k]; !ok {
			t.Errorf("GET /v1 at 1.82 lacks %q", k)
		}
	}
	for k, m := range map[string]string{"continue_inspection": "1.84", "inspection_rules": "1.96"} {
		if _, ok := cur[k]; ok {
			t.Errorf("GET /v1 at 1.82 has %q", k)
		}
		if _, ok := e.must(http.StatusOK, "GET", "/v1/", m, nil).json(t)[k]; !ok {
			t.Errorf("GET /v1 at %s lacks %q", m, k)
		}
	}
	nodes := cur["nodes"].([]any)
	want := []any{
		map[string]any{"href": "http://ferro.test:6385/v1/nodes/", "rel": "self"},
		map[string]any{"href": "http://ferro.test:6385/nodes/", "rel": "bookmark"},
	}
	if d := cmp.Diff(want, nodes); d != "" {
		t.Errorf("nodes links (-want +got):\n%s", d)
	}
	mt := cur["media_types"].([]any)[0].(map[string]any)
	if mt["type"] != "application/vnd.openstack.ironic.v1+json" {
		t.Errorf("media type %v", mt)
	}
}

func TestVersionNegotiation(t *testing.T) {
	e := newEnv(t)
	tests := []struct {
		name, header string
		status       int
		version      string
		fault        string
	}{
		{"none is 1.1", "", 200, "1.1", ""},
		{"explicit", "1.50", 200, "1.50", ""},
		{"latest", "latest", 200, "1.115", ""},
		{"LATEST", "LATEST", 200, "1.115", ""},
		{"too new", "1.116", 406, "", "Version 1.116 was requested but the minor version is not supported by this service. The supported version range is: [1.1, 1.115]."},
		{"too old", "1.0", 406, "", "Version 1.0 was requested but the minor version is not supported"},
		{"other major", "2.1", 406, "", "Mutually exclusive versions requested. Version 2.1 requested"},
		{"malformed", "one.two", 406, "", "Invalid value for X-OpenStack-Ironic-API-Version header"},
		{"three parts", "1.2.3", 406, "", "Invalid value for X-OpenStack-Ironic-API-Version header"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := e.do("GET", "/v1/nodes", tc.header, nil)
			if r.code != tc.status {
				t.Fatalf("status %d, want %d: %s", r.code, tc.status, r.body)
			}
			if r.header.Get("X-OpenStack-Ironic-API-Maximum-Version") != "1.115" || r.header.Get("X-OpenStack-Ironic-API-Minimum-Version") != "1.1" {
				t.Errorf("missing min/max headers: %v", r.header)
			}
			if !strings.HasPrefix(r.header.Get("X-Openstack-Request-Id"), "req-") {
				t.Errorf("request id header %q", r.header.Get("X-Openstack-Request-Id"))
			}
			if tc.version != "" {
				if got := r.header.Get("X-OpenStack-Ironic-API-Version"); got != tc.version {
					t.Errorf("version header %q, want %q", got, tc.version)
				}
				if got := r.header.Get("OpenStack-API-Version"); got != "baremetal "+tc.version {
					t.Errorf("OpenStack-API-Version %q", got)
				}
			}
			// Below /v1/ Ironic's version check raises webob's
			// HTTPNotAcceptable: code, title, description.
			if tc.fault != "" {
				f := r.fault(t)
				if d, _ := f["description"].(string); !strings.HasPrefix(d, tc.fault) || f["code"] != float64(406) || f["title"] != "Not Acceptable" {
					t.Errorf("fault %v, want webob's with a description starting %q", f, tc.fault)
				}
			}
		})
	}
}

func TestVersion_OpenStackAPIVersionHeader(t *testing.T) {
	e := newEnv(t)
	req := map[string]string{"OpenStack-API-Version": "compute 2.1, baremetal 1.60"}
	r := e.doHeaders("GET", "/v1/nodes", req)
	if r.header.Get("X-OpenStack-Ironic-API-Version") != "1.60" {
		t.Errorf("version %q, want 1.60", r.header.Get("X-OpenStack-Ironic-API-Version"))
	}
}

func TestErrors_UnknownRouteAndMethod(t *testing.T) {
	e := newEnv(t)
	r := e.do("GET", "/v1/nosuch", latest, nil)
	if r.code != 404 {
		t.Fatalf("unknown route: %d", r.code)
	}
	// Ironic's routing aborts with webob's HTTPNotFound (Ironic 21.4's body).
	if want := `{"error_message": "{\"code\": 404, \"title\": \"Not Found\", \"description\": \"\"}"}`; string(r.body) != want {
		t.Errorf("404 body\n got %s\nwant %s", r.body, want)
	}
	if ct := r.header.Get("Content-Type"); ct != "application/json" {
		t.Errorf("404 content type %q", ct)
	}
	r = e.do("PUT", "/v1/nodes", latest, "{}")
	if r.code != 405 {
		t.Fatalf("wrong method: %d %s", r.code, r.body)
	}
	if want := `{"error_message": "{\"code\": 405, \"title\": \"Method Not Allowed\", \"description\": \"\"}"}`; string(r.body) != want {
		t.Errorf("405 body\n got %s\nwant %s", r.body, want)
	}
	if !strings.Contains(r.header.Get("Allow"), "GET") {
		t.Errorf("405 Allow header %q", r.header.Get("Allow"))
	}
}

func TestErrors_BodyShapeIsIronics(t *testing.T) {
	e := newEnv(t)
	r := e.must(404, "GET", "/v1/nodes/2d3f9a5e-7c53-4a3f-a9f5-1a2b3c4d5e6f", latest, nil)
	want := `{"error_message": "{\"faultcode\": \"Client\", \"faultstring\": \"Node 2d3f9a5e-7c53-4a3f-a9f5-1a2b3c4d5e6f could not be found.\", \"debuginfo\": null}"}`
	if string(r.body) != want {
		t.Errorf("body\n got %s\nwant %s", r.body, want)
	}
}

func TestAccessLog_OneLinePerRequestWithoutSecrets(t *testing.T) {
	e := newEnv(t)
	e.createNode(map[string]any{"name": "logged", "driver_info": map[string]any{"ipmi_password": "s3cr3t-value"}})
	logs := e.logs.String()
	if strings.Contains(logs, "s3cr3t-value") {
		t.Errorf("secret in logs: %s", logs)
	}
	for _, want := range []string{"method=POST", "path=/v1/nodes", "status=201", "request_id=req-", "duration="} {
		if !strings.Contains(logs, want) {
			t.Errorf("log %q lacks %q", logs, want)
		}
	}
}
