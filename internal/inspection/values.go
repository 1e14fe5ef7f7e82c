package inspection

import (
	"bytes"
	"encoding/json"
	"reflect"
	"strconv"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/ferrometal/ferro/internal/lldp"
)

// jsonValue converts v to generic JSON values, numbers as json.Number.
func jsonValue(v any) any {
	b, err := json.Marshal(v)
	if err != nil {
		return nil
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var out any
	if dec.Decode(&out) != nil {
		return nil
	}
	return out
}

// lldpProcessedValue is jsonValue(p) built from p's fields, without
// encoding and decoding it: a 40-NIC report has 40 of them. Like
// lldp.Processed.MarshalJSON it writes the fields that are not nil, under
// their JSON names; a field of a type plainValue does not know goes
// through toJSONValue.
func lldpProcessedValue(p *lldp.Processed) map[string]any {
	v := reflect.ValueOf(p).Elem()
	fields := processedFields()
	out := make(map[string]any, len(fields))
	for i, name := range fields {
		f := v.Field(i)
		if name == "" || f.IsNil() {
			continue
		}
		fv, ok := plainValue(f)
		if !ok {
			fv = jsonValue(f.Interface())
		}
		out[name] = fv
	}
	return out
}

// processedFields are the JSON names of lldp.Processed's fields by index.
var processedFields = sync.OnceValue(func() []string {
	t := reflect.TypeFor[lldp.Processed]()
	names := make([]string, t.NumField())
	for i := range t.NumField() {
		names[i], _, _ = strings.Cut(t.Field(i).Tag.Get("json"), ",")
	}
	return names
})

// plainValue converts v to what toJSONValue would return, for the types
// whose JSON form is plain: strings (valid UTF-8), integers, booleans,
// pointers to and slices of those, and structs of those with plain json
// tags. ok is false for anything else.
func plainValue(v reflect.Value) (_ any, ok bool) {
	switch v.Kind() {
	case reflect.Pointer:
		if v.IsNil() {
			return nil, true
		}
		return plainValue(v.Elem())
	case reflect.String:
		s := v.String()
		if !utf8.ValidString(s) {
			return nil, false // encoding/json would replace the bad bytes
		}
		return s, true
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return json.Number(strconv.FormatInt(v.Int(), 10)), true
	case reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uint:
		return json.Number(strconv.FormatUint(v.Uint(), 10)), true
	case reflect.Bool:
		return v.Bool(), true
	case reflect.Slice:
		if v.Type().Elem().Kind() == reflect.Uint8 {
			return nil, false // base64
		}
		if v.IsNil() {
			return nil, true
		}
		out := make([]any, v.Len())
		for i := range out {
			e, ok := plainValue(v.Index(i))
			if !ok {
				return nil, false
			}
			out[i] = e
		}
		return out, true
	case reflect.Struct:
		t := v.Type()
		if t.Implements(marshalerType) || reflect.PointerTo(t).Implements(marshalerType) {
			return nil, false
		}
		out := make(map[string]any, t.NumField())
		for i := range t.NumField() {
			sf := t.Field(i)
			if !sf.IsExported() || sf.Anonymous {
				return nil, false
			}
			tag := sf.Tag.Get("json")
			if tag == "-" {
				continue
			}
			if strings.Contains(tag, ",") {
				return nil, false // omitempty, string: encoding/json's rules
			}
			name := tag
			if name == "" {
				name = sf.Name
			}
			if _, dup := out[name]; dup {
				return nil, false
			}
			e, ok := plainValue(v.Field(i))
			if !ok {
				return nil, false
			}
			out[name] = e
		}
		return out, true
	}
	return nil, false
}

var marshalerType = reflect.TypeFor[json.Marshaler]()
