package inspection_test

import (
	"bytes"
	"cmp"
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"io/fs"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ferrometal/ferro/internal/testing/ferrotest"
	"github.com/ferrometal/ferro/internal/testing/neutrontest"
	"github.com/ferrometal/ferro/test/inspection"
)

// One PostgreSQL cluster and one migrated Neutron template for the package.
func TestMain(m *testing.M) { os.Exit(neutrontest.Main(m)) }

const (
	// httpURL is [deploy]http_url: only written into iPXE scripts and DHCP
	// options, never fetched, so a documentation address will do.
	httpURL = "http://192.0.2.10:8080"
	// stateTimeout bounds one wait for a provision state. Neutron makes
	// about one port change a second; a managed inspection makes a few.
	stateTimeout = 2 * time.Minute
)

// lab is one `ferro serve` with its boot roots and deploy images, and the
// `baremetal` CLI pointed at it.
type lab struct {
	t        *testing.T
	srv      *ferrotest.Server
	tftpRoot string // [pxe]tftp_root
	httpRoot string // [deploy]http_root
	// kernel and ramdisk are the deploy images as file:// URLs under
	// [conductor]file_url_allowed_paths.
	kernel, ramdisk string
	kernelData      []byte
	// callback is the inspector's own listener, where an agent of an
	// unmanaged inspection (which has no boot config to read) posts.
	callback string
	// tokens: [inspector]agent is ferro-agent, so managed inspections put
	// a callback token on the kernel command line; else (the stock agent)
	// they put none.
	tokens bool
	// inspectInterface is what enroll gives nodes, and wantCallback the
	// callback their managed boot configs carry: the inspector's by
	// default, the bare metal API's /v1/continue_inspection for agent
	// (startAgentLab).
	inspectInterface, wantCallback string

	cliBin string
	cliEnv []string
	cliDir string
}

// startLab starts ferro with boot roots and images in temporary
// directories, the inspector on a port of its own with a loopback callback
// allowed, and the extra FERRO_* settings in env (which win).
func startLab(t *testing.T, env ...string) *lab {
	t.Helper()
	l := &lab{t: t, cliBin: ferrotest.RequireTool(t, "baremetal")}
	dir := t.TempDir()
	images := filepath.Join(dir, "images")
	l.tftpRoot = filepath.Join(dir, "tftpboot")
	l.httpRoot = filepath.Join(dir, "httpboot")
	for _, d := range []string{images, l.tftpRoot, l.httpRoot} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	l.kernelData = []byte("deploy kernel for " + t.Name() + "\n")
	for name, data := range map[string][]byte{"ipa.kernel": l.kernelData, "ipa.initramfs": []byte("deploy ramdisk\n")} {
		if err := os.WriteFile(filepath.Join(images, name), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	l.kernel = "file://" + filepath.Join(images, "ipa.kernel")
	l.ramdisk = "file://" + filepath.Join(images, "ipa.initramfs")

	inspectorPort := ferrotest.FreePort(t)
	l.callback = "http://127.0.0.1:" + strconv.Itoa(inspectorPort) + "/v1/continue"
	base := []string{
		"FERRO_INSPECTOR_LISTEN_PORT=" + strconv.Itoa(inspectorPort),
		"FERRO_INSPECTOR_ALLOW_LOOPBACK_CALLBACK=true",
		// The unmanaged path reboots the node at once instead of after 5 s.
		"FERRO_INSPECTOR_INTROSPECTION_DELAY=0",
		"FERRO_CONDUCTOR_FILE_URL_ALLOWED_PATHS=" + images,
		"FERRO_PXE_TFTP_ROOT=" + l.tftpRoot,
		"FERRO_DEPLOY_HTTP_ROOT=" + l.httpRoot,
		"FERRO_DEPLOY_HTTP_URL=" + httpURL,
	}
	l.tokens = slices.Contains(env, "FERRO_INSPECTOR_AGENT=ferro-agent")
	opts := []ferrotest.Option{ferrotest.WithEnv(append(base, env...)...)}
	for _, kv := range env {
		// A test that must know the API's URL before the start (to name it
		// in [deploy]http_url) picks the port.
		if v, ok := strings.CutPrefix(kv, "FERRO_API_PORT="); ok {
			port, _ := strconv.Atoi(v)
			opts = append(opts, ferrotest.WithPort(port))
		}
	}
	l.srv = ferrotest.Start(t, opts...)
	l.inspectInterface, l.wantCallback = "inspector", l.callback

	// An empty home keeps the user's clouds.yaml and the client's version
	// cache out of the CLI's way.
	l.cliDir = t.TempDir()
	l.cliEnv = []string{"HOME=" + l.cliDir, "XDG_CACHE_HOME=" + l.cliDir + "/cache", "XDG_CONFIG_HOME=" + l.cliDir + "/config"}
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "OS_") && !strings.HasPrefix(kv, "HOME=") && !strings.HasPrefix(kv, "XDG_") {
			l.cliEnv = append(l.cliEnv, kv)
		}
	}
	return l
}

