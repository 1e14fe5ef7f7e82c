package rules

import (
	"fmt"
	"net/netip"
	"regexp"

	"github.com/ferrometal/ferro/internal/pyjson"
)

// operator is how one condition operator's parameters are checked.
type operator struct {
	validate func(params map[string]any) error
}

var conditions = map[string]operator{
	"eq":       {requireParams([]string{"value"}, nil)},
	"ne":       {requireParams([]string{"value"}, nil)},
	"lt":       {requireParams([]string{"value"}, nil)},
	"gt":       {requireParams([]string{"value"}, nil)},
	"le":       {requireParams([]string{"value"}, nil)},
	"ge":       {requireParams([]string{"value"}, nil)},
	"is-empty": {requireParams(nil, nil)},
	"in-net":   {validateNet},
	"matches":  {validateRegexp},
	"contains": {validateRegexp},
}

// action is how one action's parameters are checked.
type action struct {
	validate func(params map[string]any) error
}

var actions = map[string]action{
	"fail":             {requireParams([]string{"message"}, nil)},
	"set-attribute":    {validateSetAttribute},
	"set-capability":   {requireParams([]string{"name"}, []string{"value"})},
	"extend-attribute": {requireParams([]string{"path", "value"}, []string{"unique"})},
	"add-trait":        {requireParams([]string{"name"}, nil)},
	"remove-trait":     {requireParams([]string{"name"}, nil)},
}

func requireParams(required, optional []string) func(map[string]any) error {
	return func(params map[string]any) error { return checkParams(params, required, optional) }
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

// validateSetAttribute accepts a null value, which must still be given.
func validateSetAttribute(params map[string]any) error {
	if _, ok := params["value"]; !ok {
		return fmt.Errorf("missing required parameter(s): value")
	}
	if err := checkParams(params, []string{"path"}, []string{"value", "reset_interfaces"}); err != nil {
		return err
	}
	if _, ok := params["path"].(string); !ok {
		return fmt.Errorf("path must be a string")
	}
	return nil
}
