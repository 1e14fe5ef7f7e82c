package ramdisk

import (
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/ferrometal/ferro/internal/progress"
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

// TestFetchDebianKernel_ReportsTheDownload: the download is reported with
// its bytes as they arrive, against the .deb's size apt-cache gives, and
// the unpacking after it; a second fetch reports the cached kernel. The
// fake apt-get writes part of the file, waits until the progress showed
// it, then finishes.
func TestFetchDebianKernel_ReportsTheDownload(t *testing.T) {
	dpkg := ferrotest.RequireTool(t, "dpkg-deb")
	bin, cache := t.TempDir(), t.TempDir()
	seen := filepath.Join(t.TempDir(), "seen")
	script := `#!/bin/sh
set -e
head -c 100000 /dev/zero > partial
i=0; while [ ! -e ` + seen + ` ] && [ $i -lt 600 ]; do sleep 0.1; i=$((i+1)); done
rm partial
mkdir -p p/DEBIAN p/boot
printf 'Package: linux-image-6.1.0-test\nVersion: 1\nArchitecture: amd64\nMaintainer: t <t@example.org>\nDescription: t\n' > p/DEBIAN/control
echo kernel > p/boot/vmlinuz-6.1.0-test
` + dpkg + ` --build p linux-image-6.1.0-test_1_amd64.deb >/dev/null
rm -rf p
`
	aptCache := "#!/bin/sh\nprintf 'Package: linux-image-6.1.0-test\\nSize: 400000\\n'\n"
	for name, body := range map[string]string{"apt-get": script, "apt-cache": aptCache} {
		if err := os.WriteFile(filepath.Join(bin, name), []byte(body), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	t.Setenv("PATH", bin+string(os.PathListSeparator)+os.Getenv("PATH"))
	var mu sync.Mutex
	var events []progress.Event
	report := func(e progress.Event) {
		mu.Lock()
		defer mu.Unlock()
		events = append(events, e)
		if e.Done == 100000 && !e.End {
			os.WriteFile(seen, nil, 0o644)
		}
	}
	if _, err := fetchDebianKernel(t.Context(), cache, "6.1.0-test", report); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	var moving, downloaded, unpacked bool
	for _, e := range events {
		switch {
		case strings.HasPrefix(e.Step, "downloading linux-image-6.1.0-test") && !e.End && e.Done == 100000 && e.Total == 400000:
			moving = true
		case strings.HasPrefix(e.Step, "downloading") && e.End && e.Done > 0:
			downloaded = true
		case e.Step == "unpacking linux-image-6.1.0-test" && e.End:
			unpacked = downloaded
		}
	}
	mu.Unlock()
	if !moving || !downloaded || !unpacked {
		t.Errorf("events %+v: want the download moving (100000 of 400000 bytes), its end, then the unpacking", events)
	}
	events = nil
	if _, err := fetchDebianKernel(t.Context(), cache, "6.1.0-test", report); err != nil {
		t.Fatal(err)
	}
	if len(events) != 1 || events[0].Step != "using the cached linux-image-6.1.0-test" || !events[0].End {
		t.Errorf("a cached kernel reported %+v", events)
	}
}
