package ironic

import (
	"encoding/json"
	"maps"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/ferrometal/ferro/internal/baremetal"
)

// Deploy templates and runbooks are both a name and a list of steps; their
// steps are checked, compared and shown by the code below, each resource
// giving its schema (Ironic's DEPLOY_STEP_SCHEMA, RUNBOOK_STEP_SCHEMA in
// ironic/api/controllers/v1/utils.py).

// stepSchema is one of Ironic's step schemas: the interfaces a step may
// name, the key of its number (an integer ≥ 0 or a string of digits) and
// whether args is required.
type stepSchema struct {
	interfaces   []string
	number       string // "priority" (deploy steps), "order" (runbook steps)
	argsOptional bool
}

// schemaStep is a step that passed its schema.
type schemaStep struct {
	iface, step string
	args        map[string]any
	number      int
}

var digitsRE = regexp.MustCompile(`^[0-9]+$`)

// schemaErrorFor words a document's schema errors (schemaError).
func schemaErrorFor(what string) func(format string, args ...any) *apiError {
	return func(format string, args ...any) *apiError { return schemaError(what, format, args...) }
}

// check validates a document's steps (at least one) against the schema,
// as jsonschema words it; bad words the errors for the document.
func (sc stepSchema) check(bad func(format string, args ...any) *apiError, v any) ([]schemaStep, error) {
	raw, ok := v.([]any)
	if !ok {
		return nil, bad("%s is not of type 'array'", pyRepr(v))
	}
	if len(raw) == 0 {
		return nil, bad("[] is too short")
	}
	return sc.checkItems(bad, raw)
}

// checkItems validates each step of a list against the schema.
func (sc stepSchema) checkItems(bad func(format string, args ...any) *apiError, raw []any) ([]schemaStep, error) {
	required := []string{"interface", "step", "args", sc.number}
	if sc.argsOptional {
		required = []string{"interface", "step", sc.number}
	}
	steps := make([]schemaStep, 0, len(raw))
	for _, r := range raw {
		st, err := sc.checkOne(bad, r, required)
		if err != nil {
			return nil, err
		}
		steps = append(steps, st)
	}
	return steps, nil
}

// checkOne validates one step.
func (sc stepSchema) checkOne(bad func(format string, args ...any) *apiError, r any, required []string) (schemaStep, error) {
	m, ok := r.(map[string]any)
	if !ok {
		return schemaStep{}, bad("%s is not of type 'object'", pyRepr(r))
	}
	for _, k := range slices.Sorted(maps.Keys(m)) {
		if k != "args" && k != "interface" && k != "step" && k != sc.number {
			return schemaStep{}, bad("Additional properties are not allowed (%s was unexpected)", pyRepr(k))
		}
	}
	for _, k := range required {
		if _, ok := m[k]; !ok {
			return schemaStep{}, bad("%s is a required property", pyRepr(k))
		}
	}
	var args map[string]any
	if a, present := m["args"]; present {
		if args, ok = a.(map[string]any); !ok {
			return schemaStep{}, bad("%s is not of type 'object'", pyRepr(a))
		}
	}
	iface, ok := m["interface"].(string)
	if !ok || !slices.Contains(sc.interfaces, iface) {
		return schemaStep{}, bad("%s is not one of %s", pyRepr(m["interface"]), pyRepr(anySlice(sc.interfaces)))
	}
	step, ok := m["step"].(string)
	if !ok {
		return schemaStep{}, bad("%s is not of type 'string'", pyRepr(m["step"]))
	}
	if step == "" {
		return schemaStep{}, bad("'' is too short")
	}
	n := -1
	switch p := m[sc.number].(type) {
	case json.Number:
		if x, err := p.Int64(); err == nil && x >= 0 && x <= 1<<31-1 {
			n = int(x)
		}
	case string:
		if digitsRE.MatchString(p) {
			if x, err := strconv.Atoi(p); err == nil {
				n = x
			}
		}
	}
	if n < 0 {
		return schemaStep{}, bad("%s is not valid under any of the given schemas", pyRepr(m[sc.number]))
	}
	return schemaStep{iface: iface, step: step, args: args, number: n}, nil
}

// duplicateSteps is Ironic's duplicate_steps: an interface and step may
// appear once.
func duplicateSteps(steps []schemaStep) error {
	seen := map[string]bool{}
	var dups []string
	for _, st := range steps {
		key := "interface: " + st.iface + ", step: " + st.step
		if seen[key] && !slices.Contains(dups, key) {
			dups = append(dups, key)
		}
		seen[key] = true
	}
	if len(dups) > 0 {
		return badRequest("Deploy template invalid: Duplicate deploy steps. A template cannot have multiple deploy steps with the same interface and step. Duplicates: %s.", strings.Join(dups, "; "))
	}
	return nil
}

// appendSteps appends n steps as Ironic's convert_steps shows them
// (interface, step, args, then the number under its key), their args'
// secrets masked as step_sanitize masks them.
func appendSteps(b []byte, n int, number string, step func(i int) (iface, name string, args baremetal.JSON, num int)) []byte {
	b = append(b, '[')
	for i := range n {
		if i > 0 {
			b = append(b, ", "...)
		}
		iface, name, args, num := step(i)
		so := newObj(b)
		so.str("interface", iface)
		so.str("step", name)
		so.key("args")
		so.b = appendMap(so.b, args, isSecretKey)
		so.key(number)
		so.b = strconv.AppendInt(so.b, int64(num), 10)
		b = so.end()
	}
	return append(b, ']')
}

// docName is what a document is called in its schema errors: the body's
// name on create, "patch" for a patched one (Ironic's
// patched_validate_with_schema).
func docName(w writeCtx, create string) string {
	if w.create {
		return create
	}
	return "patch"
}
