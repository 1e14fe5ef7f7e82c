// Package pyjson gives JSON values the few Python semantics that
// ironic-inspector's hooks and rules rely on: str(), repr(), int(),
// float(), truthiness, == and <. Reproducing them keeps rules and
// processed data identical to upstream's.
//
// Values are what encoding/json produces (nil, bool, string, []any,
// map[string]any, json.Number or float64) plus Go ints. A json.Number
// written without a fraction or exponent is a Python int, any other number
// a float.
package pyjson

import (
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
)

// number classifies v: ok is false for non-numbers; bools are numbers too,
// as in Python.
func number(v any) (i int64, f float64, isInt, ok bool) {
	switch n := v.(type) {
	case bool:
		if n {
			return 1, 1, true, true
		}
		return 0, 0, true, true
	case int:
		return int64(n), float64(n), true, true
	case int64:
		return n, float64(n), true, true
	case float64:
		return 0, n, false, true
	case json.Number:
		if i, err := strconv.ParseInt(n.String(), 10, 64); err == nil {
			return i, float64(i), true, true
		}
		if isIntLiteral(n.String()) { // too big for int64
			f, _ := strconv.ParseFloat(n.String(), 64)
			return 0, f, false, true
		}
		f, err := strconv.ParseFloat(n.String(), 64)
		return 0, f, false, err == nil || math.IsInf(f, 0)
	}
	return 0, 0, false, false
}

func isIntLiteral(s string) bool {
	return !strings.ContainsAny(s, ".eE")
}

// IsInt reports whether v is a Python int (bools included, as
// isinstance(True, int) holds).
func IsInt(v any) bool {
	_, _, isInt, ok := number(v)
	return ok && isInt
}

// IsFloat reports whether v is a Python float.
func IsFloat(v any) bool {
	_, _, isInt, ok := number(v)
	return ok && !isInt
}

// Int is Python's int(v): it truncates floats, parses decimal strings
// (surrounding spaces, a sign and digit-separating underscores allowed) and
// refuses everything else.
func Int(v any) (int64, error) {
	if s, ok := v.(string); ok {
		t := strings.TrimSpace(s)
		if t == "" || strings.HasPrefix(t, "_") || strings.HasSuffix(t, "_") || strings.Contains(t, "__") {
			return 0, fmt.Errorf("invalid literal for int() with base 10: %s", Repr(s))
		}
		i, err := strconv.ParseInt(strings.ReplaceAll(t, "_", ""), 10, 64)
		if err != nil {
			return 0, fmt.Errorf("invalid literal for int() with base 10: %s", Repr(s))
		}
		return i, nil
	}
	i, f, isInt, ok := number(v)
	switch {
	case !ok:
		return 0, fmt.Errorf("int() argument must be a string or a number, not %s", typeName(v))
	case isInt:
		return i, nil
	case math.IsNaN(f) || math.IsInf(f, 0) || math.Abs(f) >= 1<<63:
		return 0, fmt.Errorf("cannot convert float %s to integer", Str(v))
	}
	return int64(f), nil
}

// Float is Python's float(v).
func Float(v any) (float64, error) {
	if s, ok := v.(string); ok {
		t := strings.ToLower(strings.TrimSpace(s))
		switch strings.TrimLeft(t, "+-") {
		case "inf", "infinity", "nan":
			f, _ := strconv.ParseFloat(t, 64)
			return f, nil
		}
		f, err := strconv.ParseFloat(strings.ReplaceAll(t, "_", ""), 64)
		if err != nil || strings.Contains(t, "0x") {
			return 0, fmt.Errorf("could not convert string to float: %s", Repr(s))
		}
		return f, nil
	}
	_, f, _, ok := number(v)
	if !ok {
		return 0, fmt.Errorf("float() argument must be a string or a number, not %s", typeName(v))
	}
	return f, nil
}

// Truthy is Python's bool(v).
func Truthy(v any) bool {
	switch x := v.(type) {
	case nil:
		return false
	case string:
		return x != ""
	case []any:
		return len(x) > 0
	case map[string]any:
		return len(x) > 0
	}
	if _, f, _, ok := number(v); ok {
		return f != 0
	}
	return true
}

// Str is Python's str(v).
func Str(v any) string {
	if s, ok := v.(string); ok {
		return s
	}
	return Repr(v)
}

