package ironic

import (
	"context"
	"encoding/json"
	"maps"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/ferrometal/ferro/internal/baremetal"
	"github.com/ferrometal/ferro/internal/store"
)

// deployTemplateResource is Ironic's deploy template (1.55), found by
// UUID or name.
var deployTemplateResource = describe(&resource[baremetal.DeployTemplate, store.Page]{
	path:       "deploy_templates",
	noun:       "deploy template",
	wildcard:   "template",
	minVersion: v55DeployTemplates,
	tooOld:     versionDisallows("deploy templates", true),
	byName:     true,
	jsonSuffix: true,
	fields: append([]viewField[*baremetal.DeployTemplate]{
		{"uuid", 0, strOf(func(dt *baremetal.DeployTemplate) string { return dt.UUID })},
		{"name", 0, strOf(func(dt *baremetal.DeployTemplate) string { return dt.Name })},
		{"steps", 0, func(b []byte, dt *baremetal.DeployTemplate, _ *renderCtx) []byte {
			return appendDeploySteps(b, dt.Steps)
		}},
		{"extra", 0, objOf(func(dt *baremetal.DeployTemplate) baremetal.JSON { return dt.Extra })},
	}, stampFields(func(dt *baremetal.DeployTemplate) time.Time { return dt.CreatedAt },
		func(dt *baremetal.DeployTemplate) *time.Time { return dt.UpdatedAt })...),
	defaults:    []string{"uuid", "name"},
	invalidSort: []string{"extra", "steps"},
	sortColumns: deployTemplateSortColumns,
	internal:    []string{"created_at", "id", "links", "updated_at", "uuid"},
	doc: func(dt *baremetal.DeployTemplate) map[string]any {
		steps := make([]any, len(dt.Steps))
		for i, st := range dt.Steps {
			steps[i] = map[string]any{"interface": st.Interface, "step": st.Step,
				"args": emptyIfNil(st.Args), "priority": json.Number(strconv.Itoa(st.Priority))}
		}
		return map[string]any{"uuid": dt.UUID, "name": dt.Name, "steps": steps, "extra": emptyIfNil(dt.Extra),
			"description": nullable(dt.Description)}
	},
	check: func(doc map[string]any, dt *baremetal.DeployTemplate, _ writeCtx) error {
		return checkDeployTemplateDoc(doc, dt)
	},
	uuid:   func(dt *baremetal.DeployTemplate) string { return dt.UUID },
	setNew: func(dt *baremetal.DeployTemplate, id string, now time.Time) { dt.UUID, dt.CreatedAt = id, now },
	conflict: func(_ context.Context, _ store.Store, dt *baremetal.DeployTemplate) error {
		return conflict("A deploy template with name %s already exists.", dt.Name)
	},
	storeOps: storeOps[baremetal.DeployTemplate, store.Page]{store.Store.GetDeployTemplate, store.Store.ListDeployTemplates,
		store.Store.CreateDeployTemplate, store.Store.UpdateDeployTemplate, store.Store.DeleteDeployTemplate},
	page: pageOf,
})

// appendDeploySteps appends a deploy template's steps.
func appendDeploySteps(b []byte, steps []baremetal.DeployStep) []byte {
	b = append(b, '[')
	for i, st := range steps {
		if i > 0 {
			b = append(b, ", "...)
		}
		so := newObj(b)
		so.str("interface", st.Interface)
		so.str("step", st.Step)
		so.key("args")
		so.b = appendObject(so.b, st.Args)
		so.key("priority")
		so.b = strconv.AppendInt(so.b, int64(st.Priority), 10)
		b = so.end()
	}
	return append(b, ']')
}

// deployStepInterfaces are the interfaces a deploy step may name
// (Ironic's DEPLOYING_INTERFACE_PRIORITY).
var deployStepInterfaces = []string{"bios", "deploy", "management", "power", "raid"}

var digitsRE = regexp.MustCompile(`^[0-9]+$`)

