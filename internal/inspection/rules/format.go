package rules

import (
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/ferrometal/ferro/internal/pyjson"
)

// Values are interpolated as Ironic does it: a string is a Python format
// string (str.format) over the variables node (an object: {node.driver},
// {node.properties[cpus]}), inventory and plugin_data (dicts:
// {inventory[bmc_address]}) and, in a loop, item. The result is always a
// string. A field that cannot be formatted leaves the whole string as it
// was (Ironic's safe_format logs and returns it), except that a missing
// key in an is-empty condition gives None.

// formatError is why a string could not be formatted; kind is the Python
// exception upstream's str.format raises.
type formatError struct {
	kind string // KeyError, AttributeError, IndexError, TypeError, ValueError
	msg  string
}

func (e *formatError) Error() string { return e.kind + ": " + e.msg }

func ferr(kind, format string, a ...any) error {
	return &formatError{kind: kind, msg: fmt.Sprintf(format, a...)}
}

// vars are the variables of one interpolation.
type vars struct {
	node      map[string]any // the node, as attributes
	inventory map[string]any
	plugin    map[string]any
	item      any
	hasItem   bool
	mask      bool // mask secrets under inventory and plugin_data
	// cache holds formatted fields that read no loop item, keyed by the
	// field and the mask: a rule set reads the same values again and
	// again, and a repr of plugin_data is large. Actions, which may change
	// what the fields read, clear it.
	cache map[fieldKey]string
}

type fieldKey struct {
	field string
	mask  bool
}

// sensitive are the keys whose values masking replaces, at any depth
// (Ironic's SENSITIVE_FIELDS).
var sensitive = map[string]bool{"password": true, "auth_token": true, "bmc_password": true}

const maskValue = "***"

// value is a looked-up value and whether it lies under a masked dict.
type value struct {
	v      any
	masked bool
	object bool // the node: fields are attributes, not keys
}

// formatString is Python's s.format(**vars).
func formatString(s string, vs *vars) (string, error) {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '{' && i+1 < len(s) && s[i+1] == '{':
			b.WriteByte('{')
			i++
		case c == '}' && i+1 < len(s) && s[i+1] == '}':
			b.WriteByte('}')
			i++
		case c == '}':
			return "", ferr("ValueError", "Single '}' encountered in format string")
		case c == '{':
			end := fieldEnd(s, i+1)
			if end < 0 {
				if strings.IndexByte(s[i+1:], '}') < 0 {
					return "", ferr("ValueError", "Single '{' encountered in format string")
				}
				return "", ferr("ValueError", "expected '}' before end of string")
			}
			out, err := replacementField(s[i+1:end], vs)
			if err != nil {
				return "", err
			}
			b.WriteString(out)
			i = end
		default:
			b.WriteByte(c)
		}
	}
	return b.String(), nil
}

// fieldEnd finds the "}" closing a replacement field that starts at from:
// brackets of subscripts and braces of a nested spec do not close it.
func fieldEnd(s string, from int) int {
	brackets, braces := 0, 0
	for i := from; i < len(s); i++ {
		switch s[i] {
		case '[':
			brackets++
		case ']':
			if brackets > 0 {
				brackets--
			}
		case '{':
			if brackets == 0 {
				braces++
			}
		case '}':
			if brackets > 0 {
				continue
			}
			if braces == 0 {
				return i
			}
			braces--
		}
	}
	return -1
}

// replacementField formats one field: name, accessors, !conversion, :spec.
func replacementField(field string, vs *vars) (string, error) {
	cacheable := vs.cache != nil && !strings.HasPrefix(field, "item")
	if cacheable {
		if s, ok := vs.cache[fieldKey{field, vs.mask}]; ok {
			return s, nil
		}
	}
	s, err := formatField(field, vs)
	if err == nil && cacheable {
		vs.cache[fieldKey{field, vs.mask}] = s
	}
	return s, err
}

func formatField(field string, vs *vars) (string, error) {
	name, conv, spec := field, "", ""
	brackets := 0
scan:
	for i := 0; i < len(field); i++ {
		switch field[i] {
		case '[':
			brackets++
		case ']':
			brackets--
		case '!', ':':
			if brackets != 0 {
				continue
			}
			name = field[:i]
			if field[i] == '!' {
				rest := field[i+1:]
				conv, spec, _ = strings.Cut(rest, ":")
				if len(conv) != 1 {
					return "", ferr("ValueError", "expected ':' after conversion specifier")
				}
			} else {
				spec = field[i+1:]
			}
			break scan
		}
	}
	if strings.ContainsAny(spec, "{}") {
		return "", ferr("ValueError", "nested replacement fields in a format spec are not supported")
	}
	v, err := lookup(name, vs)
	if err != nil {
		return "", err
	}
	var s string
	switch conv {
	case "":
		if spec != "" {
			return formatSpec(v, spec)
		}
		s = str(v)
	case "s":
		s = str(v)
	case "r", "a":
		s = repr(v)
	default:
		return "", ferr("ValueError", "Unknown conversion specifier %s", conv)
	}
	if spec != "" {
		return formatSpec(value{v: s}, spec)
	}
	return s, nil
}

