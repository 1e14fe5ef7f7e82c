// Package inspector_test runs ferro's inspector as its own process
// (`ferro serve --role inspector`) against a separate `ferro serve --role
// api,conductor`, each reaching the other over HTTP: the inspector through
// [ironic]endpoint_override with gophercloud baremetal/v1, the conductor
// through [inspector]endpoint_override with gophercloud
// baremetalintrospection/v1. It is the deployment in which ferro's
// inspector stands in for ironic-inspector next to an Ironic.
package inspector_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/gophercloud/gophercloud/v2"
	"github.com/gophercloud/gophercloud/v2/openstack"
	bmbasic "github.com/gophercloud/gophercloud/v2/openstack/baremetal/httpbasic"
	bmnoauth "github.com/gophercloud/gophercloud/v2/openstack/baremetal/noauth"
	"github.com/gophercloud/gophercloud/v2/openstack/baremetal/v1/nodes"
	"github.com/gophercloud/gophercloud/v2/openstack/baremetal/v1/ports"
	ispbasic "github.com/gophercloud/gophercloud/v2/openstack/baremetalintrospection/httpbasic"
	ispnoauth "github.com/gophercloud/gophercloud/v2/openstack/baremetalintrospection/noauth"
	"github.com/gophercloud/gophercloud/v2/openstack/baremetalintrospection/v1/introspection"

	"github.com/ferrometal/ferro/internal/testing/ferrotest"
	"github.com/ferrometal/ferro/internal/testing/keystonetest"
	"github.com/ferrometal/ferro/test/inspection"
)

const (
	pxeMAC   = "52:54:00:5a:00:01"
	otherMAC = "52:54:00:5a:00:02"
	deadline = 60 * time.Second // generous: the status poll is every second
)

// referenceReport is the reference IPA payload (testdata/ipa/example.json)
// with its NICs' MACs replaced by the node's.
func referenceReport(t *testing.T) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", "testdata", "ipa", "example.json"))
	if err != nil {
		t.Fatal(err)
	}
	s := string(b)
	for from, to := range map[string]string{"3c:fd:fe:11:22:30": pxeMAC, "3c:fd:fe:11:22:31": otherMAC} {
		s = strings.ReplaceAll(s, from, to)
		s = strings.ReplaceAll(s, strings.ReplaceAll(from, ":", "-"), strings.ReplaceAll(to, ":", "-"))
	}
	return []byte(s)
}

// getOK is a readiness check for a listener the harness does not know.
func getOK(url string) func(ctx context.Context, s *ferrotest.Server) error {
	return func(ctx context.Context, _ *ferrotest.Server) error {
		ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
		defer cancel()
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
		if err != nil {
			return err
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			return err
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			return fmt.Errorf("GET %s answered %s", url, resp.Status)
		}
		return nil
	}
}

// splitAuth is how the two processes and the test's clients authenticate.
type splitAuth struct {
	// apiEnv and inspectorEnv are added to each process's environment.
	apiEnv, inspectorEnv []string
	// bm and ic are the test's clients of the bare metal API and the inspector.
	bm func(endpoint string) (*gophercloud.ServiceClient, error)
	ic func(endpoint string) (*gophercloud.ServiceClient, error)
}

var noauth = splitAuth{
	bm: func(e string) (*gophercloud.ServiceClient, error) {
		return bmnoauth.NewBareMetalNoAuth(bmnoauth.EndpointOpts{IronicEndpoint: e})
	},
	ic: func(e string) (*gophercloud.ServiceClient, error) {
		return ispnoauth.NewBareMetalIntrospectionNoAuth(ispnoauth.EndpointOpts{IronicInspectorEndpoint: e})
	},
}

func TestSplit_ManagedInspectionWithInspectorInItsOwnProcess(t *testing.T) {
	runSplit(t, noauth)
}

