// Package inspector is the ironic-inspector v1 REST API over the inspector
// service: introspection start, status, list, abort and data, the agent's
// /v1/continue callback, and introspection rules.
package inspector

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/ferrometal/ferro/internal/driver/inspect"
	svc "github.com/ferrometal/ferro/internal/inspector"
	"github.com/ferrometal/ferro/internal/inspector/rules"
	"github.com/ferrometal/ferro/internal/inventory"
	"github.com/ferrometal/ferro/internal/jsonlimit"
	"github.com/ferrometal/ferro/internal/reportbudget"
	"github.com/ferrometal/ferro/internal/store"
)

// API versions, as ironic-inspector 11.x reports them.
const (
	MinVersion    = "1.0"
	MaxVersion    = "1.18"
	versionHeader = "X-OpenStack-Ironic-Inspector-API-Version"
	// MaxReportBytes bounds the agent's report (OSSN-0099 allows 16 MiB).
	MaxReportBytes = 16 << 20
	// maxBodyBytes bounds every other request body.
	maxBodyBytes = 1 << 20
)

// ruleLimits bound what a rule body may decode to, as for the Ironic API.
var ruleLimits = jsonlimit.Limits{MaxDepth: 25, MaxValues: 1 << 17}

// Service is what the API needs from the inspector.
type Service interface {
	Start(ctx context.Context, ident string, manageBoot bool, token string) error
	Status(ctx context.Context, ident string) (*store.Introspection, error)
	List(ctx context.Context, f store.IntrospectionFilter) ([]*store.Introspection, error)
	Abort(ctx context.Context, ident string) error
	Data(ctx context.Context, ident, kind string) ([]byte, error)
	Reapply(ctx context.Context, ident string) error
	Continue(ctx context.Context, body []byte, token string) (string, error)
}

// RuleStore is where rules live.
type RuleStore interface {
	CreateRule(ctx context.Context, r *store.Rule) error
	GetRule(ctx context.Context, uuid string) (*store.Rule, error)
	ListRules(ctx context.Context) ([]*store.Rule, error)
	DeleteRule(ctx context.Context, uuid string) error
	DeleteAllRules(ctx context.Context) error
}

// Options wire the API.
type Options struct {
	Service Service
	Rules   RuleStore
	Log     *slog.Logger
	// PublicEndpoint is the base URL for links; "" uses the request's host.
	PublicEndpoint string
	// MaxLimit caps list page sizes.
	MaxLimit int
	// MaxConcurrentReports bounds the reports read and processed at once,
	// so that memory stays bounded however many agents post together;
	// 0 means twice the number of CPUs, at most 32.
	MaxConcurrentReports int
	// ReportReadTimeout bounds reading one report's body, from the moment it
	// has a slot (0: DefaultReportReadTimeout), so a client trickling its
	// report cannot hold a slot and its buffer for long.
	ReportReadTimeout time.Duration
	// ReportQueueTimeout is how long a report waits for its share of
	// Budget and a free slot before it is answered 503 (the agent
	// retries); 0 means 30 s.
	ReportQueueTimeout time.Duration
	// Budget bounds the memory of the reports in flight; share one
	// between every API that takes reports (NewReportBudget). nil: a
	// budget of reportbudget.DefaultBytes for this API alone.
	Budget *reportbudget.Budget
}

// NewReportBudget is a report memory budget of bytes (0:
// reportbudget.DefaultBytes) for reports of at most MaxReportBytes.
func NewReportBudget(bytes int64) (*reportbudget.Budget, error) {
	return reportbudget.New(reportbudget.Options{Bytes: bytes, MaxBody: MaxReportBytes, MaxValues: inventory.DefaultMaxValues})
}

// DefaultReportReadTimeout is enough for a 16 MiB report at 4 Mbit/s.
const DefaultReportReadTimeout = 60 * time.Second

type api struct {
	Options
	// reports holds a token per report being read or processed.
	reports chan struct{}
}

