package inspection

import (
	"encoding/json"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Marshal returns json.Marshal(v), byte for byte, for the generic values
// JSON decoding gives (what plugin_data and the processed data are made
// of), in a fraction of the time: a 40-NIC report's processed data is some
// 100 kB of them, which encoding/json walks by reflection, and encoding it
// was half of processing the report (BenchmarkReport_EndToEnd in
// internal/inventory measures both). Any other value, and any string or
// number that needs more than copying, is json.Marshal's.
func Marshal(v any) ([]byte, error) {
	return appendJSON(make([]byte, 0, 64<<10), v)
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
