package ironic

import (
	"encoding/json"
	"math"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf8"
)

// bufPool recycles response buffers. Lists are sent in pieces of about
// streamChunk (jsonStream), so a buffer of 64 KiB holds any response but
// a resource with very large free-form fields.
var bufPool = sync.Pool{New: func() any { b := make([]byte, 0, 64<<10); return &b }}

// getBuf returns an empty pooled buffer.
func getBuf() *[]byte {
	bp := bufPool.Get().(*[]byte)
	*bp = (*bp)[:0]
	return bp
}

// putBuf returns a buffer, keeping the grown one unless it is large.
func putBuf(bp *[]byte, b []byte) {
	if cap(b) > 1<<20 {
		return
	}
	*bp = b[:0]
	bufPool.Put(bp)
}

// Responses are rendered by appending JSON to one byte slice, walking
// precomputed field tables instead of building maps and marshalling them
// with reflection. The free-form objects (driver_info, properties, …) are
// encoded by appendValue, which knows the types JSON decoding produces.

const hexDigits = "0123456789abcdef"

// appendString appends s as a JSON string. Invalid UTF-8 becomes U+FFFD,
// as encoding/json does.
func appendString(b []byte, s string) []byte {
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if c >= 0x20 && c != '"' && c != '\\' {
				i++
				continue
			}
			b = append(b, s[start:i]...)
			switch c {
			case '"', '\\':
				b = append(b, '\\', c)
			case '\n':
				b = append(b, '\\', 'n')
			case '\r':
				b = append(b, '\\', 'r')
			case '\t':
				b = append(b, '\\', 't')
			default:
				b = append(b, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xf])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			b = append(b, s[start:i]...)
			b = append(b, `\ufffd`...)
			i += size
			start = i
			continue
		}
		if r == '\u2028' || r == '\u2029' {
			b = append(b, s[start:i]...)
			b = append(b, '\\', 'u', '2', '0', '2', hexDigits[r&0xf])
			i += size
			start = i
			continue
		}
		i += size
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}

// appendNullString appends s, or null when s is empty: Ironic's unset
// string fields are None.
func appendNullString(b []byte, s string) []byte {
	if s == "" {
		return append(b, "null"...)
	}
	return appendString(b, s)
}

func appendBool(b []byte, v bool) []byte {
	if v {
		return append(b, "true"...)
	}
	return append(b, "false"...)
}

func appendNullBool(b []byte, v *bool) []byte {
	if v == nil {
		return append(b, "null"...)
	}
	return appendBool(b, *v)
}

// appendTime renders a time as Python's datetime.isoformat() does for the
// UTC-aware times Ironic returns: microseconds only when non-zero. The
// digits are written directly: time.AppendFormat, which parses its layout
// on every call, was a sixth of rendering a node.
func appendTime(b []byte, t time.Time) []byte {
	t = t.UTC()
	year, month, day := t.Date()
	b = append(b, '"')
	if year < 0 || year > 9999 {
		// Beyond four digits, which the layout below assumes.
		layout := "2006-01-02T15:04:05"
		if t.Nanosecond()/1000 != 0 {
			layout += ".000000"
		}
		return append(t.AppendFormat(b, layout), `+00:00"`...)
	}
	hour, minute, sec := t.Clock()
	b = appendDigits(b, year, 4)
	b = append(b, '-')
	b = appendDigits(b, int(month), 2)
	b = append(b, '-')
	b = appendDigits(b, day, 2)
	b = append(b, 'T')
	b = appendDigits(b, hour, 2)
	b = append(b, ':')
	b = appendDigits(b, minute, 2)
	b = append(b, ':')
	b = appendDigits(b, sec, 2)
	if us := t.Nanosecond() / 1000; us != 0 {
		b = append(b, '.')
		b = appendDigits(b, us, 6)
	}
	return append(b, `+00:00"`...)
}

