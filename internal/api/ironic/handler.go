// Package ironic serves the Ironic bare metal API v1 (microversions 1.1 to
// 1.82) over ferro's store and conductor: nodes, ports, portgroups,
// allocations, drivers, conductors, node states and management, history
// and inventory, with Ironic's JSON shapes, status codes and error bodies,
// so that the baremetal CLI, gophercloud and metal3 work unchanged.
package ironic

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/google/uuid"

	"github.com/ferrometal/ferro/internal/auth"
	"github.com/ferrometal/ferro/internal/baremetal"
	"github.com/ferrometal/ferro/internal/conductor"
	"github.com/ferrometal/ferro/internal/driver"
	"github.com/ferrometal/ferro/internal/store"
)

// Conductor is what the API needs from the conductor.
type Conductor interface {
	// WithNodeLock takes the node's exclusive lock (error wrapping conductor.ErrNodeLocked if held, store.ErrNotFound if missing),
	// runs fn inside one store transaction with the freshly read node, then releases the lock. fn's error rolls back.
	WithNodeLock(ctx context.Context, ident string, fn func(ctx context.Context, tx store.Store, n *baremetal.Node) error) error
	// DoProvisionAction handles target "manage", "inspect", "provide", "abort" (and later others): validates synchronously
	// (errors: conductor.ErrInvalidState wrapped → 400 InvalidStateRequested; driver.ErrInvalidParameter/ErrMissingParameter → 400;
	// driver.ErrUnsupported → 400 UnsupportedDriverExtension; ErrNodeLocked → 409; conductor.ErrNoFreeWorker/ErrShuttingDown → 503),
	// then continues asynchronously. The API answers 202.
	DoProvisionAction(ctx context.Context, ident, target string) error
	// DoNodeDeploy starts a deployment (verb "active") or a rebuild with the user's deploy steps, which the API
	// validated against Ironic's schema (nil: none); errors as DoProvisionAction.
	DoNodeDeploy(ctx context.Context, ident, verb string, steps []baremetal.DeployStep) error
	// DoNodeClean starts manual cleaning with steps the API validated against Ironic's schema; errors as DoProvisionAction.
	DoNodeClean(ctx context.Context, ident string, steps []conductor.CleanStep) error
	// DoNodeService starts servicing an active node (1.87) with steps the API validated; errors as DoProvisionAction.
	DoNodeService(ctx context.Context, ident string, steps []conductor.CleanStep, disableRamdisk bool) error
	ChangePowerState(ctx context.Context, ident, target string, timeout time.Duration) error // "power on", "power off", "rebooting"; async after validation; API 202
	SetBootDevice(ctx context.Context, ident, device string, persistent bool) error
	GetBootDevice(ctx context.Context, ident string) (device string, persistent bool, err error)
	SupportedBootDevices(ctx context.Context, ident string) ([]string, error)
	// GetVirtualMedia, AttachVirtualMedia and DetachVirtualMedia (API 1.89,
	// 1.93): driver.ErrUnsupported when the management interface has no
	// virtual media; a BMC failure of attach or detach is the node's
	// last_error, not an error.
	GetVirtualMedia(ctx context.Context, ident string) ([]driver.VirtualMediaDevice, error)
	AttachVirtualMedia(ctx context.Context, ident, deviceType, imageURL string) error
	DetachVirtualMedia(ctx context.Context, ident string, deviceTypes []string) error
	ValidateNode(ctx context.Context, ident string) (map[string]conductor.ValidationResult, error) // keys: boot, console, deploy, inspect, management, network, power, raid, rescue, storage, bios...
	// Allocate processes a stored allocation in state "allocating": picks a node and sets the allocation active or error.
	Allocate(ctx context.Context, allocationUUID string) error
	// StartAllocate runs Allocate in the background; an error (no free worker, shutting down) means it did not start.
	StartAllocate(allocationUUID string) error
	Registry() *driver.Registry
}

