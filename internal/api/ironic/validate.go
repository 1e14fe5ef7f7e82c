package ironic

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"iter"
	"maps"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/ferrometal/ferro/internal/jsonlimit"
	"github.com/ferrometal/ferro/internal/pyjson"
)

// isUUIDLike is oslo's uuidutils.is_uuid_like: 32 hex digits, with or
// without the canonical hyphens.
func isUUIDLike(s string) bool {
	switch len(s) {
	case 36:
		for i := 0; i < 36; i++ {
			c := s[i]
			if i == 8 || i == 13 || i == 18 || i == 23 {
				if c != '-' {
					return false
				}
				continue
			}
			if !isHex(c) {
				return false
			}
		}
		return true
	case 32:
		for i := 0; i < 32; i++ {
			if !isHex(s[i]) {
				return false
			}
		}
		return true
	}
	return false
}

func isHex(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
}

// canonicalUUID returns the lower-case hyphenated form of a UUID-like string.
func canonicalUUID(s string) string {
	s = strings.ToLower(s)
	if len(s) == 32 {
		return s[0:8] + "-" + s[8:12] + "-" + s[12:16] + "-" + s[16:20] + "-" + s[20:]
	}
	return s
}

// isValidLogicalName is Ironic's check for names: RFC 3986 unreserved
// characters only, at most 255 of them.
func isValidLogicalName(s string) bool {
	if s == "" || len(s) > 255 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9':
		case c == '-' || c == '.' || c == '_' || c == '~':
		default:
			return false
		}
	}
	return true
}

// hostnameSafe is Ironic's pre-1.10 rule for node names.
var hostnameSafe = regexp.MustCompile(`^[a-z0-9]([a-z0-9\-]{0,61}[a-z0-9])?(\.[a-z0-9\-_]{0,62}[a-z0-9])*\.?$`)

// validNodeName applies the name rule of the requested version; a node
// name may not look like a UUID.
func validNodeName(name string, minor int) bool {
	if isUUIDLike(name) {
		return false
	}
	if minor < v10UnrestrictedNodeName {
		return len(name) <= 255 && hostnameSafe.MatchString(name)
	}
	return isValidLogicalName(name)
}

// isDatapathID is an OpenFlow datapath ID: 16 hex digits.
func isDatapathID(s string) bool {
	if len(s) != 16 {
		return false
	}
	for i := 0; i < 16; i++ {
		if !isHex(s[i]) {
			return false
		}
	}
	return true
}

var conductorGroupRE = regexp.MustCompile(`^[a-zA-Z0-9_\-\.]*$`)

// validConductorGroup is Ironic's rule for conductor_group.
func validConductorGroup(s string) bool {
	return len(s) <= 255 && conductorGroupRE.MatchString(s)
}

var customTraitRE = regexp.MustCompile(`^CUSTOM_[A-Z0-9_]+$`)
var standardTraitRE = regexp.MustCompile(`^[A-Z][A-Z0-9_]*$`)

// validTrait accepts custom traits (CUSTOM_…) and names shaped like the
// os-traits standard ones.
func validTrait(t string) bool {
	if t == "" || len(t) > 255 {
		return false
	}
	return customTraitRE.MatchString(t) || standardTraitRE.MatchString(t)
}

// decodeJSON decodes a request body keeping numbers as json.Number, so
// that 4 stays 4 and 1.50 stays 1.50. An empty body decodes to nil.
func decodeJSON(body []byte) (any, error) {
	if len(bytes.TrimSpace(body)) == 0 {
		return nil, nil
	}
	if err := jsonlimit.Check(body, bodyLimits); err != nil {
		return nil, badRequest("Malformed JSON in request body: %s", err)
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, badRequest("Malformed JSON in request body: %s", jsonErrText(err))
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return nil, badRequest("Malformed JSON in request body: extra data after the JSON value")
	}
	return v, nil
}

// bodyLimits bound what a request body may decode to, before it is decoded:
// the nesting depth Ironic allows (OSSN-0099) and a value count well above
// what any real request holds, so a 1 MiB body cannot become hundreds of
// thousands of maps or be stored so deep that listing it fails later.
var bodyLimits = jsonlimit.Limits{MaxDepth: 25, MaxValues: 1 << 17}

func jsonErrText(err error) string {
	var se *json.SyntaxError
	if errors.As(err, &se) {
		return fmt.Sprintf("%s (at offset %d)", se.Error(), se.Offset)
	}
	if errors.Is(err, io.ErrUnexpectedEOF) {
		return "unexpected end of JSON input"
	}
	return err.Error()
}

