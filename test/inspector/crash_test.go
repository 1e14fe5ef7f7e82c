package inspector_test

import (
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"

	bmnoauth "github.com/gophercloud/gophercloud/v2/openstack/baremetal/noauth"
	"github.com/gophercloud/gophercloud/v2/openstack/baremetal/v1/nodes"
	"github.com/gophercloud/gophercloud/v2/openstack/baremetal/v1/ports"

	"github.com/ferrometal/ferro/internal/testing/ferrotest"
	"github.com/ferrometal/ferro/test/inspection"
)

// holdingProxy forwards to the bare metal API but, while holding, keeps
// every PATCH (the inspector applying what it learned) waiting: the
// inspector is then in the middle of processing a report.
type holdingProxy struct {
	*httptest.Server
	mu      sync.Mutex
	holding bool
	held    chan struct{} // closed when the first PATCH is held
	once    sync.Once
	release chan struct{}
}

func newHoldingProxy(t *testing.T, target string) *holdingProxy {
	u, err := url.Parse(target)
	if err != nil {
		t.Fatal(err)
	}
	p := &holdingProxy{holding: true, held: make(chan struct{}), release: make(chan struct{})}
	rp := httputil.NewSingleHostReverseProxy(u)
	p.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p.mu.Lock()
		hold := p.holding && r.Method == http.MethodPatch
		p.mu.Unlock()
		if hold {
			p.once.Do(func() { close(p.held) })
			select {
			case <-p.release:
			case <-r.Context().Done():
			}
			// The inspector that sent it is gone: drop the request.
			http.Error(w, "held", http.StatusServiceUnavailable)
			return
		}
		rp.ServeHTTP(w, r)
	}))
	t.Cleanup(func() { p.stopHolding(); p.Close() })
	return p
}

func (p *holdingProxy) stopHolding() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.holding {
		p.holding = false
		close(p.release)
	}
}

// TestSplit_KillDuringProcessingRecoversAtStart: the inspector process is
// killed (SIGKILL) while it processes a report — it has stored the raw
// report and moved the introspection to processing, and is applying the
// result to the node. At its next start it processes the stored report
// again, so the node ends manageable at once instead of waiting in inspect
// wait for [conductor]inspect_wait_timeout.
func TestSplit_KillDuringProcessingRecoversAtStart(t *testing.T) {
	ctx := t.Context()
	dir := t.TempDir()
	images := filepath.Join(dir, "images")
	tftpRoot := filepath.Join(dir, "tftpboot")
	inspectorData := filepath.Join(dir, "inspector-data")
	for _, d := range []string{images, tftpRoot, filepath.Join(dir, "httpboot"), inspectorData} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for name, data := range map[string]string{"ipa.kernel": "deploy kernel\n", "ipa.initramfs": "deploy ramdisk\n"} {
		if err := os.WriteFile(filepath.Join(images, name), []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	inspectorPort := strconv.Itoa(ferrotest.FreePort(t))
	inspectorURL := "http://127.0.0.1:" + inspectorPort
	api := ferrotest.Start(t, ferrotest.WithRole("api,conductor"), ferrotest.WithEnv(
		"FERRO_INSPECTOR_ENDPOINT_OVERRIDE="+inspectorURL,
		"FERRO_INSPECTOR_LISTEN_PORT="+strconv.Itoa(ferrotest.FreePort(t)),
		"FERRO_INSPECTOR_ALLOW_LOOPBACK_CALLBACK=true",
		"FERRO_INSPECTOR_STATUS_CHECK_PERIOD=1",
		"FERRO_CONDUCTOR_FILE_URL_ALLOWED_PATHS="+images,
		"FERRO_PXE_TFTP_ROOT="+tftpRoot,
		"FERRO_DEPLOY_HTTP_ROOT="+filepath.Join(dir, "httpboot"),
	))
	proxy := newHoldingProxy(t, api.URL)
	startInspector := func() *ferrotest.Server {
		return ferrotest.Start(t, ferrotest.WithRole("inspector"), ferrotest.WithDataDir(inspectorData),
			ferrotest.WithReadyCheck(getOK(inspectorURL+"/")),
			ferrotest.WithEnv("FERRO_INSPECTOR_LISTEN_PORT="+inspectorPort, "FERRO_IRONIC_ENDPOINT_OVERRIDE="+proxy.URL))
	}
	insp := startInspector()

	bm, err := bmnoauth.NewBareMetalNoAuth(bmnoauth.EndpointOpts{IronicEndpoint: api.URL + "/v1"})
	if err != nil {
		t.Fatal(err)
	}
	bm.Microversion = "1.82"
	n, err := nodes.Create(ctx, bm, nodes.CreateOpts{
		Name: "crash-1", Driver: "fake-hardware",
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
	for _, step := range []struct {
		target nodes.TargetProvisionState
		want   string
	}{{nodes.TargetManage, "manageable"}, {nodes.TargetInspect, "inspect wait"}} {
		if err := nodes.ChangeProvisionState(ctx, bm, n.UUID, nodes.ProvisionStateOpts{Target: step.target}).ExtractErr(); err != nil {
			t.Fatalf("provision %s: %v", step.target, err)
		}
		waitNode(t, bm, n.UUID, step.want)
	}
	bc, err := inspection.ReadBootConfig("pxe", tftpRoot, pxeMAC)
	if err != nil {
		t.Fatalf("boot config: %v", err)
	}

	// The agent posts; the inspector gets as far as updating the node.
	posted := make(chan struct{})
	go func() {
		defer close(posted)
		post(ctx, bc.Callback, bc.Token, referenceReport(t)) // fails: the inspector dies
	}()
	select {
	case <-proxy.held:
	case <-posted:
		t.Fatalf("the report was answered before the inspector updated the node; log:\n%s", insp.Log())
	}
	insp.Kill(t)
	<-posted
	if got := waitNode(t, bm, n.UUID, "inspect wait"); got.Properties["cpus"] != nil {
		t.Fatalf("the killed inspector's update reached the node: %v", got.Properties)
	}

	proxy.stopHolding()
	again := startInspector()
	got := waitNode(t, bm, n.UUID, "manageable")
	if got.LastError != "" || got.Properties["cpus"] != "32" || got.Properties["local_gb"] != "893" {
		t.Errorf("after recovery: last_error %q properties %v", got.LastError, got.Properties)
	}
	if !strings.Contains(again.Log(), "re-processing the stored report") {
		t.Errorf("the restarted inspector did not say it re-processed the report:\n%s", again.Log())
	}
}
