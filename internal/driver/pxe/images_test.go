package pxe

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ferrometal/ferro/internal/baremetal"
	"github.com/ferrometal/ferro/internal/driver"
	"github.com/ferrometal/ferro/internal/driver/deployimage"
)

// imageServer serves /kernel and /ramdisk with a Last-Modified date and
// counts full (200) responses per path.
type imageServer struct {
	mu       sync.Mutex
	files    map[string]string
	modified time.Time
	full     map[string]int
}

func newImageServer(t *testing.T) (*imageServer, *httptest.Server) {
	s := &imageServer{
		files:    map[string]string{"/kernel": "HTTP-KERNEL", "/ramdisk": "HTTP-RAMDISK"},
		modified: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC),
		full:     map[string]int{},
	}
	srv := httptest.NewServer(s)
	t.Cleanup(srv.Close)
	return s, srv
}

func (s *imageServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	body, ok := s.files[r.URL.Path]
	if !ok {
		http.NotFound(w, r)
		return
	}
	if ims, err := http.ParseTime(r.Header.Get("If-Modified-Since")); err == nil && !s.modified.After(ims) {
		w.WriteHeader(http.StatusNotModified)
		return
	}
	s.full[r.URL.Path]++
	w.Header().Set("Last-Modified", s.modified.Format(http.TimeFormat))
	w.Write([]byte(body))
}

func (s *imageServer) fullCount(path string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.full[path]
}

func TestPrepareRamdisk_HTTPImagesAreCachedAndRevalidated(t *testing.T) {
	for _, kind := range []Kind{PXE, IPXE} {
		t.Run(string(kind), func(t *testing.T) {
			e := newEnv(t)
			s, srv := newImageServer(t)
			b := e.boot(t, kind)
			root := e.tftp
			if kind == IPXE {
				root = e.http
			}
			ctx := context.Background()

			// Two nodes share one download.
			task := e.task()
			task.Node.DriverInfo["deploy_kernel"] = srv.URL + "/kernel"
			task.Node.DriverInfo["deploy_ramdisk"] = srv.URL + "/ramdisk"
			other := e.task()
			other.Node.UUID = otherUUID
			other.Node.DriverInfo = task.Node.DriverInfo
			other.Ports = []*baremetal.Port{{UUID: "o1", Address: "52:54:00:00:00:99", PXEEnabled: true}}
			for _, tk := range []*driver.Task{task, other} {
				if err := b.PrepareRamdisk(ctx, tk, callbackParams()); err != nil {
					t.Fatal(err)
				}
			}
			if got := readFile(t, filepath.Join(root, nodeUUID, "deploy_kernel")); got != "HTTP-KERNEL" {
				t.Errorf("deploy_kernel = %q", got)
			}
			if got := readFile(t, filepath.Join(root, otherUUID, "deploy_ramdisk")); got != "HTTP-RAMDISK" {
				t.Errorf("deploy_ramdisk = %q", got)
			}
			if n := s.fullCount("/kernel"); n != 1 {
				t.Errorf("kernel downloaded %d times, want 1", n)
			}
			masters, _ := os.ReadDir(filepath.Join(root, "master_images"))
			if len(masters) != 2 {
				t.Errorf("master_images holds %d entries, want 2", len(masters))
			}

			// A new image on the server is picked up.
			s.mu.Lock()
			s.files["/kernel"] = "HTTP-KERNEL-2"
			s.modified = s.modified.Add(time.Hour)
			s.mu.Unlock()
			if err := b.PrepareRamdisk(ctx, task, callbackParams()); err != nil {
				t.Fatal(err)
			}
			if got := readFile(t, filepath.Join(root, nodeUUID, "deploy_kernel")); got != "HTTP-KERNEL-2" {
				t.Errorf("deploy_kernel = %q after the image changed", got)
			}
			// The other node keeps the image it was prepared with.
			if got := readFile(t, filepath.Join(root, otherUUID, "deploy_kernel")); got != "HTTP-KERNEL" {
				t.Errorf("other node's deploy_kernel = %q", got)
			}

			if err := b.CleanUpRamdisk(ctx, task); err != nil {
				t.Fatal(err)
			}
			if exists(filepath.Join(root, nodeUUID)) {
				t.Error("node directory left behind")
			}
		})
	}
}

func TestPrepareRamdisk_HTTPDownloadFailures(t *testing.T) {
	for _, tc := range []struct {
		name string
		path string
		body string
		max  int64
		want string
	}{
		{"not found", "/missing", "", 0, "404"},
		{"empty", "/empty", "", 0, "empty"},
		{"too large", "/big", strings.Repeat("x", 100), 10, "larger than 10"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t)
			s, srv := newImageServer(t)
			s.files["/empty"] = ""
			s.files["/big"] = tc.body
			opts := func(o *deployimage.Options) {
				o.DownloadTimeout, o.MaxSize = 10*time.Second, tc.max
			}
			task := e.task()
			task.Node.DriverInfo["deploy_kernel"] = srv.URL + tc.path
			err := e.boot(t, PXE, opts).PrepareRamdisk(context.Background(), task, nil)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v, want it to mention %q", err, tc.want)
			}
			if exists(filepath.Join(e.tftp, nodeUUID, "deploy_kernel")) || len(e.mgmt.calls) != 0 {
				t.Error("a failed download left a kernel or changed the boot device")
			}
			ents, _ := os.ReadDir(filepath.Join(e.tftp, "master_images"))
			for _, ent := range ents {
				t.Errorf("master_images holds %s after a failed download", ent.Name())
			}
		})
	}
}

func TestPrepareRamdisk_HTTPDownloadTimesOut(t *testing.T) {
	e := newEnv(t)
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-release:
		case <-r.Context().Done():
		}
	}))
	t.Cleanup(func() { close(release); srv.Close() })
	task := e.task()
	task.Node.DriverInfo["deploy_kernel"] = srv.URL + "/kernel"
	err := e.boot(t, PXE, func(o *deployimage.Options) { o.DownloadTimeout = 50 * time.Millisecond }).PrepareRamdisk(context.Background(), task, nil)
	if err == nil || !strings.Contains(err.Error(), "deadline") {
		t.Fatalf("err = %v, want a timeout", err)
	}
}

func TestPrepareRamdisk_ConcurrentNodesShareOneDownload(t *testing.T) {
	e := newEnv(t)
	s, srv := newImageServer(t)
	b := e.boot(t, IPXE)
	const nodes = 16
	var wg sync.WaitGroup
	errs := make(chan error, nodes)
	for i := range nodes {
		task := e.task()
		task.Node.UUID = fmt.Sprintf("00000000-0000-4000-8000-%012d", i)
		task.Node.DriverInfo["deploy_kernel"] = srv.URL + "/kernel"
		task.Node.DriverInfo["deploy_ramdisk"] = srv.URL + "/ramdisk"
		task.Ports = []*baremetal.Port{{UUID: "p", Address: fmt.Sprintf("52:54:00:00:00:%02x", i), PXEEnabled: true}}
		task.Driver = &driver.Interfaces{Management: &fakeManagement{}}
		wg.Go(func() { errs <- b.PrepareRamdisk(context.Background(), task, callbackParams()) })
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	if n := s.fullCount("/ramdisk"); n != 1 {
		t.Errorf("ramdisk downloaded %d times by %d nodes, want 1", n, nodes)
	}
	links, _ := os.ReadDir(filepath.Join(e.http, "pxelinux.cfg"))
	if len(links) != nodes {
		t.Errorf("%d per-MAC entries, want %d", len(links), nodes)
	}
}
