package metrics

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/ferrometal/ferro/internal/baremetal"
	"github.com/ferrometal/ferro/internal/driver"
	"github.com/ferrometal/ferro/internal/hardware"
	"github.com/ferrometal/ferro/internal/store"
	"github.com/ferrometal/ferro/internal/testing/ferrotest"
)

// copyingAuth stands for the authentication middleware: it hands the
// handler under it a copy of the request, as auth.Middleware does.
func copyingAuth(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		next.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), struct{}{}, 1)))
	})
}

func TestHTTP_LabelsByRouteTemplateThroughACopyingLayer(t *testing.T) {
	m := New()
	inner := http.NewServeMux()
	inner.HandleFunc("GET /v1/nodes/{node}", func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "{}") })
	inner.HandleFunc("PUT /v1/nodes/{node}/states/power", func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusAccepted) })
	outer := http.NewServeMux()
	outer.Handle("/", copyingAuth(RecordRoute(inner)))
	srv := httptest.NewServer(m.HTTP(func(*http.Request) string { return "ironic" }, outer))
	defer srv.Close()
	for _, rq := range []struct{ method, path string }{
		{"GET", "/v1/nodes/a"}, {"GET", "/v1/nodes/b"}, {"PUT", "/v1/nodes/a/states/power"}, {"GET", "/nothing/here"},
	} {
		req, _ := http.NewRequest(rq.method, srv.URL+rq.path, nil)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
	}
	for labels, want := range map[[4]string]float64{
		{"ironic", "/v1/nodes/{node}", "GET", "200"}:              2,
		{"ironic", "/v1/nodes/{node}/states/power", "PUT", "202"}: 1,
		{"ironic", "unmatched", "GET", "404"}:                     1,
	} {
		if got := testutil.ToFloat64(m.apiRequests.WithLabelValues(labels[:]...)); got != want {
			t.Errorf("requests%v = %v, want %v", labels, got, want)
		}
	}
	if n := testutil.CollectAndCount(m.apiDuration); n != 3 {
		t.Errorf("latency series = %d, want 3 (one per route and method)", n)
	}
}

func TestRedfishOperation(t *testing.T) {
	for path, want := range map[string]string{
		"/redfish/v1":                           "ServiceRoot",
		"/redfish/v1/":                          "ServiceRoot",
		"/redfish/v1/Systems/System.Embedded.1": "Systems/{id}",
		"/redfish/v1/Systems/1/Actions/ComputerSystem.Reset":                        "Systems/{id}/Actions/ComputerSystem.Reset",
		"/redfish/v1/Managers/bmc/VirtualMedia/Cd/Actions/VirtualMedia.InsertMedia": "Managers/{id}/VirtualMedia/{id}/Actions/VirtualMedia.InsertMedia",
		"/redfish/v1/SessionService/Sessions/8f3a":                                  "SessionService/Sessions/{id}",
		"/redfish/v1/Systems/437XR1138R2/Storage/1/Drives/0":                        "Systems/{id}/Storage/{id}/Drives/{id}",
		"/elsewhere": "other",
	} {
		if got := redfishOperation(path); got != want {
			t.Errorf("redfishOperation(%q) = %q, want %q", path, got, want)
		}
	}
}

func TestLabelSet_Bounded(t *testing.T) {
	s := newLabelSet(2)
	for _, v := range []string{"a", "b", "a"} {
		if got := s.bound(v); got != v {
			t.Errorf("bound(%q) = %q", v, got)
		}
	}
	if got := s.bound("c"); got != "other" {
		t.Errorf("third value = %q, want other", got)
	}
}

func TestInspectionSeries(t *testing.T) {
	m := New()
	now := time.Unix(1000, 0)
	m.phases.now = func() time.Time { return now }
	obs := m.Conductor()
	rec := m.Progress(driver.NoProgress{})
	started := now
	n := &baremetal.Node{UUID: "u1", Driver: "ipmi", Interfaces: map[string]string{"inspect": "inspector"},
		ProvisionState: "inspecting", InspectionStartedAt: &started}
	obs.ProvisionStateChanged(n, "manageable")
	now = now.Add(3 * time.Second)
	rec.Record(context.Background(), "u1", driver.PhasePoweredOn, "")
	now = now.Add(2 * time.Second)
	rec.Record(context.Background(), "u1", "dhcp_offer_sent", "")
	rec.Record(context.Background(), "u1", driver.PhaseDHCPAnswered, "") // a repeat: not timed again
	n.ProvisionState = "inspect wait"
	obs.ProvisionStateChanged(n, "inspecting")
	n.ProvisionState = "manageable"
	obs.ProvisionStateChanged(n, "inspect wait")
	obs.HardwareChanged(n, []hardware.Change{{Component: "disk", Change: "removed"}, {Component: "nic", Change: "changed"}})

	if got := testutil.ToFloat64(m.inspectionsStarted.WithLabelValues("inspector", "ipmi")); got != 1 {
		t.Errorf("started = %v", got)
	}
	if got := testutil.ToFloat64(m.inspectionsFinished.WithLabelValues("inspector", "ipmi")); got != 1 {
		t.Errorf("finished = %v", got)
	}
	if got := testutil.ToFloat64(m.hardwareChanges.WithLabelValues("disk", "removed")); got != 1 {
		t.Errorf("hardware changes = %v", got)
	}
	want := `
# HELP ferro_inspection_phase_duration_seconds Time an inspection took to reach a phase from the one before (the first from the start), as the node history records them.
# TYPE ferro_inspection_phase_duration_seconds histogram
`
	var got bytes.Buffer
	if err := testutil.CollectAndCompare(m.phaseDuration, strings.NewReader(want+histogramLines("dhcp_answered", 2)+histogramLines("powered_on", 3))); err != nil {
		got.WriteString(err.Error())
		t.Error(got.String())
	}
	if len(m.phases.last) != 0 {
		t.Errorf("phase clock keeps %d nodes after the inspection ended", len(m.phases.last))
	}
}

