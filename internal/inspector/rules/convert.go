package rules

import (
	"fmt"
	"strings"

	irules "github.com/ferrometal/ferro/internal/inspection/rules"
	"github.com/ferrometal/ferro/internal/pyjson"
)

// Conversion of ironic-inspector rules into the one rule engine.
//
// A rule converts at load (each report loads the stored rules), not when
// it is stored: the inspector API keeps answering with the rule as it was
// posted, byte for byte, and a better converter applies to every rule
// without a data migration. Conversions are cheap and cached by the
// caller.
//
// The conversion is exact for the engine: inspector conditions become
// engine conditions whose subject is a Ref (the field's values, coerced
// as the inspector coerced them, over which multiple any/all/first
// apply), ne, le and ge become !eq, !gt and !lt, a scope becomes a first
// condition on the node's properties.inspection_scope, the rules run with
// their conditions first (ConditionsFirst) and their formatting errors
// fail them (Strict). Two differences remain, both in corner cases: a
// set-capability moves the capability to the end of the string (the
// inspector kept its place), and is-empty holds for the strings "None",
// "[]" and "{}" too (Ironic's).
//
// The Ironic-style rule Convert also returns (what `ferro rules convert`
// prints, to create with POST /v1/inspection_rules) can only use format
// strings, which Ironic compares as strings: Convert warns where that
// changes what the rule does.

// Converted is one converted rule.
type Converted struct {
	// Rule runs in the engine with the inspector's semantics.
	Rule *irules.Rule
	// Ironic is the rule in the API shape of /v1/inspection_rules.
	Ironic map[string]any
	// Warnings say where Ironic would run Ironic differently from the
	// inspector.
	Warnings []string
}

// Convert converts a validated inspector rule.
func Convert(r *Rule) (*Converted, error) {
	c := &Converted{Rule: &irules.Rule{UUID: r.UUID, Priority: 0, Phase: irules.PhaseMain, Strict: true, Name: r.name()}}
	if r.Description != "" {
		d := r.Description
		if len([]rune(d)) > irules.MaxDescription {
			d = string([]rune(d)[:irules.MaxDescription])
			c.warn("the description is cut to %d characters", irules.MaxDescription)
		}
		c.Rule.Description = &d
	}
	var ironicConds, ironicActs []any
	if r.Scope != "" {
		p, _ := irules.ParsePath("properties.inspection_scope")
		ref := irules.DataRef("node", p)
		c.Rule.Conditions = append(c.Rule.Conditions, irules.Condition{Op: "eq", Args: map[string]any{"values": []any{ref, r.Scope}}, Multiple: "any"})
		ironicConds = append(ironicConds, map[string]any{"op": "eq", "args": map[string]any{"values": []any{"{node.properties[inspection_scope]}", r.Scope}}})
	}
	for i, cond := range r.Conditions {
		ec, ic, err := c.condition(i, cond)
		if err != nil {
			return nil, err
		}
		c.Rule.Conditions = append(c.Rule.Conditions, ec)
		ironicConds = append(ironicConds, ic)
	}
	for i, a := range r.Actions {
		eas, err := c.action(i, a)
		if err != nil {
			return nil, err
		}
		for _, ea := range eas {
			c.Rule.Actions = append(c.Rule.Actions, ea)
			ironicActs = append(ironicActs, map[string]any{"op": ea.Op, "args": ea.Args})
		}
	}
	c.Ironic = map[string]any{"uuid": r.UUID, "priority": 0, "phase": irules.PhaseMain, "sensitive": false,
		"conditions": ironicConds, "actions": ironicActs}
	if c.Rule.Description != nil {
		c.Ironic["description"] = *c.Rule.Description
	}
	return c, nil
}

func (c *Converted) warn(format string, a ...any) {
	c.Warnings = append(c.Warnings, fmt.Sprintf(format, a...))
}

// condOps maps an inspector operator to the engine's and whether it is
// inverted.
var condOps = map[string]struct {
	op     string
	invert bool
}{
	"eq": {"eq", false}, "ne": {"eq", true}, "lt": {"lt", false}, "gt": {"gt", false},
	"le": {"gt", true}, "ge": {"lt", true},
	"in-net": {"in-net", false}, "matches": {"matches", false}, "contains": {"contains", false}, "is-empty": {"is-empty", false},
}

