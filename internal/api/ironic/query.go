package ironic

import (
	"context"
	"errors"
	"maps"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"github.com/ferrometal/ferro/internal/inventory"
	"github.com/ferrometal/ferro/internal/store"
)

// args is a request's query string, checked against the parameters the
// endpoint takes: Ironic rejects any other with "Unexpected arguments".
type args struct {
	v url.Values
}

// queryArgs parses the query string and rejects unknown parameters.
func (rq *request) queryArgs(allowed ...string) (args, error) {
	raw := rq.r.URL.RawQuery
	if raw == "" {
		return args{}, nil
	}
	v, err := url.ParseQuery(raw)
	if err != nil {
		return args{}, badRequest("Invalid query string: %v", err)
	}
	if err := unexpectedArgs(maps.Keys(v), allowed); err != nil {
		return args{}, err
	}
	return args{v: v}, nil
}

// has reports whether the parameter was given.
func (a args) has(name string) bool {
	_, ok := a.v[name]
	return ok
}

// str returns a parameter, "" when absent.
func (a args) str(name string) string {
	if a.v == nil {
		return ""
	}
	return a.v.Get(name)
}

// optStr returns a parameter and whether it was given.
func (a args) optStr(name string) (string, bool) {
	if !a.has(name) {
		return "", false
	}
	return a.v.Get(name), true
}

// filters returns the given parameters but the named ones, as sorted
// name/value pairs for a next link.
func (a args) filters(except ...string) []string {
	var names []string
	for k := range a.v {
		if !slices.Contains(except, k) {
			names = append(names, k)
		}
	}
	slices.Sort(names)
	var out []string
	for _, k := range names {
		out = append(out, k, a.v.Get(k))
	}
	return out
}

// boolean parses a boolean parameter the way oslo's bool_from_string
// does in strict mode; nil when absent.
func (a args) boolean(name string) (*bool, error) {
	s, ok := a.optStr(name)
	if !ok {
		return nil, nil
	}
	return boolArg(name, s)
}

// booleanSince is boolean for a parameter of version min: given below
// it, 406.
func (a args) booleanSince(rq *request, name string, min int) (*bool, error) {
	b, err := a.boolean(name)
	if err == nil && b != nil && rq.minor < min {
		return nil, notAcceptable()
	}
	return b, err
}

// boolArg is a given boolean parameter.
func boolArg(name, s string) (*bool, error) {
	b, err := parseBool(name, s)
	if err != nil {
		return nil, err
	}
	return &b, nil
}

var trueStrings = []string{"1", "t", "true", "on", "y", "yes"}
var falseStrings = []string{"0", "f", "false", "off", "n", "no"}

// parseBool is oslo.utils' strutils.bool_from_string(strict=True).
func parseBool(name, s string) (bool, error) {
	l := strings.ToLower(strings.TrimSpace(s))
	if slices.Contains(trueStrings, l) {
		return true, nil
	}
	if slices.Contains(falseStrings, l) {
		return false, nil
	}
	return false, badRequest("Invalid %s: Unrecognized value '%s', acceptable values are: '0', '1', 'f', 'false', 'n', 'no', 'off', 'on', 't', 'true', 'y', 'yes'", name, s)
}

// integer parses an integer parameter; ok is false when absent.
func (a args) integer(name string) (n int, ok bool, err error) {
	s, ok := a.optStr(name)
	if !ok {
		return 0, false, nil
	}
	n, err = strconv.Atoi(strings.TrimSpace(s))
	if err != nil {
		return 0, true, badRequest("Expected an integer for %s: %s", name, s)
	}
	return n, true, nil
}

// stringList parses a comma-separated list, lower-cased and without
// duplicates, as Ironic's args.string_list; nil when absent.
func (a args) stringList(name string) []string {
	s, ok := a.optStr(name)
	if !ok {
		return nil
	}
	return splitList(s)
}

// splitList is a given list parameter (never nil).
func splitList(s string) []string {
	out := []string{}
	for _, item := range strings.Split(s, ",") {
		item = strings.ToLower(strings.TrimSpace(item))
		if item != "" && !slices.Contains(out, item) {
			out = append(out, item)
		}
	}
	return out
}

// uuidArg returns a parameter that must be a UUID, "" when absent.
func (a args) uuidArg(name string) (string, error) {
	s, ok := a.optStr(name)
	if !ok {
		return "", nil
	}
	return s, checkUUIDArg(name, s)
}

// checkUUIDArg refuses a given parameter that is not a UUID.
func checkUUIDArg(name, s string) error {
	if !isUUIDLike(s) {
		return badRequest("Expected UUID for %s: %s", name, s)
	}
	return nil
}

// listParams are the paging and sorting parameters of every collection.
type listParams struct {
	page store.Page
	// limit is the effective page size, for the next link.
	limit int
	// sortKey and sortDir as given (defaults id and asc), for the next link.
	sortKey, sortDir string
	fields           []string
	fieldsGiven      bool
	detail           *bool
}

