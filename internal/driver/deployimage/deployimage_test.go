package deployimage

import (
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/ferrometal/ferro/internal/driver"
)

func writeFile(t *testing.T, path, content string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func readFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestFilePathProblem_DenyListBeatsAllowList(t *testing.T) {
	allowed := []string{"/", "/etc", "/var/lib/ironic"}
	for _, tc := range []struct {
		path string
		ok   bool
	}{
		{"/var/lib/ironic/ipa.kernel", true},
		{"/srv/images/ipa.kernel", true}, // allowed by "/"
		{"/etc/shadow", false},
		{"/etc", false},
		{"/dev/sda", false},
		{"/sys/firmware/efi/efivars/x", false},
		{"/proc/self/environ", false},
		{"/boot/vmlinuz", false},
		{"/run/secrets/token", false},
		{"/etcetera/ipa.kernel", true}, // a sibling, not /etc
	} {
		why := filePathProblem(tc.path, allowed)
		if (why == "") != tc.ok {
			t.Errorf("%s: problem %q, want ok=%v", tc.path, why, tc.ok)
		}
	}
}

func TestEvict_RemovesOnlyUnusedOldestImages(t *testing.T) {
	dir := t.TempDir()
	nodeDir := t.TempDir()
	old := time.Now().Add(-time.Hour)
	for i, name := range []string{"a", "b", "c", "d"} {
		p := filepath.Join(dir, name)
		writeFile(t, p, strings.Repeat("x", 10))
		os.Chtimes(p, old, old.Add(time.Duration(i)*time.Minute))
	}
	// a is the oldest but linked into a node directory.
	if err := os.Link(filepath.Join(dir, "a"), filepath.Join(nodeDir, "deploy_kernel")); err != nil {
		t.Fatal(err)
	}
	if err := evict(dir, 25, "d"); err != nil {
		t.Fatal(err)
	}
	var left []string
	ents, _ := os.ReadDir(dir)
	for _, e := range ents {
		left = append(left, e.Name())
	}
	if got := strings.Join(left, ","); got != "a,d" {
		t.Errorf("left %s, want a,d (a in use, d just downloaded, b and c evicted)", got)
	}
}

func TestLinkOrCopy_CopiesAcrossFileSystems(t *testing.T) {
	shm, err := os.MkdirTemp("/dev/shm", "ferro-pxe-test-")
	if err != nil {
		t.Skip("no /dev/shm:", err)
	}
	t.Cleanup(func() { os.RemoveAll(shm) })
	src := filepath.Join(shm, "kernel")
	writeFile(t, src, "SHM-KERNEL")
	os.Chmod(src, 0o600)
	dest := filepath.Join(t.TempDir(), "deploy_kernel")
	in, err := os.Open(src)
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	if err := linkOrCopy(src, in, dest); err != nil {
		t.Fatal(err)
	}
	sfi, _ := os.Stat(src)
	dfi, _ := os.Stat(dest)
	if os.SameFile(sfi, dfi) {
		t.Skip("/dev/shm and the test directory are one file system")
	}
	if got := readFile(t, dest); got != "SHM-KERNEL" {
		t.Errorf("copy = %q", got)
	}
	if dfi.Mode() != 0o644 {
		t.Errorf("copy mode %v, want 0644", dfi.Mode())
	}
}

// Both images come from driver_info or, only when it names neither, both
// from the defaults; what is missing and what is invalid are told apart.
func TestCheck_DriverInfoElseDefaults(t *testing.T) {
	dir := t.TempDir()
	k, r := "file://"+filepath.Join(dir, "k"), "file://"+filepath.Join(dir, "r")
	for _, tc := range []struct {
		name                  string
		info                  map[string]any
		defKernel, defRamdisk string
		wantKernel            string
		missing, invalid      string
	}{
		{name: "driver_info", info: map[string]any{"deploy_kernel": k, "deploy_ramdisk": r}, defKernel: "http://x/k", defRamdisk: "http://x/r", wantKernel: k},
		{name: "defaults", defKernel: k, defRamdisk: r, wantKernel: k},
		{name: "neither", missing: "no deploy_kernel and deploy_ramdisk in driver_info or [conductor]"},
		{name: "half of driver_info", info: map[string]any{"deploy_kernel": k}, defKernel: k, defRamdisk: r,
			invalid: "driver_info[deploy_kernel] is set but driver_info[deploy_ramdisk] is not: set both or neither"},
		{name: "half of the defaults", defRamdisk: r, invalid: "[conductor]deploy_ramdisk is set but [conductor]deploy_kernel is not"},
		{name: "credentials masked", info: map[string]any{"deploy_kernel": "ftp://u:secret@x/k", "deploy_ramdisk": r},
			invalid: `driver_info[deploy_kernel] "ftp://u:xxxxx@x/k" has scheme "ftp"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := New(Options{AllowedPaths: []string{dir}, DefaultKernel: tc.defKernel, DefaultRamdisk: tc.defRamdisk})
			imgs, pr := f.Check(tc.info)
			if got := strings.Join(pr.Missing, "; "); !strings.Contains(got, tc.missing) || (tc.missing == "") != (got == "") {
				t.Errorf("missing %q, want %q", got, tc.missing)
			}
			if got := strings.Join(pr.Invalid, "; "); !strings.Contains(got, tc.invalid) || (tc.invalid == "") != (got == "") {
				t.Errorf("invalid %q, want %q", got, tc.invalid)
			}
			if tc.wantKernel != "" && imgs.Kernel() != tc.wantKernel {
				t.Errorf("kernel %q, want %q", imgs.Kernel(), tc.wantKernel)
			}
		})
	}
}

// Fetch hard-links file:// images into the node's directory under their
// Ironic names.
func TestFetch_LinksFileImages(t *testing.T) {
	src, root := t.TempDir(), t.TempDir()
	writeFile(t, filepath.Join(src, "k"), "KERNEL")
	writeFile(t, filepath.Join(src, "r"), "RAMDISK")
	f := New(Options{AllowedPaths: []string{src}})
	imgs, pr := f.Check(map[string]any{"deploy_kernel": "file://" + src + "/k", "deploy_ramdisk": "file://" + src + "/r"})
	if len(pr.Missing)+len(pr.Invalid) > 0 {
		t.Fatalf("problems %+v", pr)
	}
	kernel, ramdisk, err := f.Fetch(t.Context(), nil, imgs, root, filepath.Join(root, "node"))
	if err != nil {
		t.Fatal(err)
	}
	if kernel != filepath.Join(root, "node", KernelName) || readFile(t, ramdisk) != "RAMDISK" {
		t.Errorf("fetched %s, %s", kernel, ramdisk)
	}
}

// A file:// image is a regular file or nothing: a symlink to a device, a
// FIFO (which would block a plain open), a directory, an empty file and a
// missing one are refused alike, without naming what the path is.
func TestFetch_LocalImagesAreRegularFilesOnly(t *testing.T) {
	src, root := t.TempDir(), t.TempDir()
	writeFile(t, filepath.Join(src, "k"), "KERNEL")
	writeFile(t, filepath.Join(src, "nothing"), "")
	os.Symlink("/dev/zero", filepath.Join(src, "zero"))
	os.Symlink("/etc/hostname", filepath.Join(src, "escape"))
	os.Mkdir(filepath.Join(src, "dir"), 0o755)
	if err := syscall.Mkfifo(filepath.Join(src, "fifo"), 0o644); err != nil {
		t.Fatal(err)
	}
	f := New(Options{AllowedPaths: []string{src}, MaxSize: 1 << 20})
	var texts []string
	for _, name := range []string{"zero", "fifo", "dir", "nothing", "missing", "escape"} {
		ref := "file://" + filepath.Join(src, name)
		imgs, pr := f.Check(map[string]any{"deploy_kernel": ref, "deploy_ramdisk": "file://" + src + "/k"})
		if len(pr.Invalid)+len(pr.Missing) > 0 {
			t.Fatalf("%s: %+v", name, pr)
		}
		_, _, err := f.Fetch(t.Context(), nil, imgs, root, filepath.Join(root, "node"))
		if !errors.Is(err, driver.ErrInvalidParameter) {
			t.Fatalf("%s: %v", name, err)
		}
		texts = append(texts, strings.ReplaceAll(err.Error(), name, "NAME"))
	}
	for _, tx := range texts[1:] {
		if tx != texts[0] {
			t.Errorf("refusals differ:\n%s\n%s", texts[0], tx)
		}
	}
	if strings.Contains(texts[0], "/etc") || strings.Contains(texts[0], "/dev") {
		t.Errorf("the error tells where the path leads: %s", texts[0])
	}
}

// An image server's redirect is followed on its own origin and to the
// hosts allowed, never elsewhere and never from https to http.
func TestDownload_RedirectsStayOnTheOriginUnlessAllowed(t *testing.T) {
	var elsewhere atomic.Int32
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		elsewhere.Add(1)
		io.WriteString(w, "OTHER")
	}))
	defer other.Close()
	var srv *httptest.Server
	srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/same":
			http.Redirect(w, r, "/real", http.StatusFound)
		case "/away":
			http.Redirect(w, r, other.URL+"/x", http.StatusFound)
		case "/real":
			io.WriteString(w, "IMAGE")
		}
	}))
	defer srv.Close()
	otherHost, _ := url.Parse(other.URL)
	for _, tc := range []struct {
		path    string
		allowed []string
		want    string
	}{
		{"/same", nil, "IMAGE"},
		{"/away", nil, ""},
		{"/away", []string{otherHost.Host}, "OTHER"},
	} {
		root := t.TempDir()
		f := New(Options{RedirectHosts: tc.allowed})
		imgs, pr := f.Check(map[string]any{"deploy_kernel": srv.URL + tc.path, "deploy_ramdisk": srv.URL + "/real"})
		if len(pr.Invalid)+len(pr.Missing) > 0 {
			t.Fatalf("%+v", pr)
		}
		before := elsewhere.Load()
		kernel, _, err := f.Fetch(t.Context(), nil, imgs, root, filepath.Join(root, "node"))
		switch {
		case tc.want == "" && (err == nil || !strings.Contains(err.Error(), "refused a redirect") || elsewhere.Load() != before):
			t.Errorf("%s: %v, %d requests elsewhere", tc.path, err, elsewhere.Load()-before)
		case tc.want != "" && (err != nil || readFile(t, kernel) != tc.want):
			t.Errorf("%s allowed %v: %v", tc.path, tc.allowed, err)
		}
	}
	if err := redirectPolicy(nil)(&http.Request{URL: &url.URL{Scheme: "http", Host: "a"}},
		[]*http.Request{{URL: &url.URL{Scheme: "https", Host: "a"}}}); err == nil {
		t.Error("a redirect from https to http was allowed")
	}
}
