package ramdisk

import (
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/ferrometal/ferro/internal/testing/ferrotest"
)

// TestFetchDebianKernel_ConcurrentCallsDownloadOnce runs eight fetches of
// one kernel at once into an empty cache. apt-get is a script that counts
// its calls and builds the package with the real dpkg-deb, which also
// unpacks it: one download, and every call gets the unpacked kernel.
func TestFetchDebianKernel_ConcurrentCallsDownloadOnce(t *testing.T) {
	dpkg := ferrotest.RequireTool(t, "dpkg-deb")
	bin, cache := t.TempDir(), t.TempDir()
	count := filepath.Join(t.TempDir(), "downloads")
	script := `#!/bin/sh
set -e
[ "$1" = download ] && [ "$2" = linux-image-6.1.0-test ]
echo "$2" >> ` + count + `
mkdir -p p/DEBIAN p/boot
printf 'Package: linux-image-6.1.0-test\nVersion: 1\nArchitecture: amd64\nMaintainer: t <t@example.org>\nDescription: t\n' > p/DEBIAN/control
echo kernel > p/boot/vmlinuz-6.1.0-test
` + dpkg + ` --build p linux-image-6.1.0-test_1_amd64.deb >/dev/null
rm -rf p
`
	if err := os.WriteFile(filepath.Join(bin, "apt-get"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", bin+string(os.PathListSeparator)+os.Getenv("PATH"))
	var wg sync.WaitGroup
	images := make([]string, 8)
	for i := range images {
		wg.Go(func() {
			k, err := FetchDebianKernel(t.Context(), cache, "6.1.0-test")
			if err != nil {
				t.Errorf("fetch %d: %v", i, err)
				return
			}
			images[i] = k.Image
		})
	}
	wg.Wait()
	b, err := os.ReadFile(count)
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(string(b), "\n"); n != 1 {
		t.Errorf("apt-get download ran %d times, want once", n)
	}
	for i, img := range images {
		if got, err := os.ReadFile(img); err != nil || string(got) != "kernel\n" {
			t.Errorf("fetch %d: image %s: %q, %v", i, img, got, err)
		}
	}
	if entries, _ := filepath.Glob(filepath.Join(cache, ".fetch-*")); len(entries) != 0 {
		t.Errorf("work directories left behind: %v", entries)
	}
}