// readJSON reads and decodes the request's body (nil when empty).
func (rq *request) readJSON() (any, error) {
	body, err := rq.readBody()
	if err != nil {
		return nil, err
	}
	return decodeJSON(body)
}

// asObject is a decoded body that must be a JSON object (notObject words
// the error for one that is not); an empty body is an empty object, as
// Ironic treats it.
func asObject(v any, notObject func(v any) *apiError) (map[string]any, error) {
	if v == nil {
		return map[string]any{}, nil
	}
	m, ok := v.(map[string]any)
	if !ok {
		return nil, notObject(v)
	}
	return m, nil
}

// schemaError words a validation failure like Ironic's jsonschema
// validators: "Schema error for <what>: <message>".
func schemaError(what, format string, args ...any) *apiError {
	return badRequest("Schema error for %s: %s", what, fmt.Sprintf(format, args...))
}

// fieldKind is the JSON type a body field accepts.
type fieldKind int

const (
	kString     fieldKind = iota // string or null
	kStringReq                   // string, not null
	kObject                      // object or null
	kBoolish                     // boolean, boolean-like string, or null
	kStringList                  // array of strings or null
	kAny                         // anything
)

// checkKind validates one field's JSON type; the message is jsonschema's.
func checkKind(what, field string, v any, k fieldKind) error {
	ok := true
	typ := ""
	switch k {
	case kString:
		_, isStr := v.(string)
		ok, typ = v == nil || isStr, "'string', 'null'"
	case kStringReq:
		_, ok = v.(string)
		typ = "'string'"
	case kObject:
		_, isObj := v.(map[string]any)
		ok, typ = v == nil || isObj, "'object', 'null'"
	case kBoolish:
		switch v.(type) {
		case nil, bool, string:
		default:
			ok = false
		}
		typ = "'string', 'boolean', 'null'"
	case kStringList:
		switch x := v.(type) {
		case nil:
		case []any:
			for _, e := range x {
				if _, isStr := e.(string); !isStr {
					return schemaError(what, "%s is not of type 'string'  Failed validating 'type' in schema['properties']['%s']['items']", pyRepr(e), field)
				}
			}
		default:
			ok = false
		}
		typ = "'array', 'null'"
	case kAny:
	}
	if !ok {
		return schemaError(what, "%s is not of type %s  Failed validating 'type' in schema['properties']['%s']", pyRepr(v), typ, field)
	}
	return nil
}

// checkDocKinds checks a document as Ironic's WSME types do: every
// attribute known to schema (what names the body), the mandatory ones
// given and not null, and each of the right kind. namesFirst: every
// attribute's name is checked before any value (ports, portgroups); else
// each attribute's name and value in turn, in name order (chassis).
func checkDocKinds(doc map[string]any, schema map[string]fieldKind, what string, namesFirst bool, mandatory ...string) error {
	keys := slices.Sorted(maps.Keys(doc))
	unknown := func(k string) error {
		if _, ok := schema[k]; !ok {
			return badRequest("Unknown attribute for argument %s: %s", what, k)
		}
		return nil
	}
	if namesFirst {
		for _, k := range keys {
			if err := unknown(k); err != nil {
				return err
			}
		}
		for _, k := range mandatory {
			if v, ok := doc[k]; !ok || v == nil {
				return invalidInput(k, nil, "Mandatory field missing.")
			}
		}
	}
	for _, k := range keys {
		if err := unknown(k); err != nil {
			return err
		}
		v := doc[k]
		switch schema[k] {
		case kString:
			if _, ok := v.(string); !ok && v != nil {
				return invalidInput(k, v, "Wrong type. Expected '<class 'str'>', got '"+pyTypeName(v)+"'")
			}
		case kObject:
			if _, ok := v.(map[string]any); !ok && v != nil {
				return invalidInput(k, v, "Wrong type. Expected '<class 'dict'>', got '"+pyTypeName(v)+"'")
			}
		case kBoolish:
			if _, err := boolField(k, v); err != nil {
				return invalidInput(k, v, "Wrong type. Expected '<class 'bool'>', got '"+pyTypeName(v)+"'")
			}
		}
	}
	if !namesFirst {
		for _, k := range mandatory {
			if v, ok := doc[k]; !ok || v == nil {
				return invalidInput(k, nil, "Mandatory field missing.")
			}
		}
	}
	return nil
}

// checkAdditional rejects members not in the schema, with jsonschema's words.
func checkAdditional(what string, m map[string]any, allowed func(string) bool) error {
	var extra []string
	for k := range m {
		if !allowed(k) {
			extra = append(extra, k)
		}
	}
	if len(extra) == 0 {
		return nil
	}
	slices.Sort(extra)
	quoted := make([]string, len(extra))
	for i, e := range extra {
		quoted[i] = pyRepr(e)
	}
	verb := "was"
	if len(extra) > 1 {
		verb = "were"
	}
	return schemaError(what, "Additional properties are not allowed (%s %s unexpected)  Failed validating 'additionalProperties' in schema", strings.Join(quoted, ", "), verb)
}

