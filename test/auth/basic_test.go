package auth_test

import (
	"encoding/json"
	"io"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/gophercloud/gophercloud/v2/openstack/baremetal/httpbasic"
	"github.com/gophercloud/gophercloud/v2/openstack/baremetal/v1/nodes"
	isphttpbasic "github.com/gophercloud/gophercloud/v2/openstack/baremetalintrospection/httpbasic"
	"github.com/gophercloud/gophercloud/v2/openstack/baremetalintrospection/v1/introspection"

	"github.com/ferrometal/ferro/internal/api/ironic"
	"github.com/ferrometal/ferro/internal/auth"
	"github.com/ferrometal/ferro/internal/testing/ferrotest"
)

// startBasic runs ferro with auth_strategy http_basic and one user.
func startBasic(t *testing.T) *ferrotest.Server {
	t.Helper()
	users := ferrotest.Htpasswd(t, nil, "admin", "s3cret", "ops", "ops pass")
	conf := writeConfig(t, "[DEFAULT]\nauth_strategy = http_basic\nhttp_basic_auth_user_file = "+users+"\n")
	return ferrotest.Start(t, ferrotest.WithConfig(conf))
}

// baremetalCLI runs Debian's baremetal CLI with args and an empty home.
func baremetalCLI(t *testing.T, args ...string) (string, error) {
	t.Helper()
	bin := ferrotest.RequireTool(t, "baremetal")
	home := t.TempDir()
	cmd := exec.CommandContext(t.Context(), bin, args...)
	cmd.Env = []string{"HOME=" + home, "XDG_CACHE_HOME=" + home, "XDG_CONFIG_HOME=" + home, "PATH=" + os.Getenv("PATH")}
	out, err := cmd.CombinedOutput()
	return string(out), err
}

func TestHTTPBasic_BaremetalCLI(t *testing.T) {
	srv := startBasic(t)
	as := func(user, password string, args ...string) (string, error) {
		return baremetalCLI(t, append([]string{"--os-auth-type", "http_basic", "--os-endpoint", srv.URL,
			"--os-username", user, "--os-password", password, "--os-baremetal-api-version", "1.82"}, args...)...)
	}
	out, err := as("admin", "s3cret", "node", "create", "--driver", "fake-hardware", "--name", "n1",
		"--driver-info", "ipmi_address=192.0.2.9", "--driver-info", "ipmi_password=bmc-secret", "-f", "json")
	if err != nil {
		t.Fatalf("node create: %v\n%s", err, out)
	}
	out, err = as("ops", "ops pass", "node", "show", "n1", "--fields", "driver_info", "-f", "json")
	if err != nil {
		t.Fatalf("node show: %v\n%s", err, out)
	}
	var shown struct {
		DriverInfo map[string]any `json:"driver_info"`
	}
	if err := json.Unmarshal([]byte(out), &shown); err != nil {
		t.Fatalf("node show output: %v\n%s", err, out)
	}
	// Ironic masks secrets for everyone unless policy says otherwise, and
	// http_basic users have no roles.
	if shown.DriverInfo["ipmi_password"] != "******" || shown.DriverInfo["ipmi_address"] != "192.0.2.9" {
		t.Errorf("driver_info = %v, want the password masked", shown.DriverInfo)
	}
	if out, err := as("admin", "wrong", "node", "list"); err == nil || !strings.Contains(out, "HTTP 401") {
		t.Errorf("wrong password: %v\n%s", err, out)
	}
	if out, err := baremetalCLI(t, "--os-auth-type", "none", "--os-endpoint", srv.URL, "node", "list"); err == nil || !strings.Contains(out, "HTTP 401") {
		t.Errorf("no credentials: %v\n%s", err, out)
	}
}

