// Package rules is ferro's one inspection rule engine: Ironic's
// inspection rules (API 1.96, ironic/common/inspection_rules), their schema,
// conditions, actions, format-string interpolation and order. Rules run
// after the hooks, on the node's processing plan, the inventory and
// plugin_data; they change nothing until the caller applies the plan.
//
// ironic-inspector's rules (the inspector API's /v1/rules) are converted
// into these (package inspector/rules); the few things Ironic's model
// cannot say that the inspector's rules need are internal to the engine
// (Ref, Rule.Strict) and never part of a rule's JSON.
package rules

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/google/uuid"
)

// Phases rules run in; Ironic has one.
const PhaseMain = "main"

// Priorities of rules created through the API; built-in rules may be
// outside.
const (
	MinUserPriority = 0
	MaxUserPriority = 9999
)

// MaxDescription is the longest description.
const MaxDescription = 255

// Rule is one inspection rule.
type Rule struct {
	UUID        string
	Description *string
	Priority    int
	Sensitive   bool
	Phase       string
	Conditions  []Condition
	Actions     []Action
	// BuiltIn marks a rule of [inspection_rules]built_in_rules.
	BuiltIn bool
	// Strict (converted ironic-inspector rules) fails the rule when a
	// value cannot be formatted, as the inspector did, instead of keeping
	// the string as it is, as Ironic does.
	Strict bool
	// Name is how messages name the rule; default its UUID.
	Name string
}

// Condition is one condition: an operator, its arguments, an optional
// loop and how the loop's results combine.
type Condition struct {
	Op       string // without "!"
	Invert   bool
	Args     map[string]any
	Loop     any    // nil, a list or an object
	Multiple string // any (default), all, first, last
	// raw is the condition as given, for its JSON.
	raw map[string]any
}

// Action is one action.
type Action struct {
	Op   string
	Args map[string]any
	Loop any
	raw  map[string]any
}

// ValidationError is why a rule is refused; Ironic answers 400 for its
// schema's and its own checks. Schema, when set, is the JSON schema's
// message alone: the API words it as its request validation does.
type ValidationError struct{ Msg, Schema string }

func (e *ValidationError) Error() string { return e.Msg }

func invalid(format string, a ...any) error {
	return &ValidationError{Msg: fmt.Sprintf(format, a...)}
}

// Parse decodes and validates a rule as POST /v1/inspection_rules
// receives it (the API's create_request_body schema, then
// validate_rule). A rule without a UUID gets none here; the caller gives
// it one. Priority outside 0-9999 is refused unless builtIn.
func Parse(b []byte, builtIn bool) (*Rule, error) {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var body any
	if err := dec.Decode(&body); err != nil {
		return nil, invalid("Validation failed for inspection rule: invalid JSON: %v", err)
	}
	if dec.More() {
		return nil, invalid("Validation failed for inspection rule: data after the rule")
	}
	m, ok := body.(map[string]any)
	if !ok {
		return nil, invalid("Validation failed for inspection rule: %s is not of type 'object'", shortRepr(body))
	}
	return FromMap(m, builtIn)
}

// FromMap is Parse of a rule already decoded (numbers as json.Number);
// built-in rules come this way from YAML.
func FromMap(m map[string]any, builtIn bool) (*Rule, error) {
	if err := checkSchema(m, builtIn); err != nil {
		return nil, &ValidationError{Msg: "Validation failed for inspection rule: " + err.Error(), Schema: err.Error()}
	}
	r := &Rule{Phase: PhaseMain, BuiltIn: builtIn}
	if s, ok := m["uuid"].(string); ok {
		r.UUID = s
	}
	if s, ok := m["description"].(string); ok {
		r.Description = &s
	}
	if p, ok := m["priority"].(json.Number); ok {
		n, _ := p.Int64()
		r.Priority = int(n)
	}
	if b, ok := m["sensitive"].(bool); ok {
		r.Sensitive = b
	}
	phase, hasPhase := m["phase"].(string)
	if hasPhase {
		r.Phase = phase
	}
	var errs []string
	if r.Phase != PhaseMain {
		errs = append(errs, fmt.Sprintf("Invalid phase: %s. Valid phases are: %s", r.Phase, PhaseMain))
	}
	if r.Priority < MinUserPriority && !builtIn {
		errs = append(errs, "Priority cannot be negative for user-defined rules.")
	}
	if r.Priority > MaxUserPriority && !builtIn {
		errs = append(errs, "Priority must be between 0 and 9999 for user-defined rules.")
	}
	for _, c := range asObjects(m["conditions"]) {
		op, inverted, err := ParseOp(c["op"].(string))
		if err != nil {
			errs = append(errs, err.Error())
			continue
		}
		args, err := normalizeArgs(conditionSigs[op], c["args"])
		if err == nil {
			err = validateArgs(conditionSigs[op], args)
		}
		if err != nil {
			errs = append(errs, fmt.Sprintf("Invalid parameters for condition operator %s: %v", op, err))
		}
		multiple, _ := c["multiple"].(string)
		if multiple == "" {
			multiple = "any"
		}
		r.Conditions = append(r.Conditions, Condition{Op: op, Invert: inverted, Args: args, Loop: c["loop"], Multiple: multiple, raw: c})
	}
	for _, a := range asObjects(m["actions"]) {
		op := a["op"].(string)
		sig := actionSigs[op]
		if sig.plugin {
			addPluginDataArg(a)
		}
		args, err := normalizeArgs(sig, a["args"])
		if err == nil {
			err = validateArgs(sig, args)
		}
		if err != nil {
			errs = append(errs, fmt.Sprintf("Invalid parameters for action operator %s: %v", op, err))
		}
		r.Actions = append(r.Actions, Action{Op: op, Args: args, Loop: a["loop"], raw: a})
	}
	switch len(errs) {
	case 0:
	case 1:
		return nil, invalid("%s", errs[0])
	default:
		return nil, invalid("Multiple validation errors occurred: %s", strings.Join(errs, "; "))
	}
	return r, nil
}

