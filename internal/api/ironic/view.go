package ironic

import (
	"sync"
	"time"

	"github.com/ferrometal/ferro/internal/auth"
	"github.com/ferrometal/ferro/internal/baremetal"
)

// renderCtx is what rendering a resource needs from the request.
type renderCtx struct {
	s     *server
	minor int
	base  string
	// conductors is loaded on first use, once per request (once across
	// the goroutines that render a long list).
	conductors     *conductorSnapshot
	conductorsOnce sync.Once
	// showPassword shows driver_info secrets (the show_password rule).
	showPassword bool
	// creds is the caller; fieldChecks: node fields are shown only as
	// their get:* rules allow (redacts), hideTargetProperties: volume
	// targets' properties are redacted.
	creds                             *auth.Credentials
	fieldChecks, hideTargetProperties bool
}

func (rq *request) render(s *server) *renderCtx {
	return &renderCtx{s: s, minor: rq.minor, base: rq.base, showPassword: rq.showPassword(),
		creds: rq.creds, fieldChecks: rq.nodeFieldChecks(), hideTargetProperties: rq.hidesTargetProperties()}
}

// conductorFor names the conductor serving a node, or "".
func (rc *renderCtx) conductorFor(n *baremetal.Node) string {
	rc.conductorsOnce.Do(func() {
		if rc.conductors == nil {
			rc.conductors = rc.s.conductorSnapshot()
		}
	})
	return rc.conductors.owner(n.UUID, n.ConductorGroup)
}

// The writers of a view's fields, by the field's Go type.

// strOf writes a string.
func strOf[T any](get func(T) string) func([]byte, T, *renderCtx) []byte {
	return func(b []byte, v T, _ *renderCtx) []byte { return appendString(b, get(v)) }
}

// nullStrOf writes a string, null when empty: Ironic's unset string fields
// are None.
func nullStrOf[T any](get func(T) string) func([]byte, T, *renderCtx) []byte {
	return func(b []byte, v T, _ *renderCtx) []byte { return appendNullString(b, get(v)) }
}

// objOf writes a free-form object, {} when nil.
func objOf[T any](get func(T) baremetal.JSON) func([]byte, T, *renderCtx) []byte {
	return func(b []byte, v T, _ *renderCtx) []byte { return appendObject(b, get(v)) }
}

func boolOf[T any](get func(T) bool) func([]byte, T, *renderCtx) []byte {
	return func(b []byte, v T, _ *renderCtx) []byte { return appendBool(b, get(v)) }
}

func nullBoolOf[T any](get func(T) *bool) func([]byte, T, *renderCtx) []byte {
	return func(b []byte, v T, _ *renderCtx) []byte { return appendNullBool(b, get(v)) }
}

func timeOf[T any](get func(T) time.Time) func([]byte, T, *renderCtx) []byte {
	return func(b []byte, v T, _ *renderCtx) []byte { return appendTime(b, get(v)) }
}

func nullTimeOf[T any](get func(T) *time.Time) func([]byte, T, *renderCtx) []byte {
	return func(b []byte, v T, _ *renderCtx) []byte { return appendNullTime(b, get(v)) }
}

// stringsOf writes a list of strings, [] when nil.
func stringsOf[T any](get func(T) []string) func([]byte, T, *renderCtx) []byte {
	return func(b []byte, v T, _ *renderCtx) []byte {
		if l := get(v); l != nil {
			return appendStrings(b, l)
		}
		return append(b, "[]"...)
	}
}

// headFields are the UUID and the creation and update times, the first
// fields of most views.
func headFields[T any](uuid func(T) string, created func(T) time.Time, updated func(T) *time.Time) []viewField[T] {
	return append([]viewField[T]{{"uuid", 0, strOf(uuid)}}, stampFields(created, updated)...)
}

// stampFields are the creation and update times every resource shows.
func stampFields[T any](created func(T) time.Time, updated func(T) *time.Time) []viewField[T] {
	return []viewField[T]{
		{"created_at", 0, timeOf(created)},
		{"updated_at", 0, nullTimeOf(updated)},
	}
}