// baremetal runs the CLI (with --debug, so a failure shows the HTTP
// exchange) and returns its stdout; a failure fails the test.
func (l *lab) baremetal(args ...string) string {
	l.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	full := append([]string{"--debug", "--os-endpoint", l.srv.URL, "--os-auth-type", "none"}, args...)
	cmd := exec.CommandContext(ctx, l.cliBin, full...)
	cmd.Env, cmd.Dir = l.cliEnv, l.cliDir
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		l.t.Fatalf("baremetal %s: %v\nstdout:\n%s\nstderr:\n%s", strings.Join(args, " "), err, stdout.String(), stderr.String())
	}
	return stdout.String()
}

// must sends a request to the bare metal API at the latest microversion,
// fails the test unless it succeeds, and decodes the JSON answer into out.
func (l *lab) must(method, path string, body, out any) {
	l.t.Helper()
	ferrotest.Must(l.t, l.srv.URL, method, path, body, out)
}

func (l *lab) do(method, path string, body any) (int, []byte) {
	l.t.Helper()
	return ferrotest.Call(l.t, l.srv.URL, method, path, body)
}

// nodeSpec describes a node to enrol (fake-hardware unless driver is set).
type nodeSpec struct {
	driver        string
	boot, network string // boot and network interfaces
	driverInfo    map[string]any
	ports         []portSpec
	// inspect is the inspect interface; "" is the lab's.
	inspect string
}

type portSpec struct {
	mac string
	llc map[string]any // local_link_connection; nil for none
}

// node is an enrolled node.
type node struct {
	uuid  string
	ports []portSpec
	// portUUIDs[i] is ports[i]'s bare metal port.
	portUUIDs []string
}

func (n *node) macs() []string {
	var macs []string
	for _, p := range n.ports {
		macs = append(macs, p.mac)
	}
	return macs
}

// enroll creates the node and its ports with the API and makes it
// manageable; driver_info gets the lab's deploy images unless the spec sets
// deploy_kernel (nil to leave both out).
func (l *lab) enroll(spec nodeSpec) *node {
	l.t.Helper()
	info := map[string]any{"deploy_kernel": l.kernel, "deploy_ramdisk": l.ramdisk}
	for k, v := range spec.driverInfo {
		if v == nil {
			delete(info, k)
		} else {
			info[k] = v
		}
	}
	var created struct {
		UUID string `json:"uuid"`
	}
	drv := spec.driver
	if drv == "" {
		drv = "fake-hardware"
	}
	l.must(http.MethodPost, "/v1/nodes", map[string]any{
		"driver":            drv,
		"boot_interface":    spec.boot,
		"network_interface": spec.network,
		"inspect_interface": cmp.Or(spec.inspect, l.inspectInterface),
		"driver_info":       info,
	}, &created)
	n := &node{uuid: created.UUID, ports: spec.ports}
	for _, p := range spec.ports {
		body := map[string]any{"node_uuid": n.uuid, "address": p.mac, "pxe_enabled": true}
		if p.llc != nil {
			body["local_link_connection"] = p.llc
		}
		var port struct {
			UUID string `json:"uuid"`
		}
		l.must(http.MethodPost, "/v1/ports", body, &port)
		n.portUUIDs = append(n.portUUIDs, port.UUID)
	}
	l.must(http.MethodPut, "/v1/nodes/"+n.uuid+"/states/provision", map[string]any{"target": "manage"}, nil)
	l.waitState(n, "manageable")
	return n
}