// New returns the API handler. Mounted on the main port in all-in-one mode,
// it owns /v1/introspection…, /v1/continue and /v1/rules…; on its own port
// it also serves / and /v1.
func New(o Options) http.Handler {
	if o.Log == nil {
		o.Log = slog.Default()
	}
	if o.MaxLimit <= 0 {
		o.MaxLimit = 1000
	}
	if o.MaxConcurrentReports <= 0 {
		// Enough to keep the CPUs and the grouped database commits busy;
		// capped so that a machine with many cores does not hold many
		// 16 MiB bodies at once.
		o.MaxConcurrentReports = min(2*runtime.GOMAXPROCS(0), 32)
	}
	if o.ReportReadTimeout <= 0 {
		o.ReportReadTimeout = DefaultReportReadTimeout
	}
	if o.ReportQueueTimeout <= 0 {
		o.ReportQueueTimeout = 30 * time.Second
	}
	if o.Budget == nil {
		o.Budget, _ = NewReportBudget(0)
	}
	a := &api{Options: o, reports: make(chan struct{}, o.MaxConcurrentReports)}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /{$}", a.root)
	mux.HandleFunc("GET /v1", a.v1)
	mux.HandleFunc("GET /v1/{$}", a.v1)
	mux.HandleFunc("POST /v1/introspection/{node}", a.start)
	mux.HandleFunc("GET /v1/introspection/{node}", a.status)
	mux.HandleFunc("GET /v1/introspection", a.list)
	mux.HandleFunc("POST /v1/introspection/{node}/abort", a.abort)
	mux.HandleFunc("GET /v1/introspection/{node}/data", a.data("processed"))
	mux.HandleFunc("GET /v1/introspection/{node}/data/unprocessed", a.data("raw"))
	mux.HandleFunc("POST /v1/introspection/{node}/data/unprocessed", a.reapply)
	mux.HandleFunc("POST /v1/continue", a.cont)
	mux.HandleFunc("POST /v1/rules", a.createRule)
	mux.HandleFunc("GET /v1/rules", a.listRules)
	mux.HandleFunc("DELETE /v1/rules", a.deleteRules)
	mux.HandleFunc("GET /v1/rules/{uuid}", a.getRule)
	mux.HandleFunc("DELETE /v1/rules/{uuid}", a.deleteRule)
	return a.wrap(mux)
}

// Paths returns the route prefixes this API owns on a shared listener.
func Paths() []string {
	return []string{"/v1/introspection", "/v1/introspection/", "/v1/continue", "/v1/rules", "/v1/rules/"}
}

// wrap negotiates the version, sets the version headers, turns the mux's
// 404/405 into inspector errors and logs the request.
func (a *api) wrap(mux *http.ServeMux) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		h := w.Header()
		h.Set("X-OpenStack-Ironic-Inspector-API-Minimum-Version", MinVersion)
		h.Set("X-OpenStack-Ironic-Inspector-API-Maximum-Version", MaxVersion)
		v, err := negotiate(r.Header.Get(versionHeader))
		if err != nil {
			status := http.StatusNotAcceptable
			if errors.Is(err, errMalformedVersion) {
				status = http.StatusBadRequest // as ironic-inspector
			}
			writeError(w, status, err.Error())
			return
		}
		h.Set(versionHeader, v)
		sw := &statusWriter{ResponseWriter: w}
		if _, pattern := mux.Handler(r); pattern == "" {
			// Distinguish a wrong method from an unknown path.
			status, msg := http.StatusNotFound, "Not Found: "+r.URL.Path
			for _, m := range []string{http.MethodGet, http.MethodPost, http.MethodDelete} {
				probe := r.Clone(r.Context())
				probe.Method = m
				if _, p := mux.Handler(probe); p != "" {
					status, msg = http.StatusMethodNotAllowed, fmt.Sprintf("Method %s is not allowed for %s", r.Method, r.URL.Path)
					break
				}
			}
			writeError(sw, status, msg)
		} else {
			mux.ServeHTTP(sw, r)
		}
		a.Log.Info("inspector api request", "method", r.Method, "path", r.URL.Path, "status", sw.status,
			"duration", time.Since(start))
	})
}