// boolField converts a boolean-ish body value (bool or a string like
// "true"), as Ironic's args.boolean; nil stays nil.
func boolField(name string, v any) (*bool, error) {
	switch x := v.(type) {
	case nil:
		return nil, nil
	case bool:
		return &x, nil
	case string:
		b, err := parseBool(name, x)
		if err != nil {
			return nil, err
		}
		return &b, nil
	}
	return nil, badRequest("Invalid %s: Unrecognized value '%v'", name, v)
}

// strField returns a string body value; nil is "".
func strField(v any) string {
	s, _ := v.(string)
	return s
}

// objField returns an object body value; nil is nil.
func objField(v any) map[string]any {
	m, _ := v.(map[string]any)
	return m
}

// strList returns a list-of-strings body value.
func strList(v any) []string {
	arr, _ := v.([]any)
	out := make([]string, 0, len(arr))
	for _, e := range arr {
		if s, ok := e.(string); ok {
			out = append(out, s)
		}
	}
	return out
}

// pyRepr renders a value as Python's repr, for messages that quote what
// the client sent, as Ironic's do.
func pyRepr(v any) string { return pyjson.Repr(v) }

// createBody is the start of every POST that creates a resource: no query
// arguments are allowed, and the body must be one JSON object.
func (rq *request) createBody(what string) (map[string]any, error) {
	if _, err := rq.queryArgs(); err != nil {
		return nil, err
	}
	v, err := rq.readJSON()
	if err != nil {
		return nil, err
	}
	return asObject(v, func(v any) *apiError { return schemaError(what, "%s is not of type 'object'", pyRepr(v)) })
}

// bodyArgs decodes a JSON object body whose members are the method's
// arguments: any other member is "Unexpected arguments", as Ironic's
// argument validation says.
func (rq *request) bodyArgs(allowed ...string) (map[string]any, error) {
	v, err := rq.readJSON()
	if err != nil {
		return nil, err
	}
	m, err := asObject(v, func(v any) *apiError {
		return badRequest("Expected a JSON object in the request body, received %s", pyRepr(v))
	})
	if err != nil {
		return nil, err
	}
	return m, unexpectedArgs(maps.Keys(m), allowed)
}

// unexpectedArgs refuses arguments that are not allowed, as Ironic's
// argument validation words it.
func unexpectedArgs(names iter.Seq[string], allowed []string) error {
	var unknown []string
	for k := range names {
		if !slices.Contains(allowed, k) {
			unknown = append(unknown, k)
		}
	}
	if len(unknown) == 0 {
		return nil
	}
	slices.Sort(unknown)
	return badRequest("Unexpected arguments: %s", strings.Join(unknown, ", "))
}

// commandArgs is bodyArgs for a method whose first argument, a string,
// is mandatory: the arguments and that one.
func (rq *request) commandArgs(allowed ...string) (map[string]any, string, error) {
	m, err := rq.bodyArgs(allowed...)
	if err != nil {
		return nil, "", err
	}
	v, err := requiredString(m, allowed[0])
	return m, v, err
}

// stringArg returns a string argument ("" when absent or null), 400 when
// it is another type.
func stringArg(m map[string]any, name string) (string, error) {
	v, ok := m[name]
	if !ok || v == nil {
		return "", nil
	}
	s, ok := v.(string)
	if !ok {
		return "", badRequest("Expected string for %s: %v", name, pyRepr(v))
	}
	return s, nil
}

// requiredString is stringArg for a mandatory argument.
func requiredString(m map[string]any, name string) (string, error) {
	if _, ok := m[name]; !ok {
		return "", badRequest("Missing mandatory parameter: %s", name)
	}
	return stringArg(m, name)
}

// toInt accepts a JSON number (or a numeric string, as Ironic's int()).
func toInt(v any) (int, bool) {
	switch x := v.(type) {
	case float64:
		if x == float64(int(x)) {
			return int(x), true
		}
	case string:
		if n, err := strconv.Atoi(strings.TrimSpace(x)); err == nil {
			return n, true
		}
	case interface{ Int64() (int64, error) }:
		if n, err := x.Int64(); err == nil {
			return int(n), true
		}
	}
	return 0, false
}

// anySlice is ss as the values pyRepr quotes as a list.
func anySlice(ss []string) []any {
	out := make([]any, len(ss))
	for i, s := range ss {
		out[i] = s
	}
	return out
}
