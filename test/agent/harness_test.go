// Package agent_test runs ferro-agent against ferro's real inspector: a
// report collected from a fixture tree posted by the agent's Poster, and a
// QEMU machine booting `ferro ramdisk build`'s kernel and initramfs.
package agent_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ferrometal/ferro/internal/testing/ferrotest"
	"github.com/ferrometal/ferro/test/inspection"
)

const stateTimeout = 3 * time.Minute

// lab is a ferro serve process doing managed PXE inspections with the
// fake-hardware driver: the test plays the machine.
type lab struct {
	t        *testing.T
	srv      *ferrotest.Server
	tftpRoot string
	images   string
	// inspectorPort is the inspector's own listener, the callback's.
	inspectorPort int
}

func startLab(t *testing.T, images string) *lab {
	t.Helper()
	dir := t.TempDir()
	l := &lab{t: t, images: images, tftpRoot: filepath.Join(dir, "tftpboot"), inspectorPort: ferrotest.FreePort(t)}
	httpRoot := filepath.Join(dir, "httpboot")
	for _, d := range []string{l.tftpRoot, httpRoot} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	l.srv = ferrotest.Start(t, ferrotest.WithEnv(
		"FERRO_INSPECTOR_LISTEN_PORT="+strconv.Itoa(l.inspectorPort),
		"FERRO_INSPECTOR_ALLOW_LOOPBACK_CALLBACK=true",
		"FERRO_INSPECTOR_INTROSPECTION_DELAY=0",
		"FERRO_CONDUCTOR_FILE_URL_ALLOWED_PATHS="+images,
		"FERRO_PXE_TFTP_ROOT="+l.tftpRoot,
		"FERRO_DEPLOY_HTTP_ROOT="+httpRoot,
		"FERRO_DEPLOY_HTTP_URL=http://192.0.2.10:8080",
	))
	return l
}

// enroll creates a manageable fake-hardware node with one PXE port whose
// deploy kernel and ramdisk are the files kernel and ramdisk in l.images.
func (l *lab) enroll(mac, kernel, ramdisk string) string {
	l.t.Helper()
	var created struct {
		UUID string `json:"uuid"`
	}
	ferrotest.Must(l.t, l.srv.URL, http.MethodPost, "/v1/nodes", map[string]any{
		"driver": "fake-hardware", "boot_interface": "pxe", "network_interface": "noop", "inspect_interface": "inspector",
		"driver_info": map[string]any{
			"deploy_kernel":  "file://" + filepath.Join(l.images, kernel),
			"deploy_ramdisk": "file://" + filepath.Join(l.images, ramdisk),
		},
	}, &created)
	ferrotest.Must(l.t, l.srv.URL, http.MethodPost, "/v1/ports", map[string]any{"node_uuid": created.UUID, "address": mac, "pxe_enabled": true}, nil)
	ferrotest.Must(l.t, l.srv.URL, http.MethodPut, "/v1/nodes/"+created.UUID+"/states/provision", map[string]any{"target": "manage"}, nil)
	l.waitState(created.UUID, "manageable", stateTimeout)
	return created.UUID
}

// inspect starts a managed inspection and returns the boot configuration
// ferro wrote for mac: the callback URL and the token the agent gets.
func (l *lab) inspect(uuid, mac string) *inspection.BootConfig {
	l.t.Helper()
	ferrotest.Must(l.t, l.srv.URL, http.MethodPut, "/v1/nodes/"+uuid+"/states/provision", map[string]any{"target": "inspect"}, nil)
	l.waitState(uuid, "inspect wait", stateTimeout)
	bc, err := inspection.ReadBootConfig("pxe", l.tftpRoot, mac)
	if err != nil {
		l.t.Fatalf("boot configuration: %v", err)
	}
	return bc
}

func (l *lab) node(uuid string) map[string]any {
	l.t.Helper()
	var out map[string]any
	ferrotest.Must(l.t, l.srv.URL, http.MethodGet, "/v1/nodes/"+uuid, nil, &out)
	return out
}

func (l *lab) waitState(uuid, want string, timeout time.Duration) map[string]any {
	l.t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		got := l.node(uuid)
		st, _ := got["provision_state"].(string)
		if st == want {
			return got
		}
		if st == "inspect failed" || (st == "manageable" && want != "manageable") {
			l.t.Fatalf("node %s is in %q, want %q; last_error: %v", uuid, st, want, got["last_error"])
		}
		if time.Now().After(deadline) {
			l.t.Fatalf("node %s still in %q after %v, want %q; last_error: %v", uuid, st, timeout, want, got["last_error"])
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// inventory is GET /v1/nodes/{uuid}/inventory (API 1.81): what the
// inspector stored from the report.
func (l *lab) inventory(uuid string) map[string]any {
	l.t.Helper()
	req, _ := http.NewRequest(http.MethodGet, l.srv.URL+"/v1/nodes/"+uuid+"/inventory", nil)
	req.Header.Set("X-OpenStack-Ironic-API-Version", "1.81")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		l.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		l.t.Fatalf("GET inventory: %s %s", resp.Status, b)
	}
	var out struct {
		Inventory map[string]any `json:"inventory"`
	}
	if err := json.Unmarshal(b, &out); err != nil {
		l.t.Fatal(err)
	}
	return out.Inventory
}

// callbackRecorder is a reverse proxy in front of the inspector's callback
// that notes when a report arrives and with which token header, so the
// test can time power-on → report.
type callbackRecorder struct {
	URL string // http://127.0.0.1:port
	mu  sync.Mutex
	at  time.Time
	got chan struct{}
	hdr http.Header
}

func startRecorder(t *testing.T, inspectorPort int) *callbackRecorder {
	t.Helper()
	target, _ := url.Parse("http://127.0.0.1:" + strconv.Itoa(inspectorPort))
	proxy := httputil.NewSingleHostReverseProxy(target)
	r := &callbackRecorder{got: make(chan struct{})}
	var once sync.Once
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{
		ReadHeaderTimeout: 10 * time.Second,
		Handler: http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
			if req.Method == http.MethodPost {
				r.mu.Lock()
				r.at, r.hdr = time.Now(), req.Header.Clone()
				r.mu.Unlock()
				once.Do(func() { close(r.got) })
			}
			proxy.ServeHTTP(w, req)
		}),
	}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
	r.URL = "http://" + ln.Addr().String()
	return r
}

// portOf is a callback URL's port.
func portOf(t *testing.T, raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		t.Fatal(err)
	}
	return u.Port()
}

func str(v any) string {
	switch v := v.(type) {
	case nil:
		return ""
	case string:
		return v
	case float64:
		return strconv.FormatFloat(v, 'f', -1, 64)
	}
	return fmt.Sprint(v)
}

func dump(v any) string {
	var b bytes.Buffer
	e := json.NewEncoder(&b)
	e.SetIndent("", "  ")
	e.Encode(v)
	return b.String()
}

var _ = context.Background
var _ = strings.Contains