type statusWriter struct {
	http.ResponseWriter
	status int
}

func (w *statusWriter) WriteHeader(code int) {
	if w.status == 0 {
		w.status = code
	}
	w.ResponseWriter.WriteHeader(code)
}

// Unwrap lets http.ResponseController reach the connection (read deadlines).
func (w *statusWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

func (w *statusWriter) Write(b []byte) (int, error) {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	return w.ResponseWriter.Write(b)
}

// errMalformedVersion is a version header that is not X.Y or latest.
var errMalformedVersion = errors.New("Malformed API version: expected string in form of X.Y or latest")

// negotiate checks a requested version; "" and "latest" mean the maximum.
func negotiate(req string) (string, error) {
	if req == "" || strings.EqualFold(req, "latest") {
		return MaxVersion, nil
	}
	maj, min, ok := parseVersion(req)
	if !ok {
		return "", errMalformedVersion
	}
	_, maxMin, _ := parseVersion(MaxVersion)
	if maj != 1 || min > maxMin {
		return "", fmt.Errorf("Unsupported API version %s, supported range is %s to %s", req, MinVersion, MaxVersion)
	}
	return req, nil
}

func parseVersion(s string) (int, int, bool) {
	a, b, ok := strings.Cut(s, ".")
	if !ok {
		return 0, 0, false
	}
	maj, err1 := strconv.Atoi(a)
	min, err2 := strconv.Atoi(b)
	return maj, min, err1 == nil && err2 == nil && maj >= 0 && min >= 0
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		writeError(w, http.StatusInternalServerError, "cannot encode response")
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	w.Write(b)
}

// writeError writes ironic-inspector's error shape.
func writeError(w http.ResponseWriter, status int, msg string) {
	writeJSON(w, status, map[string]any{"error": map[string]any{"message": msg}})
}

// fail maps a service error to its status; unexpected errors are 500s
// whose detail goes to the log, not the client.
func (a *api) fail(w http.ResponseWriter, r *http.Request, err error) {
	var e *svc.Error
	switch {
	case errors.As(err, &e):
		writeError(w, e.Status, e.Msg)
	case errors.Is(err, store.ErrNotFound):
		writeError(w, http.StatusNotFound, err.Error())
	case errors.Is(err, store.ErrConflict):
		writeError(w, http.StatusConflict, err.Error())
	default:
		a.Log.Error("inspector api request failed", "method", r.Method, "path", r.URL.Path, "error", err)
		writeError(w, http.StatusInternalServerError, "Internal server error, see the inspector log")
	}
}

func (a *api) base(r *http.Request) string {
	if a.PublicEndpoint != "" {
		return strings.TrimRight(a.PublicEndpoint, "/")
	}
	scheme := "http"
	if r.TLS != nil {
		scheme = "https"
	}
	return scheme + "://" + r.Host
}

func link(href string) []map[string]string {
	return []map[string]string{{"href": href, "rel": "self"}}
}

func (a *api) root(w http.ResponseWriter, r *http.Request) {
	writeJSON(w, http.StatusOK, map[string]any{"versions": []any{map[string]any{
		"id": MaxVersion, "status": "CURRENT", "links": link(a.base(r) + "/v1"),
	}}})
}

func (a *api) v1(w http.ResponseWriter, r *http.Request) {
	var res []any
	for _, name := range []string{"introspection", "continue", "rules"} {
		res = append(res, map[string]any{"name": name, "links": link(a.base(r) + "/v1/" + name)})
	}
	writeJSON(w, http.StatusOK, map[string]any{"resources": res})
}

func (a *api) start(w http.ResponseWriter, r *http.Request) {
	manageBoot := true
	if v := r.URL.Query().Get("manage_boot"); v != "" {
		b, err := parseBool(v)
		if err != nil {
			writeError(w, http.StatusBadRequest, fmt.Sprintf("Invalid boolean value for manage_boot: %s", v))
			return
		}
		manageBoot = b
	}
	if err := a.Service.Start(r.Context(), r.PathValue("node"), manageBoot, r.Header.Get(inspect.TokenHeader)); err != nil {
		a.fail(w, r, err)
		return
	}
	accepted(w)
}

// accepted answers 202 with ironic-inspector's body, an empty object
// (some proxies take a 202 without a body and type for a failure).
func accepted(w http.ResponseWriter) { writeJSON(w, http.StatusAccepted, struct{}{}) }

func parseBool(s string) (bool, error) {
	switch strings.ToLower(s) {
	case "1", "t", "true", "on", "y", "yes":
		return true, nil
	case "0", "f", "false", "off", "n", "no":
		return false, nil
	}
	return false, errors.New("invalid boolean")
}

// isoformat writes a timestamp as ironic-inspector does (Python's
// datetime.isoformat of a naive UTC time): microseconds, unless they are
// zero, and no zone.
func isoformat(t time.Time) string {
	t = t.UTC()
	if us := t.Nanosecond() / 1000; us != 0 {
		return t.Format("2006-01-02T15:04:05") + fmt.Sprintf(".%06d", us)
	}
	return t.Format("2006-01-02T15:04:05")
}

func (a *api) statusJSON(r *http.Request, in *store.Introspection) map[string]any {
	out := map[string]any{
		"uuid": in.NodeUUID, "state": in.State, "finished": in.FinishedAt != nil,
		"started_at": isoformat(in.StartedAt), "finished_at": nil, "error": nil,
		"links": link(a.base(r) + "/v1/introspection/" + in.NodeUUID),
	}
	if in.FinishedAt != nil {
		out["finished_at"] = isoformat(*in.FinishedAt)
	}
	if in.Error != "" {
		out["error"] = in.Error
	}
	return out
}

func (a *api) status(w http.ResponseWriter, r *http.Request) {
	in, err := a.Service.Status(r.Context(), r.PathValue("node"))
	if err != nil {
		a.fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, a.statusJSON(r, in))
}

// states are the introspection states a list may filter on, as
// ironic-inspector's States.all().
var states = []string{svc.StateStarting, svc.StateWaiting, svc.StateProcessing, svc.StateFinished,
	svc.StateError, svc.StateReapplying, "enrolling", svc.StateAborting}

// list answers GET /v1/introspection. Its parameters are read and refused
// as ironic-inspector's api_tools do: the first value of each, present
// even when empty, errors prefixed "Bad request: ".
func (a *api) list(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	bad := func(msg string) { writeError(w, http.StatusBadRequest, "Bad request: "+msg) }
	f := store.IntrospectionFilter{Page: store.Page{Limit: a.MaxLimit}}
	if q.Has("marker") {
		f.Marker = q.Get("marker")
		if _, err := uuid.Parse(f.Marker); err != nil || len(f.Marker) != 36 {
			bad("Marker not UUID-like")
			return
		}
	}
	if q.Has("limit") {
		v := q.Get("limit")
		n, err := strconv.Atoi(strings.TrimSpace(v))
		switch {
		case err != nil:
			bad(fmt.Sprintf("invalid literal for int() with base 10: '%s'", v))
			return
		case n < 0:
			bad("Limit cannot be negative")
			return
		case n > a.MaxLimit:
			bad(fmt.Sprintf("Limit over %d", a.MaxLimit))
			return
		case n > 0:
			f.Limit = n
		}
	}
	if q.Has("state") {
		var invalid []string
		for _, st := range strings.Split(q.Get("state"), ",") {
			if !slices.Contains(states, st) {
				invalid = append(invalid, st)
			}
			f.State = append(f.State, st)
		}
		if len(invalid) > 0 {
			bad(fmt.Sprintf("State(s) \"%s\" are not valid", strings.Join(invalid, ", ")))
			return
		}
	}
	ins, err := a.Service.List(r.Context(), f)
	if err != nil {
		if errors.Is(err, store.ErrNotFound) {
			writeError(w, http.StatusNotFound, fmt.Sprintf("Node not found for marker: %s", f.Marker))
			return
		}
		a.fail(w, r, err)
		return
	}
	out := make([]any, 0, len(ins))
	for _, in := range ins {
		out = append(out, a.statusJSON(r, in))
	}
	writeJSON(w, http.StatusOK, map[string]any{"introspection": out})
}

func (a *api) abort(w http.ResponseWriter, r *http.Request) {
	if err := a.Service.Abort(r.Context(), r.PathValue("node")); err != nil {
		a.fail(w, r, err)
		return
	}
	accepted(w)
}

func (a *api) data(kind string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		b, err := a.Service.Data(r.Context(), r.PathValue("node"), kind)
		if err != nil {
			a.fail(w, r, err)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusOK)
		w.Write(b)
	}
}