// Repr is Python's repr(v). Object keys come out sorted, since Go maps do
// not keep the JSON order Python dicts would.
func Repr(v any) string {
	switch x := v.(type) {
	case nil:
		return "None"
	case bool:
		if x {
			return "True"
		}
		return "False"
	case string:
		return reprString(x)
	case []any:
		parts := make([]string, len(x))
		for i, e := range x {
			parts[i] = Repr(e)
		}
		return "[" + strings.Join(parts, ", ") + "]"
	case []string:
		parts := make([]string, len(x))
		for i, e := range x {
			parts[i] = reprString(e)
		}
		return "[" + strings.Join(parts, ", ") + "]"
	case map[string]any:
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		parts := make([]string, len(keys))
		for i, k := range keys {
			parts[i] = reprString(k) + ": " + Repr(x[k])
		}
		return "{" + strings.Join(parts, ", ") + "}"
	}
	if i, f, isInt, ok := number(v); ok {
		if isInt {
			return strconv.FormatInt(i, 10)
		}
		if n, isNum := v.(json.Number); isNum && isIntLiteral(n.String()) {
			return strings.TrimLeft(n.String(), "+") // an int beyond int64
		}
		return reprFloat(f)
	}
	return fmt.Sprint(v)
}

// reprFloat formats like Python's float repr: shortest round-trip digits,
// fixed notation between 1e-4 and 1e16 with at least one decimal.
func reprFloat(f float64) string {
	switch {
	case math.IsNaN(f):
		return "nan"
	case math.IsInf(f, 1):
		return "inf"
	case math.IsInf(f, -1):
		return "-inf"
	}
	if f != 0 && (math.Abs(f) < 1e-4 || math.Abs(f) >= 1e16) {
		return strconv.FormatFloat(f, 'e', -1, 64)
	}
	s := strconv.FormatFloat(f, 'f', -1, 64)
	if !strings.Contains(s, ".") {
		s += ".0"
	}
	return s
}

// reprString quotes like Python: single quotes unless the string holds a
// single quote and no double quote.
func reprString(s string) string {
	quote := byte('\'')
	if strings.Contains(s, "'") && !strings.Contains(s, `"`) {
		quote = '"'
	}
	var b strings.Builder
	b.WriteByte(quote)
	for _, r := range s {
		switch {
		case r == rune(quote) || r == '\\':
			b.WriteByte('\\')
			b.WriteRune(r)
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\r':
			b.WriteString(`\r`)
		case r == '\t':
			b.WriteString(`\t`)
		case r < 0x20 || r == 0x7f:
			fmt.Fprintf(&b, `\x%02x`, r)
		default:
			b.WriteRune(r)
		}
	}
	b.WriteByte(quote)
	return b.String()
}

func typeName(v any) string {
	switch v.(type) {
	case nil:
		return "'NoneType'"
	case string:
		return "'str'"
	case []any, []string:
		return "'list'"
	case map[string]any:
		return "'dict'"
	case bool:
		return "'bool'"
	}
	if IsInt(v) {
		return "'int'"
	}
	if IsFloat(v) {
		return "'float'"
	}
	return fmt.Sprintf("'%T'", v)
}

// Equal is Python's a == b: numbers compare by value whatever their type
// (True == 1), lists and objects element by element.
func Equal(a, b any) bool {
	ai, af, aInt, aNum := number(a)
	bi, bf, bInt, bNum := number(b)
	if aNum || bNum {
		if !aNum || !bNum {
			return false
		}
		if aInt && bInt {
			return ai == bi
		}
		return af == bf
	}
	switch x := a.(type) {
	case nil:
		return b == nil
	case string:
		y, ok := b.(string)
		return ok && x == y
	case []any:
		y, ok := b.([]any)
		return ok && slices.EqualFunc(x, y, Equal)
	case map[string]any:
		y, ok := b.(map[string]any)
		if !ok || len(x) != len(y) {
			return false
		}
		for k, xv := range x {
			yv, ok := y[k]
			if !ok || !Equal(xv, yv) {
				return false
			}
		}
		return true
	}
	return false
}

// Compare orders a and b as Python's < does: numbers by value, strings by
// code point, lists lexicographically. Other pairs are a TypeError in
// Python and an error here.
func Compare(a, b any) (int, error) {
	ai, af, aInt, aNum := number(a)
	bi, bf, bInt, bNum := number(b)
	if aNum && bNum {
		if aInt && bInt {
			return cmpOrdered(ai, bi), nil
		}
		if math.IsNaN(af) || math.IsNaN(bf) {
			return 0, fmt.Errorf("cannot order nan")
		}
		return cmpOrdered(af, bf), nil
	}
	switch x := a.(type) {
	case string:
		if y, ok := b.(string); ok {
			return strings.Compare(x, y), nil
		}
	case []any:
		if y, ok := b.([]any); ok {
			for i := 0; i < len(x) && i < len(y); i++ {
				if Equal(x[i], y[i]) {
					continue
				}
				return Compare(x[i], y[i])
			}
			return cmpOrdered(len(x), len(y)), nil
		}
	}
	return 0, fmt.Errorf("'<' not supported between instances of %s and %s", typeName(a), typeName(b))
}

func cmpOrdered[T int | int64 | float64](a, b T) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}