// appendDigits appends v, which is not negative, zero-padded to width digits.
func appendDigits(b []byte, v, width int) []byte {
	var buf [8]byte
	for i := width - 1; i >= 0; i-- {
		buf[i] = byte('0' + v%10)
		v /= 10
	}
	return append(b, buf[:width]...)
}

func appendNullTime(b []byte, t *time.Time) []byte {
	if t == nil || t.IsZero() {
		return append(b, "null"...)
	}
	return appendTime(b, *t)
}

func appendStrings(b []byte, ss []string) []byte {
	b = append(b, '[')
	for i, s := range ss {
		if i > 0 {
			b = append(b, ", "...)
		}
		b = appendString(b, s)
	}
	return append(b, ']')
}

// appendObject appends a free-form object; nil is {} as Ironic renders an
// unset dict field.
func appendObject(b []byte, m map[string]any) []byte {
	if m == nil {
		return append(b, "{}"...)
	}
	return appendMap(b, m, nil)
}

// masker decides whether the value under a key is replaced by "******".
type masker func(key string) bool

// appendMap appends m with its keys sorted. When mask is set, values
// under secret keys are masked at every depth, and strings elsewhere are
// scrubbed of embedded secrets.
func appendMap(b []byte, m map[string]any, mask masker) []byte {
	if len(m) == 0 {
		return append(b, "{}"...)
	}
	if len(m) > smallMap {
		members := make([]member, 0, len(m))
		for k, v := range m {
			members = append(members, member{k, v})
		}
		slices.SortFunc(members, func(x, y member) int { return strings.Compare(x.k, y.k) })
		return appendMembers(b, members, mask)
	}
	// The key and value are taken together (a lookup per key after
	// sorting the keys was a tenth of a node list) and sorted on the
	// stack: free-form objects are small.
	var arr [smallMap]member
	members := arr[:0]
	for k, v := range m {
		members = append(members, member{k, v})
	}
	for i := 1; i < len(members); i++ {
		for j := i; j > 0 && members[j].k < members[j-1].k; j-- {
			members[j], members[j-1] = members[j-1], members[j]
		}
	}
	return appendMembers(b, members, mask)
}

// smallMap is the size up to which appendMap sorts on the stack.
const smallMap = 16

// member is a key and value of a free-form object.
type member struct {
	k string
	v any
}

// appendMembers appends sorted members as an object (see appendMap).
func appendMembers(b []byte, members []member, mask masker) []byte {
	b = append(b, '{')
	for i, kv := range members {
		if i > 0 {
			b = append(b, ", "...)
		}
		b = appendString(b, kv.k)
		b = append(b, ": "...)
		if mask != nil {
			if _, nested := kv.v.(map[string]any); !nested && mask(kv.k) {
				b = append(b, `"******"`...)
				continue
			}
		}
		b = appendValue(b, kv.v, mask)
	}
	return append(b, '}')
}

// appendValue appends a value of the kinds JSON decoding produces, falling
// back to encoding/json for anything else.
func appendValue(b []byte, v any, mask masker) []byte {
	switch x := v.(type) {
	case nil:
		return append(b, "null"...)
	case string:
		if mask != nil {
			x = maskString(x)
		}
		return appendString(b, x)
	case bool:
		return appendBool(b, x)
	case json.Number:
		if isJSONNumber(string(x)) {
			return append(b, x...)
		}
		return appendString(b, string(x))
	case float64:
		return appendFloat(b, x)
	case int:
		return strconv.AppendInt(b, int64(x), 10)
	case int64:
		return strconv.AppendInt(b, x, 10)
	case map[string]any:
		return appendMap(b, x, mask)
	case []any:
		b = append(b, '[')
		for i, e := range x {
			if i > 0 {
				b = append(b, ", "...)
			}
			b = appendValue(b, e, mask)
		}
		return append(b, ']')
	case []string:
		return appendStrings(b, x)
	case map[string]string:
		m := make(map[string]any, len(x))
		for k, s := range x {
			m[k] = s
		}
		return appendMap(b, m, mask)
	}
	raw, err := json.Marshal(v)
	if err != nil {
		return append(b, "null"...)
	}
	return append(b, raw...)
}