func (a *api) reapply(w http.ResponseWriter, r *http.Request) {
	if r.ContentLength > 0 {
		writeError(w, http.StatusBadRequest, "User data processing is not supported yet")
		return
	}
	if err := a.Service.Reapply(r.Context(), r.PathValue("node")); err != nil {
		a.fail(w, r, err)
		return
	}
	accepted(w)
}

// cont is the agent's callback. It is the one unauthenticated write, so
// everything about it is bounded before anything reads it: the memory the
// reports in flight may take (a share of Budget is reserved before the body
// is read, for the worst a body of that length may cost, and lowered to
// what it does cost once read), how many are read and processed at once,
// how long reading one may take, and its size.
func (a *api) cont(w http.ResponseWriter, r *http.Request) {
	queue, cancel := context.WithTimeout(r.Context(), a.ReportQueueTimeout)
	defer cancel()
	busy := func() {
		if r.Context().Err() != nil {
			return // the agent is gone
		}
		w.Header().Set("Retry-After", "5")
		writeError(w, http.StatusServiceUnavailable, "Too many introspection reports are being processed, retry later")
	}
	share, err := a.Budget.Reserve(queue, r.ContentLength)
	if err != nil {
		busy()
		return
	}
	defer share.Release()
	select {
	case a.reports <- struct{}{}:
		defer func() { <-a.reports }()
	case <-queue.Done():
		busy()
		return
	}
	// Deadlines the server's own timeouts cannot give: they run from the
	// slot, not from the connection's first byte, so a report that queued
	// still has its full time to arrive and be answered.
	rc := http.NewResponseController(w)
	_ = rc.SetReadDeadline(time.Now().Add(a.ReportReadTimeout))
	_ = rc.SetWriteDeadline(time.Now().Add(2 * a.ReportReadTimeout))
	body, err := reportbudget.ReadBody(http.MaxBytesReader(w, r.Body, MaxReportBytes), r.ContentLength, MaxReportBytes)
	if err != nil {
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			writeError(w, http.StatusRequestEntityTooLarge, fmt.Sprintf("Request body is larger than %d bytes", MaxReportBytes))
			return
		}
		if errors.Is(err, os.ErrDeadlineExceeded) {
			a.Log.Warn("report body not received in time; connection closed", "timeout", a.ReportReadTimeout, "remote", r.RemoteAddr)
			w.Header().Set("Connection", "close")
			writeError(w, http.StatusRequestTimeout, fmt.Sprintf("The report was not received within %s", a.ReportReadTimeout))
			return
		}
		writeError(w, http.StatusBadRequest, "Cannot read the request body")
		return
	}
	share.Fit(body)
	id, err := a.Service.Continue(r.Context(), body, r.Header.Get(inspect.TokenHeader))
	if err != nil {
		a.fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"uuid": id})
}