// paging reads limit, marker, sort_key and sort_dir. The limit defaults
// to, and is capped at, [api]max_limit; a marker must be a UUID unless
// markerIsName.
func (s *server) paging(a args, invalidSortKeys []string, markerIsName bool) (listParams, error) {
	var p listParams
	n, ok, err := a.integer("limit")
	if err != nil {
		return p, err
	}
	switch {
	case !ok:
		p.limit = s.maxLimit
	case n <= 0:
		return p, badRequest("Limit must be positive")
	default:
		p.limit = min(n, s.maxLimit)
	}
	p.page.Limit = p.limit
	if markerIsName {
		p.page.Marker = a.str("marker")
	} else if p.page.Marker, err = a.uuidArg("marker"); err != nil {
		return p, err
	}
	p.sortKey = "id"
	if k, ok := a.optStr("sort_key"); ok {
		p.sortKey = k
	}
	p.sortDir = "asc"
	if d, ok := a.optStr("sort_dir"); ok {
		p.sortDir = d
	}
	if p.sortDir != "asc" && p.sortDir != "desc" {
		return p, badRequest("Invalid sort direction: %s. Acceptable values are 'asc' or 'desc'", p.sortDir)
	}
	if slices.Contains(invalidSortKeys, p.sortKey) {
		return p, badRequest("The sort_key value %s is an invalid field for sorting", p.sortKey)
	}
	// "id" is the database's insertion order; the store's default order
	// (creation time, then id) is the same.
	if p.sortKey != "id" {
		p.page.SortKey = p.sortKey
	}
	p.page.SortDir = p.sortDir
	return p, nil
}

// fieldsArg is the fields parameter (1.8); nil when absent.
func (rq *request) fieldsArg(a args) ([]string, error) {
	fields := a.stringList("fields")
	if fields != nil && rq.minor < v8FieldsSubset {
		return nil, notAcceptable()
	}
	return fields, nil
}

// returnFields works out fields and detail like Ironic's
// get_request_return_fields: fields needs 1.8, detail 1.43, not both.
// It returns nil for "all fields".
func (rq *request) returnFields(a args, p *listParams, defaults []string) error {
	return rq.returnFieldsOf(a, p, defaults, false)
}

// returnFieldsOf is returnFields; volume: as Ironic's volume controllers,
// which take ?detail= at every version of theirs (not from 1.43) and word
// its clash with ?fields= their own way.
func (rq *request) returnFieldsOf(a args, p *listParams, defaults []string, volume bool) error {
	detail, err := a.boolean("detail")
	if err != nil {
		return err
	}
	fields, err := rq.fieldsArg(a)
	if err != nil {
		return err
	}
	if detail != nil && rq.minor < v43DetailQuery && !volume {
		return badRequest("Invalid query parameter ?detail=%s received.", a.str("detail"))
	}
	if fields != nil && detail != nil && *detail {
		if volume {
			return badRequest("Can't fetch a subset of fields with 'detail' set")
		}
		return badRequest("Can not specify ?detail=True and fields in the same request.")
	}
	p.detail = detail
	p.fieldsGiven = fields != nil
	switch {
	case fields != nil:
		p.fields = fields
	case detail != nil && *detail:
		p.fields = nil
	default:
		p.fields = defaults
	}
	return nil
}

// nextLink builds the "next" URL of a full page: Ironic's
// <base>/v1/<resource>?<args>limit=N&marker=<last>.
func (rq *request) nextLink(resource string, p listParams, count int, lastKey string, extra ...string) string {
	if count == 0 || count != p.limit {
		return ""
	}
	var b strings.Builder
	b.WriteString(rq.base)
	b.WriteString("/v1/")
	b.WriteString(resource)
	b.WriteString("?")
	add := func(k, v string) {
		b.WriteString(url.QueryEscape(k))
		b.WriteByte('=')
		b.WriteString(url.QueryEscape(v))
		b.WriteByte('&')
	}
	add("sort_key", p.sortKey)
	add("sort_dir", p.sortDir)
	for i := 0; i+1 < len(extra); i += 2 {
		add(extra[i], extra[i+1])
	}
	if p.detail != nil {
		add("detail", strconv.FormatBool(*p.detail))
	}
	if p.fieldsGiven {
		add("fields", strings.Join(p.fields, ","))
	}
	b.WriteString("limit=")
	b.WriteString(strconv.Itoa(p.limit))
	b.WriteString("&marker=")
	b.WriteString(url.QueryEscape(lastKey))
	return b.String()
}

// fieldSet is a set of requested fields; nil means every field.
type fieldSet map[string]bool

func newFieldSet(fields []string) fieldSet {
	if fields == nil {
		return nil
	}
	fs := make(fieldSet, len(fields))
	for _, f := range fields {
		fs[f] = true
	}
	return fs
}

// want reports whether a field is to be rendered.
func (fs fieldSet) want(name string) bool { return fs == nil || fs[name] }

// checkMarker answers the kind's not-found error when a list's marker
// names no object; get reads one by its marker.
func checkMarker[T any](ctx context.Context, marker string, get func(context.Context, string) (T, error), notFound func(string) *apiError) error {
	if marker == "" {
		return nil
	}
	if _, err := get(ctx, marker); err != nil {
		if errors.Is(err, store.ErrNotFound) {
			return notFound(marker)
		}
		return err
	}
	return nil
}

// pageAfter is the part of list after the item the page's marker names
// (all of it without a marker), cut to the page's limit, for lists the
// store does not page; notFound answers a marker that names no item.
func pageAfter[T any](list []T, p listParams, key func(T) string, notFound func(string) *apiError) ([]T, error) {
	if m := p.page.Marker; m != "" {
		i := slices.IndexFunc(list, func(v T) bool { return key(v) == m })
		if i < 0 {
			return nil, notFound(m)
		}
		list = list[i+1:]
	}
	if len(list) > p.limit {
		list = list[:p.limit]
	}
	return list, nil
}

// macArg is the address filter of a port or portgroup list, in the form
// addresses are stored in; "" when absent.
func macArg(a args) (string, error) {
	addr, ok := a.optStr("address")
	if !ok {
		return "", nil
	}
	mac, valid := inventory.NormalizeMAC(addr)
	if !valid {
		return "", invalidInput("address", addr, "Expected a MAC address but received "+addr+".")
	}
	return mac, nil
}