// ParseOp splits a condition operator from its inversion, "!eq" or
// "! eq"; more than one "!" is an error, as Ironic's.
func ParseOp(op string) (name string, inverted bool, err error) {
	op = strings.TrimSpace(op)
	if strings.Count(op, "!") > 1 {
		return "", false, fmt.Errorf("Multiple exclamation marks are not allowed. To apply the invert of an operation, simply add an exclamation mark (with an optional space) before the operator, e.g. eq - !eq.")
	}
	inverted = strings.HasPrefix(op, "!")
	return strings.TrimSpace(strings.TrimLeft(op, "!")), inverted, nil
}

// addPluginDataArg is what Ironic's validate does to the plugin-data
// actions' arguments: it adds the plugin_data argument they take, so the
// stored rule has it too.
func addPluginDataArg(a map[string]any) {
	switch args := a["args"].(type) {
	case map[string]any:
		if _, ok := args["plugin_data"]; !ok {
			args["plugin_data"] = map[string]any{}
		}
	case []any:
		a["args"] = append(args, map[string]any{})
	}
}

// checkSchema is the API's create_request_body JSON schema.
func checkSchema(m map[string]any, builtIn bool) error {
	known := []string{"actions", "conditions", "description", "phase", "priority", "sensitive", "uuid"}
	var extra []string
	for k := range m {
		if !slices.Contains(known, k) {
			extra = append(extra, k)
		}
	}
	if len(extra) > 0 {
		sort.Strings(extra)
		return fmt.Errorf("Additional properties are not allowed (%s %s unexpected)", quoteAll(extra), wasWere(len(extra)))
	}
	actions, ok := m["actions"]
	if !ok {
		return fmt.Errorf("'actions' is a required property")
	}
	list, ok := actions.([]any)
	if !ok {
		return fmt.Errorf("%s is not of type 'array'", shortRepr(actions))
	}
	if len(list) < 1 {
		return fmt.Errorf("[] should be non-empty")
	}
	for _, a := range list {
		if err := checkOperation(a, "action", func(op string) bool { _, ok := actionSigs[op]; return ok }); err != nil {
			return err
		}
	}
	if conds, ok := m["conditions"]; ok {
		list, ok := conds.([]any)
		if !ok {
			return fmt.Errorf("%s is not of type 'array'", shortRepr(conds))
		}
		for _, c := range list {
			err := checkOperation(c, "condition", func(op string) bool {
				name, _ := strings.CutPrefix(op, "!")
				_, ok := conditionSigs[name]
				return ok && (name == op || "!"+name == op)
			})
			if err != nil {
				return err
			}
			if mult, ok := c.(map[string]any)["multiple"]; ok {
				if s, _ := mult.(string); !slices.Contains([]string{"any", "all", "first", "last"}, s) {
					return fmt.Errorf("%s is not one of ['any', 'all', 'first', 'last']", shortRepr(mult))
				}
			}
		}
	}
	if d, ok := m["description"]; ok && d != nil {
		s, ok := d.(string)
		if !ok {
			return fmt.Errorf("%s is not of type 'string', 'null'", shortRepr(d))
		}
		if len([]rune(s)) > MaxDescription {
			return fmt.Errorf("%s is too long", shortRepr(d))
		}
	}
	if p, ok := m["phase"]; ok && p != nil {
		s, ok := p.(string)
		if !ok {
			return fmt.Errorf("%s is not of type 'string', 'null'", shortRepr(p))
		}
		if len([]rune(s)) > 16 {
			return fmt.Errorf("%s is too long", shortRepr(p))
		}
	}
	if p, ok := m["priority"]; ok {
		n, isNum := p.(json.Number)
		i, err := n.Int64()
		if !isNum || err != nil {
			return fmt.Errorf("%s is not of type 'integer'", shortRepr(p))
		}
		if i < 0 && !builtIn {
			return fmt.Errorf("%s is less than the minimum of 0", n)
		}
	}
	if s, ok := m["sensitive"]; ok && s != nil {
		if _, ok := s.(bool); !ok {
			return fmt.Errorf("%s is not of type 'boolean', 'null'", shortRepr(s))
		}
	}
	if u, ok := m["uuid"]; ok && u != nil {
		s, ok := u.(string)
		if !ok {
			return fmt.Errorf("%s is not of type 'string', 'null'", shortRepr(u))
		}
		if _, err := uuid.Parse(s); err != nil && s != "" && !builtIn {
			return fmt.Errorf("%s is not a 'uuid'", shortRepr(u))
		}
	}
	return nil
}