func (a *api) createRule(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxBodyBytes))
	if err != nil {
		writeError(w, http.StatusRequestEntityTooLarge, "Request body too large")
		return
	}
	if err := jsonlimit.Check(body, ruleLimits); err != nil {
		writeError(w, http.StatusBadRequest, "Invalid rule: "+err.Error())
		return
	}
	rule, err := rules.Parse(body)
	if err != nil {
		writeError(w, http.StatusBadRequest, err.Error())
		return
	}
	if rule.UUID == "" {
		rule.UUID = uuid.NewString()
	}
	// Store the rule as received, with its UUID, so GET returns what was sent.
	var doc map[string]any
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	if err := dec.Decode(&doc); err != nil {
		writeError(w, http.StatusBadRequest, err.Error())
		return
	}
	doc["uuid"] = rule.UUID
	if _, ok := doc["description"]; !ok {
		doc["description"] = nil
	}
	stored, _ := json.Marshal(doc)
	sr := &store.Rule{UUID: rule.UUID, Description: rule.Description, Scope: rule.Scope, Body: stored}
	if err := a.Rules.CreateRule(r.Context(), sr); err != nil {
		if errors.Is(err, store.ErrConflict) {
			writeError(w, http.StatusConflict, fmt.Sprintf("Rule with UUID %s already exists", rule.UUID))
			return
		}
		a.fail(w, r, err)
		return
	}
	status := http.StatusCreated
	if v, _ := negotiate(r.Header.Get(versionHeader)); v != "" {
		if _, min, ok := parseVersion(v); ok && min < 6 {
			status = http.StatusOK // before 1.6 creation answered 200
		}
	}
	writeJSON(w, status, a.ruleJSON(r, sr, true))
}

