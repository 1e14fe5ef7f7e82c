// Package rules is ironic-inspector's introspection rules as its API
// (/v1/rules) takes and shows them: a rule's conditions test fields of the
// introspection data (data://path) or of the node (node://path), and when
// they all hold, its actions change the node. They run in ferro's one rule
// engine (package inspection/rules), converted by Convert.
package rules

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"

	"github.com/google/uuid"

	irules "github.com/ferrometal/ferro/internal/inspection/rules"
)

// Rule is one introspection rule.
type Rule struct {
	UUID        string // set by the caller when the rule had none
	Description string
	// Scope limits the rule to nodes whose properties.inspection_scope
	// equals it; "" makes the rule global.
	Scope      string
	Conditions []Condition
	Actions    []Action
}

// Condition tests one field.
type Condition struct {
	Op    string // eq, ne, lt, gt, le, ge, in-net, matches, contains, is-empty
	Field string // data://path, node://path, or a path into the data
	// Multiple says how the values of a path that selects several combine:
	// any (the default), all, or first.
	Multiple string
	Invert   bool
	Params   map[string]any // the operator's parameters, e.g. value
}

// Action is one action and its parameters.
type Action struct {
	Action string // fail, set-attribute, set-capability, extend-attribute, add-trait, remove-trait
	Params map[string]any
}

// Parse decodes and validates a rule as the rules API receives it:
// {uuid?, description?, scope?, conditions: [...], actions: [...]}.
func Parse(b []byte) (*Rule, error) {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var body map[string]any
	if err := dec.Decode(&body); err != nil {
		return nil, fmt.Errorf("invalid rule JSON: %w", err)
	}
	r := &Rule{}
	for _, f := range []struct {
		key string
		dst *string
	}{{"uuid", &r.UUID}, {"description", &r.Description}, {"scope", &r.Scope}} {
		switch v := body[f.key].(type) {
		case nil:
		case string:
			*f.dst = v
		default:
			return nil, fmt.Errorf("%s: expected a string", f.key)
		}
	}
	conds, err := objects(body, "conditions")
	if err != nil {
		return nil, err
	}
	for i, c := range conds {
		cond := Condition{Params: map[string]any{}}
		for k, v := range c {
			switch k {
			case "op":
				cond.Op, _ = v.(string)
			case "field":
				s, ok := v.(string)
				if !ok {
					return nil, fmt.Errorf("Validation failed for conditions: conditions[%d]: field must be a string", i)
				}
				cond.Field = s
			case "multiple":
				s, ok := v.(string)
				if !ok {
					return nil, fmt.Errorf("Validation failed for conditions: conditions[%d]: multiple must be one of all, any, first", i)
				}
				cond.Multiple = s
			case "invert":
				b, ok := v.(bool)
				if !ok {
					return nil, fmt.Errorf("Validation failed for conditions: conditions[%d]: invert must be a boolean", i)
				}
				cond.Invert = b
			default:
				cond.Params[k] = v
			}
		}
		if _, ok := c["op"]; !ok {
			return nil, fmt.Errorf("Validation failed for conditions: conditions[%d]: 'op' is a required property", i)
		}
		if _, ok := c["field"]; !ok {
			return nil, fmt.Errorf("Validation failed for conditions: conditions[%d]: 'field' is a required property", i)
		}
		if _, ok := c["multiple"]; !ok {
			cond.Multiple = "any"
		}
		r.Conditions = append(r.Conditions, cond)
	}
	acts, err := objects(body, "actions")
	if err != nil {
		return nil, err
	}
	for i, a := range acts {
		act := Action{Params: map[string]any{}}
		for k, v := range a {
			if k == "action" {
				act.Action, _ = v.(string)
			} else {
				act.Params[k] = v
			}
		}
		if _, ok := a["action"]; !ok {
			return nil, fmt.Errorf("Validation failed for actions: actions[%d]: 'action' is a required property", i)
		}
		r.Actions = append(r.Actions, act)
	}
	if err := r.Validate(); err != nil {
		return nil, err
	}
	return r, nil
}

// objects reads body[key] as a list of objects; missing means empty.
func objects(body map[string]any, key string) ([]map[string]any, error) {
	v, ok := body[key]
	if !ok || v == nil {
		return nil, nil
	}
	list, ok := v.([]any)
	if !ok {
		return nil, fmt.Errorf("Validation failed for %s: %s must be a list", key, key)
	}
	out := make([]map[string]any, len(list))
	for i, e := range list {
		m, ok := e.(map[string]any)
		if !ok {
			return nil, fmt.Errorf("Validation failed for %s: %s[%d] must be an object", key, key, i)
		}
		out[i] = m
	}
	return out, nil
}

