// Package metrics is ferro's Prometheus exposition: one registry of
// collectors that the parts owning the events feed through small seams —
// an HTTP middleware for the APIs, an Observer for the conductor's state
// changes, a ProgressRecorder wrapper for the inspection phases, a
// RoundTripper for Redfish, a callback for IPMI operations, store
// statements and netboot replies — and collectors that ask on scrape
// (nodes by state, the conductor's load). No part imports another's
// internals to be counted.
//
// Every name is prefixed ferro_, follows Prometheus' conventions (base
// units, _total counters, _seconds histograms) and has bounded labels: no
// node UUID, name or address is ever a label value.
package metrics

import (
	"net/http"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

const namespace = "ferro"

// latencyBuckets suit requests and statements that take from a tenth of a
// millisecond (a point read, a GET of one node) to seconds.
var latencyBuckets = []float64{.0001, .00025, .0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10}

// phaseBuckets suit inspection phases: from a second (a DHCP answer) to
// half an hour ([conductor]inspect_wait_timeout's default).
var phaseBuckets = []float64{.1, .5, 1, 2, 5, 10, 20, 30, 60, 120, 300, 600, 1200, 1800}

// periodicBuckets suit the conductor's periodic tasks: from a millisecond
// (a heartbeat) to minutes (a power sync of thousands of slow BMCs).
var periodicBuckets = []float64{.001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30, 60, 120, 300}

// Metrics is the registry and every collector ferro feeds. Its methods are
// safe for concurrent use.
type Metrics struct {
	reg *prometheus.Registry

	apiRequests *prometheus.CounterVec
	apiDuration *prometheus.HistogramVec

	inspectionsStarted  *prometheus.CounterVec
	inspectionsFinished *prometheus.CounterVec
	inspectionsFailed   *prometheus.CounterVec
	inspectionDuration  *prometheus.HistogramVec
	phaseDuration       *prometheus.HistogramVec
	hardwareChanges     *prometheus.CounterVec
	phases              *phaseClock

	periodicDuration *prometheus.HistogramVec
	periodicSkipped  *prometheus.CounterVec

	bmcRequests *prometheus.CounterVec
	bmcDuration *prometheus.HistogramVec
	redfishOps  *labelSet

	storeDuration *prometheus.HistogramVec
	storeErrors   *prometheus.CounterVec
}

// New returns the metrics with the Go runtime and process collectors
// registered.
func New() *Metrics {
	m := &Metrics{reg: prometheus.NewRegistry(), phases: newPhaseClock(), redfishOps: newLabelSet(maxRedfishOperations)}
	m.reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))

	m.apiRequests = m.counter("api", "requests_total", "API requests answered, by API, route template, method and status code.",
		"api", "route", "method", "code")
	m.apiDuration = m.histogram("api", "request_duration_seconds", "Time to answer an API request, by API, route template and method.",
		latencyBuckets, "api", "route", "method")

	ifaceLabels := []string{"inspect_interface", "hardware_type"}
	m.inspectionsStarted = m.counter("", "inspections_started_total", "Inspections started, by inspect interface and hardware type.", ifaceLabels...)
	m.inspectionsFinished = m.counter("", "inspections_finished_total", "Inspections that ended with the node manageable.", ifaceLabels...)
	m.inspectionsFailed = m.counter("", "inspections_failed_total", "Inspections that ended in inspect failed (errors, timeouts, aborts).", ifaceLabels...)
	m.inspectionDuration = m.histogram("", "inspection_duration_seconds", "Time from the start of an inspection to its end, by result.",
		phaseBuckets, "inspect_interface", "hardware_type", "result")
	m.phaseDuration = m.histogram("", "inspection_phase_duration_seconds",
		"Time an inspection took to reach a phase from the one before (the first from the start), as the node history records them.",
		phaseBuckets, "phase")
	m.hardwareChanges = m.counter("", "hardware_changes_total", "Hardware changes found by re-inspections, by component and kind of change.",
		"component", "change")

	m.periodicDuration = m.histogram("conductor", "periodic_task_duration_seconds",
		"Time a run of a conductor's periodic task took, by task (its _count is the runs).", periodicBuckets, "task")
	m.periodicSkipped = m.counter("conductor", "periodic_task_skipped_total",
		"Runs of a periodic task skipped because the previous one was still going (a power sync longer than its interval).", "task")

	m.bmcRequests = m.counter("bmc", "requests_total", "Operations sent to BMCs, by protocol (ipmi, redfish), operation and result (ok, error).",
		"type", "operation", "result")
	m.bmcDuration = m.histogram("bmc", "request_duration_seconds", "Time a BMC operation took, retries included for IPMI.",
		latencyBuckets, "type", "operation")

	m.storeDuration = m.histogram("store", "operation_duration_seconds",
		"Time a database statement took (exec, query: until the first row, query_row) or a whole transaction.",
		latencyBuckets, "operation")
	m.storeErrors = m.counter("store", "errors_total", "Database statements and transactions that failed.", "operation")

	return m
}

func (m *Metrics) counter(subsystem, name, help string, labels ...string) *prometheus.CounterVec {
	c := prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: namespace, Subsystem: subsystem, Name: name, Help: help}, labels)
	m.reg.MustRegister(c)
	return c
}

func (m *Metrics) histogram(subsystem, name, help string, buckets []float64, labels ...string) *prometheus.HistogramVec {
	h := prometheus.NewHistogramVec(prometheus.HistogramOpts{Namespace: namespace, Subsystem: subsystem, Name: name, Help: help, Buckets: buckets}, labels)
	m.reg.MustRegister(h)
	return h
}

// Handler serves the exposition (text format, or protobuf/OpenMetrics to
// a scraper that asks). At most a few scrapes run at once, each bounded.
func (m *Metrics) Handler() http.Handler {
	return promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{
		ErrorHandling:       promhttp.ContinueOnError,
		MaxRequestsInFlight: 4,
		Timeout:             10 * time.Second,
	})
}

// Registry is the registry, for tests and for parts that register a
// collector of their own.
func (m *Metrics) Registry() *prometheus.Registry { return m.reg }

func result(err error) string {
	if err != nil {
		return "error"
	}
	return "ok"
}
