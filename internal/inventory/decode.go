package inventory

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/ferrometal/ferro/internal/jsonlimit"
)

// DefaultMaxDepth is the deepest nesting of JSON objects and arrays Decode
// accepts unless told otherwise. Real payloads stay under 8.
const DefaultMaxDepth = 25

// DefaultMaxValues bounds the number of JSON values in a report unless told
// otherwise: a real one from a large server holds tens of thousands, and
// half a million small values already decode to about 40 MB of Go values.
const DefaultMaxValues = 1 << 19

// Errors callers may branch on; Decode wraps them.
var (
	ErrTooDeep  = jsonlimit.ErrTooDeep
	ErrTooMany  = jsonlimit.ErrTooMany
	ErrTooLarge = errors.New("report too large")
)

// Limits bounds what Decode accepts.
type Limits struct {
	// MaxDepth is the maximum nesting of objects and arrays; 0 means
	// DefaultMaxDepth.
	MaxDepth int
	// MaxBytes is the maximum body size; 0 means no limit (the HTTP layer
	// usually enforces one).
	MaxBytes int64
	// MaxValues is the maximum number of JSON values; 0 means DefaultMaxValues.
	MaxValues int
}

// Decode reads a report from r; see DecodeBytes.
func Decode(r io.Reader, lim Limits) (*Report, map[string]any, error) {
	if lim.MaxBytes > 0 {
		r = io.LimitReader(r, lim.MaxBytes+1)
	}
	b, err := io.ReadAll(r)
	if err != nil {
		return nil, nil, fmt.Errorf("read report: %w", err)
	}
	if lim.MaxBytes > 0 && int64(len(b)) > lim.MaxBytes {
		return nil, nil, fmt.Errorf("%w: more than %d bytes", ErrTooLarge, lim.MaxBytes)
	}
	return DecodeBytes(b, lim)
}

// DecodeBytes decodes a report. It returns the typed report and the same
// JSON as generic values (objects as map[string]any, numbers as
// json.Number): the unprocessed introspection data, unknown fields included.
//
// It rejects nesting deeper than lim.MaxDepth before decoding anything, a
// known field of the wrong type (naming it: "inventory.cpu.count: expected
// integer, got string"), and a report without inventory or
// inventory.interfaces. Unknown fields are ignored and null is accepted for
// every field.
func DecodeBytes(b []byte, lim Limits) (*Report, map[string]any, error) {
	return decodeBytes(b, lim, true)
}

// decodeBytes is DecodeBytes; without fast, encoding/json parses every
// report (the benchmarks compare the two).
func decodeBytes(b []byte, lim Limits, fast bool) (*Report, map[string]any, error) {
	if lim.MaxBytes > 0 && int64(len(b)) > lim.MaxBytes {
		return nil, nil, fmt.Errorf("%w: more than %d bytes", ErrTooLarge, lim.MaxBytes)
	}
	maxDepth := lim.MaxDepth
	if maxDepth <= 0 {
		maxDepth = DefaultMaxDepth
	}
	maxValues := lim.MaxValues
	if maxValues <= 0 {
		maxValues = DefaultMaxValues
	}
	// parseObject refuses nesting deeper than maxDepth and more than
	// maxValues values too; anything it refuses is checked against the
	// limits first and then decoded by encoding/json, which words the error.
	var raw map[string]any
	ok := false
	if fast {
		raw, ok = parseObject(string(b), maxDepth, maxValues)
	}
	if !ok {
		if err := jsonlimit.Check(b, jsonlimit.Limits{MaxDepth: maxDepth, MaxValues: maxValues}); err != nil {
			return nil, nil, err
		}
		dec := json.NewDecoder(bytes.NewReader(b))
		dec.UseNumber()
		var top any
		if err := dec.Decode(&top); err != nil {
			return nil, nil, fmt.Errorf("invalid JSON: %w", err)
		}
		if _, err := dec.Token(); err != io.EOF {
			return nil, nil, errors.New("invalid JSON: data after the top-level object")
		}
		if raw, ok = top.(map[string]any); !ok {
			return nil, nil, fmt.Errorf("report: expected object, got %s", jsonType(top))
		}
	}
	inv, ok := raw["inventory"].(map[string]any)
	if !ok {
		if raw["inventory"] == nil {
			return nil, nil, errors.New("inventory: required")
		}
		return nil, nil, fmt.Errorf("inventory: expected object, got %s", jsonType(raw["inventory"]))
	}
	if inv["interfaces"] == nil {
		return nil, nil, errors.New("inventory.interfaces: required")
	}

	var rep Report
	var d decoder
	if err := d.assign(reflect.ValueOf(&rep).Elem(), raw); err != nil {
		return nil, nil, err
	}
	return &rep, raw, nil
}