// TestSplit_WithHTTPBasic runs the split deployment with auth_strategy
// http_basic on both processes: each reaches the other with its client
// section's credentials ([inspector] and [ironic] auth_type http_basic).
func TestSplit_WithHTTPBasic(t *testing.T) {
	users := ferrotest.Htpasswd(t, nil, "conductor", "c-pass", "inspector", "i-pass", "operator", "o-pass")
	server := []string{"FERRO_DEFAULT_AUTH_STRATEGY=http_basic", "FERRO_DEFAULT_HTTP_BASIC_AUTH_USER_FILE=" + users}
	runSplit(t, splitAuth{
		apiEnv: slices.Concat(server, []string{"FERRO_INSPECTOR_AUTH_TYPE=http_basic",
			"FERRO_INSPECTOR_USERNAME=conductor", "FERRO_INSPECTOR_PASSWORD=c-pass"}),
		inspectorEnv: slices.Concat(server, []string{"FERRO_IRONIC_AUTH_TYPE=http_basic",
			"FERRO_IRONIC_USERNAME=inspector", "FERRO_IRONIC_PASSWORD=i-pass"}),
		bm: func(e string) (*gophercloud.ServiceClient, error) {
			return bmbasic.NewBareMetalHTTPBasic(bmbasic.EndpointOpts{IronicEndpoint: e, IronicUser: "operator", IronicUserPassword: "o-pass"})
		},
		ic: func(e string) (*gophercloud.ServiceClient, error) {
			return ispbasic.NewBareMetalIntrospectionHTTPBasic(ispbasic.EndpointOpts{IronicInspectorEndpoint: e,
				IronicInspectorUser: "operator", IronicInspectorUserPassword: "o-pass"})
		},
	})
}

// TestSplit_WithKeystone runs the split deployment with auth_strategy
// keystone on both processes, against a real Keystone: each process
// validates tokens and reaches the other with a system-scoped token of
// its client section's user.
func TestSplit_WithKeystone(t *testing.T) {
	ks := keystonetest.Start(t)
	authtoken := []string{"FERRO_DEFAULT_AUTH_STRATEGY=keystone",
		"FERRO_KEYSTONE_AUTHTOKEN_AUTH_URL=" + ks.AuthURL(), "FERRO_KEYSTONE_AUTHTOKEN_USERNAME=" + keystonetest.AdminUser,
		"FERRO_KEYSTONE_AUTHTOKEN_PASSWORD=" + keystonetest.AdminPassword, "FERRO_KEYSTONE_AUTHTOKEN_PROJECT_NAME=" + keystonetest.AdminProject}
	client := func(section string) []string {
		return []string{section + "_AUTH_TYPE=password", section + "_AUTH_URL=" + ks.AuthURL(),
			section + "_USERNAME=" + keystonetest.AdminUser, section + "_PASSWORD=" + keystonetest.AdminPassword,
			section + "_SYSTEM_SCOPE=all"}
	}
	keystoneClient := func(typ string) func(string) (*gophercloud.ServiceClient, error) {
		return func(e string) (*gophercloud.ServiceClient, error) {
			pc, err := openstack.AuthenticatedClient(t.Context(), gophercloud.AuthOptions{IdentityEndpoint: ks.AuthURL(),
				Username: keystonetest.AdminUser, Password: keystonetest.AdminPassword, DomainName: "Default",
				Scope: &gophercloud.AuthScope{System: true}})
			if err != nil {
				return nil, err
			}
			return &gophercloud.ServiceClient{ProviderClient: pc, Endpoint: gophercloud.NormalizeURL(e), Type: typ}, nil
		}
	}
	runSplit(t, splitAuth{
		apiEnv:       slices.Concat(authtoken, client("FERRO_INSPECTOR")),
		inspectorEnv: slices.Concat(authtoken, client("FERRO_IRONIC")),
		bm:           keystoneClient("baremetal"),
		ic:           keystoneClient("baremetal-introspection"),
	})
}

