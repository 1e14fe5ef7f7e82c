// Package vm_test is the QEMU lane: ferro serve with its built-in netboot
// in a network namespace, QEMU machines on taps of the namespace's bridge,
// and the `baremetal` CLI driving inspections, all inside the namespace.
package vm_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/ferrometal/ferro/internal/testing/ferrotest"
	"github.com/ferrometal/ferro/internal/testing/netnstest"
)

const (
	bridgeIP = "192.168.77.1"
	apiURL   = "http://" + bridgeIP + ":6385"
	httpURL  = apiURL + "/httpboot"
)

// lab is one namespace with ferro serve in it.
type lab struct {
	t        *testing.T
	ns       *netnstest.NS
	dir      string
	tftpRoot string
	httpRoot string
	images   string
	client   *http.Client
	cliBin   string
	cliEnv   []string

	// lldpStats is lldpcli's statistics, once lldpd runs.
	lldpStats func() string

	cmd  *exec.Cmd
	out  *logBuffer
	done chan struct{}
}

type logBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *logBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *logBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// startLab starts ferro serve inside a new namespace with the built-in
// netboot on its bridge, plus the extra FERRO_* settings in env.
func startLab(t *testing.T, env ...string) *lab {
	t.Helper()
	bin := ferrotest.Binary(t)
	l := &lab{t: t, ns: netnstest.New(t, bridgeIP, 24), dir: t.TempDir(), out: &logBuffer{}, done: make(chan struct{}),
		cliBin: ferrotest.RequireTool(t, "baremetal")}
	l.tftpRoot = filepath.Join(l.dir, "tftpboot")
	l.httpRoot = filepath.Join(l.dir, "httpboot")
	l.images = filepath.Join(l.dir, "images")
	os.MkdirAll(l.images, 0o755)
	l.client = l.ns.HTTPClient()
	base := []string{
		"FERRO_API_HOST_IP=" + bridgeIP,
		"FERRO_API_PORT=6385",
		"FERRO_INSPECTOR_LISTEN_ADDRESS=" + bridgeIP,
		"FERRO_INSPECTOR_LISTEN_PORT=5050",
		"FERRO_INSPECTOR_INTROSPECTION_DELAY=0",
		"FERRO_CONDUCTOR_FILE_URL_ALLOWED_PATHS=" + l.images,
		"FERRO_PXE_TFTP_ROOT=" + l.tftpRoot,
		"FERRO_DEPLOY_HTTP_ROOT=" + l.httpRoot,
		"FERRO_DEPLOY_HTTP_URL=" + httpURL,
		"FERRO_DHCP_DHCP_PROVIDER=builtin",
		"FERRO_NETBOOT_INTERFACE=br0",
		"FERRO_NETBOOT_LISTEN_ADDRESS=" + bridgeIP,
		"FERRO_NETBOOT_RANGE_START=192.168.77.100",
		"FERRO_NETBOOT_RANGE_END=192.168.77.199",
		"FERRO_NETBOOT_NETMASK=255.255.255.0",
		"FERRO_DEFAULT_DEBUG=true",
		// The namespace's bridge is reachable only by the test's VMs.
		"FERRO_API_ALLOW_INSECURE_NOAUTH=true",
		// The VMs run ferro-agent: the callback token is issued and required.
		"FERRO_INSPECTOR_AGENT=ferro-agent",
	}
	l.cmd = l.ns.Command(bin, "serve", "--data-dir", filepath.Join(l.dir, "data"))
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "FERRO_") {
			l.cmd.Env = append(l.cmd.Env, kv)
		}
	}
	l.cmd.Env = append(append(l.cmd.Env, base...), env...)
	l.cmd.Stdout, l.cmd.Stderr = l.out, l.out
	l.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := l.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { l.cmd.Wait(); close(l.done) }()
	t.Cleanup(func() {
		syscall.Kill(-l.cmd.Process.Pid, syscall.SIGTERM)
		select {
		case <-l.done:
		case <-time.After(20 * time.Second):
			syscall.Kill(-l.cmd.Process.Pid, syscall.SIGKILL)
			<-l.done
		}
		if t.Failed() {
			t.Logf("ferro serve output:\n%s", tail(l.out.String(), 20000))
		}
	})
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	for {
		resp, err := l.client.Get(apiURL + "/")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == 200 {
				break
			}
		}
		select {
		case <-l.done:
			t.Fatalf("ferro serve exited:\n%s", l.out)
		case <-ctx.Done():
			t.Fatalf("ferro serve not ready: %v\n%s", err, l.out)
		case <-time.After(100 * time.Millisecond):
		}
	}
	cliDir := t.TempDir()
	l.cliEnv = []string{"HOME=" + cliDir, "XDG_CACHE_HOME=" + cliDir + "/cache", "XDG_CONFIG_HOME=" + cliDir + "/config"}
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "OS_") && !strings.HasPrefix(kv, "HOME=") && !strings.HasPrefix(kv, "XDG_") {
			l.cliEnv = append(l.cliEnv, kv)
		}
	}
	return l
}

