package rules

import (
	"fmt"
	"slices"
	"strings"
)

// sig is an operation's signature, as Ironic reads it from the plugin's
// __call__: required and optional argument names in order, the arguments
// formatted before the call (FORMATTED_ARGS; in a loop, all are), and
// whether it takes plugin_data.
type sig struct {
	required, optional []string
	formatted          []string
	plugin             bool
}

func (s sig) formats(arg string) bool { return slices.Contains(s.formatted, arg) }

var simpleSig = sig{required: []string{"values"}, optional: []string{"force_strings"}, formatted: []string{"values"}}

// conditionSigs are Ironic's operators.
var conditionSigs = map[string]sig{
	"eq":       simpleSig,
	"lt":       simpleSig,
	"gt":       simpleSig,
	"is-empty": {required: []string{"value"}, formatted: []string{"value"}},
	"in-net":   {required: []string{"address", "subnet"}, formatted: []string{"address", "subnet"}},
	"matches":  {required: []string{"value", "regex"}, formatted: []string{"value"}},
	"contains": {required: []string{"value", "regex"}, formatted: []string{"value"}},
	"one-of":   {required: []string{"value"}, optional: []string{"values"}, formatted: []string{"value"}},
	"is-none":  {required: []string{"value"}, formatted: []string{"value"}},
	"is-true":  {required: []string{"value"}, formatted: []string{"value"}},
	"is-false": {required: []string{"value"}, formatted: []string{"value"}},
}

// actionSigs are Ironic's actions.
var actionSigs = map[string]sig{
	"fail":                  {required: []string{"msg"}},
	"log":                   {required: []string{"msg"}, optional: []string{"level"}, formatted: []string{"msg"}},
	"set-attribute":         {required: []string{"path", "value"}, formatted: []string{"value"}},
	"extend-attribute":      {required: []string{"path", "value"}, optional: []string{"unique"}, formatted: []string{"value"}},
	"del-attribute":         {required: []string{"path"}},
	"set-capability":        {required: []string{"name", "value"}, formatted: []string{"value"}},
	"unset-capability":      {required: []string{"name"}},
	"add-trait":             {required: []string{"name"}},
	"remove-trait":          {required: []string{"name"}},
	"set-plugin-data":       {required: []string{"path", "value", "plugin_data"}, formatted: []string{"value"}, plugin: true},
	"extend-plugin-data":    {required: []string{"path", "value", "plugin_data"}, optional: []string{"unique"}, formatted: []string{"value"}, plugin: true},
	"unset-plugin-data":     {required: []string{"path", "plugin_data"}, plugin: true},
	"set-port-attribute":    {required: []string{"port_id", "path", "value"}, formatted: []string{"value"}},
	"extend-port-attribute": {required: []string{"port_id", "path", "value"}, optional: []string{"unique"}, formatted: []string{"value"}},
	"del-port-attribute":    {required: []string{"port_id", "path"}},
	"api-call":              {required: []string{"url"}, optional: []string{"headers", "proxies", "timeout", "retries", "backoff_factor"}, formatted: []string{"url"}},
}

// ConditionOps and ActionOps list the operation names, sorted.
func ConditionOps() []string { return sortedKeys(conditionSigs) }
func ActionOps() []string    { return sortedKeys(actionSigs) }

func sortedKeys(m map[string]sig) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// normalizeArgs turns the deprecated list form into named arguments, by
// position over the required then the optional ones, as Ironic's
// _normalize_list_args.
func normalizeArgs(s sig, args any) (map[string]any, error) {
	switch a := args.(type) {
	case map[string]any:
		return a, nil
	case []any:
		if len(a) < len(s.required) {
			return nil, fmt.Errorf("Not enough arguments provided. Missing: %s", strings.Join(s.required[len(a):], ", "))
		}
		out := make(map[string]any, len(a))
		for i, name := range s.required {
			out[name] = a[i]
		}
		for i, name := range s.optional {
			if j := len(s.required) + i; j < len(a) {
				out[name] = a[j]
			}
		}
		return out, nil
	case nil:
		return map[string]any{}, nil
	}
	return nil, fmt.Errorf("args must be either a list or dictionary")
}

// validateArgs checks the named arguments against the signature.
func validateArgs(s sig, args map[string]any) error {
	var missing, unexpected []string
	for _, name := range s.required {
		if _, ok := args[name]; !ok {
			missing = append(missing, name)
		}
	}
	for name := range args {
		if !slices.Contains(s.required, name) && !slices.Contains(s.optional, name) {
			unexpected = append(unexpected, name)
		}
	}
	slices.Sort(unexpected)
	var msg []string
	if len(missing) > 0 {
		msg = append(msg, "missing required argument(s): "+strings.Join(missing, ", "))
	}
	if len(unexpected) > 0 {
		msg = append(msg, "unexpected argument(s): "+strings.Join(unexpected, ", "))
	}
	if len(msg) > 0 {
		return fmt.Errorf("Inspection rule validation failed. Reason: %s", strings.Join(msg, "; "))
	}
	return nil
}