func checkOperation(v any, kind string, known func(string) bool) error {
	m, ok := v.(map[string]any)
	if !ok {
		return fmt.Errorf("%s is not of type 'object'", shortRepr(v))
	}
	for _, k := range []string{"op", "args"} {
		if _, ok := m[k]; !ok {
			return fmt.Errorf("'%s' is a required property", k)
		}
	}
	op, ok := m["op"].(string)
	if !ok || !known(op) {
		return fmt.Errorf("%s is not a valid %s operator", shortRepr(m["op"]), kind)
	}
	switch m["args"].(type) {
	case []any, map[string]any:
	default:
		return fmt.Errorf("%s is not of type 'array', 'object'", shortRepr(m["args"]))
	}
	if loop, ok := m["loop"]; ok {
		switch loop.(type) {
		case []any, map[string]any:
		default:
			return fmt.Errorf("%s is not of type 'array', 'object'", shortRepr(loop))
		}
	}
	return nil
}

func asObjects(v any) []map[string]any {
	list, _ := v.([]any)
	out := make([]map[string]any, 0, len(list))
	for _, e := range list {
		if m, ok := e.(map[string]any); ok {
			out = append(out, m)
		}
	}
	return out
}

func quoteAll(ss []string) string {
	q := make([]string, len(ss))
	for i, s := range ss {
		q[i] = "'" + s + "'"
	}
	return strings.Join(q, ", ")
}

func wasWere(n int) string {
	if n == 1 {
		return "was"
	}
	return "were"
}

// shortRepr is a value for a message, cut short.
func shortRepr(v any) string {
	s := reprJSON(v)
	if len(s) > 80 {
		s = s[:77] + "..."
	}
	return s
}

// Map returns the rule as Ironic's API shows it, conditions and actions
// as they were given (convert_conditions, convert_actions): op and args,
// loop when set, and a condition's multiple with its loop. Sensitive rules
// show neither.
func (r *Rule) Map() map[string]any {
	m := map[string]any{
		"uuid": r.UUID, "priority": r.Priority, "sensitive": r.Sensitive, "phase": r.Phase,
		"description": nil, "conditions": nil, "actions": nil,
	}
	if r.Description != nil {
		m["description"] = *r.Description
	}
	if r.Sensitive {
		return m
	}
	conds := make([]any, 0, len(r.Conditions))
	for _, c := range r.Conditions {
		out := map[string]any{"op": c.raw["op"], "args": c.raw["args"]}
		if truthy(c.Loop) {
			out["loop"] = c.Loop
			out["multiple"] = c.Multiple
		}
		conds = append(conds, out)
	}
	acts := make([]any, 0, len(r.Actions))
	for _, a := range r.Actions {
		out := map[string]any{"op": a.raw["op"], "args": a.raw["args"]}
		if truthy(a.Loop) {
			out["loop"] = a.Loop
		}
		acts = append(acts, out)
	}
	m["conditions"], m["actions"] = conds, acts
	return m
}

// Stored returns the conditions and actions as they are stored: as given,
// after validation added what Ironic's does.
func (r *Rule) Stored() (conditions, actions []map[string]any) {
	for _, c := range r.Conditions {
		conditions = append(conditions, c.raw)
	}
	for _, a := range r.Actions {
		actions = append(actions, a.raw)
	}
	return conditions, actions
}

func truthy(v any) bool {
	switch x := v.(type) {
	case []any:
		return len(x) > 0
	case map[string]any:
		return len(x) > 0
	}
	return v != nil
}

// name is how messages name a rule.
func (r *Rule) name() string {
	if r.Name != "" {
		return r.Name
	}
	return r.UUID
}