// appendFloat formats like encoding/json.
func appendFloat(b []byte, f float64) []byte {
	if math.IsInf(f, 0) || math.IsNaN(f) {
		return append(b, "null"...)
	}
	abs := math.Abs(f)
	format := byte('f')
	if abs != 0 && (abs < 1e-6 || abs >= 1e21) {
		format = 'e'
	}
	b = strconv.AppendFloat(b, f, format, -1, 64)
	if format == 'e' {
		// clean up e-09 to e-9
		n := len(b)
		if n >= 4 && b[n-4] == 'e' && b[n-3] == '-' && b[n-2] == '0' {
			b[n-2] = b[n-1]
			b = b[:n-1]
		}
	}
	return b
}

// isJSONNumber reports whether s is a valid JSON number literal.
func isJSONNumber(s string) bool {
	if s == "" {
		return false
	}
	if s[0] == '-' {
		s = s[1:]
		if s == "" {
			return false
		}
	}
	switch {
	case s[0] == '0':
		s = s[1:]
	case '1' <= s[0] && s[0] <= '9':
		s = s[1:]
		for len(s) > 0 && '0' <= s[0] && s[0] <= '9' {
			s = s[1:]
		}
	default:
		return false
	}
	if len(s) >= 2 && s[0] == '.' && '0' <= s[1] && s[1] <= '9' {
		s = s[2:]
		for len(s) > 0 && '0' <= s[0] && s[0] <= '9' {
			s = s[1:]
		}
	}
	if len(s) >= 2 && (s[0] == 'e' || s[0] == 'E') {
		s = s[1:]
		if s[0] == '+' || s[0] == '-' {
			s = s[1:]
			if s == "" {
				return false
			}
		}
		for len(s) > 0 && '0' <= s[0] && s[0] <= '9' {
			s = s[1:]
		}
	}
	return s == ""
}

// link is one entry of a links list.
type link struct {
	rel, href string
}

// appendLinks appends Ironic's self and bookmark links for a resource:
// base/v1/<resource>/<args> and base/<resource>/<args>.
func appendLinks(b []byte, base, resource, args string) []byte {
	return appendSubLinks(b, base, resource, args, "")
}

// parallelRenderMin is the length of list from which its views are
// rendered on every CPU, in contiguous pieces joined in order: after the
// store's decoding (parallel too), rendering is most of a long list.
const parallelRenderMin = 64

// renderList appends the views of items, comma-separated, to js. The
// first piece is rendered into js itself (and streamed as it grows), the
// others at the same time into buffers sized after the first view;
// render must be safe to call from several goroutines.
func renderList[E any](js *jsonStream, items []*E, render func(b []byte, v *E) []byte) {
	if len(items) == 0 {
		return
	}
	start := len(js.b)
	js.b = render(js.b, items[0])
	per := len(js.b) - start + len(", ")
	workers := min(runtime.GOMAXPROCS(0), len(items)/(parallelRenderMin/2))
	size := len(items)
	if workers >= 2 {
		size = (len(items) + workers - 1) / workers
	}
	var wg sync.WaitGroup
	var parts []*[]byte
	for lo := size; lo < len(items); lo += size {
		hi := min(lo+size, len(items))
		bp := getBuf()
		if need := (hi - lo + 1) * per; cap(*bp) < need {
			*bp = make([]byte, 0, need)
		}
		parts = append(parts, bp)
		wg.Go(func() {
			b := *bp
			for _, v := range items[lo:hi] {
				b = render(append(b, ", "...), v)
			}
			*bp = b
		})
	}
	js.flush()
	for _, v := range items[1:size] {
		js.b = render(append(js.b, ", "...), v)
		js.flush()
	}
	wg.Wait()
	for _, bp := range parts {
		js.b = append(js.b, *bp...)
		putBuf(bp, *bp)
		js.flush()
	}
}

