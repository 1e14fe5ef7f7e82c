package bootfs

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"testing"
)

const uuid = "1be26c0b-03f2-4d2e-ae87-c02d7f33c123"

func testRoot(t *testing.T) (*Root, string) {
	t.Helper()
	outside := t.TempDir()
	if err := os.WriteFile(filepath.Join(outside, "secret"), []byte("secret"), 0o644); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	for name, data := range map[string]string{
		"undionly.kpxe":         "ipxe",
		uuid + "/config":        "#!ipxe",
		uuid + "/deploy_kernel": "kernel",
	} {
		p := filepath.Join(dir, name)
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	os.MkdirAll(filepath.Join(dir, "pxelinux.cfg"), 0o755)
	links := map[string]string{
		"pxelinux.cfg/01-52-54-00-12-34-56": "../" + uuid + "/config",
		"escape-rel":                        "../" + filepath.Base(outside) + "/secret",
		"escape-abs":                        filepath.Join(outside, "secret"),
		"passwd":                            "/etc/passwd",
	}
	for name, target := range links {
		if err := os.Symlink(target, filepath.Join(dir, name)); err != nil {
			t.Fatal(err)
		}
	}
	r, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close() })
	return r, dir
}

func TestOpenFile_ServesOnlyInsideTheRoot(t *testing.T) {
	r, _ := testRoot(t)
	for _, tc := range []struct {
		name string
		want string // content, or "" for refused
	}{
		{"undionly.kpxe", "ipxe"},
		{"/undionly.kpxe", "ipxe"},
		{uuid + "/deploy_kernel", "kernel"},
		{"pxelinux.cfg/01-52-54-00-12-34-56", "#!ipxe"},
		{"./" + uuid + "//config", "#!ipxe"},
		{"../../etc/passwd", ""},
		{"/../../etc/passwd", ""},
		{uuid + "/../../etc/passwd", ""},
		{"..", ""},
		{"/etc/passwd", ""},
		{"escape-rel", ""},
		{"escape-abs", ""},
		{"passwd", ""},
		{"..\\..\\etc\\passwd", ""},
		{"undionly.kpxe\x00", ""},
		{uuid, ""}, // a directory
		{"", ""},
		{"missing", ""},
	} {
		f, _, err := r.OpenFile(tc.name)
		if tc.want == "" {
			if err == nil {
				f.Close()
				t.Errorf("OpenFile(%q) succeeded, want refused", tc.name)
			}
			continue
		}
		if err != nil {
			t.Errorf("OpenFile(%q): %v", tc.name, err)
			continue
		}
		b, _ := io.ReadAll(f)
		f.Close()
		if string(b) != tc.want {
			t.Errorf("OpenFile(%q) = %q, want %q", tc.name, b, tc.want)
		}
	}
	if _, _, err := r.OpenFile("../../etc/passwd"); !errors.Is(err, ErrRefused) {
		t.Errorf("../../etc/passwd: %v, want ErrRefused", err)
	}
}

func TestClassify(t *testing.T) {
	r, _ := testRoot(t)
	for _, tc := range []struct{ name, node, phase string }{
		{uuid + "/config", uuid, PhaseBootScript},
		{"/" + uuid + "/deploy_kernel", uuid, PhaseKernel},
		{uuid + "/deploy_ramdisk", uuid, PhaseInitramfs},
		{"pxelinux.cfg/01-52-54-00-12-34-56", uuid, PhaseBootScript},
		{"pxelinux.cfg/missing", "", ""},
		{"undionly.kpxe", "", ""},
		{"not-a-uuid/deploy_kernel", "", ""},
		{"../" + uuid + "/config", "", ""},
	} {
		node, phase := r.Classify(tc.name)
		if node != tc.node || phase != tc.phase {
			t.Errorf("Classify(%q) = %q %q, want %q %q", tc.name, node, phase, tc.node, tc.phase)
		}
	}
}

func TestOwner_FollowsLinksToTheNodeDirectory(t *testing.T) {
	r, dir := testRoot(t)
	// Links the pxe driver does not make, which must not hide the owner.
	os.Symlink("01-52-54-00-12-34-56", filepath.Join(dir, "pxelinux.cfg", "chained"))
	os.Symlink(uuid, filepath.Join(dir, "nodes"))
	os.Symlink("../../etc/passwd", filepath.Join(dir, "pxelinux.cfg", "out"))
	for _, tc := range []struct{ name, owner string }{
		{uuid + "/config", uuid},
		{"/" + uuid + "/deploy_kernel", uuid},
		{uuid + "/anything", uuid},
		{"pxelinux.cfg/01-52-54-00-12-34-56", uuid},
		{"pxelinux.cfg/chained", uuid},
		{"nodes/config", uuid},
		{"pxelinux.cfg/out", ""},
		{"pxelinux.cfg/missing", ""},
		{uuid, ""},
		{"undionly.kpxe", ""},
		{"master_images/" + uuid, ""},
		{"vmedia/" + uuid + "/x.iso", ""},
		{"../" + uuid + "/config", ""},
	} {
		if got := r.Owner(tc.name); got != tc.owner {
			t.Errorf("Owner(%q) = %q, want %q", tc.name, got, tc.owner)
		}
	}
}