func (a *api) ruleJSON(r *http.Request, sr *store.Rule, full bool) map[string]any {
	out := map[string]any{"uuid": sr.UUID, "description": nilIfEmpty(sr.Description), "scope": nilIfEmpty(sr.Scope),
		"links": link(a.base(r) + "/v1/rules/" + sr.UUID)}
	if full {
		var doc map[string]any
		dec := json.NewDecoder(bytes.NewReader(sr.Body))
		dec.UseNumber()
		if dec.Decode(&doc) == nil {
			out["conditions"], out["actions"] = doc["conditions"], doc["actions"]
			if out["conditions"] == nil {
				out["conditions"] = []any{}
			}
		}
	}
	return out
}

func nilIfEmpty(s string) any {
	if s == "" {
		return nil
	}
	return s
}

func (a *api) listRules(w http.ResponseWriter, r *http.Request) {
	rs, err := a.Rules.ListRules(r.Context())
	if err != nil {
		a.fail(w, r, err)
		return
	}
	out := make([]any, 0, len(rs))
	for _, sr := range rs {
		out = append(out, a.ruleJSON(r, sr, false))
	}
	writeJSON(w, http.StatusOK, map[string]any{"rules": out})
}

func (a *api) getRule(w http.ResponseWriter, r *http.Request) {
	sr, err := a.Rules.GetRule(r.Context(), r.PathValue("uuid"))
	if errors.Is(err, store.ErrNotFound) {
		writeError(w, http.StatusNotFound, fmt.Sprintf("Rule %s was not found", r.PathValue("uuid")))
		return
	}
	if err != nil {
		a.fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, a.ruleJSON(r, sr, true))
}

func (a *api) deleteRule(w http.ResponseWriter, r *http.Request) {
	err := a.Rules.DeleteRule(r.Context(), r.PathValue("uuid"))
	if errors.Is(err, store.ErrNotFound) {
		writeError(w, http.StatusNotFound, fmt.Sprintf("Rule %s was not found", r.PathValue("uuid")))
		return
	}
	if err != nil {
		a.fail(w, r, err)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

func (a *api) deleteRules(w http.ResponseWriter, r *http.Request) {
	if err := a.Rules.DeleteAllRules(r.Context()); err != nil {
		a.fail(w, r, err)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

// WriteError sends an error in ironic-inspector's body, for the layers in
// front of the API handler (authentication) that answer before it runs.
func WriteError(w http.ResponseWriter, status int, msg string) { writeError(w, status, msg) }

// IsPath reports whether path is one of the inspector's routes (Paths).
func IsPath(path string) bool {
	for _, p := range Paths() {
		if path == p || (strings.HasSuffix(p, "/") && strings.HasPrefix(path, p)) {
			return true
		}
	}
	return false
}
