package main

// In-process benchmarks of the probe's requests: the same API handler,
// conductor and SQLite store as `ferro serve`, driven through ServeHTTP so
// that `go test -bench . -cpuprofile` shows where the server's time goes
// without the network or a second process.
//
//	go test ./bench/loadprobe -run '^$' -bench . -cpuprofile cpu.out

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ferrometal/ferro/internal/api/ironic"
	"github.com/ferrometal/ferro/internal/conductor"
	"github.com/ferrometal/ferro/internal/driver"
	"github.com/ferrometal/ferro/internal/driver/fake"
	"github.com/ferrometal/ferro/internal/driver/ipmi"
	"github.com/ferrometal/ferro/internal/driver/network"
	"github.com/ferrometal/ferro/internal/driver/redfish"
	sqlstore "github.com/ferrometal/ferro/internal/store/sql"
)

// stack is the API over a conductor and an SQLite store, wired as
// `ferro serve` wires them for fake-hardware.
type stack struct {
	h    http.Handler
	cond *conductor.Conductor
}

func newStack(b testing.TB) *stack {
	b.Helper()
	ctx := context.Background()
	db, err := sqlstore.Open(ctx, "sqlite://"+filepath.Join(b.TempDir(), "ferro.db"))
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { db.Close() })
	types := []driver.HardwareType{fake.HardwareType, ipmi.HardwareType, redfish.HardwareType}
	reg := driver.NewRegistry(types, driver.EnableAll(types))
	fake.Register(reg)
	reg.RegisterNetwork("noop", network.Noop{})
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	cond := conductor.New(conductor.Options{Store: db, Registry: reg, Log: log, Host: "bench", Workers: 100,
		PowerTimeout: time.Minute, HeartbeatInterval: 10 * time.Second, StatusCheckPeriod: time.Minute,
		CheckProvisionStateInterval: time.Minute, HeartbeatTimeout: time.Minute, InspectWaitTimeout: 30 * time.Minute})
	if err := cond.Start(ctx); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		cond.Stop(ctx)
	})
	h := ironic.New(ironic.Options{Store: db, Conductor: cond, Log: log, MaxLimit: 1000, HeartbeatTimeout: time.Minute, Host: "bench"})
	return &stack{h: h, cond: cond}
}

func (s *stack) do(b testing.TB, method, path string, body []byte, want int) []byte {
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	w := s.serve(method, path, rd)
	if w.Code != want {
		b.Fatalf("%s %s: %d %s", method, path, w.Code, w.Body)
	}
	return w.Body.Bytes()
}

// serve runs one request through the handler. Its context can be
// cancelled, as net/http's are: the store and the SQLite driver do more
// work for such contexts than for context.Background().
func (s *stack) serve(method, path string, body io.Reader) *httptest.ResponseRecorder {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	req := httptest.NewRequestWithContext(ctx, method, "http://127.0.0.1:6385"+path, body)
	req.Header.Set("X-OpenStack-Ironic-API-Version", apiVersion)
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	w := httptest.NewRecorder()
	s.h.ServeHTTP(w, req)
	return w
}

func (s *stack) create(b testing.TB, i int) string {
	var n struct {
		UUID string `json:"uuid"`
	}
	if err := json.Unmarshal(s.do(b, http.MethodPost, "/v1/nodes", nodeBody(i), http.StatusCreated), &n); err != nil {
		b.Fatal(err)
	}
	return n.UUID
}

// cpuMeter reports the process's CPU time per operation (cpu-ns/op)
// next to the wall time: on a shared machine the wall time says more
// about the neighbours than about the code.
type cpuMeter struct {
	b     *testing.B
	start time.Duration
	total time.Duration
}

func meterCPU(b *testing.B) *cpuMeter { return &cpuMeter{b: b, start: selfCPU()} }

// pause and resume leave setup work inside the loop out of the figure.
func (m *cpuMeter) pause()  { m.total += selfCPU() - m.start }
func (m *cpuMeter) resume() { m.start = selfCPU() }

