package ironic

import (
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"

	"github.com/ferrometal/ferro/internal/conductor"
	"github.com/ferrometal/ferro/internal/driver"
	"github.com/ferrometal/ferro/internal/store"
)

// apiError is an error with the HTTP status Ironic answers for it. Its
// message becomes the faultstring of the error body.
type apiError struct {
	status int
	msg    string
	// webob: the body is webob's {"code", "title", "description"}, as
	// Ironic answers an exception a controller's _route raises, outside
	// the API's own error formatting.
	webob bool
}

func (e *apiError) Error() string { return e.msg }

func newError(status int, format string, args ...any) *apiError {
	if len(args) == 0 {
		return &apiError{status: status, msg: format}
	}
	return &apiError{status: status, msg: fmt.Sprintf(format, args...)}
}

func badRequest(format string, args ...any) *apiError {
	return newError(http.StatusBadRequest, format, args...)
}

func notFound(format string, args ...any) *apiError {
	return newError(http.StatusNotFound, format, args...)
}

func conflict(format string, args ...any) *apiError {
	return newError(http.StatusConflict, format, args...)
}

// notAcceptable is Ironic's NotAcceptable: a field, parameter or verb that
// the requested microversion does not have.
func notAcceptable() *apiError {
	return newError(http.StatusNotAcceptable, "Request not acceptable.")
}

// notAcceptableMin is NotAcceptable with the minimal version in the message,
// as Ironic words it for filters.
func notAcceptableMin(minor int) *apiError {
	return newError(http.StatusNotAcceptable,
		"Request not acceptable. The minimal required API version should be 1.%d", minor)
}

// Ironic's resource-specific not-found messages.
func nodeNotFound(ident string) *apiError { return notFound("Node %s could not be found.", ident) }
func portNotFound(ident string) *apiError { return notFound("Port %s could not be found.", ident) }
func portgroupNotFound(ident string) *apiError {
	return notFound("Portgroup %s could not be found.", ident)
}
func allocationNotFound(ident string) *apiError {
	return notFound("Allocation %s could not be found.", ident)
}

// webobError is what Ironic's routing answers with pecan's abort: a webob
// HTTP exception without a detail, rendered {"code", "title",
// "description": ""}.
func webobError(status int) *apiError { return &apiError{status: status, webob: true} }

// resourceNotFound is the answer for routes the requested version does not
// have (Ironic's pecan.abort(404)).
func resourceNotFound() *apiError { return webobError(http.StatusNotFound) }

// versionNotFound is Ironic's exception.NotFound, what some controllers
// raise below their version (conductors, /v1/volume) instead of aborting.
func versionNotFound() *apiError { return notFound("Resource could not be found.") }

// errorFor maps an error from the store, the conductor or a driver to
// Ironic's status code and message. Handlers turn the not-found and
// conflict cases into resource-specific messages before this catch-all.
func errorFor(err error) *apiError {
	var ae *apiError
	switch {
	case errors.As(err, &ae):
		return ae
	case errors.Is(err, store.ErrNodeLocked):
		return conflict("%s", sentence(trimSentinel(err, store.ErrNodeLocked)))
	case errors.Is(err, conductor.ErrInvalidState):
		return badRequest("%s", sentence(trimSentinel(err, conductor.ErrInvalidState)))
	case errors.Is(err, conductor.ErrNodeProtected):
		return newError(http.StatusForbidden, "%s", trimSentinel(err, conductor.ErrNodeProtected))
	case errors.Is(err, conductor.ErrUnsupportedVerb):
		return badRequest("%s", sentence(trimSentinel(err, conductor.ErrUnsupportedVerb)))
	case errors.Is(err, conductor.ErrRunbookNotFound):
		return notFound("%s", trimSentinel(err, conductor.ErrRunbookNotFound))
	case errors.Is(err, conductor.ErrNoFreeWorker):
		return newError(http.StatusServiceUnavailable,
			"Requested action cannot be performed due to lack of free conductor workers.")
	case errors.Is(err, conductor.ErrShuttingDown), errors.Is(err, conductor.ErrTemporaryFailure):
		return newError(http.StatusServiceUnavailable, "Resource temporarily unavailable, please retry.")
	case errors.Is(err, driver.ErrUnsupported):
		return badRequest("%s", sentence(trimSentinel(err, driver.ErrUnsupported)))
	case errors.Is(err, driver.ErrInvalidParameter):
		return badRequest("%s", sentence(trimSentinel(err, driver.ErrInvalidParameter)))
	case errors.Is(err, driver.ErrMissingParameter):
		return badRequest("%s", sentence(trimSentinel(err, driver.ErrMissingParameter)))
	case errors.Is(err, store.ErrInvalidInput):
		return badRequest("%s", sentence(trimSentinel(err, store.ErrInvalidInput)))
	case errors.Is(err, store.ErrNotFound):
		return notFound("Resource could not be found.")
	case errors.Is(err, store.ErrConflict):
		return conflict("Conflict.")
	}
	return newError(http.StatusInternalServerError, "%s", err.Error())
}

// trimSentinel drops a leading "<sentinel>: " that %w wrapping put in
// front of the message, so the client reads the specific part.
func trimSentinel(err, sentinel error) string {
	msg := err.Error()
	if rest, ok := strings.CutPrefix(msg, sentinel.Error()+": "); ok && rest != "" {
		return rest
	}
	return msg
}

// sentence makes sure a message ends with a full stop, as Ironic's do.
func sentence(s string) string {
	if s == "" || strings.HasSuffix(s, ".") || strings.HasSuffix(s, "!") || strings.HasSuffix(s, "?") {
		return s
	}
	return s + "."
}

// errorBody renders Ironic's error document: the fault is itself JSON,
// serialised into the error_message string, as ironic's
// ParsableErrorMiddleware does.
func errorBody(status int, msg string) []byte {
	return errorBodyOf(&apiError{status: status, msg: msg})
}

func errorBodyOf(e *apiError) []byte {
	status, msg := e.status, e.msg
	if e.webob {
		inner := make([]byte, 0, len(msg)+80)
		inner = append(inner, `{"code": `...)
		inner = strconv.AppendInt(inner, int64(status), 10)
		inner = append(inner, `, "title": `...)
		inner = appendString(inner, http.StatusText(status))
		inner = append(inner, `, "description": `...)
		inner = appendString(inner, msg)
		inner = append(inner, '}')
		out := make([]byte, 0, len(inner)+40)
		out = append(out, `{"error_message": `...)
		out = appendString(out, string(inner))
		return append(out, '}')
	}
	code := "Client"
	if status >= 500 {
		code = "Server"
	}
	inner := make([]byte, 0, len(msg)+80)
	inner = append(inner, `{"faultcode": "`...)
	inner = append(inner, code...)
	inner = append(inner, `", "faultstring": `...)
	inner = appendString(inner, msg)
	inner = append(inner, `, "debuginfo": null}`...)
	out := make([]byte, 0, len(inner)+40)
	out = append(out, `{"error_message": `...)
	out = appendString(out, string(inner))
	out = append(out, '}')
	return out
}

// WriteError sends an error in Ironic's body, for the layers in front of
// the API handler (authentication) that answer before it runs.
func WriteError(w http.ResponseWriter, status int, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(errorBody(status, msg))
}
