package ironic

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/ferrometal/ferro/internal/baremetal"
	"github.com/ferrometal/ferro/internal/store"
)

// benchEnv is newEnv for benchmarks.
func benchEnv(b *testing.B) *env {
	e := newEnv(b)
	e.h = New(Options{Store: e.store, Conductor: e.cond, Config: e.cfg})
	return e
}

func nodeBody(i int) string {
	return fmt.Sprintf(`{"driver": "fake-hardware", "name": "bench-%d", "resource_class": "baremetal",
		"driver_info": {"ipmi_address": "10.0.%d.%d", "ipmi_username": "admin", "ipmi_password": "secret", "deploy_kernel": "http://x/k", "deploy_ramdisk": "http://x/r"},
		"properties": {"cpus": 32, "memory_mb": 131072, "local_gb": 900, "cpu_arch": "x86_64", "capabilities": "boot_mode:uefi"},
		"extra": {"rack": "r%d"}}`, i, i/250, i%250, i%10)
}

func serve(h http.Handler, method, path, body string) *httptest.ResponseRecorder {
	var req *http.Request
	if body == "" {
		req = httptest.NewRequest(method, path, nil)
	} else {
		req = httptest.NewRequest(method, path, strings.NewReader(body))
	}
	req.Header.Set("X-OpenStack-Ironic-API-Version", latest)
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	return rec
}

func BenchmarkGetNode(b *testing.B) {
	e := benchEnv(b)
	rec := serve(e.h, "POST", "/v1/nodes", nodeBody(1))
	if rec.Code != 201 {
		b.Fatalf("create: %d %s", rec.Code, rec.Body)
	}
	path := "/v1/nodes/bench-1"
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		if rec := serve(e.h, "GET", path, ""); rec.Code != 200 {
			b.Fatal(rec.Code)
		}
	}
}

func BenchmarkListNodesDetail500(b *testing.B) {
	e := benchEnv(b)
	for i := range 500 {
		if rec := serve(e.h, "POST", "/v1/nodes", nodeBody(i)); rec.Code != 201 {
			b.Fatalf("create: %d %s", rec.Code, rec.Body)
		}
	}
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		if rec := serve(e.h, "GET", "/v1/nodes/detail", ""); rec.Code != 200 {
			b.Fatal(rec.Code)
		}
	}
}

func BenchmarkCreateNode(b *testing.B) {
	e := benchEnv(b)
	i := 0
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		i++
		if rec := serve(e.h, "POST", "/v1/nodes", nodeBody(i)); rec.Code != 201 {
			b.Fatalf("create: %d %s", rec.Code, rec.Body)
		}
	}
}

// BenchmarkRenderNodes500 is the API's own share of a detailed list:
// rendering 500 nodes, without the store.
func BenchmarkRenderNodes500(b *testing.B) {
	s := &server{store: emptyConductorStore{}, now: time.Now}
	rc := &renderCtx{s: s, minor: maxMinor, base: "http://ferro.test:6385", conductors: &conductorSnapshot{}}
	nodes := make([]*baremetal.Node, 500)
	now := time.Now()
	for i := range nodes {
		nodes[i] = &baremetal.Node{
			UUID: fmt.Sprintf("00000000-0000-4000-8000-%012d", i), Name: fmt.Sprintf("n%d", i), Driver: "fake-hardware",
			ProvisionState: "manageable", PowerState: "power off", ResourceClass: "baremetal",
			DriverInfo: baremetal.JSON{"ipmi_address": "10.0.0.1", "ipmi_username": "admin", "ipmi_password": "secret", "deploy_kernel": "http://x/k"},
			Properties: baremetal.JSON{"cpus": 32.0, "memory_mb": 131072.0, "local_gb": 900.0, "cpu_arch": "x86_64"},
			Extra:      baremetal.JSON{"rack": "r1"},
			Interfaces: map[string]string{"boot": "pxe", "power": "ipmitool", "management": "ipmitool", "network": "noop", "inspect": "inspector", "deploy": "direct"},
			CreatedAt:  now,
		}
	}
	b.ReportAllocs()
	bp := getBuf()
	for b.Loop() {
		buf := append((*bp)[:0], `{"nodes": [`...)
		for i, n := range nodes {
			if i > 0 {
				buf = append(buf, ", "...)
			}
			buf = nodeResource.appendOne(buf, n, rc, nil)
		}
		*bp = append(buf, "]}"...)
	}
	b.SetBytes(int64(len(*bp)))
}

// emptyConductorStore answers ListConductors with nothing.
type emptyConductorStore struct{ store.Store }

func (emptyConductorStore) ListConductors(context.Context, time.Time) ([]*store.Conductor, error) {
	return nil, nil
}

// BenchmarkStoreListNodes500 is the store's share of a detailed list, for
// comparison with BenchmarkListNodesDetail500.
func BenchmarkStoreListNodes500(b *testing.B) {
	e := benchEnv(b)
	for i := range 500 {
		if rec := serve(e.h, "POST", "/v1/nodes", nodeBody(i)); rec.Code != 201 {
			b.Fatalf("create: %d %s", rec.Code, rec.Body)
		}
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := e.store.ListNodes(b.Context(), store.NodeFilter{Page: store.Page{Limit: 1000}}); err != nil {
			b.Fatal(err)
		}
	}
}