// histogramLines is one observation of v seconds in phaseBuckets' exposition.
func histogramLines(phase string, v float64) string {
	var b strings.Builder
	for _, le := range phaseBuckets {
		c := 0
		if v <= le {
			c = 1
		}
		b.WriteString("ferro_inspection_phase_duration_seconds_bucket{phase=\"" + phase + "\",le=\"" + fmtFloat(le) + "\"} " + fmtFloat(float64(c)) + "\n")
	}
	b.WriteString("ferro_inspection_phase_duration_seconds_bucket{phase=\"" + phase + "\",le=\"+Inf\"} 1\n")
	b.WriteString("ferro_inspection_phase_duration_seconds_sum{phase=\"" + phase + "\"} " + fmtFloat(v) + "\n")
	b.WriteString("ferro_inspection_phase_duration_seconds_count{phase=\"" + phase + "\"} 1\n")
	return b.String()
}

type nodeCounts []store.NodeCount

func (c nodeCounts) CountNodes(context.Context) ([]store.NodeCount, error) {
	if c == nil {
		return nil, errors.New("database gone")
	}
	return c, nil
}

// TestExposition_PromtoolAccepts scrapes every kind of series and has
// Prometheus' own promtool check the text.
func TestExposition_PromtoolAccepts(t *testing.T) {
	promtool := ferrotest.RequireTool(t, "promtool")
	m := New()
	m.WatchNodes(nodeCounts{{ProvisionState: "manageable", PowerState: "power off", Count: 3}})
	m.WatchConductor(func() ConductorLoad { return ConductorLoad{Workers: 100, Busy: 2} })
	m.IPMI()("power status", time.Millisecond, nil)
	m.Store()("exec", time.Millisecond, errors.New("x"))
	m.WatchNetboot(func() NetbootStats { return NetbootStats{DHCPOffers: 2, TFTPServed: 1, TFTPBytes: 1024, TFTPBusy: 1} })
	obs := m.Conductor()
	obs.ProvisionStateChanged(&baremetal.Node{UUID: "u", Driver: "fake-hardware", ProvisionState: "inspecting"}, "manageable")
	obs.PeriodicTaskRan("power_sync", 3*time.Second)
	obs.PeriodicTaskRan("power_sync", 20*time.Millisecond)
	obs.PeriodicTaskSkipped("power_sync")

	rec := httptest.NewRecorder()
	m.Handler().ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	body := rec.Body.String()
	for _, want := range []string{
		`ferro_nodes{power_state="power off",provision_state="manageable"} 3`,
		`ferro_conductor_workers_busy 2`,
		`ferro_bmc_requests_total{operation="power status",result="ok",type="ipmi"} 1`,
		`ferro_netboot_transferred_bytes_total{protocol="tftp"} 1024`,
		`ferro_netboot_dhcp_replies_total{type="offer"} 2`,
		`ferro_netboot_busy_refusals_total{protocol="tftp"} 1`,
		`ferro_inspections_started_total{hardware_type="fake-hardware",inspect_interface="none"} 1`,
		`ferro_conductor_periodic_task_duration_seconds_count{task="power_sync"} 2`,
		`ferro_conductor_periodic_task_duration_seconds_sum{task="power_sync"} 3.02`,
		`ferro_conductor_periodic_task_duration_seconds_bucket{task="power_sync",le="2.5"} 1`,
		`ferro_conductor_periodic_task_skipped_total{task="power_sync"} 1`,
		`go_goroutines`,
	} {
		if !strings.Contains(body, want) {
			t.Errorf("exposition lacks %s", want)
		}
	}
	cmd := exec.Command(promtool, "check", "metrics")
	cmd.Stdin = strings.NewReader(body)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Errorf("promtool check metrics: %v\n%s", err, out)
	}
}

func fmtFloat(f float64) string { return strconv.FormatFloat(f, 'g', -1, 64) }

// BenchmarkHTTP is what the middleware adds to a request: a request served
// by a ServeMux route directly, and through HTTP and RecordRoute.
func BenchmarkHTTP(b *testing.B) {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /v1/nodes/{node}", func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusOK) })
	m := New()
	wrapped := m.HTTP(func(*http.Request) string { return "ironic" }, copyingAuth(RecordRoute(mux)))
	bare := copyingAuth(mux)
	for name, h := range map[string]http.Handler{"bare": bare, "metrics": wrapped} {
		b.Run(name, func(b *testing.B) {
			req := httptest.NewRequest("GET", "/v1/nodes/6b2e4c1a-0000-4000-8000-000000000001", nil)
			w := httptest.NewRecorder()
			b.ReportAllocs()
			for b.Loop() {
				h.ServeHTTP(w, req)
			}
		})
	}
}

// BenchmarkStoreObserver is what timing one statement costs.
func BenchmarkStoreObserver(b *testing.B) {
	obs := New().Store()
	for b.Loop() {
		start := time.Now()
		obs("exec", time.Since(start), nil)
	}
}