// appendListEnd closes a list's body: its next link, when it has one,
// and the brace.
func appendListEnd(b []byte, next string) []byte {
	if next != "" {
		b = append(b, `, "next": `...)
		b = appendString(b, next)
	}
	return append(b, '}')
}

// appendSubLinks is appendLinks for <args><suffix>, without building the
// joined string.
func appendSubLinks(b []byte, base, resource, args, suffix string) []byte {
	b = append(b, `[{"href": "`...)
	b = appendURLPart(b, base)
	b = append(b, "/v1/"...)
	b = append(b, resource...)
	b = append(b, '/')
	b = appendURLPart(b, args)
	b = append(b, suffix...)
	b = append(b, `", "rel": "self"}, {"href": "`...)
	b = appendURLPart(b, base)
	b = append(b, '/')
	b = append(b, resource...)
	b = append(b, '/')
	b = appendURLPart(b, args)
	b = append(b, suffix...)
	return append(b, `", "rel": "bookmark"}]`...)
}

// appendLinkPair is appendSubLinks with the self and bookmark hrefs but
// for suffix already built (and escaped).
func appendLinkPair(b, self, bookmark []byte, suffix string) []byte {
	b = append(b, `[{"href": "`...)
	b = append(b, self...)
	b = append(b, suffix...)
	b = append(b, `", "rel": "self"}, {"href": "`...)
	b = append(b, bookmark...)
	b = append(b, suffix...)
	return append(b, `", "rel": "bookmark"}]`...)
}

// appendURLPart appends a URL piece inside an already opened JSON string.
// URL pieces here are ASCII without quotes or backslashes except when a
// client sent odd names, which appendString then escapes.
func appendURLPart(b []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c < 0x20 || c == '"' || c == '\\' || c >= utf8.RuneSelf {
			q := appendString(nil, s)
			return append(b, q[1:len(q)-1]...)
		}
	}
	return append(b, s...)
}

// appendLinkList appends links with explicit hrefs.
func appendLinkList(b []byte, links []link) []byte {
	b = append(b, '[')
	for i, l := range links {
		if i > 0 {
			b = append(b, ", "...)
		}
		b = append(b, `{"href": `...)
		b = appendString(b, l.href)
		b = append(b, `, "rel": `...)
		b = appendString(b, l.rel)
		b = append(b, '}')
	}
	return append(b, ']')
}

// objWriter writes the members of a JSON object, handling the commas.
type objWriter struct {
	b     []byte
	first bool
}

func newObj(b []byte) objWriter { return objWriter{b: append(b, '{'), first: true} }

// key appends a member name; the caller appends the value next.
func (o *objWriter) key(name string) {
	if !o.first {
		o.b = append(o.b, ", "...)
	}
	o.first = false
	o.b = append(o.b, '"')
	o.b = append(o.b, name...)
	o.b = append(o.b, `": `...)
}

// keyed appends a precomputed `"name": ` member prefix.
func (o *objWriter) keyed(prefix string) {
	if !o.first {
		o.b = append(o.b, ", "...)
	}
	o.first = false
	o.b = append(o.b, prefix...)
}

func (o *objWriter) str(name, v string)          { o.key(name); o.b = appendString(o.b, v) }
func (o *objWriter) nullStr(name, v string)      { o.key(name); o.b = appendNullString(o.b, v) }
func (o *objWriter) boolean(name string, v bool) { o.key(name); o.b = appendBool(o.b, v) }
func (o *objWriter) raw(name string, v []byte)   { o.key(name); o.b = append(o.b, v...) }
func (o *objWriter) end() []byte                 { return append(o.b, '}') }
