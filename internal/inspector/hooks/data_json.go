package hooks

import (
	"encoding/json"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/ferrometal/ferro/internal/lldp"
)

// MarshalMap returns json.Marshal(d.Map()), byte for byte, in a fraction
// of the time: the processed data of a 40-NIC report is some 80 kB of
// generic values, which encoding/json walks by reflection. The interfaces'
// lldp_processed are written from the lldp.Processed directly, without
// building their generic form.
//
// The ramdisk's logs are left out, as ironic-inspector leaves them out of
// what it stores (they go to [processing]ramdisk_logs_dir).
func (d *Data) MarshalMap() ([]byte, error) {
	m := d.mapWith(func(p *lldp.Processed) any { return p })
	delete(m, "logs") // m is a copy
	return appendJSON(make([]byte, 0, 64<<10), m)
}

// appendJSON appends v as json.Marshal encodes it. It writes the values
// JSON decoding produces itself and hands anything else, and any string or
// number that needs more than copying, to json.Marshal.
func appendJSON(b []byte, v any) ([]byte, error) {
	switch v := v.(type) {
	case nil:
		return append(b, "null"...), nil
	case bool:
		return strconv.AppendBool(b, v), nil
	case string:
		return appendJSONString(b, v)
	case json.Number:
		if isPlainInteger(string(v)) {
			return append(b, v...), nil
		}
	case map[string]any:
		if v == nil {
			return append(b, "null"...), nil
		}
		keys := make([]string, 0, len(v))
		for k := range v {
			keys = append(keys, k)
		}
		slices.Sort(keys) // as encoding/json: by strings.Compare
		b = append(b, '{')
		var err error
		for i, k := range keys {
			if i > 0 {
				b = append(b, ',')
			}
			if b, err = appendJSONString(b, k); err != nil {
				return nil, err
			}
			b = append(b, ':')
			if b, err = appendJSON(b, v[k]); err != nil {
				return nil, err
			}
		}
		return append(b, '}'), nil
	case *lldp.Processed:
		if v == nil {
			return append(b, "null"...), nil
		}
		start := len(b)
		if b, ok := appendProcessed(b, v); ok {
			return b, nil
		}
		return appendJSON(b[:start], lldpProcessedValue(v))
	case []any:
		if v == nil {
			return append(b, "null"...), nil
		}
		b = append(b, '[')
		var err error
		for i, e := range v {
			if i > 0 {
				b = append(b, ',')
			}
			if b, err = appendJSON(b, e); err != nil {
				return nil, err
			}
		}
		return append(b, ']'), nil
	}
	enc, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	return append(b, enc...), nil
}

// appendJSONString appends s quoted; a string with anything encoding/json
// escapes is left to json.Marshal.
func appendJSONString(b []byte, s string) ([]byte, error) {
	if isPlainString(s) {
		return appendPlainString(b, s), nil
	}
	enc, err := json.Marshal(s)
	if err != nil {
		return nil, err
	}
	return append(b, enc...), nil
}

// isPlainString reports whether encoding/json writes s as it is, between
// quotes: ASCII without quotes, backslashes, control or HTML characters.
func isPlainString(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c >= utf8.RuneSelf || c == '"' || c == '\\' || c == '<' || c == '>' || c == '&' {
			return false
		}
	}
	return true
}

func appendPlainString(b []byte, s string) []byte {
	b = append(b, '"')
	b = append(b, s...)
	return append(b, '"')
}