func TestHTTPBasic_Gophercloud(t *testing.T) {
	srv := startBasic(t)
	ctx := t.Context()
	c, err := httpbasic.NewBareMetalHTTPBasic(httpbasic.EndpointOpts{IronicEndpoint: srv.URL + "/v1", IronicUser: "admin", IronicUserPassword: "s3cret"})
	if err != nil {
		t.Fatal(err)
	}
	c.Microversion = "1.82"
	n, err := nodes.Create(ctx, c, nodes.CreateOpts{Driver: "fake-hardware", Name: "g1"}).Extract()
	if err != nil {
		t.Fatalf("create: %v", err)
	}
	if _, err := nodes.Get(ctx, c, n.UUID).Extract(); err != nil {
		t.Fatalf("get: %v", err)
	}
	bad, _ := httpbasic.NewBareMetalHTTPBasic(httpbasic.EndpointOpts{IronicEndpoint: srv.URL + "/v1", IronicUser: "admin", IronicUserPassword: "nope"})
	if _, err := nodes.Get(ctx, bad, n.UUID).Extract(); statusOf(err) != http.StatusUnauthorized {
		t.Errorf("wrong password: %v, want 401", err)
	}
	// The inspector's API, on its own port and on the API port.
	for _, base := range []string{srv.InspectorURL, srv.URL} {
		ic, err := isphttpbasic.NewBareMetalIntrospectionHTTPBasic(isphttpbasic.EndpointOpts{
			IronicInspectorEndpoint: base + "/v1", IronicInspectorUser: "ops", IronicInspectorUserPassword: "ops pass"})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := introspection.ListIntrospections(ic, introspection.ListIntrospectionsOpts{}).AllPages(ctx); err != nil {
			t.Errorf("introspection list on %s: %v", base, err)
		}
	}
}

// TestHTTPBasic_PublicRoutesOnlyWithoutCredentials sends every route of
// both APIs, on every port it is served on, without credentials: the
// version documents and the ramdisk's callback answer, everything else is
// 401 in the API's own error format.
func TestHTTPBasic_PublicRoutesOnlyWithoutCredentials(t *testing.T) {
	srv := startBasic(t)
	send := func(method, url string) (int, http.Header, string) {
		t.Helper()
		req, err := http.NewRequestWithContext(t.Context(), method, url, strings.NewReader("{}"))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Content-Type", "application/json")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, resp.Header, string(b)
	}
	for _, base := range []string{srv.URL, srv.InspectorURL} {
		for _, p := range []string{"/", "/v1", "/v1/"} {
			if code, _, body := send(http.MethodGet, base+p); code != http.StatusOK {
				t.Errorf("GET %s%s: %d %s, want 200", base, p, code, body)
			}
		}
		// The callback is public: it fails here on the lookup (no node), not on credentials.
		if code, _, body := send(http.MethodPost, base+"/v1/continue"); code == http.StatusUnauthorized {
			t.Errorf("POST %s/v1/continue: 401 %s", base, body)
		}
	}
	// The agent interface's callback too: it fails on the schema, not on credentials.
	if code, _, body := send(http.MethodPost, srv.URL+"/v1/continue_inspection"); code != http.StatusBadRequest {
		t.Errorf("POST /v1/continue_inspection: %d %s, want 400 (the lookup, not the credentials)", code, body)
	}
	var ironicRoutes []string
	for _, p := range ironic.Patterns() {
		method, path, _ := strings.Cut(p, " ")
		if auth.IronicRoute(p).Rule == auth.RulePublic || auth.IronicRoute(p).Rule == auth.RuleIPAContinueInspection {
			continue
		}
		path = wildcardRE.ReplaceAllString(strings.ReplaceAll(path, "{$}", ""), "x")
		ironicRoutes = append(ironicRoutes, method+" "+path)
	}
	inspectorRoutes := []string{"POST /v1/introspection/x", "GET /v1/introspection/x", "GET /v1/introspection",
		"POST /v1/introspection/x/abort", "GET /v1/introspection/x/data", "GET /v1/introspection/x/data/unprocessed",
		"POST /v1/introspection/x/data/unprocessed", "GET /v1/rules", "POST /v1/rules", "DELETE /v1/rules",
		"GET /v1/rules/x", "DELETE /v1/rules/x", "GET /v1/continue"}
	check := func(base, route string, inspector bool) {
		method, path, _ := strings.Cut(route, " ")
		code, h, body := send(method, base+path)
		if code != http.StatusUnauthorized {
			t.Errorf("%s %s%s without credentials: %d %s, want 401", method, base, path, code, body)
			return
		}
		if h.Get("WWW-Authenticate") != `Basic realm="Baremetal API"` {
			t.Errorf("%s %s: WWW-Authenticate %q", method, path, h.Get("WWW-Authenticate"))
		}
		var doc struct {
			IronicMessage string `json:"error_message"`
			Error         struct {
				Message string `json:"message"`
			} `json:"error"`
		}
		if err := json.Unmarshal([]byte(body), &doc); err != nil ||
			(inspector && doc.Error.Message == "") || (!inspector && doc.IronicMessage == "") {
			t.Errorf("%s %s: body %s is not in the API's error format (inspector %v)", method, path, body, inspector)
		}
	}
	for _, r := range ironicRoutes {
		check(srv.URL, r, false)
	}
	for _, r := range inspectorRoutes {
		check(srv.URL, r, true)
		check(srv.InspectorURL, r, true)
	}
}
