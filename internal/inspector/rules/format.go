package rules

import (
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/ferrometal/ferro/internal/pyjson"
)

// formatValue applies upstream's parameter formatting: strings go through
// Python's str.format with the introspection data as "data" (ferro also
// offers the node as "node"); objects and lists are formatted member by
// member, keys included; other values are kept.
func formatValue(v any, vars map[string]any) (any, error) {
	switch x := v.(type) {
	case string:
		return formatString(x, vars)
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			fk, err := formatString(k, vars)
			if err != nil {
				return nil, err
			}
			fe, err := formatValue(e, vars)
			if err != nil {
				return nil, err
			}
			out[fk] = fe
		}
		return out, nil
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			fe, err := formatValue(e, vars)
			if err != nil {
				return nil, err
			}
			out[i] = fe
		}
		return out, nil
	}
	return v, nil
}

// formatString is str.format for replacement fields made of a name and
// [key] subscripts ("{data[inventory][cpu][count]}"), with the !s and !r
// conversions; "{{" and "}}" are literal braces.
func formatString(s string, vars map[string]any) (string, error) {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '{' && strings.HasPrefix(s[i:], "{{"):
			b.WriteByte('{')
			i++
		case c == '}' && strings.HasPrefix(s[i:], "}}"):
			b.WriteByte('}')
			i++
		case c == '}':
			return "", fmt.Errorf("invalid value %q: Single '}' encountered in format string", s)
		case c == '{':
			end := closingBrace(s, i+1)
			if end < 0 {
				return "", fmt.Errorf("invalid value %q: expected '}' before end of string", s)
			}
			out, err := replacementField(s[i+1:end], vars)
			if err != nil {
				return "", fmt.Errorf("Invalid formatting variable key provided in value %s: %w", s, err)
			}
			b.WriteString(out)
			i = end
		default:
			b.WriteByte(c)
		}
	}
	return b.String(), nil
}

// closingBrace finds the "}" ending a replacement field, skipping
// subscripts.
func closingBrace(s string, from int) int {
	depth := 0
	for i := from; i < len(s); i++ {
		switch s[i] {
		case '[':
			depth++
		case ']':
			if depth > 0 {
				depth--
			}
		case '}':
			if depth == 0 {
				return i
			}
		}
	}
	return -1
}

func replacementField(field string, vars map[string]any) (string, error) {
	// split off !conversion and :spec, outside subscripts
	name, conv, spec := field, "", ""
	depth := 0
	for i := 0; i < len(field); i++ {
		switch field[i] {
		case '[':
			depth++
		case ']':
			depth--
		case '!', ':':
			if depth != 0 {
				continue
			}
			name = field[:i]
			rest := field[i:]
			if rest[0] == '!' {
				conv, spec, _ = strings.Cut(rest[1:], ":")
			} else {
				spec = rest[1:]
			}
			i = len(field)
		}
	}
	if spec != "" {
		return "", fmt.Errorf("format spec %q is not supported", spec)
	}

	end := strings.IndexAny(name, ".[")
	if end < 0 {
		end = len(name)
	}
	root := name[:end]
	v, ok := vars[root]
	if !ok {
		if root == "" || isDigits(root) {
			return "", errors.New("positional fields are not supported")
		}
		return "", fmt.Errorf("%s", pyjson.Repr(root))
	}
	for rest := name[end:]; rest != ""; {
		if rest[0] == '.' {
			return "", fmt.Errorf("attribute access %q is not supported", rest)
		}
		close := strings.IndexByte(rest, ']')
		if close < 0 {
			return "", errors.New("missing ']' in format string")
		}
		key := rest[1:close]
		rest = rest[close+1:]
		var err error
		if v, err = subscript(v, key); err != nil {
			return "", err
		}
	}
	switch conv {
	case "", "s":
		return pyjson.Str(v), nil
	case "r", "a":
		return pyjson.Repr(v), nil
	}
	return "", fmt.Errorf("unknown conversion specifier %s", conv)
}

// subscript is Python's v[key] where an all-digit key is an integer.
func subscript(v any, key string) (any, error) {
	if isDigits(key) {
		n, _ := strconv.Atoi(key)
		switch x := v.(type) {
		case []any:
			if n >= len(x) {
				return nil, errors.New("list index out of range")
			}
			return x[n], nil
		case map[string]any:
			return nil, fmt.Errorf("%d", n) // a dict has no integer keys
		}
	} else if m, ok := v.(map[string]any); ok {
		e, ok := m[key]
		if !ok {
			return nil, fmt.Errorf("%s", pyjson.Repr(key))
		}
		return e, nil
	}
	return nil, fmt.Errorf("%s is not subscriptable by %s", pyjson.Repr(v), pyjson.Repr(key))
}

func isDigits(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}