// isPlainInteger reports whether s is -?(0|[1-9][0-9]*), a number
// encoding/json writes as it is.
func isPlainInteger(s string) bool {
	s = strings.TrimPrefix(s, "-")
	if s == "" || (s[0] == '0' && len(s) > 1) {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// appendProcessed appends p as json.Marshal(lldpProcessedValue(p)) does:
// its fields that are not nil, by JSON name. ok is false when a field is
// not plainly encoded (see appendPlain); b then holds a partial value.
func appendProcessed(b []byte, p *lldp.Processed) (_ []byte, ok bool) {
	v := reflect.ValueOf(p).Elem()
	b = append(b, '{')
	first := true
	for _, f := range processedFieldsByName() {
		fv := v.Field(f.index)
		if f.name == "" || fv.IsNil() {
			continue
		}
		if !isPlainString(f.name) {
			return b, false
		}
		if !first {
			b = append(b, ',')
		}
		first = false
		b = appendPlainString(b, f.name)
		b = append(b, ':')
		if b, ok = appendPlain(b, fv); !ok {
			return b, false
		}
	}
	return append(b, '}'), true
}

// processedFieldsByName are lldp.Processed's fields in the order of their
// JSON names, the order encoding/json writes a map's keys in.
var processedFieldsByName = sync.OnceValue(func() []plainField {
	names := processedFields()
	fields := make([]plainField, len(names))
	for i, name := range names {
		fields[i] = plainField{index: i, name: name}
	}
	slices.SortStableFunc(fields, func(a, b plainField) int { return strings.Compare(a.name, b.name) })
	return fields
})

// plainField is a struct field and its JSON name.
type plainField struct {
	index int
	name  string
}

// appendPlain appends v as json.Marshal(plainValue(v)) writes it, for the
// values plainValue converts; ok is false for the others, and for strings
// that are not valid UTF-8 or need escaping.
func appendPlain(b []byte, v reflect.Value) (_ []byte, ok bool) {
	switch v.Kind() {
	case reflect.Pointer:
		if v.IsNil() {
			return append(b, "null"...), true
		}
		return appendPlain(b, v.Elem())
	case reflect.String:
		s := v.String()
		if !isPlainString(s) {
			return b, false
		}
		return appendPlainString(b, s), true
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return strconv.AppendInt(b, v.Int(), 10), true
	case reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uint:
		return strconv.AppendUint(b, v.Uint(), 10), true
	case reflect.Bool:
		return strconv.AppendBool(b, v.Bool()), true
	case reflect.Slice:
		if v.Type().Elem().Kind() == reflect.Uint8 {
			return b, false
		}
		if v.IsNil() {
			return append(b, "null"...), true
		}
		b = append(b, '[')
		for i := range v.Len() {
			if i > 0 {
				b = append(b, ',')
			}
			if b, ok = appendPlain(b, v.Index(i)); !ok {
				return b, false
			}
		}
		return append(b, ']'), true
	case reflect.Struct:
		fields, ok := plainStructFields(v.Type())
		if !ok {
			return b, false
		}
		b = append(b, '{')
		for i, f := range fields {
			if i > 0 {
				b = append(b, ',')
			}
			b = appendPlainString(b, f.name)
			b = append(b, ':')
			if b, ok = appendPlain(b, v.Field(f.index)); !ok {
				return b, false
			}
		}
		return append(b, '}'), true
	}
	return b, false
}

var plainStructs sync.Map // reflect.Type → []plainField, or nil when not plain

// plainStructFields returns the fields of a struct that plainValue
// converts, by JSON name; ok is false for one it does not.
func plainStructFields(t reflect.Type) ([]plainField, bool) {
	if f, ok := plainStructs.Load(t); ok {
		fields := f.([]plainField)
		return fields, fields != nil
	}
	var fields []plainField
	plain := !t.Implements(marshalerType) && !reflect.PointerTo(t).Implements(marshalerType)
	for i := 0; plain && i < t.NumField(); i++ {
		sf := t.Field(i)
		tag := sf.Tag.Get("json")
		switch {
		case !sf.IsExported() || sf.Anonymous || strings.Contains(tag, ",") || !isPlainString(tag):
			plain = false
		case tag == "-":
		default:
			name := tag
			if name == "" {
				name = sf.Name
			}
			if slices.ContainsFunc(fields, func(f plainField) bool { return f.name == name }) {
				plain = false
			}
			fields = append(fields, plainField{index: i, name: name})
		}
	}
	if !plain {
		fields = nil
	} else {
		slices.SortFunc(fields, func(a, b plainField) int { return strings.Compare(a.name, b.name) })
		if fields == nil {
			fields = []plainField{} // plain, with no fields
		}
	}
	plainStructs.Store(t, fields)
	return fields, plain
}
