package redfish

import (
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"unicode"

	"github.com/stmcginnis/gofish/schemas"

	"github.com/ferrometal/ferro/internal/scrub"
)

// Error is a failed operation on a BMC: it names the BMC and the step. Its
// text has every secret the client knows (the node's credentials and
// driver_info secrets, the session token, ferro's own) replaced by ***,
// since it quotes what the BMC sent.
type Error struct {
	BMC  string
	Step string
	Err  error

	secrets scrub.Secrets
}

func (e *Error) Error() string {
	return e.secrets.Text(fmt.Sprintf("redfish BMC %s: %s: %v", e.BMC, e.Step, e.Err))
}

func (e *Error) Unwrap() error { return e.Err }

// ErrUnauthorized is wrapped when the BMC refuses the credentials.
var ErrUnauthorized = errors.New("the BMC refused the credentials (HTTP 401)")

// ErrNotFound is wrapped when a System, Manager or device does not exist.
var ErrNotFound = errors.New("not found")

// maxMessage bounds the part of a BMC's answer an error quotes.
const maxMessage = 200

// HTTPError is an error answer of the BMC to one request, quoting the
// BMC's own message once and shortened, rather than its whole body.
type HTTPError struct {
	Method, Path string
	Status       int
	// Message is the BMC's message: its first @Message.ExtendedInfo
	// Message (where BMCs put the specific one), else error.message, else
	// the body; one line, at most 200 characters.
	Message string

	err *schemas.Error
}

func (e *HTTPError) Error() string {
	s := fmt.Sprintf("%s %s: HTTP %d", e.Method, e.Path, e.Status)
	if t := http.StatusText(e.Status); t != "" {
		s += " " + t
	}
	if e.Message != "" {
		s += ": " + e.Message
	}
	return s
}

// Unwrap gives gofish's error, so that status and gofish's own checks see it.
func (e *HTTPError) Unwrap() error { return e.err }

// httpError turns gofish's rendering of an error answer (the status and
// the whole body) into an HTTPError; other errors are returned as they are.
func httpError(method, path string, err error) error {
	var ge *schemas.Error
	if !errors.As(err, &ge) || ge.HTTPReturnedStatusCode == 0 {
		return err
	}
	msg := ge.Message
	for _, ei := range ge.ExtendedInfos {
		if ei.Message != "" {
			msg = ei.Message
			if n := len(ge.ExtendedInfos) - 1; n > 0 {
				msg += fmt.Sprintf(" (and %d more)", n)
			}
			break
		}
	}
	return &HTTPError{Method: method, Path: path, Status: ge.HTTPReturnedStatusCode, Message: shorten(msg, maxMessage), err: ge}
}

// shorten makes text one line of printable characters, at most n runes
// followed by "…" when it was cut.
func shorten(text string, n int) string {
	out := make([]rune, 0, min(len(text), n))
	space := false
	for _, r := range text {
		if unicode.IsSpace(r) || !unicode.IsPrint(r) {
			space = len(out) > 0
			continue
		}
		if space {
			out = append(out, ' ')
			space = false
		}
		out = append(out, r)
		if len(out) > n {
			return strings.TrimRight(string(out[:n]), " ") + "…"
		}
	}
	return string(out)
}

// flatten replaces gofish's error for a collection (a JSON list of every
// member's error, which quotes each BMC body escaped inside another JSON
// string) by the first member's error and the number of others.
func flatten(err error) error {
	var ce *schemas.CollectionError
	if !errors.As(err, &ce) || len(ce.Failures) == 0 {
		return err
	}
	links := make([]string, 0, len(ce.Failures))
	for l := range ce.Failures {
		links = append(links, l)
	}
	slices.Sort(links)
	first := ce.Failures[links[0]]
	if len(links) == 1 {
		return first
	}
	return &memberError{first: first, more: len(links) - 1}
}

type memberError struct {
	first error
	more  int
}

func (e *memberError) Error() string {
	return fmt.Sprintf("%v (and %d more members failed)", e.first, e.more)
}

func (e *memberError) Unwrap() error { return e.first }

// status returns the HTTP status of a BMC's error answer, or 0.
func status(err error) int {
	var re *schemas.Error
	if errors.As(err, &re) {
		return re.HTTPReturnedStatusCode
	}
	return 0
}