// Options wires the API handler.
type Options struct {
	Store     store.Store
	Conductor Conductor
	Log       *slog.Logger
	// MaxLimit caps the page size of list requests ([api]max_limit);
	// 0 means 1000.
	MaxLimit int
	// PublicEndpoint is the base URL put in links ([api]public_endpoint);
	// empty means the request's scheme and host.
	PublicEndpoint string
	// HeartbeatTimeout is how long a conductor that stopped heart-beating
	// still serves its drivers ([conductor]heartbeat_timeout); 0 means 60 s.
	HeartbeatTimeout time.Duration
	// Host is this process's conductor ([DEFAULT]host), named as the
	// drivers' host before any conductor registered.
	Host string
	// DefaultResourceClass is a new node's resource_class when it names
	// none ([DEFAULT]default_resource_class).
	DefaultResourceClass string
	// Version is ferro's build version, for the logs.
	Version string
	// Ramdisk is the agent's endpoint, POST /v1/continue_inspection.
	Ramdisk RamdiskOptions
}

// maxBodySize is the largest request body accepted; larger ones get 413.
const maxBodySize = 1 << 20

// server is the Ironic API handler.
type server struct {
	store    store.Store
	cond     Conductor
	opts     Options
	log      *slog.Logger
	mux      *http.ServeMux
	maxLimit int
	// conductors caches the conductor list for a moment: every node view
	// names the conductor that serves it.
	conductors atomic.Pointer[conductorSnapshot]
	now        func() time.Time
	// patterns are the routes registered, in order (Patterns).
	patterns []string
}

// New returns the Ironic API as an http.Handler. Mount it at "/".
func New(o Options) http.Handler {
	s := &server{
		store: o.Store, cond: o.Conductor, opts: o, log: o.Log,
		mux: http.NewServeMux(), maxLimit: o.MaxLimit, now: time.Now,
	}
	if s.log == nil {
		s.log = slog.New(slog.DiscardHandler)
	}
	if s.maxLimit <= 0 {
		s.maxLimit = 1000
	}
	s.routes()
	s.log.Debug("Ironic API handler ready", "ferro_version", o.Version,
		"min_version", minVersionString, "max_version", maxVersionString)
	return s
}

// request is the per-request state handed to handlers. It lives inside
// respWriter, so one allocation covers both.
type request struct {
	w      http.ResponseWriter
	r      *http.Request
	id     string
	minor  int
	base   string
	status int
	// routed is set once a registered route runs; an error status written
	// before that comes from ServeMux (404, 405) and is replaced by
	// Ironic's error body.
	routed  bool
	swallow bool
	err     error
	// creds is the caller, nil without an auth layer (noauth).
	creds *auth.Credentials
	// route is the policy of the route serving the request.
	route auth.Route
}

// respWriter wraps the client's ResponseWriter to record the status and
// to turn ServeMux's plain-text errors into Ironic's.
type respWriter struct {
	http.ResponseWriter
	rq request
}

func (w *respWriter) WriteHeader(code int) {
	rq := &w.rq
	if !rq.routed && code >= 400 && !rq.swallow {
		// ServeMux's own 404 or 405, as Ironic's routing answers them.
		// Keep its Allow header.
		rq.swallow = true
		if code == http.StatusMethodNotAllowed && newerSubresource(rq) {
			code = http.StatusNotFound
			w.ResponseWriter.Header().Del("Allow")
		}
		h := w.ResponseWriter.Header()
		h.Del("X-Content-Type-Options")
		rq.writeErrorBody(webobError(code))
		return
	}
	if rq.swallow {
		return
	}
	rq.status = code
	w.ResponseWriter.WriteHeader(code)
}

// nodeSubresourceMin are node sub-resources whose controller Ironic's
// NodesController._lookup refuses below a version, whatever the method:
// there, another method than theirs is a 404 too, not a 405.
var nodeSubresourceMin = map[string]int{
	"children": v83ParentNode, "firmware": v86FirmwareInterface, "vmedia": v89AttachDetachVmedia,
}

