package inspection_test

import (
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/ferrometal/ferro/internal/testing/ferrotest"
)

// Without the built-in DHCP ([dhcp]dhcp_provider none, a site with its own
// DHCP), [deploy]http_root is still served, on the API port under
// http_url's path: the iPXE files and ISOs need no second web server. A
// node's own files go to any client while the node is inspected, and to
// no one otherwise; shared files to everyone; nothing outside the root.
func TestBootFiles_ServedWithoutTheBuiltInDHCP(t *testing.T) {
	port := ferrotest.FreePort(t)
	base := "http://127.0.0.1:" + strconv.Itoa(port) + "/httpboot"
	l := startAgentLab(t, "FERRO_API_PORT="+strconv.Itoa(port), "FERRO_DEPLOY_HTTP_URL="+base)
	get := func(path string) (int, string) {
		t.Helper()
		resp, err := http.Get(base + path)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
		return resp.StatusCode, string(b)
	}

	n := l.enroll(nodeSpec{boot: "ipxe", network: "noop", ports: []portSpec{{mac: newMAC()}}})
	l.inspect(n)
	if code, body := get("/" + n.uuid + "/deploy_kernel"); code != http.StatusOK || body != string(l.kernelData) {
		t.Errorf("the inspected node's kernel: HTTP %d %q, want 200 and the deploy kernel", code, body)
	}
	if code, _ := get("/" + n.uuid + "/config"); code != http.StatusOK {
		t.Errorf("the inspected node's iPXE config: HTTP %d, want 200", code)
	}
	if code, _ := get("/boot.ipxe"); code != http.StatusOK {
		t.Errorf("the shared boot script: HTTP %d, want 200", code)
	}

	// Files of a node that is not being inspected stay closed, even when
	// they are there.
	idle := l.enroll(nodeSpec{boot: "ipxe", network: "noop", ports: []portSpec{{mac: newMAC()}}})
	dir := filepath.Join(l.httpRoot, idle.uuid)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "config"), []byte("#!ipxe\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if code, _ := get("/" + idle.uuid + "/config"); code == http.StatusOK {
		t.Errorf("a manageable node's file: HTTP %d, want it refused", code)
	}
	if code, _ := get("/../../../../etc/passwd"); code == http.StatusOK {
		t.Errorf("a path out of the root: HTTP %d", code)
	}

	// The inspection's end removes the files; the API is unaffected.
	l.must(http.MethodPut, "/v1/nodes/"+n.uuid+"/states/provision", map[string]any{"target": "abort"}, nil)
	l.waitState(n, "inspect failed")
	if code, _ := get("/" + n.uuid + "/config"); code == http.StatusOK {
		t.Errorf("after the abort the node's config: HTTP %d, want gone", code)
	}
	l.checkNoBootFiles(n)
}
