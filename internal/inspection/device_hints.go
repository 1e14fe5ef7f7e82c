package inspection

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/ferrometal/ferro/internal/pyjson"
)

// Root device hints, as Ironic matches them (ironic-lib's
// parse_root_device_hints and find_devices_by_hints, whose copy
// ironic-inspector carries, over oslo.utils' specs_matcher).

type hintKind int

const (
	hintString hintKind = iota
	hintInt
	hintBool
)

// validHints maps each hint to its type.
var validHints = map[string]hintKind{
	"size": hintInt, "model": hintString, "wwn": hintString, "serial": hintString,
	"vendor": hintString, "wwn_with_extension": hintString, "wwn_vendor_extension": hintString,
	"name": hintString, "rotational": hintBool, "hctl": hintString, "by_path": hintString,
}

// gib is units.Gi: root device hints give sizes in GiB.
const gib = 1 << 30

// hint is one parsed hint: a specs_matcher expression, or a boolean.
type hint struct {
	name string
	kind hintKind
	spec string
	b    bool
}

// parseHints validates hints and turns them into specs_matcher
// expressions, adding the implied equality operator ("s==" for strings,
// "==" for the size). Hints are taken in name order.
func parseHints(hints map[string]any) ([]hint, error) {
	if len(hints) == 0 {
		return nil, errors.New("no root device hints")
	}
	names := make([]string, 0, len(hints))
	var invalid []string
	for name := range hints {
		names = append(names, name)
		if _, ok := validHints[name]; !ok {
			invalid = append(invalid, name)
		}
	}
	slices.Sort(names)
	if len(invalid) > 0 {
		valid := make([]string, 0, len(validHints))
		for name := range validHints {
			valid = append(valid, name)
		}
		slices.Sort(invalid)
		slices.Sort(valid)
		return nil, fmt.Errorf("The hints %q are invalid. Valid hints are: %q", strings.Join(invalid, ", "), strings.Join(valid, ", "))
	}

	var out []hint
	for _, name := range names {
		expr := hints[name]
		h := hint{name: name, kind: validHints[name]}
		switch h.kind {
		case hintString:
			s, ok := expr.(string)
			if !ok {
				return nil, fmt.Errorf("Root device hint %q is not a string value. Hint expression: %s", name, pyjson.Str(expr))
			}
			norm, err := normalizeHintExpression(s, name)
			if err != nil {
				return nil, err
			}
			h.spec = withOperator(norm, "s==")
		case hintInt:
			_, values, err := hintOperatorAndValues(pyjson.Str(expr), name)
			if err != nil {
				return nil, err
			}
			for _, v := range values {
				i, err := pyjson.Int(v)
				if err != nil {
					return nil, fmt.Errorf("Root device hint %q is not an integer value. Current value: %s", name, pyjson.Str(expr))
				}
				if i <= 0 {
					return nil, fmt.Errorf("Root device hint %q should be a positive integer. Current value: %s", name, pyjson.Str(expr))
				}
			}
			h.spec = withOperator(pyjson.Str(expr), "==")
		case hintBool:
			b, err := boolFromString(expr)
			if err != nil {
				return nil, fmt.Errorf("Root device hint %q is not a Boolean value. Current value: %s", name, pyjson.Str(expr))
			}
			h.b = b
		}
		out = append(out, h)
	}
	return out, nil
}

// withOperator prefixes op to an expression that has no operator.
func withOperator(expr, op string) string {
	if tokens, err := parseSpec(expr); err == nil && len(tokens) > 1 {
		return expr
	}
	return op + " " + expr
}

// hintOperatorAndValues splits a hint expression into its operator ("" if
// none) and its values, lower case.
func hintOperatorAndValues(expr, name string) (string, []string, error) {
	expr = strings.ToLower(strings.TrimSpace(expr))
	if expr == "" {
		return "", nil, fmt.Errorf("Root device hint %q expression is empty", name)
	}
	tokens, err := parseSpec(expr)
	if err != nil {
		return "", nil, fmt.Errorf("Root device hint %q expression %q: %w", name, expr, err)
	}
	if len(tokens) <= 1 {
		return "", []string{expr}, nil
	}
	op := tokens[0]
	var values []string
	for _, v := range strings.Split(expr, op) {
		if v != "" {
			values = append(values, strings.TrimSpace(v))
		}
	}
	return op, values, nil
}