func runSplit(t *testing.T, sa splitAuth) {
	ctx := t.Context()
	dir := t.TempDir()
	images := filepath.Join(dir, "images")
	tftpRoot := filepath.Join(dir, "tftpboot")
	httpRoot := filepath.Join(dir, "httpboot")
	for _, d := range []string{images, tftpRoot, httpRoot} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for name, data := range map[string]string{"ipa.kernel": "deploy kernel\n", "ipa.initramfs": "deploy ramdisk\n"} {
		if err := os.WriteFile(filepath.Join(images, name), []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}

	inspectorURL := "http://127.0.0.1:" + strconv.Itoa(ferrotest.FreePort(t))
	// The bare metal side. It has no inspector role, so it opens no
	// inspector listener; the port it would use is set to one nobody
	// listens on, and checked below.
	unusedPort := ferrotest.FreePort(t)
	api := ferrotest.Start(t, ferrotest.WithRole("api,conductor"), ferrotest.WithEnv(sa.apiEnv...), ferrotest.WithEnv(
		"FERRO_INSPECTOR_ENDPOINT_OVERRIDE="+inspectorURL,
		"FERRO_INSPECTOR_LISTEN_PORT="+strconv.Itoa(unusedPort),
		"FERRO_INSPECTOR_ALLOW_LOOPBACK_CALLBACK=true",
		// The stand-in agent presents the token, as ferro-agent does.
		"FERRO_INSPECTOR_AGENT=ferro-agent",
		"FERRO_INSPECTOR_STATUS_CHECK_PERIOD=1",
		"FERRO_CONDUCTOR_FILE_URL_ALLOWED_PATHS="+images,
		"FERRO_PXE_TFTP_ROOT="+tftpRoot,
		"FERRO_DEPLOY_HTTP_ROOT="+httpRoot,
	))
	// The inspector, with its own database, reaching the bare metal API
	// over HTTP. The harness shows both processes' output if the test fails.
	ferrotest.Start(t, ferrotest.WithRole("inspector"),
		ferrotest.WithReadyCheck(getOK(inspectorURL+"/")),
		ferrotest.WithEnv(sa.inspectorEnv...),
		ferrotest.WithEnv(
			"FERRO_INSPECTOR_LISTEN_PORT="+strings.TrimPrefix(inspectorURL, "http://127.0.0.1:"),
			"FERRO_IRONIC_ENDPOINT_OVERRIDE="+api.URL,
		))
	if strings.Contains(api.Log(), "server=inspector") {
		t.Errorf("the api,conductor process opened an inspector listener:\n%s", api.Log())
	}
	if resp, err := http.Get(fmt.Sprintf("http://127.0.0.1:%d/", unusedPort)); err == nil {
		resp.Body.Close()
		t.Errorf("something answers on the api process's [inspector]listen_port %d", unusedPort)
	}
	// Nor does the api process serve the inspector's routes on its own port.
	if resp, err := http.Get(api.URL + "/v1/introspection"); err == nil {
		resp.Body.Close()
		if resp.StatusCode == http.StatusOK {
			t.Errorf("GET %s/v1/introspection = 200 on the api-only process", api.URL)
		}
	}

	if sa.apiEnv != nil {
		// Authentication is on: without credentials both processes refuse.
		for _, u := range []string{api.URL + "/v1/nodes", inspectorURL + "/v1/introspection"} {
			resp, err := http.Get(u)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if resp.StatusCode != http.StatusUnauthorized {
				t.Errorf("GET %s without credentials = %s, want 401", u, resp.Status)
			}
		}
	}
	bm, err := sa.bm(api.URL + "/v1")
	if err != nil {
		t.Fatal(err)
	}
	bm.Microversion = "1.82"
	ic, err := sa.ic(inspectorURL + "/v1")
	if err != nil {
		t.Fatal(err)
	}

	n, err := nodes.Create(ctx, bm, nodes.CreateOpts{
		Name: "split-1", Driver: "fake-hardware",
		BootInterface: "pxe", InspectInterface: "inspector", NetworkInterface: "noop",
		DriverInfo: map[string]any{
			"deploy_kernel":  "file://" + filepath.Join(images, "ipa.kernel"),
			"deploy_ramdisk": "file://" + filepath.Join(images, "ipa.initramfs"),
		},
	}).Extract()
	if err != nil {
		t.Fatalf("create node: %v", err)
	}
	if _, err := ports.Create(ctx, bm, ports.CreateOpts{NodeUUID: n.UUID, Address: pxeMAC}).Extract(); err != nil {
		t.Fatalf("create port: %v", err)
	}

	provision := func(target nodes.TargetProvisionState, want string) *nodes.Node {
		t.Helper()
		if err := nodes.ChangeProvisionState(ctx, bm, n.UUID, nodes.ProvisionStateOpts{Target: target}).ExtractErr(); err != nil {
			t.Fatalf("provision %s: %v", target, err)
		}
		return waitNode(t, bm, n.UUID, want)
	}
	provision(nodes.TargetManage, "manageable")
	provision(nodes.TargetInspect, "inspect wait")

	// The managed path: the conductor prepared a PXE config whose kernel
	// command line carries the callback (the inspector's own listener) and
	// a token, and started the introspection without managed boot.
	bc, err := inspection.ReadBootConfig("pxe", tftpRoot, pxeMAC)
	if err != nil {
		t.Fatalf("boot config: %v", err)
	}
	if bc.Callback != inspectorURL+"/v1/continue" || bc.Token == "" {
		t.Fatalf("kernel command line %q: callback %q token %q", bc.Cmdline, bc.Callback, bc.Token)
	}
	st, err := introspection.GetIntrospectionStatus(ctx, ic, n.UUID).Extract()
	if err != nil || st.State != "waiting" || st.Finished {
		t.Fatalf("introspection before the report: %+v %v", st, err)
	}

	// A report without the token is refused and changes nothing.
	report := referenceReport(t)
	if code, body, err := post(ctx, bc.Callback, "", report); err != nil || code != http.StatusForbidden {
		t.Fatalf("report without the token = %d %s %v, want 403", code, body, err)
	}
	// The agent's report, with the token from its command line.
	code, body, err := post(ctx, bc.Callback, bc.Token, report)
	if err != nil || code != http.StatusOK {
		t.Fatalf("report = %d %s %v", code, body, err)
	}
	if want := `{"uuid":"` + n.UUID + `"}`; string(body) != want {
		t.Errorf("report answer %s, want %s", body, want)
	}

	got := waitNode(t, bm, n.UUID, "manageable")
	for k, want := range map[string]string{"cpus": "32", "cpu_arch": "x86_64", "memory_mb": "131072", "local_gb": "893"} {
		if got.Properties[k] != want {
			t.Errorf("properties[%s] = %#v, want %q", k, got.Properties[k], want)
		}
	}
	if got.LastError != "" || got.PowerState != "power off" {
		t.Errorf("last_error %q power_state %q", got.LastError, got.PowerState)
	}
	pl, err := ports.ListDetail(bm, ports.ListOpts{NodeUUID: n.UUID}).AllPages(ctx)
	if err != nil {
		t.Fatal(err)
	}
	ps, err := ports.ExtractPorts(pl)
	if err != nil || len(ps) != 1 {
		t.Fatalf("ports %+v %v", ps, err)
	}
	wantLLC := map[string]any{"switch_id": "b8:59:9f:1a:2b:3c", "port_id": "Ethernet1/12", "switch_info": "leaf-r12a"}
	if diff := cmp.Diff(wantLLC, ps[0].LocalLinkConnection); diff != "" {
		t.Errorf("local_link_connection (-want +got):\n%s", diff)
	}

	// The boot files are gone: the node's directory and its MAC's entry.
	for _, p := range []string{filepath.Join(tftpRoot, n.UUID), bc.Path} {
		if _, err := os.Lstat(p); !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("%s left behind after inspection (%v)", p, err)
		}
	}

	// The inspector's side: finished, with the data the conductor stored as inventory.
	st, err = introspection.GetIntrospectionStatus(ctx, ic, n.UUID).Extract()
	if err != nil || st.State != "finished" || !st.Finished || st.Error != "" {
		t.Errorf("introspection after the report: %+v %v", st, err)
	}
	data, err := introspection.GetIntrospectionData(ctx, ic, n.UUID).Extract()
	if err != nil || data.CPUs != 32 || data.LocalGB != 893 {
		t.Errorf("introspection data: cpus %d local_gb %d %v", data.CPUs, data.LocalGB, err)
	}
	var inv struct {
		Inventory  map[string]any `json:"inventory"`
		PluginData map[string]any `json:"plugin_data"`
	}
	if _, err := bm.Get(ctx, bm.ServiceURL("nodes", n.UUID, "inventory"), &inv, &gophercloud.RequestOpts{OkCodes: []int{200}}); err != nil {
		t.Fatalf("inventory: %v", err)
	}
	if cpu, _ := inv.Inventory["cpu"].(map[string]any); fmt.Sprint(cpu["count"]) != "32" {
		t.Errorf("inventory cpu %v", inv.Inventory["cpu"])
	}
}