// lookup resolves a field name: a variable, then .attribute and [key]
// accessors; a [key] of digits is an integer, as Python's.
func lookup(name string, vs *vars) (value, error) {
	end := strings.IndexAny(name, ".[")
	if end < 0 {
		end = len(name)
	}
	root := name[:end]
	var v value
	switch {
	case root == "" || isDigits(root):
		return value{}, ferr("IndexError", "Replacement index %s out of range for positional args tuple", orZero(root))
	case root == "node" && vs.node != nil:
		v = value{v: vs.node, object: true}
	case root == "inventory":
		v = value{v: vs.inventory, masked: vs.mask}
	case root == "plugin_data":
		v = value{v: vs.plugin, masked: vs.mask}
	case root == "item" && vs.hasItem:
		v = value{v: vs.item}
	default:
		return value{}, ferr("KeyError", "%s", pyjson.Repr(root))
	}
	rest := name[end:]
	for rest != "" {
		switch rest[0] {
		case '.':
			rest = rest[1:]
			n := strings.IndexAny(rest, ".[")
			if n < 0 {
				n = len(rest)
			}
			attr := rest[:n]
			rest = rest[n:]
			if attr == "" {
				return value{}, ferr("ValueError", "Empty attribute in format string")
			}
			var err error
			if v, err = attribute(v, attr); err != nil {
				return value{}, err
			}
		case '[':
			n := strings.IndexByte(rest, ']')
			if n < 0 {
				return value{}, ferr("ValueError", "Missing ']' in format string")
			}
			key := rest[1:n]
			rest = rest[n+1:]
			if key == "" {
				return value{}, ferr("ValueError", "Empty attribute in format string")
			}
			var err error
			if v, err = subscript(v, key); err != nil {
				return value{}, err
			}
		default:
			return value{}, ferr("ValueError", "Only '.' or '[' may follow ']' in format field specifier")
		}
	}
	return v, nil
}

func orZero(s string) string {
	if s == "" {
		return "0"
	}
	return s
}

func attribute(v value, attr string) (value, error) {
	if v.object {
		m := v.v.(map[string]any)
		f, ok := m[attr]
		if !ok {
			return value{}, ferr("AttributeError", "'Node' object has no attribute %s", pyjson.Repr(attr))
		}
		return value{v: f}, nil
	}
	return value{}, ferr("AttributeError", "%s object has no attribute %s", pyjson.Repr(typeName(v.v)), pyjson.Repr(attr))
}

func subscript(v value, key string) (value, error) {
	if v.object {
		return value{}, ferr("TypeError", "'Node' object is not subscriptable")
	}
	if isDigits(key) {
		n, err := strconv.Atoi(key)
		if err != nil {
			return value{}, ferr("IndexError", "index out of range")
		}
		switch x := v.v.(type) {
		case []any:
			if n >= len(x) {
				return value{}, ferr("IndexError", "list index out of range")
			}
			return value{v: x[n], masked: v.masked}, nil
		case string:
			if n >= utf8.RuneCountInString(x) {
				return value{}, ferr("IndexError", "string index out of range")
			}
			return value{v: string([]rune(x)[n])}, nil
		case map[string]any:
			return value{}, ferr("KeyError", "%d", n) // JSON objects have no integer keys
		}
	} else if m, ok := v.v.(map[string]any); ok {
		e, ok := m[key]
		if !ok {
			return value{}, ferr("KeyError", "%s", pyjson.Repr(key))
		}
		if v.masked && sensitive[key] {
			return value{v: maskValue}, nil
		}
		return value{v: e, masked: v.masked}, nil
	}
	if v.v == nil {
		return value{}, ferr("TypeError", "'NoneType' object is not subscriptable")
	}
	return value{}, ferr("TypeError", "%s indices must be integers or slices, not str", typeName(v.v))
}

func typeName(v any) string {
	switch v.(type) {
	case nil:
		return "NoneType"
	case bool:
		return "bool"
	case string:
		return "str"
	case []any:
		return "list"
	case map[string]any:
		return "dict"
	}
	if pyjson.IsInt(v) {
		return "int"
	}
	return "float"
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

// str is Python's str() of a looked-up value, secrets masked.
func str(v value) string {
	if v.object {
		return "<Node " + pyjson.Str(v.v.(map[string]any)["uuid"]) + ">"
	}
	return pyjson.Str(masked(v))
}

func repr(v value) string {
	if v.object {
		return str(v)
	}
	return pyjson.Repr(masked(v))
}

// masked returns v with the sensitive keys of its dicts masked, when it
// lies under a masked variable.
func masked(v value) any {
	if !v.masked {
		return v.v
	}
	return maskDeep(v.v)
}

func maskDeep(v any) any {
	switch x := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			if sensitive[k] {
				out[k] = maskValue
			} else {
				out[k] = maskDeep(e)
			}
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = maskDeep(e)
		}
		return out
	}
	return v
}

