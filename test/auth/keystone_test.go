// Package auth_test is the authentication lane: a real `ferro serve` with
// auth_strategy keystone (a real Keystone from keystonetest) and
// http_basic (an Apache htpasswd file), driven by independent clients —
// Debian's `baremetal` CLI and gophercloud — for every persona.
package auth_test

import (
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/gophercloud/gophercloud/v2"
	"github.com/gophercloud/gophercloud/v2/openstack"
	"github.com/gophercloud/gophercloud/v2/openstack/baremetal/v1/drivers"
	"github.com/gophercloud/gophercloud/v2/openstack/baremetal/v1/nodes"

	"github.com/ferrometal/ferro/internal/testing/ferrotest"
	"github.com/ferrometal/ferro/internal/testing/keystonetest"
)

func TestMain(m *testing.M) { os.Exit(keystonetest.Main(m)) }

// writeConfig writes an INI file for ferro serve.
func writeConfig(t *testing.T, body string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "ferro.conf")
	if err := os.WriteFile(path, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// keystoneLane is a Keystone with the personas and a ferro validating its tokens.
type keystoneLane struct {
	ks    *keystonetest.Server
	p     keystonetest.Personas
	ferro *ferrotest.Server
}

// startKeystoneLane starts Keystone with the personas, and ferro with
// auth_strategy keystone and a token_cache_time of 300 s, registered as
// the baremetal service in the catalog.
func startKeystoneLane(t *testing.T) *keystoneLane {
	t.Helper()
	ks := keystonetest.Start(t)
	l := &keystoneLane{ks: ks, p: ks.CreatePersonas(t, "fx")}
	l.ferro = l.startFerro(t, 300)
	ks.RegisterService(t, "baremetal", "ironic", keystonetest.Endpoints{Public: l.ferro.URL, Internal: l.ferro.URL})
	ks.RegisterService(t, "baremetal-introspection", "ironic-inspector", keystonetest.Endpoints{Public: l.ferro.InspectorURL, Internal: l.ferro.InspectorURL})
	return l
}

// startFerro starts a ferro validating this Keystone's tokens, caching
// each validation for cacheTime seconds.
func (l *keystoneLane) startFerro(t *testing.T, cacheTime int) *ferrotest.Server {
	t.Helper()
	conf := writeConfig(t, fmt.Sprintf(`[DEFAULT]
auth_strategy = keystone
[keystone_authtoken]
www_authenticate_uri = %[1]s
auth_url = %[1]s
auth_type = password
username = %[2]s
password = %[3]s
project_name = %[4]s
user_domain_name = Default
project_domain_name = Default
region_name = RegionOne
token_cache_time = %[5]d
memcached_servers = 127.0.0.1:11211
service_token_roles_required = true
`, l.ks.AuthURL(), keystonetest.AdminUser, keystonetest.AdminPassword, keystonetest.AdminProject, cacheTime))
	srv := ferrotest.Start(t, ferrotest.WithConfig(conf))
	if !strings.Contains(srv.Log(), "auth_strategy=keystone") {
		t.Errorf("ferro serve does not log the strategy in force:\n%s", srv.Log())
	}
	return srv
}

// client is gophercloud's bare metal client for a persona ("system-admin",
// "a-reader", …), authenticated with Keystone and found in the catalog.
func (l *keystoneLane) client(t *testing.T, persona string) *gophercloud.ServiceClient {
	t.Helper()
	u := l.p.Users[persona]
	opts := gophercloud.AuthOptions{IdentityEndpoint: l.ks.AuthURL(), Username: u.Name, Password: u.Password, DomainName: "Default"}
	if u.ProjectID == "" {
		opts.Scope = &gophercloud.AuthScope{System: true}
	} else {
		opts.Scope = &gophercloud.AuthScope{ProjectID: u.ProjectID}
	}
	pc, err := openstack.AuthenticatedClient(t.Context(), opts)
	if err != nil {
		t.Fatalf("%s: authenticate: %v", persona, err)
	}
	bm, err := openstack.NewBareMetalV1(pc, gophercloud.EndpointOpts{Region: keystonetest.Region})
	if err != nil {
		t.Fatalf("%s: baremetal endpoint: %v", persona, err)
	}
	bm.Microversion = "1.82"
	return bm
}

func statusOf(err error) int {
	var e gophercloud.ErrUnexpectedResponseCode
	if errors.As(err, &e) {
		return e.Actual
	}
	if err == nil {
		return http.StatusOK
	}
	return -1
}

// TestKeystone checks, on one Keystone, what each persona may read and
// change with gophercloud and with the baremetal CLI, and which tokens
// ferro refuses.
func TestKeystone(t *testing.T) {
	l := startKeystoneLane(t)
	t.Run("personas with gophercloud", func(t *testing.T) { personasWithGophercloud(t, l) })
	t.Run("personas with the baremetal CLI", func(t *testing.T) { personasWithCLI(t, l) })
	t.Run("no, made-up, revoked and expired tokens", func(t *testing.T) { tokens(t, l) })
}

func personasWithGophercloud(t *testing.T, l *keystoneLane) {
	ctx := t.Context()
	sys := l.client(t, "system-admin")
	create := func(name, owner, lessee string) string {
		t.Helper()
		n, err := nodes.Create(ctx, sys, nodes.CreateOpts{Name: name, Driver: "fake-hardware", Owner: owner,
			DriverInfo: map[string]any{"ipmi_address": "192.0.2.1", "ipmi_password": "bmc-secret"}}).Extract()
		if err != nil {
			t.Fatalf("system admin creates %s: %v", name, err)
		}
		if lessee != "" {
			if _, err := nodes.Update(ctx, sys, n.UUID, nodes.UpdateOpts{nodes.UpdateOperation{Op: nodes.AddOp, Path: "/lessee", Value: lessee}}).Extract(); err != nil {
				t.Fatalf("lease %s: %v", name, err)
			}
		}
		return n.UUID
	}
	nodeA := create("node-a", l.p.ProjectA, "")           // owned by project a
	nodeB := create("node-b", l.p.ProjectB, l.p.ProjectA) // owned by b, leased to a
	create("node-c", "", "")                              // nobody's

	listNames := func(c *gophercloud.ServiceClient) ([]string, error) {
		pages, err := nodes.List(c, nodes.ListOpts{}).AllPages(ctx)
		if err != nil {
			return nil, err
		}
		ns, err := nodes.ExtractNodes(pages)
		var names []string
		for _, n := range ns {
			if strings.HasPrefix(n.Name, "node-") {
				names = append(names, n.Name)
			}
		}
		slices.Sort(names)
		return names, err
	}
	for _, tc := range []struct {
		persona string
		list    []string
		// HTTP status (200 for any success) of GET node-a, its
		// driver_info password, PUT maintenance on node-a and node-b, the
		// driver list and a node create.
		getA         int
		password     string
		maintA       int
		maintB       int
		drivers      int
		createStatus int
	}{
		{"system-admin", []string{"node-a", "node-b", "node-c"}, 200, "bmc-secret", 200, 200, 200, 200},
		{"system-member", []string{"node-a", "node-b", "node-c"}, 200, "******", 200, 200, 200, 403},
		{"system-reader", []string{"node-a", "node-b", "node-c"}, 200, "******", 403, 403, 200, 403},
		{"a-admin", []string{"node-a", "node-b"}, 200, "******", 200, 200, 403, 403},
		{"a-member", []string{"node-a", "node-b"}, 200, "******", 200, 403, 403, 403},
		{"a-reader", []string{"node-a", "node-b"}, 200, "******", 403, 403, 403, 403},
		{"b-member", []string{"node-b"}, 404, "", 404, 200, 403, 403},
		{"b-reader", []string{"node-b"}, 404, "", 404, 403, 403, 403},
	} {
		t.Run(tc.persona, func(t *testing.T) {
			c := l.client(t, tc.persona)
			names, err := listNames(c)
			if err != nil || !slices.Equal(names, tc.list) {
				t.Errorf("node list = %v (%v), want %v", names, err, tc.list)
			}
			n, err := nodes.Get(ctx, c, nodeA).Extract()
			if got := statusOf(err); got != tc.getA {
				t.Errorf("GET node-a: HTTP %d (%v), want %d", got, err, tc.getA)
			} else if err == nil && n.DriverInfo["ipmi_password"] != tc.password {
				t.Errorf("node-a driver_info ipmi_password = %v, want %q", n.DriverInfo["ipmi_password"], tc.password)
			}
			for _, m := range []struct {
				id   string
				want int
			}{{nodeA, tc.maintA}, {nodeB, tc.maintB}} {
				err := nodes.SetMaintenance(ctx, c, m.id, nodes.MaintenanceOpts{Reason: "by " + tc.persona}).ExtractErr()
				if got := statusOf(err); got != m.want {
					t.Errorf("maintenance on %s: HTTP %d (%v), want %d", m.id, got, err, m.want)
				}
				if err == nil {
					if err := nodes.UnsetMaintenance(ctx, c, m.id).ExtractErr(); err != nil {
						t.Errorf("clear maintenance: %v", err)
					}
				}
			}
			_, err = drivers.ListDrivers(c, drivers.ListDriversOpts{}).AllPages(ctx)
			if got := statusOf(err); got != tc.drivers {
				t.Errorf("driver list: HTTP %d (%v), want %d", got, err, tc.drivers)
			}
			_, err = nodes.Create(ctx, c, nodes.CreateOpts{Driver: "fake-hardware", Name: "by-" + tc.persona}).Extract()
			if got := statusOf(err); got != tc.createStatus {
				t.Errorf("node create: HTTP %d (%v), want %d", got, err, tc.createStatus)
			}
		})
	}

	// Field rules of a PATCH: the lessee may not repoint the ramdisk, the
	// owner's member may; only a system persona changes the owner.
	for _, tc := range []struct {
		persona, node, path string
		value               any
		want                int
	}{
		{"a-member", nodeB, "/driver_info/deploy_kernel", "http://attacker/kernel", 403},
		{"b-member", nodeB, "/driver_info/deploy_kernel", "http://example/kernel", 200},
		{"a-admin", nodeA, "/owner", l.p.ProjectB, 403},
		{"a-member", nodeA, "/extra/note", "ok", 200},
		{"system-member", nodeA, "/owner", l.p.ProjectA, 200},
	} {
		_, err := nodes.Update(ctx, l.client(t, tc.persona), tc.node, nodes.UpdateOpts{
			nodes.UpdateOperation{Op: nodes.AddOp, Path: tc.path, Value: tc.value}}).Extract()
		if got := statusOf(err); got != tc.want {
			t.Errorf("%s PATCH %s %s: HTTP %d (%v), want %d", tc.persona, tc.node, tc.path, got, err, tc.want)
		}
	}

	// The inspector's API is the system admin's, on both ports.
	for _, base := range []string{l.ferro.URL, l.ferro.InspectorURL} {
		for persona, want := range map[string]int{"system-admin": 200, "system-reader": 403, "a-admin": 403} {
			tk := l.ks.IssueToken(t, l.p.Users[persona].Credentials())
			if got := get(t, base+"/v1/introspection", tk.ID); got != want {
				t.Errorf("%s GET %s/v1/introspection: %d, want %d", persona, base, got, want)
			}
		}
	}
}

// get sends GET url with an X-Auth-Token (none when "") and returns the status.
func get(t *testing.T, url, token string) int {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), http.MethodGet, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	if token != "" {
		req.Header.Set("X-Auth-Token", token)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	return resp.StatusCode
}

func tokens(t *testing.T, l *keystoneLane) {
	const cacheTime = 2
	url := l.startFerro(t, cacheTime).URL + "/v1/nodes"
	if got := get(t, url, ""); got != http.StatusUnauthorized {
		t.Errorf("no token: %d, want 401", got)
	}
	if got := get(t, url, "not-a-token"); got != http.StatusUnauthorized {
		t.Errorf("a made-up token: %d, want 401", got)
	}
	req, _ := http.NewRequest(http.MethodGet, url, nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if got, want := resp.Header.Get("WWW-Authenticate"), fmt.Sprintf("Keystone uri=%q", l.ks.AuthURL()); got != want {
		t.Errorf("WWW-Authenticate = %q, want %q", got, want)
	}

	tk := l.ks.IssueToken(t, l.p.Users["system-reader"].Credentials())
	if got := get(t, url, tk.ID); got != http.StatusOK {
		t.Fatalf("a fresh token: %d, want 200", got)
	}
	// Revoked in Keystone: refused once the validation cached for
	// token_cache_time has run out.
	l.ks.RevokeToken(t, tk.ID)
	waitStatus(t, url, tk.ID, http.StatusUnauthorized, time.Duration(cacheTime)*time.Second+30*time.Second)

	// A service token without the service role, with service_token_roles_required.
	user := l.ks.IssueToken(t, l.p.Users["system-reader"].Credentials())
	notService := l.ks.IssueToken(t, l.p.Users["a-member"].Credentials())
	req, _ = http.NewRequest(http.MethodGet, url, nil)
	req.Header.Set("X-Auth-Token", user.ID)
	req.Header.Set("X-Service-Token", notService.ID)
	resp, err = http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("service token without the service role: %d, want 401", resp.StatusCode)
	}

	// An expired token: one issued from an application credential that
	// expires in a few seconds expires with it. On a busy machine the
	// first request may come after the expiry: that proves nothing, so the
	// credential lives longer next time; a 401 before it is a failure.
	for _, life := range []time.Duration{3 * time.Second, 15 * time.Second, time.Minute} {
		before := time.Now()
		expiring := l.expiringToken(t, "a-reader", life)
		got := get(t, url, expiring)
		if got != http.StatusOK && time.Now().Before(before.Add(life)) {
			t.Fatalf("the expiring token before its expiry: %d, want 200", got)
		}
		if got == http.StatusOK {
			waitStatus(t, url, expiring, http.StatusUnauthorized, life+60*time.Second)
			return
		}
		t.Logf("the token of a %v credential was first used after its expiry (a busy machine); again, longer", life)
	}
	t.Fatal("no expiring token could be used before its expiry")
}

// waitStatus polls url with token until it answers want.
func waitStatus(t *testing.T, url, token string, want int, within time.Duration) {
	t.Helper()
	end := time.Now().Add(within)
	for {
		got := get(t, url, token)
		if got == want {
			return
		}
		if time.Now().After(end) {
			t.Fatalf("GET %s still answers %d after %v, want %d", url, got, within, want)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// expiringToken creates an application credential for persona that
// expires after d and returns a token issued from it.
func (l *keystoneLane) expiringToken(t *testing.T, persona string, d time.Duration) string {
	t.Helper()
	u := l.p.Users[persona]
	tk := l.ks.IssueToken(t, u.Credentials())
	exp := time.Now().Add(d).UTC().Format("2006-01-02T15:04:05.000000")
	body := map[string]any{"application_credential": map[string]any{"name": "expiring", "expires_at": exp}}
	var out struct {
		AC struct {
			ID     string `json:"id"`
			Secret string `json:"secret"`
		} `json:"application_credential"`
	}
	if err := sendJSON(t.Context(), l.ks.AuthURL()+"/users/"+u.ID+"/application_credentials", tk.ID, body, &out); err != nil {
		ferrotest.SkipOrFail(t, "application credentials: %v", err)
	}
	auth := map[string]any{"auth": map[string]any{"identity": map[string]any{
		"methods":                []string{"application_credential"},
		"application_credential": map[string]any{"id": out.AC.ID, "secret": out.AC.Secret},
	}}}
	id, err := issueRaw(t.Context(), l.ks.AuthURL()+"/auth/tokens", auth)
	if err != nil {
		t.Fatalf("token from the application credential: %v", err)
	}
	return id
}

// cli runs the baremetal CLI as persona, with Keystone password auth and
// the endpoint from the catalog.
func (l *keystoneLane) cli(t *testing.T, persona string, args ...string) (string, error) {
	t.Helper()
	u := l.p.Users[persona]
	global := []string{"--os-auth-type", "password", "--os-auth-url", l.ks.AuthURL(),
		"--os-username", u.Name, "--os-password", u.Password, "--os-user-domain-name", "Default",
		"--os-region-name", keystonetest.Region, "--os-interface", "public", "--os-baremetal-api-version", "1.82"}
	if u.ProjectID == "" {
		global = append(global, "--os-system-scope", "all")
	} else {
		global = append(global, "--os-project-id", u.ProjectID, "--os-project-domain-name", "Default")
	}
	return baremetalCLI(t, append(global, args...)...)
}

func personasWithCLI(t *testing.T, l *keystoneLane) {
	out, err := l.cli(t, "system-admin", "node", "create", "--driver", "fake-hardware", "--name", "cli-a",
		"--driver-info", "ipmi_password=cli-secret")
	if err != nil {
		t.Fatalf("system admin: node create: %v\n%s", err, out)
	}
	// This CLI's node create has no --owner.
	if out, err := l.cli(t, "system-admin", "node", "set", "cli-a", "--owner", l.p.ProjectA); err != nil {
		t.Fatalf("system admin: node set --owner: %v\n%s", err, out)
	}
	// Each command is a Python start and a Keystone login: a few, chosen
	// to cover reading, masking, scoping and a refused change.
	show := func(persona string) string {
		t.Helper()
		out, _ := l.cli(t, persona, "node", "show", "cli-a", "--fields", "driver_info", "-f", "json")
		return out
	}
	if out := show("system-admin"); !strings.Contains(out, `"ipmi_password": "cli-secret"`) {
		t.Errorf("system admin: node show does not show the password:\n%s", out)
	}
	if out := show("a-reader"); !strings.Contains(out, `"ipmi_password": "******"`) {
		t.Errorf("a-reader: node show does not mask the password:\n%s", out)
	}
	if out := show("b-admin"); !strings.Contains(out, "HTTP 404") {
		t.Errorf("b-admin: node show of project a's node is not 404:\n%s", out)
	}
	if out, err := l.cli(t, "a-reader", "node", "list", "-f", "value", "-c", "Name"); err != nil || !strings.Contains(out, "cli-a") {
		t.Errorf("a-reader: node list: %v\n%s", err, out)
	}
	if out, err := l.cli(t, "a-reader", "node", "maintenance", "set", "cli-a"); err == nil || !strings.Contains(out, "HTTP 403") {
		t.Errorf("a-reader: maintenance set was not refused with 403: %v\n%s", err, out)
	}
	if out, err := l.cli(t, "a-member", "node", "maintenance", "set", "cli-a"); err != nil {
		t.Errorf("a-member: maintenance set on its project's node: %v\n%s", err, out)
	}
	if out, err := baremetalCLI(t, "--os-auth-type", "none", "--os-endpoint", l.ferro.URL, "node", "list"); err == nil || !strings.Contains(out, "HTTP 401") {
		t.Errorf("no token: %v\n%s", err, out)
	}
}