var (
	unmarshalerType = reflect.TypeFor[json.Unmarshaler]()
	tlvType         = reflect.TypeFor[TLV]()
)

// decoder stores generic JSON values into typed ones, checking each value's
// type against its destination's, as json.Unmarshal does but with element
// indexes in the paths of its errors. The path is kept as a stack of
// segments and only spelled out for an error: a report has thousands of
// values and almost never a wrong one.
type decoder struct {
	path []pathSegment
}

// pathSegment is a field or map key name, or a slice index when index ≥ 0.
type pathSegment struct {
	name  string
	index int
}

func nameSegment(name string) pathSegment { return pathSegment{name: name, index: -1} }

// pathString spells the current path, "inventory.disks[1].size".
func (d *decoder) pathString() string {
	var b strings.Builder
	for _, s := range d.path {
		if s.index >= 0 {
			b.WriteByte('[')
			b.WriteString(strconv.Itoa(s.index))
			b.WriteByte(']')
			continue
		}
		if b.Len() > 0 {
			b.WriteByte('.')
		}
		b.WriteString(s.name)
	}
	return pathOr(b.String())
}

func (d *decoder) typeError(want string, got any) error {
	return fmt.Errorf("%s: expected %s, got %s", d.pathString(), want, jsonType(got))
}

// typeInfo is what assign needs to know about a destination type, worked
// out once per type.
type typeInfo struct {
	unmarshaler bool        // *T implements json.Unmarshaler
	fields      []fieldInfo // a struct's JSON fields, in declaration order
}

type fieldInfo struct {
	index int
	name  string
	// lenient fields (tag inventory:"lenient") are extensions to IPA's
	// schema, or fields upstream never checks: a value of the wrong type
	// leaves them zero instead of refusing the report.
	lenient bool
	// intString fields (tag inventory:"intstring") are integers that may
	// come as the text of one ("-1").
	intString bool
}

var typeInfos sync.Map // reflect.Type → *typeInfo

func infoOf(t reflect.Type) *typeInfo {
	if ti, ok := typeInfos.Load(t); ok {
		return ti.(*typeInfo)
	}
	ti := &typeInfo{unmarshaler: reflect.PointerTo(t).Implements(unmarshalerType)}
	if t.Kind() == reflect.Struct {
		for i := range t.NumField() {
			name, _, _ := strings.Cut(t.Field(i).Tag.Get("json"), ",")
			if name == "" || name == "-" {
				continue
			}
			opts := strings.Split(t.Field(i).Tag.Get("inventory"), ",")
			ti.fields = append(ti.fields, fieldInfo{index: i, name: name,
				lenient: slices.Contains(opts, "lenient"), intString: slices.Contains(opts, "intstring")})
		}
	}
	actual, _ := typeInfos.LoadOrStore(t, ti)
	return actual.(*typeInfo)
}