// formatSpec is format(v, spec) for the common specs: [[fill]align]
// [sign][0][width][,][.precision][type] for strings, integers and floats.
func formatSpec(v value, spec string) (string, error) {
	var fill rune = ' '
	align := byte(0)
	rs := []rune(spec)
	i := 0
	if len(rs) >= 2 && strings.ContainsRune("<>^=", rs[1]) {
		fill, align, i = rs[0], byte(rs[1]), 2
	} else if len(rs) >= 1 && strings.ContainsRune("<>^=", rs[0]) {
		align, i = byte(rs[0]), 1
	}
	sign := byte('-')
	if i < len(rs) && strings.ContainsRune("+- ", rs[i]) {
		sign = byte(rs[i])
		i++
	}
	if i < len(rs) && rs[i] == '0' {
		if align == 0 {
			fill, align = '0', '='
		}
		i++
	}
	width := 0
	for i < len(rs) && rs[i] >= '0' && rs[i] <= '9' {
		width = width*10 + int(rs[i]-'0')
		i++
	}
	comma := false
	if i < len(rs) && rs[i] == ',' {
		comma = true
		i++
	}
	precision := -1
	if i < len(rs) && rs[i] == '.' {
		i++
		precision = 0
		start := i
		for i < len(rs) && rs[i] >= '0' && rs[i] <= '9' {
			precision = precision*10 + int(rs[i]-'0')
			i++
		}
		if i == start {
			return "", ferr("ValueError", "Format specifier missing precision")
		}
	}
	typ := byte(0)
	if i < len(rs) {
		typ = byte(rs[i])
		i++
	}
	if i != len(rs) {
		return "", ferr("ValueError", "Invalid format specifier %s", pyjson.Repr(spec))
	}

	var body, signStr string
	numeric := false
	switch x := v.v.(type) {
	case string:
		if typ != 0 && typ != 's' || comma || sign != '-' {
			return "", ferr("ValueError", "Unknown format code '%c' for object of type 'str'", typ)
		}
		body = x
		if precision >= 0 && utf8.RuneCountInString(body) > precision {
			body = string([]rune(body)[:precision])
		}
	case bool, nil, []any, map[string]any:
		return "", ferr("TypeError", "unsupported format string passed to %s.__format__", typeName(x))
	default:
		numeric = true
		if pyjson.IsInt(x) && strings.IndexByte("dxXob\x00", typ) >= 0 && precision < 0 {
			n, _ := pyjson.Int(x)
			if n < 0 {
				signStr, n = "-", -n
			}
			switch typ {
			case 'x':
				body = strconv.FormatInt(n, 16)
			case 'X':
				body = strings.ToUpper(strconv.FormatInt(n, 16))
			case 'o':
				body = strconv.FormatInt(n, 8)
			case 'b':
				body = strconv.FormatInt(n, 2)
			default:
				body = strconv.FormatInt(n, 10)
				if comma {
					body = groupThousands(body)
				}
			}
		} else if strings.IndexByte("fFeEgG%\x00", typ) >= 0 {
			f, err := pyjson.Float(x)
			if err != nil {
				return "", ferr("ValueError", "%v", err)
			}
			if f < 0 {
				signStr, f = "-", -f
			}
			if precision < 0 {
				precision = 6
			}
			switch typ {
			case 0:
				if pyjson.IsInt(x) {
					return "", ferr("ValueError", "Unsupported format specifier for int")
				}
				body = strconv.FormatFloat(f, 'g', -1, 64)
			case '%':
				body = strconv.FormatFloat(f*100, 'f', precision, 64) + "%"
			case 'F':
				body = strconv.FormatFloat(f, 'f', precision, 64)
			default:
				body = strconv.FormatFloat(f, typ, precision, 64)
			}
		} else {
			return "", ferr("ValueError", "Unknown format code '%c' for object of type %s", typ, pyjson.Repr(typeName(x)))
		}
		if signStr == "" && sign != '-' {
			signStr = string(sign)
		}
	}
	n := utf8.RuneCountInString(signStr + body)
	if align == 0 {
		align = '<'
		if numeric {
			align = '>'
		}
	}
	pad := ""
	if width > n {
		pad = strings.Repeat(string(fill), width-n)
	}
	switch align {
	case '<':
		return signStr + body + pad, nil
	case '>':
		return pad + signStr + body, nil
	case '=':
		if !numeric {
			return "", ferr("ValueError", "'=' alignment not allowed in string format specifier")
		}
		return signStr + pad + body, nil
	default:
		half := len([]rune(pad)) / 2
		pr := []rune(pad)
		return string(pr[:half]) + signStr + body + string(pr[half:]), nil
	}
}

func groupThousands(s string) string {
	var b strings.Builder
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	return b.String()
}