func (c *Converted) condition(i int, cond Condition) (irules.Condition, map[string]any, error) {
	m, ok := condOps[cond.Op]
	if !ok {
		return irules.Condition{}, nil, fmt.Errorf("conditions[%d]: operator %q cannot be converted", i, cond.Op)
	}
	scheme, p := splitField(cond.Field)
	path, err := irules.ParsePath(p)
	if err != nil {
		return irules.Condition{}, nil, fmt.Errorf("conditions[%d]: field %s: %w", i, cond.Field, err)
	}
	ref := irules.DataRef(scheme, path)
	value := cond.Params["value"]
	if m.op == "eq" || m.op == "lt" || m.op == "gt" { // the inspector's coerce
		switch {
		case pyjson.IsFloat(value):
			ref.Coerce = "float"
		case pyjson.IsInt(value):
			ref.Coerce = "int"
		}
	}
	multiple := cond.Multiple
	if multiple == "first" {
		ref.First, multiple = true, "any"
	}
	invert := m.invert != cond.Invert
	field, single := ref.Format()
	if !single {
		c.warn("conditions[%d]: field %s selects several values, which an Ironic rule cannot test (it has no loop over data); the printed rule tests the data's string instead", i, cond.Field)
		field = "{" + ref.Root + "}"
	}
	var args, ironicArgs map[string]any
	switch m.op {
	case "eq", "lt", "gt":
		args = map[string]any{"values": []any{ref, value}}
		ironicArgs = map[string]any{"values": []any{field, value}}
		if ref.Coerce != "" {
			if m.op == "eq" {
				ironicArgs["force_strings"] = true
				c.warn("conditions[%d]: Ironic formats %s as a string: the printed rule compares strings (force_strings)", i, cond.Field)
			} else {
				c.warn("conditions[%d]: Ironic formats %s as a string and cannot order it against the number %s: the printed rule fails inspections until it is rewritten", i, cond.Field, pyjson.Str(value))
			}
		}
	case "in-net":
		args = map[string]any{"address": ref, "subnet": value}
		ironicArgs = map[string]any{"address": field, "subnet": value}
	case "matches", "contains":
		args = map[string]any{"value": ref, "regex": value}
		ironicArgs = map[string]any{"value": field, "regex": value}
	case "is-empty":
		args = map[string]any{"value": ref}
		ironicArgs = map[string]any{"value": field}
	}
	op := m.op
	if invert {
		op = "!" + op
	}
	return irules.Condition{Op: m.op, Invert: invert, Args: args, Multiple: multiple}, map[string]any{"op": op, "args": ironicArgs}, nil
}

func (c *Converted) action(i int, a Action) ([]irules.Action, error) {
	p := a.Params
	switch a.Action {
	case "fail":
		return []irules.Action{{Op: "fail", Args: map[string]any{"msg": p["message"]}}}, nil
	case "set-attribute":
		if reset, given := p["reset_interfaces"]; given && !pyjson.Truthy(reset) {
			c.warn("actions[%d]: reset_interfaces false is not kept: a change of the driver resets the interfaces", i)
		}
		return []irules.Action{{Op: "set-attribute", Args: map[string]any{"path": p["path"], "value": c.format(i, p["value"])}}}, nil
	case "extend-attribute":
		args := map[string]any{"path": p["path"], "value": c.format(i, p["value"])}
		if u, ok := p["unique"]; ok {
			args["unique"] = u
		}
		return []irules.Action{{Op: "extend-attribute", Args: args}}, nil
	case "set-capability":
		unset := irules.Action{Op: "unset-capability", Args: map[string]any{"name": p["name"]}}
		v, given := p["value"]
		if !given || v == nil {
			return []irules.Action{unset}, nil
		}
		if _, isString := v.(string); !isString {
			v = pyjson.Str(v)
		}
		return []irules.Action{unset, {Op: "set-capability", Args: map[string]any{"name": p["name"], "value": c.format(i, v)}}}, nil
	case "add-trait", "remove-trait":
		return []irules.Action{{Op: a.Action, Args: map[string]any{"name": p["name"]}}}, nil
	}
	return nil, fmt.Errorf("actions[%d]: action %q cannot be converted", i, a.Action)
}

// format rewrites the inspector's format strings for the engine:
// {data[inventory]…} reads {inventory…}, {data[x]…} {plugin_data[x]…},
// and ferro's {node[x]…} {node.x…}. Objects and lists are rewritten
// member by member, keys included.
func (c *Converted) format(i int, v any) any {
	switch x := v.(type) {
	case string:
		out, ok := rewriteFormat(x)
		if !ok {
			c.warn("actions[%d]: %q reads the whole data, which Ironic's variables split into inventory and plugin_data", i, x)
		}
		return out
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			out[c.format(i, k).(string)] = c.format(i, e)
		}
		return out
	case []any:
		out := make([]any, len(x))
		for j, e := range x {
			out[j] = c.format(i, e)
		}
		return out
	}
	return v
}

func rewriteFormat(s string) (string, bool) {
	var b strings.Builder
	ok := true
	for i := 0; i < len(s); i++ {
		ch := s[i]
		if (ch == '{' || ch == '}') && i+1 < len(s) && s[i+1] == ch {
			b.WriteString(s[i : i+2])
			i++
			continue
		}
		if ch != '{' {
			b.WriteByte(ch)
			continue
		}
		end := strings.IndexByte(s[i:], '}')
		if end < 0 {
			b.WriteString(s[i:])
			break
		}
		field := s[i+1 : i+end]
		name, rest := field, ""
		if j := strings.IndexAny(field, "!:"); j >= 0 {
			name, rest = field[:j], field[j:]
		}
		switch {
		case strings.HasPrefix(name, "data[inventory]"):
			name = "inventory" + strings.TrimPrefix(name, "data[inventory]")
		case strings.HasPrefix(name, "data["):
			name = "plugin_data" + strings.TrimPrefix(name, "data")
		case name == "data":
			name, ok = "plugin_data", false
		case strings.HasPrefix(name, "node["):
			if k := strings.IndexByte(name, ']'); k > 0 {
				name = "node." + name[len("node["):k] + name[k+1:]
			}
		}
		b.WriteString("{" + name + rest + "}")
		i += end
	}
	return b.String(), ok
}

// name is how the inspector named a rule in messages.
func (r *Rule) name() string {
	if r.Description != "" {
		return r.Description
	}
	return r.UUID
}
