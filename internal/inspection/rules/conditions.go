package rules

import (
	"fmt"
	"net/netip"
	"regexp"
	"strings"

	"github.com/ferrometal/ferro/internal/pyjson"
)

// Ref is a value a converted ironic-inspector condition tests: the values
// a JSONPath selects in the inventory, plugin_data or the node, converted
// to a number when the inspector did (its coerce). A condition whose
// arguments hold a Ref is evaluated on native values, once per value the
// path selects, the results combined by the condition's Multiple (any or
// all); it holds no format strings. Ironic's rules cannot say this (their
// values are strings), which is why it is internal to the engine.
type Ref struct {
	Root   string // "inventory", "plugin_data" or "node"
	Path   Path   // nil: the root itself
	Coerce string // "int", "float" or ""
	// First takes only the first value the path selects (the inspector's
	// multiple "first").
	First bool
}

func (ref Ref) values(vs *vars) []any {
	var doc any
	switch ref.Root {
	case "inventory":
		doc = vs.inventory
	case "plugin_data":
		doc = vs.plugin
	case "node":
		doc = vs.node
	}
	vals := []any{doc}
	if ref.Path != nil {
		vals = ref.Path.Find(doc)
	}
	if ref.First && len(vals) > 1 {
		vals = vals[:1]
	}
	return vals
}

func (ref Ref) coerce(v any) (any, error) {
	switch ref.Coerce {
	case "int":
		return pyjson.Int(v)
	case "float":
		return pyjson.Float(v)
	}
	return v, nil
}

// checkCondition is Ironic's check_with_loop / check_condition.
func (r *Rule) checkCondition(c *Condition, env *Env, vs *vars) (bool, error) {
	if ref, name, ok := refArg(c.Args); ok {
		return r.checkRef(c, vs, ref, name)
	}
	items, loop := loopItems(c.Loop)
	if !loop {
		return r.checkOnce(c, vs, false)
	}
	var results []bool
	for _, item := range items {
		ivs := *vs
		ivs.item, ivs.hasItem = item, true
		ok, err := r.checkOnce(c, &ivs, true)
		if err != nil {
			return false, err
		}
		results = append(results, ok)
		if c.Multiple == "first" && ok {
			return true, nil
		}
		if c.Multiple == "last" {
			results = []bool{ok}
		}
		if _, isMap := c.Loop.(map[string]any); isMap && (c.Multiple == "first" || c.Multiple == "last") {
			return ok, nil
		}
	}
	switch c.Multiple {
	case "all":
		for _, ok := range results {
			if !ok {
				return false, nil
			}
		}
		return true, nil
	case "any", "":
		for _, ok := range results {
			if ok {
				return true, nil
			}
		}
		return false, nil
	}
	return len(results) > 0 && results[0], nil
}

func (r *Rule) checkOnce(c *Condition, vs *vars, inLoop bool) (bool, error) {
	s := conditionSigs[c.Op]
	args, err := r.processArgs(s, c.Args, vs, c.Op, inLoop)
	if err != nil {
		return false, err
	}
	if inLoop && s.formats("values") { // the comparisons compare strings in a loop
		args["force_strings"] = true
	}
	ok, err := operate(c.Op, args)
	if err != nil {
		return false, err
	}
	return ok != c.Invert, nil
}

// refArg finds the Ref among a condition's arguments (top level or in
// values).
func refArg(args map[string]any) (Ref, string, bool) {
	for k, v := range args {
		if ref, ok := v.(Ref); ok {
			return ref, k, true
		}
		if list, ok := v.([]any); ok {
			for _, e := range list {
				if ref, ok := e.(Ref); ok {
					return ref, k, true
				}
			}
		}
	}
	return Ref{}, "", false
}

// checkRef evaluates a converted condition on each value its Ref selects:
// none is false (an is-empty tests null then), as the inspector did.
func (r *Rule) checkRef(c *Condition, vs *vars, ref Ref, _ string) (bool, error) {
	values := ref.values(vs)
	if len(values) == 0 {
		if c.Op != "is-empty" {
			return false, nil
		}
		values = []any{nil}
	}
	var result bool
	for _, v := range values {
		cv, err := ref.coerce(v)
		if err != nil {
			return false, otherError("%v", err)
		}
		args := make(map[string]any, len(c.Args))
		for k, a := range c.Args {
			args[k] = replaceRef(a, cv)
		}
		ok, err := operate(c.Op, args)
		if err != nil {
			return false, err
		}
		result = ok != c.Invert
		if c.Multiple == "all" && !result || c.Multiple != "all" && result {
			break
		}
	}
	return result, nil
}

func replaceRef(a, v any) any {
	if _, ok := a.(Ref); ok {
		return v
	}
	if list, ok := a.([]any); ok {
		out := make([]any, len(list))
		for i, e := range list {
			out[i] = replaceRef(e, v)
		}
		return out
	}
	return a
}