// newerSubresource reports whether the request names such a sub-resource
// below its version.
func newerSubresource(rq *request) bool {
	rest, ok := strings.CutPrefix(rq.r.URL.Path, "/v1/nodes/")
	if !ok {
		return false
	}
	_, rest, ok = strings.Cut(rest, "/")
	sub, _, _ := strings.Cut(rest, "/")
	min, known := nodeSubresourceMin[sub]
	return ok && known && rq.minor < min
}

func (w *respWriter) Write(p []byte) (int, error) {
	if w.rq.swallow {
		return len(p), nil
	}
	if w.rq.status == 0 {
		w.rq.status = http.StatusOK
	}
	return w.ResponseWriter.Write(p)
}

// Unwrap gives http.ResponseController the client's writer.
func (w *respWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// ServeHTTP negotiates the microversion, tags the response with a request
// ID, routes, and logs one line per request.
func (s *server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	start := s.now()
	rw := &respWriter{ResponseWriter: w}
	rq := &rw.rq
	rq.w = w
	rq.r = r
	rq.id = "req-" + uuid.NewString()
	rq.base = s.baseURL(r)
	h := w.Header()
	// Ironic master's request id middleware sends the id under both
	// names, at every version (1.107 documents x-openstack-request-id).
	h[hdrRequestID] = []string{rq.id}
	h[hdrCompatID] = h[hdrRequestID]
	h[hdrMinVersion] = []string{minVersionString}
	h[hdrMaxVersion] = []string{maxVersionString}

	// Ironic's root controller serves a path without a version prefix as
	// the same path under /v1 (/nodes/detail, /drivers/…/properties).
	if p := r.URL.Path; p != "/" && p != "" && p != "/v1" && !strings.HasPrefix(p, "/v1/") {
		r.URL.Path = "/v1" + p
		r.URL.RawPath = ""
	}
	minor, verr := requestedVersion(r.Header)
	if stripJSONSuffix(r, minor, verr == nil) {
		r = r.WithContext(context.WithValue(r.Context(), jsonSuffixKey{}, true))
		rq.r = r
	}
	isV1 := r.URL.Path == "/v1" || strings.HasPrefix(r.URL.Path, "/v1/")
	switch {
	case verr != nil && isV1:
		rq.routed = true
		// Below /v1/ Ironic's v1 controller checks the version and raises
		// webob's HTTPNotAcceptable; /v1 itself words it as every error.
		if len(r.URL.Path) > len("/v1/") {
			webob := *verr
			webob.webob = true
			verr = &webob
		}
		rq.writeError(verr)
	default:
		if verr != nil {
			minor = minMinor
		}
		rq.minor = minor
		h[hdrVersion] = []string{versionStrings[minor]}
		h[hdrOpenStackAPI] = []string{baremetalVersionStrings[minor]}
		h[hdrVary] = []string{varyVersionHeader}
		s.serve(rw, r)
	}
	s.logRequest(rq, r, start)
}

// stripJSONSuffix is Ironic's JsonExtensionMiddleware: below 1.91, asked
// for in X-OpenStack-Ironic-API-Version, a path ending in .json is the
// path without it (/v1/nodes.json is /v1/nodes), the compatibility with
// pecan's guess_content_type_from_ext; from 1.91, and without the header,
// .json is part of the name.
func stripJSONSuffix(r *http.Request, minor int, ok bool) bool {
	if !ok || minor >= v91DotJSON || len(r.Header[hdrVersion]) == 0 {
		return false
	}
	p := strings.TrimRight(r.URL.Path, "/")
	if !strings.HasSuffix(p, ".json") {
		return false
	}
	r.URL.Path = strings.TrimSuffix(p, ".json")
	r.URL.RawPath = ""
	return true
}

// jsonSuffixKey marks a request whose .json was stripped: a path's node,
// portgroup, allocation or deploy template that is not found is looked
// for again with the suffix (Ironic's _get_with_suffix).
type jsonSuffixKey struct{}

// withJSONSuffix retries get with ident+".json" when the request's suffix
// was stripped and get found nothing.
func withJSONSuffix[T any](ctx context.Context, ident string, get func(ident string) (T, error)) (T, error) {
	v, err := get(ident)
	if err != nil && ctx.Value(jsonSuffixKey{}) != nil {
		if v2, err2 := get(ident + ".json"); err2 == nil {
			return v2, nil
		}
	}
	return v, err
}

// serve runs the mux, turning a panic into a 500.
func (s *server) serve(rw *respWriter, r *http.Request) {
	defer func() {
		if v := recover(); v != nil {
			if v == http.ErrAbortHandler {
				panic(v)
			}
			rq := &rw.rq
			s.log.Error("panic in API handler", "request_id", rq.id, "path", r.URL.Path, "panic", v)
			if rq.status == 0 {
				rq.routed = true
				rq.writeError(newError(http.StatusInternalServerError, "Internal server error"))
			}
		}
	}()
	s.mux.ServeHTTP(rw, r)
}

func (s *server) logRequest(rq *request, r *http.Request, start time.Time) {
	status := rq.status
	if status == 0 {
		status = http.StatusOK
	}
	level := slog.LevelInfo
	if status >= 500 {
		level = slog.LevelError
	}
	if !s.log.Enabled(r.Context(), level) {
		return
	}
	attrs := []slog.Attr{
		slog.String("method", r.Method),
		slog.String("path", r.URL.Path),
		slog.Int("status", status),
		slog.Duration("duration", s.now().Sub(start)),
		slog.String("request_id", rq.id),
		slog.String("api_version", versionStrings[max(rq.minor, minMinor)]),
	}
	if status >= 500 && rq.err != nil {
		attrs = append(attrs, slog.String("error", rq.err.Error()))
	}
	s.log.LogAttrs(r.Context(), level, "api request", attrs...)
}

// baseURL is where links point: [api]public_endpoint, else the request's
// scheme and host.
func (s *server) baseURL(r *http.Request) string {
	if pe := s.opts.PublicEndpoint; pe != "" {
		return strings.TrimRight(pe, "/")
	}
	scheme := "http"
	if r.TLS != nil {
		scheme = "https"
	}
	return scheme + "://" + r.Host
}

// Patterns lists the ServeMux pattern of every route of the API, as
// registered: the authorization table test (test/auth) asks every one of
// them of every persona, so that a route added later has a row.
func Patterns() []string {
	s := &server{mux: http.NewServeMux(), log: slog.New(slog.DiscardHandler)}
	s.routes()
	return s.patterns
}

// handle registers a route.
func (s *server) handle(pattern string, fn func(*request) error) {
	s.patterns = append(s.patterns, pattern)
	route := auth.IronicRoute(pattern)
	s.mux.HandleFunc(pattern, func(w http.ResponseWriter, r *http.Request) {
		rw, ok := w.(*respWriter)
		if !ok {
			// Called outside ServeHTTP (tests of the mux alone).
			rw = &respWriter{ResponseWriter: w}
			rw.rq.w, rw.rq.minor, rw.rq.base = w, minMinor, s.baseURL(r)
		}
		rq := &rw.rq
		rq.routed = true
		rq.r = r
		rq.creds = auth.FromContext(r.Context())
		rq.route = route
		if err := s.authorize(rq, route); err != nil {
			rq.writeError(err)
			return
		}
		if err := fn(rq); err != nil {
			rq.writeError(err)
		}
	})
}

// writeJSON sends a JSON body.
func (rq *request) writeJSON(status int, body []byte) error {
	h := rq.w.Header()
	h[hdrContentType] = []string{"application/json"}
	h[hdrContentLength] = []string{strconv.Itoa(len(body))}
	rq.status = status
	rq.w.WriteHeader(status)
	_, _ = rq.w.Write(body)
	return nil
}

// streamChunk is how much of a long JSON body is rendered before it is
// sent. A detailed list of 500 nodes is 1.3 MB: sent in pieces it needs
// no buffer of its size (allocated, zeroed and collected on every
// request), and the client reads the first nodes while the rest render.
const streamChunk = 32 << 10

// jsonStream sends a JSON body as it is rendered: append to b, call flush
// between elements, and end once. A body shorter than streamChunk goes
// out in one piece with a Content-Length, as writeJSON's; a longer one
// chunked.
type jsonStream struct {
	rq     *request
	status int
	bp     *[]byte
	b      []byte
	sent   bool
	// whole: never chunked, one piece with a Content-Length however long.
	whole bool
}

// streamJSON starts a JSON body with status.
func (rq *request) streamJSON(status int) *jsonStream {
	bp := getBuf()
	return &jsonStream{rq: rq, status: status, bp: bp, b: *bp}
}

// flush sends what is rendered once it is streamChunk or more.
func (js *jsonStream) flush() {
	if len(js.b) >= streamChunk && !js.whole {
		js.send()
	}
}

func (js *jsonStream) send() {
	if !js.sent {
		js.sent = true
		js.rq.w.Header()[hdrContentType] = []string{"application/json"}
		js.rq.status = js.status
		js.rq.w.WriteHeader(js.status)
	}
	// A failed write is a client gone away; the rest is rendered to no
	// one, which is cheaper than threading the error through.
	_, _ = js.rq.w.Write(js.b)
	js.b = js.b[:0]
}

// end sends the rest of the body and recycles the buffer.
func (js *jsonStream) end() error {
	if js.sent {
		js.send()
	} else {
		_ = js.rq.writeJSON(js.status, js.b)
	}
	putBuf(js.bp, js.b)
	js.b = nil
	return nil
}

// writeEmpty sends a status without a body (202, 204).
func (rq *request) writeEmpty(status int) error {
	rq.status = status
	rq.w.WriteHeader(status)
	return nil
}

// writeError sends err in Ironic's error shape.
func (rq *request) writeError(err error) {
	e := errorFor(err)
	if e.status >= 500 {
		rq.err = err
	}
	rq.writeErrorBody(e)
}

func (rq *request) writeErrorBody(e *apiError) {
	if rq.status != 0 {
		// Headers are gone already; nothing sensible to add.
		return
	}
	h := rq.w.Header()
	h[hdrContentType] = []string{"application/json"}
	delete(h, hdrLocation)
	rq.status = e.status
	rq.w.WriteHeader(e.status)
	if rq.r != nil && rq.r.Method == http.MethodHead {
		return
	}
	_, _ = rq.w.Write(errorBodyOf(e))
}

// readBody reads the request body, refusing more than maxBodySize.
func (rq *request) readBody() ([]byte, error) {
	if rq.r.ContentLength > maxBodySize {
		return nil, newError(http.StatusRequestEntityTooLarge, "Request is too large.")
	}
	b, err := io.ReadAll(io.LimitReader(rq.r.Body, maxBodySize+1))
	if err != nil {
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			return nil, newError(http.StatusRequestEntityTooLarge, "Request is too large.")
		}
		return nil, badRequest("Cannot read the request body: %v", err)
	}
	if len(b) > maxBodySize {
		return nil, newError(http.StatusRequestEntityTooLarge, "Request is too large.")
	}
	return b, nil
}

// ctx is the request's context.
func (rq *request) ctx() context.Context { return rq.r.Context() }

// location sets the Location header to base/v1/<path>.
func (rq *request) location(path string) {
	rq.w.Header()[hdrLocation] = []string{rq.base + "/v1/" + path}
}
