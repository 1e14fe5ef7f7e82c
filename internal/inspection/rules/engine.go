package rules

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"slices"

	"github.com/ferrometal/ferro/internal/inspection/plan"
)

// Values of [inspection_rules]mask_secrets.
const (
	MaskAlways    = "always"
	MaskNever     = "never"
	MaskSensitive = "sensitive"
)

// Env is what rules run on.
type Env struct {
	Node       *plan.Node
	Inventory  map[string]any // read-only
	PluginData map[string]any // the plugin-data actions change it
	// Mask: always (the default), never, or sensitive (all but sensitive
	// rules): whether rules see the inventory's and plugin_data's
	// password, auth_token and bmc_password values, or "***".
	Mask string
	HTTP *http.Client // api-call; nil: a default client
	Log  *slog.Logger

	cache map[fieldKey]string // see vars.cache
}

// Order is how rules run.
type Order int

const (
	// Sequential is Ironic's: rule by rule, each rule's conditions on the
	// node as the rules before it left it.
	Sequential Order = iota
	// ConditionsFirst is ironic-inspector's: every rule's conditions on
	// the node as processing left it, then the actions of those that hold.
	ConditionsFirst
)

// Apply runs the rules, by priority (highest first; equal priorities keep
// their order): each whose conditions all hold has its actions run in
// order. It returns the rules whose actions ran. A fail action, or an
// error in a condition or an action, stops it with a *Failure; the caller
// then applies none of the plan.
func Apply(ctx context.Context, rules []*Rule, env *Env, order Order) ([]*Rule, error) {
	if env.Log == nil {
		env.Log = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	sorted := slices.Clone(rules)
	slices.SortStableFunc(sorted, func(a, b *Rule) int { return b.Priority - a.Priority })
	var applied []*Rule
	if order == ConditionsFirst {
		var selected []*Rule
		for _, r := range sorted {
			ok, err := r.check(ctx, env)
			if err != nil {
				return nil, err
			}
			if ok {
				selected = append(selected, r)
			}
		}
		for _, r := range selected {
			if err := r.act(ctx, env); err != nil {
				return nil, err
			}
			applied = append(applied, r)
		}
		return applied, nil
	}
	for _, r := range sorted {
		ok, err := r.check(ctx, env)
		if err != nil {
			return nil, err
		}
		if !ok {
			continue
		}
		env.Log.Info("Applying actions for rule", "rule", r.UUID, "node", env.Node.UUID())
		if err := r.act(ctx, env); err != nil {
			return nil, err
		}
		applied = append(applied, r)
	}
	return applied, nil
}

// vars returns the rule's interpolation variables.
func (r *Rule) vars(env *Env) *vars {
	mask := env.Mask == MaskAlways || env.Mask == "" || env.Mask == MaskSensitive && !r.Sensitive
	if env.cache == nil {
		env.cache = map[fieldKey]string{}
	}
	return &vars{node: env.Node.Fields(), inventory: env.Inventory, plugin: env.PluginData, mask: mask, cache: env.cache}
}

// Failure is why rules failed a report.
type Failure struct {
	Rule *Rule
	// Kind is KindFail for a fail action, else what failed.
	Kind string
	Op   string // the action or condition
	// Reason is the fail action's message, or what went wrong.
	Reason string
	// text is Ironic's message.
	text string
}

// Kinds of Failure.
const (
	KindFail      = "fail"
	KindAction    = "action"
	KindCondition = "condition"
)

func (f *Failure) Error() string { return f.text }

// InspectorMessage words a rule failure as ironic-inspector did: a fail
// action's message alone, else the rule and the error.
func InspectorMessage(err error) string {
	var f *Failure
	if !errors.As(err, &f) {
		return err.Error()
	}
	if f.Kind == KindFail {
		return f.Reason
	}
	if f.Kind == KindCondition {
		return fmt.Sprintf("rule %q: %s", f.Rule.name(), f.Reason)
	}
	return fmt.Sprintf("rule %q, action %s: %s", f.Rule.name(), f.Op, f.Reason)
}

// ruleError is an operation's error, worded as the Ironic exception it is.
type ruleError struct {
	// ironic is the whole Ironic message when the exception is an Ironic
	// one; empty for others, which apply_rules words "Failed to apply
	// rule …".
	ironic string
	reason string
}

func (e *ruleError) Error() string { return e.reason }

// actionFailure is RuleActionExecutionFailure.
func actionFailure(format string, a ...any) error {
	reason := fmt.Sprintf(format, a...)
	return &ruleError{ironic: "Inspection rule action execution failed. Reason: " + reason, reason: reason}
}

// executionFailure is InspectionRuleExecutionFailure given a message.
func executionFailure(format string, a ...any) error {
	reason := fmt.Sprintf(format, a...)
	return &ruleError{ironic: reason, reason: reason}
}

// checkFailure is RuleConditionCheckFailure.
func checkFailure(format string, a ...any) error {
	reason := fmt.Sprintf(format, a...)
	return &ruleError{ironic: "Inspection rule condition check failed. Reason: " + reason, reason: reason}
}

// otherError is a Python exception that is not Ironic's.
func otherError(format string, a ...any) error {
	return &ruleError{reason: fmt.Sprintf(format, a...)}
}

func (r *Rule) failure(env *Env, kind, op string, err error) *Failure {
	f := &Failure{Rule: r, Kind: kind, Op: op, Reason: err.Error()}
	var re *ruleError
	switch {
	case errors.As(err, &re) && re.ironic != "":
		f.text = re.ironic
	default:
		f.text = fmt.Sprintf("Failed to apply rule %s to node %s: %s", r.UUID, env.Node.UUID(), err)
	}
	return f
}

// check reports whether all the rule's conditions hold.
func (r *Rule) check(ctx context.Context, env *Env) (bool, error) {
	vs := r.vars(env)
	for i := range r.Conditions {
		c := &r.Conditions[i]
		ok, err := r.checkCondition(c, env, vs)
		if err != nil {
			return false, r.failure(env, KindCondition, c.Op, err)
		}
		if !ok {
			env.Log.Debug("Skipping rule: condition failed", "rule", r.UUID, "node", env.Node.UUID(), "op", c.Op)
			return false, nil
		}
	}
	return true, nil
}

// act runs the rule's actions.
func (r *Rule) act(ctx context.Context, env *Env) error {
	vs := r.vars(env)
	for i := range r.Actions {
		a := &r.Actions[i]
		if err := r.runAction(ctx, a, env, vs); err != nil {
			var fail *failAction
			if errors.As(err, &fail) {
				return &Failure{Rule: r, Kind: KindFail, Op: a.Op, Reason: fail.msg, text: "Failed to inspect hardware. Reason: " + fail.msg}
			}
			return r.failure(env, KindAction, a.Op, err)
		}
	}
	return nil
}

// loopItems returns a loop's items: a list's elements, or an object as
// the one item.
func loopItems(loop any) ([]any, bool) {
	switch l := loop.(type) {
	case []any:
		return l, len(l) > 0
	case map[string]any:
		return []any{l}, len(l) > 0
	}
	return nil, false
}

// processArgs interpolates an operation's arguments: those its signature
// formats, every one in a loop (plugin_data aside: it is the data, not a
// value).
func (r *Rule) processArgs(s sig, args map[string]any, vs *vars, op string, inLoop bool) (map[string]any, error) {
	out := make(map[string]any, len(args))
	for k, v := range args {
		if k == "plugin_data" {
			continue
		}
		if s.formats(k) || inLoop {
			f, err := r.interpolate(v, vs, op, inLoop)
			if err != nil {
				return nil, err
			}
			v = f
		}
		out[k] = v
	}
	return out, nil
}

// interpolate is Ironic's interpolate_variables: strings are formatted
// (twice in a loop, so that an item may hold replacement fields itself),
// into objects (keys too) and lists.
func (r *Rule) interpolate(v any, vs *vars, op string, inLoop bool) (any, error) {
	if inLoop {
		var err error
		if v, err = r.safeFormat(v, vs, op); err != nil {
			return nil, err
		}
	}
	switch x := v.(type) {
	case string:
		return r.safeFormat(x, vs, op)
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			fk, err := r.safeFormat(k, vs, op)
			if err != nil {
				return nil, err
			}
			fe, err := r.interpolate(e, vs, op, inLoop)
			if err != nil {
				return nil, err
			}
			out[fmtKey(fk)] = fe
		}
		return out, nil
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			var err error
			if s, ok := e.(string); ok {
				out[i], err = r.safeFormat(s, vs, op)
			} else {
				out[i], err = r.interpolate(e, vs, op, inLoop)
			}
			if err != nil {
				return nil, err
			}
		}
		return out, nil
	}
	return v, nil
}

func fmtKey(k any) string {
	if s, ok := k.(string); ok {
		return s
	}
	return "None"
}

// safeFormat formats a string, or returns v unchanged: on an error Ironic
// logs it and keeps the string (a missing key in is-empty gives None);
// a Strict rule fails.
func (r *Rule) safeFormat(v any, vs *vars, op string) (any, error) {
	s, ok := v.(string)
	if !ok {
		return v, nil
	}
	out, err := formatString(s, vs)
	if err == nil {
		return out, nil
	}
	var fe *formatError
	errors.As(err, &fe)
	if r.Strict {
		return nil, otherError("Invalid formatting variable key provided in value %s: %s", s, fe.msg)
	}
	if fe != nil && fe.kind == "KeyError" && op == "is-empty" {
		return nil, nil
	}
	return s, nil
}
