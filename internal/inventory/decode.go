package inventory

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"reflect"
	"strconv"
	"strings"
)

// DefaultMaxDepth is the deepest nesting of JSON objects and arrays Decode
// accepts unless told otherwise. Real payloads stay under 8.
const DefaultMaxDepth = 25

// Errors callers may branch on; Decode wraps them.
var (
	ErrTooDeep  = errors.New("JSON nesting too deep")
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
	if lim.MaxBytes > 0 && int64(len(b)) > lim.MaxBytes {
		return nil, nil, fmt.Errorf("%w: more than %d bytes", ErrTooLarge, lim.MaxBytes)
	}
	maxDepth := lim.MaxDepth
	if maxDepth <= 0 {
		maxDepth = DefaultMaxDepth
	}
	if err := checkDepth(b, maxDepth); err != nil {
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
	raw, ok := top.(map[string]any)
	if !ok {
		return nil, nil, fmt.Errorf("report: expected object, got %s", jsonType(top))
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
	if err := assign(reflect.ValueOf(&rep).Elem(), raw, ""); err != nil {
		return nil, nil, err
	}
	return &rep, raw, nil
}

// checkDepth scans b for the nesting of objects and arrays, so that a hostile
// body is refused before the decoder recurses into it.
func checkDepth(b []byte, max int) error {
	depth := 0
	inString, escaped := false, false
	for _, c := range b {
		if inString {
			switch {
			case escaped:
				escaped = false
			case c == '\\':
				escaped = true
			case c == '"':
				inString = false
			}
			continue
		}
		switch c {
		case '"':
			inString = true
		case '{', '[':
			depth++
			if depth > max {
				return fmt.Errorf("%w: more than %d levels of objects and arrays", ErrTooDeep, max)
			}
		case '}', ']':
			depth--
		}
	}
	return nil
}

var unmarshalerType = reflect.TypeFor[json.Unmarshaler]()

// assign stores the generic JSON value v into dst, checking its type against
// dst's and naming path in errors. It plays json.Unmarshal's role, with
// element indexes in the paths.
func assign(dst reflect.Value, v any, path string) error {
	if v == nil {
		return nil // null leaves the zero value, as IPA sends null for unknowns
	}
	if reflect.PointerTo(dst.Type()).Implements(unmarshalerType) {
		b, err := json.Marshal(v)
		if err == nil {
			err = dst.Addr().Interface().(json.Unmarshaler).UnmarshalJSON(b)
		}
		if err != nil {
			return fmt.Errorf("%s: %w", pathOr(path), err)
		}
		return nil
	}
	switch dst.Kind() {
	case reflect.Pointer:
		p := reflect.New(dst.Type().Elem())
		if err := assign(p.Elem(), v, path); err != nil {
			return err
		}
		dst.Set(p)
	case reflect.Struct:
		obj, ok := v.(map[string]any)
		if !ok {
			return typeError(path, "object", v)
		}
		t := dst.Type()
		for i := range t.NumField() {
			name, _, _ := strings.Cut(t.Field(i).Tag.Get("json"), ",")
			if name == "" || name == "-" {
				continue
			}
			if fv, ok := obj[name]; ok {
				if err := assign(dst.Field(i), fv, join(path, name)); err != nil {
					return err
				}
			}
		}
	case reflect.Slice:
		arr, ok := v.([]any)
		if !ok {
			return typeError(path, "array", v)
		}
		s := reflect.MakeSlice(dst.Type(), len(arr), len(arr))
		for i, ev := range arr {
			if err := assign(s.Index(i), ev, fmt.Sprintf("%s[%d]", path, i)); err != nil {
				return err
			}
		}
		dst.Set(s)
	case reflect.Map:
		obj, ok := v.(map[string]any)
		if !ok {
			return typeError(path, "object", v)
		}
		m := reflect.MakeMapWithSize(dst.Type(), len(obj))
		for k, ev := range obj {
			e := reflect.New(dst.Type().Elem()).Elem()
			if err := assign(e, ev, join(path, k)); err != nil {
				return err
			}
			m.SetMapIndex(reflect.ValueOf(k), e)
		}
		dst.Set(m)
	case reflect.String:
		s, ok := v.(string)
		if !ok {
			return typeError(path, "string", v)
		}
		dst.SetString(s)
	case reflect.Bool:
		b, ok := v.(bool)
		if !ok {
			return typeError(path, "boolean", v)
		}
		dst.SetBool(b)
	case reflect.Int, reflect.Int64, reflect.Int32:
		n, ok := v.(json.Number)
		if !ok {
			return typeError(path, "integer", v)
		}
		i, err := strconv.ParseInt(n.String(), 10, dst.Type().Bits())
		if err != nil {
			if errors.Is(err, strconv.ErrRange) {
				return fmt.Errorf("%s: integer %s out of range", pathOr(path), n)
			}
			return fmt.Errorf("%s: expected integer, got number %s", pathOr(path), n)
		}
		dst.SetInt(i)
	case reflect.Interface:
		dst.Set(reflect.ValueOf(v))
	default:
		return fmt.Errorf("%s: cannot decode into %s", pathOr(path), dst.Type())
	}
	return nil
}

func typeError(path, want string, got any) error {
	return fmt.Errorf("%s: expected %s, got %s", pathOr(path), want, jsonType(got))
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

func join(path, name string) string {
	if path == "" {
		return name
	}
	return path + "." + name
}

func pathOr(path string) string {
	if path == "" {
		return "report"
	}
	return path
}