// assign stores the generic JSON value v into dst, checking its type against
// dst's and naming the path in errors. It plays json.Unmarshal's role.
func (d *decoder) assign(dst reflect.Value, v any) error {
	if v == nil {
		return nil // null leaves the zero value, as IPA sends null for unknowns
	}
	t := dst.Type()
	if t == tlvType {
		// Thousands of TLVs per report: built straight from the values
		// rather than through TLV.UnmarshalJSON's encode and decode.
		tlv, err := tlvFromJSON(v)
		if err != nil {
			return fmt.Errorf("%s: %w", d.pathString(), err)
		}
		dst.Set(reflect.ValueOf(tlv))
		return nil
	}
	ti := infoOf(t)
	if ti.unmarshaler {
		b, err := json.Marshal(v)
		if err == nil {
			err = dst.Addr().Interface().(json.Unmarshaler).UnmarshalJSON(b)
		}
		if err != nil {
			return fmt.Errorf("%s: %w", d.pathString(), err)
		}
		return nil
	}
	switch dst.Kind() {
	case reflect.Pointer:
		p := reflect.New(t.Elem())
		if err := d.assign(p.Elem(), v); err != nil {
			return err
		}
		dst.Set(p)
	case reflect.Struct:
		obj, ok := v.(map[string]any)
		if !ok {
			return d.typeError("object", v)
		}
		for _, f := range ti.fields {
			if fv, ok := obj[f.name]; ok {
				if s, isString := fv.(string); isString && f.intString {
					fv = json.Number(s) // assign parses it as an integer, or refuses it
				}
				d.path = append(d.path, nameSegment(f.name))
				err := d.assign(dst.Field(f.index), fv)
				d.path = d.path[:len(d.path)-1]
				if err != nil && f.lenient {
					dst.Field(f.index).SetZero()
					err = nil
				}
				if err != nil {
					return err
				}
			}
		}
	case reflect.Slice:
		arr, ok := v.([]any)
		if !ok {
			return d.typeError("array", v)
		}
		s := reflect.MakeSlice(t, len(arr), len(arr))
		for i, ev := range arr {
			d.path = append(d.path, pathSegment{index: i})
			err := d.assign(s.Index(i), ev)
			d.path = d.path[:len(d.path)-1]
			if err != nil {
				return err
			}
		}
		dst.Set(s)
	case reflect.Map:
		obj, ok := v.(map[string]any)
		if !ok {
			return d.typeError("object", v)
		}
		m := reflect.MakeMapWithSize(t, len(obj))
		for k, ev := range obj {
			e := reflect.New(t.Elem()).Elem()
			d.path = append(d.path, nameSegment(k))
			err := d.assign(e, ev)
			d.path = d.path[:len(d.path)-1]
			if err != nil {
				return err
			}
			m.SetMapIndex(reflect.ValueOf(k), e)
		}
		dst.Set(m)
	case reflect.String:
		s, ok := v.(string)
		if !ok {
			return d.typeError("string", v)
		}
		dst.SetString(s)
	case reflect.Bool:
		b, ok := v.(bool)
		if !ok {
			return d.typeError("boolean", v)
		}
		dst.SetBool(b)
	case reflect.Int, reflect.Int64, reflect.Int32:
		n, ok := v.(json.Number)
		if !ok {
			return d.typeError("integer", v)
		}
		i, err := strconv.ParseInt(n.String(), 10, t.Bits())
		if err != nil {
			if errors.Is(err, strconv.ErrRange) {
				return fmt.Errorf("%s: integer %s out of range", d.pathString(), n)
			}
			return fmt.Errorf("%s: expected integer, got number %s", d.pathString(), n)
		}
		dst.SetInt(i)
	case reflect.Interface:
		dst.Set(reflect.ValueOf(v))
	default:
		return fmt.Errorf("%s: cannot decode into %s", d.pathString(), t)
	}
	return nil
}

// tlvFromJSON builds a TLV from a generic [type, "hex"] pair, accepting and
// refusing exactly what TLV.UnmarshalJSON does (null for either element
// leaves it zero).
func tlvFromJSON(v any) (TLV, error) {
	pair, ok := v.([]any)
	if !ok || len(pair) != 2 {
		return TLV{}, errPair
	}
	var t TLV
	switch typ := pair[0].(type) {
	case nil:
	case json.Number:
		i, err := strconv.ParseInt(typ.String(), 10, 0)
		if err != nil {
			return TLV{}, errTLVType
		}
		t.Type = int(i)
	default:
		return TLV{}, errTLVType
	}
	switch val := pair[1].(type) {
	case nil:
	case string:
		t.Value = val
	default:
		return TLV{}, errTLVValue
	}
	return t, nil
}

func jsonType(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case string:
		return "string"
	case bool:
		return "boolean"
	case json.Number, float64:
		return "number"
	case []any:
		return "array"
	case map[string]any:
		return "object"
	}
	return fmt.Sprintf("%T", v)
}

func pathOr(path string) string {
	if path == "" {
		return "report"
	}
	return path
}
