package metrics

import (
	"context"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// routeKey carries the route holder through the request's context.
type routeKey struct{}

// route is where the innermost ServeMux's pattern is copied (RecordRoute)
// for the outer middleware (HTTP) to read: an authentication layer in
// between hands the inner handlers a copy of the request.
type route struct{ pattern string }

// HTTP counts and times every request to next under the API apiOf names
// ("ironic", "inspector", "web", "metrics"), labelled by route template: the
// ServeMux pattern that served it ("/v1/nodes/{node}"), never the path.
// A request no route matched is labelled "unmatched". Put RecordRoute
// inside any layer that copies the request.
func (m *Metrics) HTTP(apiOf func(*http.Request) string, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		rt := &route{}
		r = r.WithContext(context.WithValue(r.Context(), routeKey{}, rt))
		sw := &statusWriter{ResponseWriter: w, status: http.StatusOK}
		next.ServeHTTP(sw, r)
		pattern := rt.pattern
		if pattern == "" {
			pattern = r.Pattern
		}
		tmpl := routeTemplate(pattern)
		method := methodLabel(r.Method)
		api := apiOf(r)
		m.apiRequests.WithLabelValues(api, tmpl, method, strconv.Itoa(sw.status)).Inc()
		m.apiDuration.WithLabelValues(api, tmpl, method).Observe(time.Since(start).Seconds())
	})
}

// RecordRoute passes the request to next and then notes the pattern the
// ServeMuxes under it matched (ServeMux sets it on the request it was
// given) for HTTP.
func RecordRoute(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		next.ServeHTTP(w, r)
		if rt, ok := r.Context().Value(routeKey{}).(*route); ok && r.Pattern != "" && r.Pattern != "/" {
			rt.pattern = r.Pattern
		}
	})
}

// routeTemplate is a pattern without its method ("GET /v1/nodes/{node}" →
// "/v1/nodes/{node}"); the catch-all "/" or none is "unmatched".
func routeTemplate(pattern string) string {
	if i := strings.IndexByte(pattern, ' '); i >= 0 {
		pattern = pattern[i+1:]
	}
	if pattern == "" || pattern == "/" {
		return "unmatched"
	}
	return pattern
}

// methodLabel bounds the method label to the methods HTTP defines.
func methodLabel(m string) string {
	switch m {
	case http.MethodGet, http.MethodHead, http.MethodPost, http.MethodPut, http.MethodPatch,
		http.MethodDelete, http.MethodOptions:
		return m
	}
	return "other"
}

// statusWriter records the status code the handler wrote.
type statusWriter struct {
	http.ResponseWriter
	status      int
	wroteHeader bool
}

func (w *statusWriter) WriteHeader(code int) {
	if !w.wroteHeader {
		w.status, w.wroteHeader = code, true
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *statusWriter) Write(b []byte) (int, error) {
	w.wroteHeader = true
	return w.ResponseWriter.Write(b)
}

// Unwrap lets http.ResponseController reach the connection (flush,
// deadlines).
func (w *statusWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }
