package rules

import (
	"fmt"
	"net/netip"
	"regexp"
	"strings"

	"github.com/ferrometal/ferro/internal/pyjson"
)

// operator is one condition operator.
type operator struct {
	validate func(params map[string]any) error
	check    func(field any, params map[string]any) (bool, error)
	// allowNone makes a path that selects nothing test one null value
	// instead of failing the rule.
	allowNone bool
}

var conditions = map[string]operator{
	"eq":       simple("eq"),
	"ne":       simple("ne"),
	"lt":       simple("lt"),
	"gt":       simple("gt"),
	"le":       simple("le"),
	"ge":       simple("ge"),
	"is-empty": {validate: requireParams(nil, nil), check: isEmpty, allowNone: true},
	"in-net":   {validate: validateNet, check: inNet},
	"matches":  {validate: validateRegexp, check: matches},
	"contains": {validate: validateRegexp, check: contains},
}

func requireParams(required, optional []string) func(map[string]any) error {
	return func(params map[string]any) error { return checkParams(params, required, optional) }
}

// simple compares the field with value, after converting the field to the
// value's type when the value is a number, as upstream's coerce does. eq
// and ne hold between any values; ordering unordered values is an error,
// as Python's TypeError.
func simple(op string) operator {
	return operator{
		validate: requireParams([]string{"value"}, nil),
		check: func(field any, params map[string]any) (bool, error) {
			value := params["value"]
			field, err := coerce(field, value)
			if err != nil {
				return false, err
			}
			switch op {
			case "eq":
				return pyjson.Equal(field, value), nil
			case "ne":
				return !pyjson.Equal(field, value), nil
			}
			c, err := pyjson.Compare(field, value)
			if err != nil {
				return false, err
			}
			switch op {
			case "lt":
				return c < 0, nil
			case "gt":
				return c > 0, nil
			case "le":
				return c <= 0, nil
			}
			return c >= 0, nil
		},
	}
}

// coerce converts field to float or int when expected is one.
func coerce(field, expected any) (any, error) {
	switch {
	case pyjson.IsFloat(expected):
		return pyjson.Float(field)
	case pyjson.IsInt(expected):
		return pyjson.Int(field)
	}
	return field, nil
}

func isEmpty(field any, _ map[string]any) (bool, error) {
	for _, empty := range []any{"", nil, []any{}, map[string]any{}} {
		if pyjson.Equal(field, empty) {
			return true, nil
		}
	}
	return false, nil
}

// parseNet parses a network like netaddr.IPNetwork: a CIDR, host bits
// allowed, or a bare address.
func parseNet(v any) (netip.Prefix, error) {
	s, ok := v.(string)
	if !ok {
		return netip.Prefix{}, fmt.Errorf("invalid value: %s is not a network", pyjson.Repr(v))
	}
	if p, err := netip.ParsePrefix(s); err == nil {
		return p.Masked(), nil
	}
	a, err := netip.ParseAddr(s)
	if err != nil {
		return netip.Prefix{}, fmt.Errorf("invalid value: invalid IPNetwork %s", s)
	}
	return netip.PrefixFrom(a, a.BitLen()), nil
}

func validateNet(params map[string]any) error {
	if err := checkParams(params, []string{"value"}, nil); err != nil {
		return err
	}
	_, err := parseNet(params["value"])
	return err
}

func inNet(field any, params map[string]any) (bool, error) {
	network, err := parseNet(params["value"])
	if err != nil {
		return false, err
	}
	s, ok := field.(string)
	if !ok {
		return false, fmt.Errorf("%s is not an IP address", pyjson.Repr(field))
	}
	addr, err := netip.ParseAddr(s)
	if err != nil {
		return false, fmt.Errorf("failed to detect a valid IP address from %s", pyjson.Repr(s))
	}
	return network.Contains(addr), nil
}

// validateRegexp only compiles the expression, as upstream; Go's RE2
// syntax lacks Python's look-arounds and back-references.
func validateRegexp(params map[string]any) error {
	s, ok := params["value"].(string)
	if !ok {
		return fmt.Errorf("missing required parameter(s): value")
	}
	if _, err := regexp.Compile(s); err != nil {
		return fmt.Errorf("invalid regular expression: %w", err)
	}
	return nil
}

// matches is re.match(value + "$", str(field)): anchored at the start and
// at the end.
func matches(field any, params map[string]any) (bool, error) {
	expr := params["value"].(string)
	if !strings.HasSuffix(expr, "$") {
		expr += "$"
	}
	re, err := regexp.Compile(`^(?:` + expr + `)`)
	if err != nil {
		return false, err
	}
	return re.MatchString(pyjson.Str(field)), nil
}

// contains is re.search(value, str(field)).
func contains(field any, params map[string]any) (bool, error) {
	re, err := regexp.Compile(params["value"].(string))
	if err != nil {
		return false, err
	}
	return re.MatchString(pyjson.Str(field)), nil
}