// get returns the node as the API shows it.
func (l *lab) get(n *node) map[string]any {
	l.t.Helper()
	var out map[string]any
	l.must(http.MethodGet, "/v1/nodes/"+n.uuid, nil, &out)
	return out
}

// portsOf returns the node's bare metal ports by UUID.
func (l *lab) portsOf(n *node) map[string]map[string]any {
	l.t.Helper()
	var out struct {
		Ports []map[string]any `json:"ports"`
	}
	l.must(http.MethodGet, "/v1/ports/detail?node="+n.uuid, nil, &out)
	byUUID := map[string]map[string]any{}
	for _, p := range out.Ports {
		byUUID[p["uuid"].(string)] = p
	}
	return byUUID
}

// waitState polls the node until its provision state is want, and fails
// the test at once if it settles in another stable state.
func (l *lab) waitState(n *node, want string) map[string]any {
	l.t.Helper()
	deadline := time.Now().Add(stateTimeout)
	for {
		got := l.get(n)
		st, _ := got["provision_state"].(string)
		if st == want {
			return got
		}
		// The API moves the node to its transient state before it answers,
		// so a stable state other than want is the end of the road.
		if st == "manageable" || st == "inspect failed" || st == "enroll" {
			l.t.Fatalf("node %s is in %q, want %q; last_error: %v", n.uuid, st, want, got["last_error"])
		}
		if time.Now().After(deadline) {
			l.t.Fatalf("node %s still in %q after %v, want %q; last_error: %v", n.uuid, st, stateTimeout, want, got["last_error"])
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// inspect starts an inspection with `baremetal node inspect` (no --wait)
// and returns the node once it is in inspect wait.
func (l *lab) inspect(n *node) map[string]any {
	l.t.Helper()
	l.baremetal("node", "inspect", n.uuid)
	return l.waitState(n, "inspect wait")
}

// bootConfig reads the node's boot configuration through its first MAC
// address, as its PXE ROM would, and checks the per-node files around it.
func (l *lab) bootConfig(n *node, kind string) *inspection.BootConfig {
	l.t.Helper()
	root := l.root(kind)
	for _, p := range n.ports {
		entry := inspection.MACEntry(kind, root, p.mac)
		target, err := os.Readlink(entry)
		if err != nil {
			l.t.Fatalf("%s boot entry for %s: %v", kind, p.mac, err)
		}
		if want := filepath.Join("..", n.uuid, "config"); target != want {
			l.t.Errorf("%s -> %s, want %s", entry, target, want)
		}
	}
	kernel, err := os.ReadFile(filepath.Join(root, n.uuid, "deploy_kernel"))
	if err != nil || !bytes.Equal(kernel, l.kernelData) {
		l.t.Errorf("%s/%s/deploy_kernel = %q, %v; want the deploy kernel %q", root, n.uuid, kernel, err, l.kernelData)
	}
	if _, err := os.Stat(filepath.Join(root, n.uuid, "deploy_ramdisk")); err != nil {
		l.t.Errorf("deploy ramdisk not cached: %v", err)
	}
	if kind == "ipxe" {
		if _, err := os.Stat(filepath.Join(root, "boot.ipxe")); err != nil {
			l.t.Errorf("iPXE boot script: %v", err)
		}
	}
	bc, err := inspection.ReadBootConfig(kind, root, n.ports[0].mac)
	if err != nil {
		l.t.Fatalf("read the boot configuration: %v", err)
	}
	wantKernel := n.uuid + "/deploy_kernel"
	if kind == "ipxe" {
		wantKernel = httpURL + "/" + wantKernel
	}
	if bc.Kernel != wantKernel {
		l.t.Errorf("boot config kernel = %q, want %q", bc.Kernel, wantKernel)
	}
	if bc.Callback != l.wantCallback {
		l.t.Errorf("callback URL on the kernel command line = %q, want %q", bc.Callback, l.wantCallback)
	}
	if l.tokens && len(bc.Token) < 32 {
		l.t.Errorf("inspection token on the kernel command line = %q, want a random token", bc.Token)
	}
	if !l.tokens && bc.Token != "" {
		l.t.Errorf("inspection token on the kernel command line = %q, want none for the stock agent", bc.Token)
	}
	return bc
}

// root is the boot root of a boot interface.
func (l *lab) root(kind string) string {
	if kind == "ipxe" {
		return l.httpRoot
	}
	return l.tftpRoot
}

// checkNoBootFiles fails when anything of the node is left under the boot
// roots: its directory, or a per-MAC entry of either kind.
func (l *lab) checkNoBootFiles(n *node) {
	l.t.Helper()
	for _, root := range []string{l.tftpRoot, l.httpRoot} {
		if _, err := os.Lstat(filepath.Join(root, n.uuid)); !errors.Is(err, fs.ErrNotExist) {
			l.t.Errorf("boot files of node %s left in %s (%v)", n.uuid, root, err)
		}
		for _, kind := range []string{"pxe", "ipxe"} {
			for _, mac := range n.macs() {
				if _, err := os.Lstat(inspection.MACEntry(kind, root, mac)); !errors.Is(err, fs.ErrNotExist) {
					l.t.Errorf("boot entry %s left behind (%v)", inspection.MACEntry(kind, root, mac), err)
				}
			}
		}
	}
}

// post sends the report to the callback URL and returns status and body.
func (l *lab) post(callback, token string, report any) (int, string) {
	l.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	code, body, err := inspection.Post(ctx, http.DefaultClient, callback, token, report)
	if err != nil {
		l.t.Fatalf("post the report to %s: %v", callback, err)
	}
	return code, string(body)
}

// report is the example agent report for the node's MACs.
func report(t *testing.T, n *node) map[string]any {
	t.Helper()
	r, err := inspection.Report(n.macs()...)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// checkLeftClean checks what every finished inspection must leave: no
// lock, no boot files, no inspection VIF on any port, the managed-boot
// flag gone, the node powered off.
func (l *lab) checkLeftClean(n *node, got map[string]any) {
	l.t.Helper()
	if got["reservation"] != nil {
		l.t.Errorf("reservation = %v, want null", got["reservation"])
	}
	if got["power_state"] != "power off" {
		l.t.Errorf("power_state = %v, want power off", got["power_state"])
	}
	if v, ok := field(got, "driver_internal_info").(map[string]any)["inspector_manage_boot"]; ok {
		l.t.Errorf("driver_internal_info[inspector_manage_boot] = %v left behind", v)
	}
	for id, p := range l.portsOf(n) {
		if v, ok := field(p, "internal_info").(map[string]any)["inspection_vif_port_id"]; ok {
			l.t.Errorf("port %s: internal_info[inspection_vif_port_id] = %v left behind", id, v)
		}
	}
	l.checkNoBootFiles(n)
}

// field returns obj[path[0]][path[1]]…, or nil.
func field(obj any, path ...string) any {
	v := obj
	for _, k := range path {
		m, ok := v.(map[string]any)
		if !ok {
			return nil
		}
		v = m[k]
	}
	return v
}

// str is a JSON value as text, so "32" and 32 compare alike.
func str(v any) string {
	if f, ok := v.(float64); ok {
		return strconv.FormatFloat(f, 'f', -1, 64)
	}
	return fmt.Sprint(v)
}

// newMAC returns a random locally administered unicast MAC address, so
// that tests sharing a Neutron network never clash.
func newMAC() string {
	b := make([]byte, 6)
	rand.Read(b)
	b[0] = b[0]&0xfc | 0x02
	return fmt.Sprintf("%02x:%02x:%02x:%02x:%02x:%02x", b[0], b[1], b[2], b[3], b[4], b[5])
}