// operate runs an operator on its (interpolated) arguments.
func operate(op string, args map[string]any) (bool, error) {
	switch op {
	case "eq", "lt", "gt":
		values, ok := args["values"].([]any)
		if !ok {
			return false, checkFailure("Failed to check condition: '%s' on values: %s: Expected list for 'values', got: %s",
				opName(op), pyjson.Str(args["values"]), typeName(args["values"]))
		}
		if len(values) < 2 {
			return true, nil
		}
		if pyjson.Truthy(args["force_strings"]) {
			for i, v := range values {
				values[i] = pyjson.Str(v)
			}
		}
		for i := 0; i+1 < len(values); i++ {
			ok, err := compare(op, values[i], values[i+1])
			if err != nil || !ok {
				return false, err
			}
		}
		return true, nil
	case "is-empty":
		switch pyjson.Str(args["value"]) {
		case "", "None", "[]", "{}":
			return true, nil
		}
		return false, nil
	case "in-net":
		return inNet(args["address"], args["subnet"])
	case "matches", "contains":
		regex, ok := args["regex"].(string)
		if !ok {
			return false, otherError("first argument must be string or compiled pattern")
		}
		if op == "matches" && !strings.HasSuffix(regex, "$") {
			regex += "$"
		}
		if op == "matches" {
			regex = `^(?:` + regex + `)`
		}
		re, err := regexp.Compile(regex)
		if err != nil {
			return false, executionFailure("invalid regular expression: %v", err)
		}
		return re.MatchString(pyjson.Str(args["value"])), nil
	case "one-of":
		values, ok := args["values"].([]any)
		if !ok {
			if _, given := args["values"]; given {
				return false, otherError("argument of type %s is not iterable", pyjson.Repr(typeName(args["values"])))
			}
			return false, nil
		}
		for _, v := range values {
			if pyjson.Equal(args["value"], v) {
				return true, nil
			}
		}
		return false, nil
	case "is-none":
		return args["value"] == nil, nil
	case "is-true", "is-false":
		want := op == "is-true"
		switch v := args["value"].(type) {
		case bool:
			return v == want, nil
		case string:
			words := map[bool][]string{true: {"yes", "true"}, false: {"no", "false"}}[want]
			l := strings.ToLower(v)
			return l == words[0] || l == words[1], nil
		case nil:
			return !want, nil
		}
		if f, err := pyjson.Float(args["value"]); err == nil && (pyjson.IsInt(args["value"]) || pyjson.IsFloat(args["value"])) {
			return (f != 0) == want, nil
		}
		return false, nil
	}
	return false, otherError("Unsupported operator: '%s'", op)
}

func opName(op string) string { return op }

func compare(op string, a, b any) (bool, error) {
	if op == "eq" {
		return pyjson.Equal(a, b), nil
	}
	c, err := pyjson.Compare(a, b)
	if err != nil {
		return false, otherError("%v", err)
	}
	if op == "lt" {
		return c < 0, nil
	}
	return c > 0, nil
}

// inNet is Ironic's NetOperator: netaddr.IPAddress(address) in
// netaddr.IPNetwork(subnet).
func inNet(address, subnet any) (bool, error) {
	network, err := parseNetwork(subnet)
	if err != nil {
		return false, err
	}
	s, ok := address.(string)
	if !ok {
		return false, otherError("%s is not an IP address", pyjson.Repr(address))
	}
	addr, err := netip.ParseAddr(strings.TrimSpace(s))
	if err != nil {
		return false, otherError("failed to detect a valid IP address from %s", pyjson.Repr(s))
	}
	return network.Contains(addr.Unmap()), nil
}

// parseNetwork parses a network as netaddr.IPNetwork: a CIDR (host bits
// allowed) or a bare address.
func parseNetwork(v any) (netip.Prefix, error) {
	s, ok := v.(string)
	if !ok {
		return netip.Prefix{}, executionFailure("invalid value: %s is not a network", pyjson.Repr(v))
	}
	s = strings.TrimSpace(s)
	if p, err := netip.ParsePrefix(s); err == nil {
		return p.Masked(), nil
	}
	a, err := netip.ParseAddr(s)
	if err != nil {
		return netip.Prefix{}, executionFailure("invalid value: invalid IPNetwork %s", s)
	}
	return netip.PrefixFrom(a, a.BitLen()), nil
}

// CheckRegexp compiles a regular expression as the rules do; Go's RE2
// lacks Python's look-arounds and back-references.
func CheckRegexp(expr string) error {
	if _, err := regexp.Compile(expr); err != nil {
		return fmt.Errorf("invalid regular expression: %w", err)
	}
	return nil
}

// DataRef is the Ref of an ironic-inspector field: scheme "data" (the
// processed data, whose inventory is Ironic's inventory and the rest its
// plugin_data) or "node".
func DataRef(scheme string, p Path) Ref {
	if scheme == "node" {
		return Ref{Root: "node", Path: p}
	}
	if len(p) > 0 && p[0].kind == stepField && p[0].name == "inventory" {
		rest := p[1:]
		if len(rest) == 0 {
			rest = nil
		}
		return Ref{Root: "inventory", Path: rest}
	}
	return Ref{Root: "plugin_data", Path: p}
}

// Format returns the Ironic replacement field that reads the same value,
// and false when there is none (a path that selects several values).
func (ref Ref) Format() (string, bool) {
	var b strings.Builder
	b.WriteString(ref.Root)
	for i, st := range ref.Path {
		switch st.kind {
		case stepField:
			if ref.Root == "node" && i == 0 {
				b.WriteString("." + st.name)
			} else {
				b.WriteString("[" + st.name + "]")
			}
		case stepIndex:
			b.WriteString(fmt.Sprintf("[%d]", st.index))
		default:
			return "", false
		}
	}
	return "{" + b.String() + "}", true
}
