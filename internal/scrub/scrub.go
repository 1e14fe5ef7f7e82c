// Package scrub removes secrets from text that came from outside ferro —
// a BMC's error body, an answer from Keystone, Neutron or an image server —
// before that text can reach a node's last_error, its history or a log.
// A server that echoes what it received (the password of a session login,
// an Authorization header) is the case it exists for: the secrets are the
// ones ferro sent, so the client that sent them scrubs what comes back.
package scrub

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/url"
	"slices"
	"strings"
	"unicode/utf16"
)

// Mask replaces every secret.
const Mask = "***"

// Secrets is an immutable set of values to remove from text, with the
// encodings a server may echo them in. The zero value removes nothing; it is
// safe for concurrent use.
type Secrets struct {
	forms []string // longest first, so a secret inside another goes with it
	r     *strings.Replacer
}

// New returns the set of values (empty ones are ignored).
func New(values ...string) Secrets { return Secrets{}.With(values...) }

// With returns s and the values, each also JSON-escaped (once and twice:
// an error body quoted inside another JSON document), URL-escaped and
// base64-encoded.
func (s Secrets) With(values ...string) Secrets {
	forms := slices.Clone(s.forms)
	for _, v := range values {
		if v == "" {
			continue
		}
		forms = append(forms, v, url.QueryEscape(v), url.PathEscape(v),
			base64.StdEncoding.EncodeToString([]byte(v)), base64.RawStdEncoding.EncodeToString([]byte(v)))
		for _, once := range jsonForms(v) {
			forms = append(forms, once)
			forms = append(forms, jsonForms(once)...)
		}
	}
	return build(forms)
}

// WithBasic returns s with a user's password and the credentials of an
// HTTP Basic Authorization header for them (base64 of user:password).
func (s Secrets) WithBasic(user, password string) Secrets {
	if password == "" {
		return s
	}
	return s.With(password, user+":"+password)
}

// Join returns the union of sets.
func Join(sets ...Secrets) Secrets {
	var forms []string
	for _, s := range sets {
		forms = append(forms, s.forms...)
	}
	return build(forms)
}

func build(forms []string) Secrets {
	slices.SortFunc(forms, func(a, b string) int { return len(b) - len(a) })
	forms = slices.Compact(forms)
	if len(forms) == 0 {
		return Secrets{}
	}
	pairs := make([]string, 0, 2*len(forms))
	for _, f := range forms {
		pairs = append(pairs, f, Mask)
	}
	return Secrets{forms: forms, r: strings.NewReplacer(pairs...)}
}

// Empty reports whether s removes nothing.
func (s Secrets) Empty() bool { return s.r == nil }

// Text returns text with every secret replaced by Mask.
func (s Secrets) Text(text string) string {
	if s.r == nil {
		return text
	}
	return s.r.Replace(text)
}

// Bytes is Text for a body.
func (s Secrets) Bytes(b []byte) []byte {
	if s.r == nil {
		return b
	}
	return []byte(s.r.Replace(string(b)))
}

// jsonForms are v as it may appear inside a JSON string: escaped as Go
// does (<, > and & as \u003c…), without HTML escaping, and with every
// non-ASCII character as \uXXXX (Python's json.dumps), or with \/.
func jsonForms(v string) []string {
	plain := jsonString(v, false)
	var ascii strings.Builder
	for _, r := range plain {
		switch {
		case r < 0x80:
			ascii.WriteRune(r)
		case r > 0xffff:
			r1, r2 := utf16.EncodeRune(r)
			fmt.Fprintf(&ascii, "\\u%04x\\u%04x", r1, r2)
		default:
			fmt.Fprintf(&ascii, "\\u%04x", r)
		}
	}
	// Some encoders (PHP's, several BMCs') also escape the slash.
	return []string{plain, jsonString(v, true), ascii.String(), strings.ReplaceAll(plain, "/", `\/`)}
}

func jsonString(v string, escapeHTML bool) string {
	var b strings.Builder
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(escapeHTML)
	_ = enc.Encode(v)
	s := strings.TrimSuffix(b.String(), "\n")
	return s[1 : len(s)-1]
}