func (m *cpuMeter) report() {
	m.pause()
	m.b.ReportMetric(float64(m.total)/float64(m.b.N), "cpu-ns/op")
}

func BenchmarkCreateNode(b *testing.B) {
	s := newStack(b)
	i := 0
	m := meterCPU(b)
	for b.Loop() {
		s.create(b, i)
		i++
	}
	m.report()
}

// BenchmarkCreateNodeParallel creates from 8 clients, as the probe does.
func BenchmarkCreateNodeParallel(b *testing.B) {
	s := newStack(b)
	var next atomic.Int64
	b.SetParallelism(4) // × GOMAXPROCS (2 here) = 8 clients
	m := meterCPU(b)
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			s.create(b, int(next.Add(1)))
		}
	})
	m.report()
}

func BenchmarkListDetail500(b *testing.B) {
	s := newStack(b)
	for i := range 500 {
		s.create(b, i)
	}
	m := meterCPU(b)
	for b.Loop() {
		s.do(b, http.MethodGet, "/v1/nodes?detail=true", nil, http.StatusOK)
	}
	m.report()
}

// BenchmarkListDetail500HTTP is BenchmarkListDetail500 over a loopback
// HTTP connection, as the probe reads it (body discarded): it includes
// net/http's writing and the transfer, which a ResponseRecorder skips.
// Its CPU is the server's and the client's together.
func BenchmarkListDetail500HTTP(b *testing.B) {
	s := newStack(b)
	for i := range 500 {
		s.create(b, i)
	}
	srv := httptest.NewServer(s.h)
	defer srv.Close()
	cl := newClient(srv.URL, 1)
	m := meterCPU(b)
	for b.Loop() {
		if _, err := cl.listDetailTimed(); err != nil {
			b.Fatal(err)
		}
	}
	m.report()
	if _, err := cl.listDetail(500); err != nil {
		b.Fatal(err)
	}
}

func BenchmarkGetNode(b *testing.B) {
	s := newStack(b)
	id := s.create(b, 0)
	m := meterCPU(b)
	for b.Loop() {
		s.do(b, http.MethodGet, "/v1/nodes/"+id, nil, http.StatusOK)
	}
	m.report()
}

// BenchmarkManageInspect100 is one op: 100 enrolled nodes managed, then
// inspected, until all are manageable again with no lock held.
func BenchmarkManageInspect100(b *testing.B) {
	s := newStack(b)
	round := 0
	m := meterCPU(b)
	for b.Loop() {
		b.StopTimer()
		m.pause()
		ids := make([]string, 100)
		for i := range ids {
			ids[i] = s.create(b, round*100+i)
		}
		round++
		m.resume()
		b.StartTimer()
		for _, verb := range []string{"manage", "inspect"} {
			body := fmt.Appendf(nil, `{"target": %q}`, verb)
			err := parallel(len(ids), 8, func(i int) error {
				for {
					w := s.serve(http.MethodPut, "/v1/nodes/"+ids[i]+"/states/provision", bytes.NewReader(body))
					switch w.Code {
					case http.StatusAccepted:
						return nil
					case http.StatusConflict, http.StatusServiceUnavailable:
						time.Sleep(time.Millisecond)
					default:
						return fmt.Errorf("%s: %d %s", verb, w.Code, w.Body)
					}
				}
			})
			if err != nil {
				b.Fatal(err)
			}
			for _, id := range ids {
				for {
					var n struct {
						State       string  `json:"provision_state"`
						Reservation *string `json:"reservation"`
					}
					json.Unmarshal(s.do(b, http.MethodGet, "/v1/nodes/"+id+"?fields=provision_state,reservation", nil, http.StatusOK), &n)
					if n.State == "manageable" && n.Reservation == nil {
						break
					}
					time.Sleep(100 * time.Microsecond)
				}
			}
		}
	}
	m.report()
}