// normalizeHintExpression URL-quotes the values of an expression, so that
// spaces and other specials compare as single tokens: "<or> foo bar <or>
// bar" becomes "<or> foo%20bar <or> bar".
func normalizeHintExpression(expr, name string) (string, error) {
	op, values, err := hintOperatorAndValues(expr, name)
	if err != nil {
		return "", err
	}
	parts := make([]string, len(values))
	for i, v := range values {
		parts[i] = " " + quote(v) + " "
	}
	return strings.TrimSpace(op + strings.Join(parts, op)), nil
}

// quote is Python's urllib.parse.quote with its default safe "/".
func quote(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || strings.IndexByte("_.-~/", c) >= 0 {
			b.WriteByte(c)
		} else {
			fmt.Fprintf(&b, "%%%02X", c)
		}
	}
	return b.String()
}

// boolFromString is oslo's strutils.bool_from_string(v, strict=True).
func boolFromString(v any) (bool, error) {
	if b, ok := v.(bool); ok {
		return b, nil
	}
	switch strings.ToLower(strings.TrimSpace(pyjson.Str(v))) {
	case "1", "t", "true", "on", "y", "yes":
		return true, nil
	case "0", "f", "false", "off", "n", "no":
		return false, nil
	}
	return false, fmt.Errorf("unrecognized value %s", pyjson.Repr(v))
}

// errSkipDevice marks a device whose attribute cannot be compared: it does
// not match, and the search goes on.
var errSkipDevice = errors.New("device skipped")

// deviceMatches reports whether a device satisfies every hint.
func deviceMatches(dev map[string]any, hints []hint) (bool, error) {
	for _, h := range hints {
		value := dev[h.name]
		var ok bool
		var err error
		switch {
		case h.kind == hintBool:
			b, berr := boolFromString(value)
			if berr != nil {
				return false, errSkipDevice
			}
			ok = b == h.b
		case h.name == "size":
			_, isString := value.(string)
			f, ferr := pyjson.Float(value)
			if ferr != nil || isString {
				return false, fmt.Errorf("device %s: size %s is not a number", pyjson.Str(dev["name"]), pyjson.Repr(value))
			}
			ok, err = specMatch(f/gib, h.spec)
		default:
			norm, nerr := normalizeHintExpression(pyjson.Str(value), h.name)
			if nerr != nil {
				return false, errSkipDevice // empty attribute
			}
			ok, err = specMatch(norm, h.spec)
		}
		if err != nil {
			return false, err
		}
		if !ok {
			return false, nil
		}
	}
	return true, nil
}

// findDevices returns the indexes of the devices matching hints; with
// first, it stops at the first one, as match_root_device_hints does (so
// that a later device cannot fail the search).
func findDevices(devices []map[string]any, hints map[string]any, first bool) ([]int, error) {
	parsed, err := parseHints(hints)
	if err != nil {
		return nil, err
	}
	var out []int
	for i, dev := range devices {
		ok, err := deviceMatches(dev, parsed)
		if errors.Is(err, errSkipDevice) {
			continue
		}
		if err != nil {
			return nil, err
		}
		if ok {
			out = append(out, i)
			if first {
				break
			}
		}
	}
	return out, nil
}

// The specs_matcher grammar, as pyparsing runs it: operators are matched as
// prefixes, whitespace is skipped before every element, and an atom is a run
// of non-space characters that does not start with an operator.
var (
	unaryOps = []string{"==", "=", "!=", "<in>", ">=", "<=", ">", "<", "s==", "s!=", "s<=", "s<", "s>=", "s>"}
	allOps   = append(slices.Clone(unaryOps), "<all-in>", "<or>", "<range-in>")
)

type specScanner struct {
	s   string
	pos int
}

func (sc *specScanner) skipSpace() {
	for sc.pos < len(sc.s) && strings.IndexByte(" \t\n\r", sc.s[sc.pos]) >= 0 {
		sc.pos++
	}
}

func (sc *specScanner) literal(lit string) bool {
	start := sc.pos
	sc.skipSpace()
	if strings.HasPrefix(sc.s[sc.pos:], lit) {
		sc.pos += len(lit)
		return true
	}
	sc.pos = start
	return false
}