// checkDeployTemplateDoc validates a document as Ironic's TEMPLATE_SCHEMA
// and duplicate_steps, and fills dt (the UUID apart).
func checkDeployTemplateDoc(doc map[string]any, dt *baremetal.DeployTemplate) error {
	const what = "deploy_template"
	for _, k := range slices.Sorted(maps.Keys(doc)) {
		switch k {
		case "description", "extra", "name", "steps", "uuid":
		default:
			return schemaError(what, "Additional properties are not allowed (%s was unexpected)", pyRepr(k))
		}
	}
	for _, k := range []string{"steps", "name"} {
		if _, ok := doc[k]; !ok {
			return schemaError(what, "%s is a required property", pyRepr(k))
		}
	}
	name, ok := doc["name"].(string)
	if !ok || !validTrait(name) {
		return schemaError(what, "%s is not valid under any of the given schemas", pyRepr(doc["name"]))
	}
	if err := checkKind(what, "extra", doc["extra"], kObject); err != nil {
		return err
	}
	if err := checkKind(what, "description", doc["description"], kString); err != nil {
		return err
	}
	desc := strField(doc["description"])
	if utf8.RuneCountInString(desc) > 255 {
		return schemaError(what, "%s is too long", pyRepr(desc))
	}
	id := strField(doc["uuid"])
	if err := checkKind(what, "uuid", doc["uuid"], kString); err != nil {
		return err
	}
	if id != "" && !isUUIDLike(id) {
		return invalidInput("uuid", id, "Expected a UUID but received "+id+".")
	}
	raw, ok := doc["steps"].([]any)
	if !ok {
		return schemaError(what, "%s is not of type 'array'", pyRepr(doc["steps"]))
	}
	if len(raw) == 0 {
		return schemaError(what, "[] is too short")
	}
	steps := make([]baremetal.DeployStep, 0, len(raw))
	seen := map[string]bool{}
	var dups []string
	for _, r := range raw {
		m, ok := r.(map[string]any)
		if !ok {
			return schemaError(what, "%s is not of type 'object'", pyRepr(r))
		}
		for _, k := range slices.Sorted(maps.Keys(m)) {
			if k != "args" && k != "interface" && k != "priority" && k != "step" {
				return schemaError(what, "Additional properties are not allowed (%s was unexpected)", pyRepr(k))
			}
		}
		for _, k := range []string{"interface", "step", "args", "priority"} {
			if _, ok := m[k]; !ok {
				return schemaError(what, "%s is a required property", pyRepr(k))
			}
		}
		args, ok := m["args"].(map[string]any)
		if !ok {
			return schemaError(what, "%s is not of type 'object'", pyRepr(m["args"]))
		}
		iface, ok := m["interface"].(string)
		if !ok || !slices.Contains(deployStepInterfaces, iface) {
			return schemaError(what, "%s is not one of %s", pyRepr(m["interface"]), pyRepr(anySlice(deployStepInterfaces)))
		}
		step, ok := m["step"].(string)
		if !ok || step == "" {
			return schemaError(what, "%s is too short", pyRepr(m["step"]))
		}
		prio := -1
		switch p := m["priority"].(type) {
		case json.Number:
			if n, err := p.Int64(); err == nil && n >= 0 && n <= 1<<31-1 {
				prio = int(n)
			}
		case string:
			if digitsRE.MatchString(p) {
				if n, err := strconv.Atoi(p); err == nil {
					prio = n
				}
			}
		}
		if prio < 0 {
			return schemaError(what, "%s is not valid under any of the given schemas", pyRepr(m["priority"]))
		}
		key := "interface: " + iface + ", step: " + step
		if seen[key] && !slices.Contains(dups, key) {
			dups = append(dups, key)
		}
		seen[key] = true
		steps = append(steps, baremetal.DeployStep{Interface: iface, Step: step, Args: args, Priority: prio})
	}
	if len(dups) > 0 {
		return badRequest("Deploy template invalid: Duplicate deploy steps. A deploy template cannot have multiple deploy steps with the same interface and step. Duplicates: %s.", strings.Join(dups, "; "))
	}
	dt.Name = name
	dt.Steps = steps
	dt.Extra = objField(doc["extra"])
	dt.Description = desc
	return nil
}
