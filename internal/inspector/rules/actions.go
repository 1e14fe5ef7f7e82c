package rules

import (
	"fmt"
	"slices"
	"strings"

	"github.com/ferrometal/ferro/internal/inspector/hooks"
	"github.com/ferrometal/ferro/internal/pyjson"
)

// action is one rule action.
type action struct {
	validate func(params map[string]any) error
	apply    func(node *hooks.Node, params map[string]any) error
	// formatted are the parameters formatted with the data before apply.
	formatted []string
}

var actions = map[string]action{
	"fail": {
		validate: requireParams([]string{"message"}, nil),
		apply: func(_ *hooks.Node, params map[string]any) error {
			return &FailError{Message: pyjson.Str(params["message"])}
		},
	},
	"set-attribute": {
		validate:  validateSetAttribute,
		apply:     setAttribute,
		formatted: []string{"value"},
	},
	"set-capability": {
		validate: requireParams([]string{"name"}, []string{"value"}),
		apply: func(node *hooks.Node, params map[string]any) error {
			return node.UpdateCapabilities(hooks.Capability{Name: pyjson.Str(params["name"]), Value: params["value"]})
		},
		formatted: []string{"value"},
	},
	"extend-attribute": {
		validate:  requireParams([]string{"path", "value"}, []string{"unique"}),
		apply:     extendAttribute,
		formatted: []string{"value"},
	},
	"add-trait": {
		validate: requireParams([]string{"name"}, nil),
		apply: func(node *hooks.Node, params map[string]any) error {
			node.AddTrait(pyjson.Str(params["name"]))
			return nil
		},
	},
	"remove-trait": {
		validate: requireParams([]string{"name"}, nil),
		apply: func(node *hooks.Node, params map[string]any) error {
			node.RemoveTrait(pyjson.Str(params["name"]))
			return nil
		},
	},
}

// FailError is the failure a rule's fail action causes.
type FailError struct {
	Rule    string // the rule's description, or its UUID
	Message string
}

func (e *FailError) Error() string { return e.Message }

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

// setAttribute adds the value at the path; changing the driver resets the
// interfaces unless reset_interfaces is false.
func setAttribute(node *hooks.Node, params map[string]any) error {
	path := params["path"].(string)
	if strings.Trim(path, "/") == "driver" {
		if reset, given := params["reset_interfaces"]; !given || pyjson.Truthy(reset) {
			node.ResetInterfaces()
		}
	}
	return node.Patch(hooks.PatchOp{Op: "add", Path: path, Value: params["value"]})
}

// extendAttribute appends the value to the list at the path (created
// empty when missing), unless unique and already there.
func extendAttribute(node *hooks.Node, params map[string]any) error {
	path, ok := params["path"].(string)
	if !ok {
		return fmt.Errorf("extend-attribute: path must be a string")
	}
	op := "replace"
	current, found := node.GetByPath(path)
	if !found {
		op, current = "add", []any{}
	}
	list, ok := current.([]any)
	if !ok {
		return fmt.Errorf("extend-attribute: %s is %s, not a list", path, pyjson.Repr(current))
	}
	value := params["value"]
	if !pyjson.Truthy(params["unique"]) || !slices.ContainsFunc(list, func(v any) bool { return pyjson.Equal(v, value) }) {
		list = append(slices.Clone(list), value)
	}
	if found && pyjson.Equal(list, current) {
		return nil
	}
	return node.Patch(hooks.PatchOp{Op: op, Path: path, Value: list})
}