func tail(s string, n int) string {
	if len(s) > n {
		return s[len(s)-n:]
	}
	return s
}

// baremetal runs the CLI inside the namespace and returns its stdout.
func (l *lab) baremetal(args ...string) string {
	l.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	full := append([]string{"netns", "exec", l.ns.Name, l.cliBin, "--os-endpoint", apiURL, "--os-auth-type", "none"}, args...)
	cmd := exec.CommandContext(ctx, "ip", full...)
	cmd.Env = l.cliEnv
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		l.t.Fatalf("baremetal %s: %v\nstdout:\n%s\nstderr:\n%s", strings.Join(args, " "), err, stdout.String(), stderr.String())
	}
	return stdout.String()
}

// nodeJSON returns `baremetal node show` as JSON.
func (l *lab) node(ident string) map[string]any {
	l.t.Helper()
	var out map[string]any
	if err := json.Unmarshal([]byte(l.baremetal("node", "show", ident, "-f", "json")), &out); err != nil {
		l.t.Fatal(err)
	}
	return out
}

// waitLog waits until ferro's log matches re.
func (l *lab) waitLog(ctx context.Context, re *regexp.Regexp) error {
	for !re.MatchString(l.out.String()) {
		select {
		case <-ctx.Done():
			return fmt.Errorf("ferro never logged %s", re)
		case <-l.done:
			return fmt.Errorf("ferro exited before it logged %s", re)
		case <-time.After(200 * time.Millisecond):
		}
	}
	return nil
}

// get fetches a URL inside the namespace.
func (l *lab) get(url string) (int, []byte) {
	l.t.Helper()
	resp, err := l.client.Get(url)
	if err != nil {
		l.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	return resp.StatusCode, b
}

// waitState polls the node over the API until its provision state is want.
func (l *lab) waitState(ctx context.Context, uuid, want string) (map[string]any, error) {
	return l.waitNode(ctx, uuid, "provision state "+want, func(n map[string]any) (bool, error) {
		if n["provision_state"] == want {
			return true, nil
		}
		if n["target_provision_state"] == nil && (n["provision_state"] == "inspect failed" || n["provision_state"] == "manageable") {
			return false, fmt.Errorf("node %s settled in %v (last_error %v), want %s", uuid, n["provision_state"], n["last_error"], want)
		}
		return false, nil
	})
}

// waitNode polls the node (the API has no change feed) until done says so
// or fails.
func (l *lab) waitNode(ctx context.Context, uuid, what string, done func(map[string]any) (bool, error)) (map[string]any, error) {
	for {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, apiURL+"/v1/nodes/"+uuid, nil)
		req.Header.Set("X-OpenStack-Ironic-API-Version", "latest")
		resp, err := l.client.Do(req)
		if err == nil {
			var n map[string]any
			err = json.NewDecoder(resp.Body).Decode(&n)
			resp.Body.Close()
			if err == nil {
				ok, err := done(n)
				if ok || err != nil {
					return n, err
				}
			}
		}
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("node %s never reached %s: %v", uuid, what, ctx.Err())
		case <-time.After(500 * time.Millisecond):
		}
	}
}

// waitPowerOff waits until the node is off with no power action pending.
func (l *lab) waitPowerOff(ctx context.Context, uuid string) (map[string]any, error) {
	return l.waitNode(ctx, uuid, "power off", func(n map[string]any) (bool, error) {
		return n["power_state"] == "power off" && n["target_power_state"] == nil, nil
	})
}
