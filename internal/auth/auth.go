// Package auth is inbound authentication and policy for both of ferro's
// APIs: one middleware, an Authenticator per [DEFAULT]auth_strategy
// (noauth, http_basic, keystone), a table of Ironic's default policy
// rules, and the list of public routes.
//
// The middleware authenticates every request that is not public and puts
// the caller's Credentials into the request context; the API handlers
// decide with Allowed, which needs the object (a node's owner and lessee)
// that only they can load.
package auth

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"slices"
)

// Errors an Authenticator returns (wrapped). Anything else is a failure
// to reach the identity service and answers 503: the request is refused
// either way.
var (
	// ErrUnauthorized: no credentials, or wrong ones (401).
	ErrUnauthorized = errors.New("authentication required")
	// ErrMalformed: an Authorization header that cannot be parsed (400, as oslo.middleware).
	ErrMalformed = errors.New("malformed credentials")
)

// Credentials is who a request comes from, as keystonemiddleware's
// headers describe it (X-User-Id, X-Project-Id, X-Roles, system scope).
type Credentials struct {
	UserID, UserName       string
	ProjectID, ProjectName string
	Roles                  []string
	// System is a system-scoped token (system_scope:all).
	System bool
	// ServiceProject is a token scoped to the service project
	// ([keystone_authtoken]service_project_name), the service_role rule's project.
	ServiceProject bool
	// Unrestricted grants every rule but show_password: Ironic enforces no
	// policy unless auth_strategy is keystone, so an http_basic user may do
	// everything (and noauth has no users at all).
	Unrestricted bool
}

// HasRole reports whether the credentials hold role.
func (c *Credentials) HasRole(role string) bool { return slices.Contains(c.Roles, role) }

type credsKey struct{}

// NewContext returns ctx carrying c.
func NewContext(ctx context.Context, c *Credentials) context.Context {
	return context.WithValue(ctx, credsKey{}, c)
}

// FromContext returns the request's credentials, or nil when no auth
// middleware ran (noauth: every rule but show_password is granted).
func FromContext(ctx context.Context) *Credentials {
	c, _ := ctx.Value(credsKey{}).(*Credentials)
	return c
}

// Authenticator checks one request's credentials.
type Authenticator interface {
	// Authenticate returns the caller's credentials, or an error wrapping
	// ErrUnauthorized or ErrMalformed.
	Authenticate(ctx context.Context, r *http.Request) (*Credentials, error)
	// Challenge is the WWW-Authenticate value sent with a 401.
	Challenge() string
}

// IsPublic reports whether a request needs no credentials: the version
// documents (GET /, /v1, /v1/ of both APIs; the inspector client reads
// /v1/ before it authenticates) and the ramdisk's report, POST
// /v1/continue (inspector) and /v1/continue_inspection (bare metal API),
// which the agent sends without credentials and which is protected by
// the node lookup and the per-inspection token instead.
func IsPublic(r *http.Request) bool {
	switch r.Method {
	case http.MethodGet, http.MethodHead:
		switch r.URL.Path {
		case "/", "/v1", "/v1/":
			return true
		}
	case http.MethodPost:
		return r.URL.Path == "/v1/continue" || r.URL.Path == "/v1/continue_inspection"
	}
	return false
}

// Options configure Middleware.
type Options struct {
	Authenticator Authenticator
	// Deny writes an error in the format of the API r belongs to.
	Deny func(w http.ResponseWriter, r *http.Request, status int, msg string)
	// AdminOnly, when set, names the requests that also need the admin
	// persona (the inspector's API); others get 403.
	AdminOnly func(r *http.Request) bool
	Log       *slog.Logger
}

// Middleware authenticates every non-public request to next. A request
// that fails gets 401 (with WWW-Authenticate), 400 for a malformed header,
// or 503 when the identity service cannot be asked; next never sees it.
func Middleware(next http.Handler, o Options) http.Handler {
	log := o.Log
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	challenge := o.Authenticator.Challenge()
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if IsPublic(r) {
			next.ServeHTTP(w, r)
			return
		}
		c, err := o.Authenticator.Authenticate(r.Context(), r)
		switch {
		case err == nil:
		case errors.Is(err, ErrMalformed):
			o.Deny(w, r, http.StatusBadRequest, err.Error())
			return
		case errors.Is(err, ErrUnauthorized):
			w.Header().Set("WWW-Authenticate", challenge)
			o.Deny(w, r, http.StatusUnauthorized, "The request you have made requires authentication.")
			return
		default:
			log.Error("cannot validate credentials", "path", r.URL.Path, "error", err)
			o.Deny(w, r, http.StatusServiceUnavailable, "The authentication service is unavailable.")
			return
		}
		if o.AdminOnly != nil && o.AdminOnly(r) && !Allowed(RuleInspectorAdmin, c, Target{}) {
			o.Deny(w, r, http.StatusForbidden, "Access was denied to the following resource: "+RuleInspectorAdmin)
			return
		}
		next.ServeHTTP(w, r.WithContext(NewContext(r.Context(), c)))
	})
}