func post(ctx context.Context, url, token string, body []byte) (int, []byte, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		return 0, nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	if token != "" {
		req.Header.Set(inspection.TokenHeader, token)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, nil, err
	}
	defer resp.Body.Close()
	var buf bytes.Buffer
	_, err = buf.ReadFrom(resp.Body)
	return resp.StatusCode, bytes.TrimSpace(buf.Bytes()), err
}

// waitNode polls until the node is in state want; a stable state must have
// no target (inspect wait keeps "manageable" as its target, as in Ironic).
func waitNode(t *testing.T, c *gophercloud.ServiceClient, id, want string) *nodes.Node {
	t.Helper()
	end := time.Now().Add(deadline)
	for {
		n, err := nodes.Get(t.Context(), c, id).Extract()
		if err != nil {
			t.Fatal(err)
		}
		if n.ProvisionState == want && (n.TargetProvisionState == "" || want == "inspect wait") {
			return n
		}
		if n.ProvisionState == "inspect failed" || time.Now().After(end) {
			raw, _ := json.Marshal(n)
			t.Fatalf("node %s in %q (target %q, last_error %q), want %q: %s", id, n.ProvisionState, n.TargetProvisionState, n.LastError, want, raw)
		}
		time.Sleep(50 * time.Millisecond)
	}
}
