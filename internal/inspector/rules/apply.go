package rules

import (
	"fmt"
	"maps"

	"github.com/ferrometal/ferro/internal/inspector/hooks"
	"github.com/ferrometal/ferro/internal/pyjson"
)

// Apply runs rules against the processed introspection data (see
// hooks.Data.Map) and the node: first it selects the rules whose scope and
// conditions hold, all evaluated on the node as it is, then it applies
// their actions in order. It returns the rules applied. An error in a
// condition or an action, or a fail action (a *FailError), stops it; the
// changes planned on node until then stay planned, as upstream leaves the
// API calls it made.
func Apply(rules []*Rule, data map[string]any, node *hooks.Node) ([]*Rule, error) {
	var selected []*Rule
	for _, r := range rules {
		if !r.InScope(node) {
			continue
		}
		ok, err := r.Check(data, node)
		if err != nil {
			return nil, fmt.Errorf("rule %q: %w", r.name(), err)
		}
		if ok {
			selected = append(selected, r)
		}
	}
	for _, r := range selected {
		if err := r.ApplyActions(data, node); err != nil {
			return nil, err
		}
	}
	return selected, nil
}

// name is how upstream names a rule in messages.
func (r *Rule) name() string {
	if r.Description != "" {
		return r.Description
	}
	return r.UUID
}

// InScope reports whether the rule applies to the node: a rule without a
// scope applies to all.
func (r *Rule) InScope(node *hooks.Node) bool {
	return r.Scope == "" || pyjson.Equal(r.Scope, node.Properties()["inspection_scope"])
}

// Check reports whether all the rule's conditions hold.
func (r *Rule) Check(data map[string]any, node *hooks.Node) (bool, error) {
	for _, c := range r.Conditions {
		ok, err := c.holds(data, node)
		if err != nil || !ok {
			return false, err
		}
	}
	return true, nil
}

func (c Condition) holds(data map[string]any, node *hooks.Node) (bool, error) {
	op, ok := conditions[c.Op]
	if !ok {
		return false, fmt.Errorf("unknown operator %q", c.Op)
	}
	scheme, p := splitField(c.Field)
	var source any = data
	if scheme == "node" {
		source = node.Fields()
	}
	path, err := parsePath(p)
	if err != nil {
		return false, fmt.Errorf("field %s: %w", c.Field, err)
	}
	values := path.find(source)
	if len(values) == 0 {
		if !op.allowNone {
			return false, nil
		}
		values = []any{nil}
	}
	var result bool
	for _, v := range values {
		result, err = op.check(v, c.Params)
		if err != nil {
			return false, fmt.Errorf("condition %s %s: %w", c.Field, c.Op, err)
		}
		if c.Invert {
			result = !result
		}
		if c.Multiple == "first" || c.Multiple == "all" && !result || c.Multiple != "all" && result {
			break
		}
	}
	return result, nil
}

// ApplyActions runs the rule's actions on the node, formatting their
// parameters with the data first.
func (r *Rule) ApplyActions(data map[string]any, node *hooks.Node) error {
	vars := map[string]any{"data": data, "node": node.Fields()}
	for _, a := range r.Actions {
		act, ok := actions[a.Action]
		if !ok {
			return fmt.Errorf("rule %q: unknown action %q", r.name(), a.Action)
		}
		params := maps.Clone(a.Params)
		for _, k := range act.formatted {
			if v, ok := params[k]; ok {
				f, err := formatValue(v, vars)
				if err != nil {
					return fmt.Errorf("rule %q, action %s: %w", r.name(), a.Action, err)
				}
				params[k] = f
			}
		}
		if err := act.apply(node, params); err != nil {
			if fe, ok := err.(*FailError); ok {
				fe.Rule = r.name()
				return fe
			}
			return fmt.Errorf("rule %q, action %s: %w", r.name(), a.Action, err)
		}
	}
	return nil
}