func (sc *specScanner) atom() (string, bool) {
	start := sc.pos
	sc.skipSpace()
	rest := sc.s[sc.pos:]
	for _, op := range allOps {
		if strings.HasPrefix(rest, op) {
			sc.pos = start
			return "", false
		}
	}
	end := strings.IndexAny(rest, " \t\n\r\f\v")
	if end < 0 {
		end = len(rest)
	}
	if end == 0 {
		sc.pos = start
		return "", false
	}
	sc.pos += end
	return rest[:end], true
}

// parseSpec tokenises a specs_matcher expression: [op, values…], or
// [value] without an operator. Trailing text is ignored, as parseString
// does.
func parseSpec(s string) ([]string, error) {
	// <or> a <or> b …
	sc := &specScanner{s: s}
	var ors []string
	for {
		save := sc.pos
		if !sc.literal("<or>") {
			break
		}
		a, ok := sc.atom()
		if !ok {
			sc.pos = save
			break
		}
		ors = append(ors, a)
	}
	if len(ors) > 0 {
		return append([]string{"<or>"}, ors...), nil
	}
	// <all-in> a b …
	sc = &specScanner{s: s}
	if sc.literal("<all-in>") {
		tokens := []string{"<all-in>"}
		for {
			a, ok := sc.atom()
			if !ok {
				break
			}
			tokens = append(tokens, a)
		}
		if len(tokens) > 1 {
			return tokens, nil
		}
	}
	// <range-in> ( a b ]
	sc = &specScanner{s: s}
	if sc.literal("<range-in>") {
		tokens := []string{"<range-in>"}
		for range 4 {
			a, ok := sc.atom()
			if !ok {
				break
			}
			tokens = append(tokens, a)
		}
		if len(tokens) == 5 {
			return tokens, nil
		}
	}
	// op value: the first operator that is a prefix, then an atom
	sc = &specScanner{s: s}
	for _, op := range unaryOps {
		if sc.literal(op) {
			if a, ok := sc.atom(); ok {
				return []string{op, a}, nil
			}
			break
		}
	}
	sc = &specScanner{s: s}
	if a, ok := sc.atom(); ok {
		return []string{a}, nil
	}
	return nil, fmt.Errorf("cannot parse expression %q", s)
}

// specMatch is specs_matcher.match: does value (a string, or a float for
// the size) satisfy spec?
func specMatch(value any, spec string) (bool, error) {
	tokens, err := parseSpec(spec)
	if err != nil {
		tokens = []string{spec}
	}
	if len(tokens) == 1 {
		s, ok := value.(string)
		return ok && s == tokens[0], nil
	}
	op, args := tokens[0], tokens[1:]
	xs, isString := value.(string)
	switch op {
	case "=", "!=", "<=", "<", "==", ">=", ">":
		x, err := pyjson.Float(value)
		if err != nil {
			return false, err
		}
		y, err := pyjson.Float(args[0])
		if err != nil {
			return false, err
		}
		switch op {
		case "=", ">=":
			return x >= y, nil
		case "!=":
			return x != y, nil
		case "<=":
			return x <= y, nil
		case "<":
			return x < y, nil
		case "==":
			return x == y, nil
		}
		return x > y, nil
	case "s==", "s!=", "s<", "s<=", "s>", "s>=":
		if !isString {
			switch op {
			case "s==":
				return false, nil
			case "s!=":
				return true, nil
			}
			return false, fmt.Errorf("'%s' not supported between a number and a string", op[1:])
		}
		c := strings.Compare(xs, args[0])
		switch op {
		case "s==":
			return c == 0, nil
		case "s!=":
			return c != 0, nil
		case "s<":
			return c < 0, nil
		case "s<=":
			return c <= 0, nil
		case "s>":
			return c > 0, nil
		}
		return c >= 0, nil
	case "<in>":
		if !isString {
			return false, errors.New("argument of type 'float' is not iterable")
		}
		return strings.Contains(xs, args[0]), nil
	case "<or>":
		return isString && slices.Contains(args, xs), nil
	}
	return false, fmt.Errorf("operator %s cannot be used in root device hints", op)
}