// Validate checks the rule as upstream does when it is created.
func (r *Rule) Validate() error {
	if r.UUID != "" {
		if _, err := uuid.Parse(r.UUID); err != nil {
			return fmt.Errorf("Invalid UUID value %q", r.UUID)
		}
	}
	for i, c := range r.Conditions {
		op, ok := conditions[c.Op]
		if !ok {
			return fmt.Errorf("Validation failed for conditions: conditions[%d]: unknown operator %q (valid: %s)", i, c.Op, strings.Join(sortedKeys(conditions), ", "))
		}
		switch c.Multiple {
		case "any", "all", "first":
		default:
			return fmt.Errorf("Validation failed for conditions: conditions[%d]: multiple must be one of all, any, first, not %q", i, c.Multiple)
		}
		scheme, p := splitField(c.Field)
		if scheme != "data" && scheme != "node" {
			return fmt.Errorf("Unsupported scheme for field: %s, valid values are node:// or data://", scheme)
		}
		if _, err := irules.ParsePath(p); err != nil {
			return fmt.Errorf("Unable to parse field JSON path %s: %w", c.Field, err)
		}
		if err := op.validate(c.Params); err != nil {
			return fmt.Errorf("Invalid parameters for operator %s: %w", c.Op, err)
		}
	}
	if len(r.Actions) == 0 {
		return fmt.Errorf("Validation failed for actions: a rule needs at least one action")
	}
	for i, a := range r.Actions {
		act, ok := actions[a.Action]
		if !ok {
			return fmt.Errorf("Validation failed for actions: actions[%d]: unknown action %q (valid: %s)", i, a.Action, strings.Join(sortedKeys(actions), ", "))
		}
		if err := act.validate(a.Params); err != nil {
			return fmt.Errorf("Invalid parameters for action %s: %w", a.Action, err)
		}
	}
	return nil
}

// splitField splits "scheme://path"; a field without a scheme is data.
func splitField(field string) (scheme, path string) {
	if i := strings.Index(field, "://"); i >= 0 {
		return field[:i], field[i+3:]
	}
	return "data", field
}

// checkParams is upstream's WithValidation: required parameters must be
// given (not null), and nothing beyond required and optional ones.
func checkParams(params map[string]any, required, optional []string) error {
	var missing, unexpected []string
	for _, k := range required {
		if params[k] == nil {
			missing = append(missing, k)
		}
	}
	for k, v := range params {
		if v != nil && !slices.Contains(required, k) && !slices.Contains(optional, k) {
			unexpected = append(unexpected, k)
		}
	}
	sort.Strings(unexpected)
	var msg []string
	if len(missing) > 0 {
		msg = append(msg, "missing required parameter(s): "+strings.Join(missing, ", "))
	}
	if len(unexpected) > 0 {
		msg = append(msg, "unexpected parameter(s): "+strings.Join(unexpected, ", "))
	}
	if len(msg) > 0 {
		return fmt.Errorf("%s", strings.Join(msg, "; "))
	}
	return nil
}

func sortedKeys[V any](m map[string]V) []string {
	keys := slices.Collect(maps.Keys(m))
	slices.Sort(keys)
	return keys
}

// MarshalJSON writes the rule as upstream's API shows it: conditions and
// actions flattened with their parameters, and null for an empty
// description or scope.
func (r *Rule) MarshalJSON() ([]byte, error) {
	conds := make([]map[string]any, len(r.Conditions))
	for i, c := range r.Conditions {
		m := maps.Clone(c.Params)
		if m == nil {
			m = map[string]any{}
		}
		m["op"], m["field"], m["multiple"], m["invert"] = c.Op, c.Field, c.Multiple, c.Invert
		conds[i] = m
	}
	acts := make([]map[string]any, len(r.Actions))
	for i, a := range r.Actions {
		m := maps.Clone(a.Params)
		if m == nil {
			m = map[string]any{}
		}
		m["action"] = a.Action
		acts[i] = m
	}
	return json.Marshal(map[string]any{
		"uuid":        r.UUID,
		"description": nullIfEmpty(r.Description),
		"scope":       nullIfEmpty(r.Scope),
		"conditions":  conds,
		"actions":     acts,
	})
}

func nullIfEmpty(s string) any {
	if s == "" {
		return nil
	}
	return s
}
