package ironic

import (
	"context"
	"encoding/json"
	"maps"
	"slices"
	"strconv"
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
			return appendSteps(b, len(dt.Steps), "priority", func(i int) (string, string, baremetal.JSON, int) {
				st := dt.Steps[i]
				return st.Interface, st.Step, st.Args, st.Priority
			})
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
	check:  checkDeployTemplateDoc,
	uuid:   func(dt *baremetal.DeployTemplate) string { return dt.UUID },
	setNew: func(dt *baremetal.DeployTemplate, id string, now time.Time) { dt.UUID, dt.CreatedAt = id, now },
	conflict: func(_ context.Context, _ store.Store, dt *baremetal.DeployTemplate) error {
		return conflict("A deploy template with name %s already exists.", dt.Name)
	},
	storeOps: storeOps[baremetal.DeployTemplate, store.Page]{store.Store.GetDeployTemplate, store.Store.ListDeployTemplates,
		store.Store.CreateDeployTemplate, store.Store.UpdateDeployTemplate, store.Store.DeleteDeployTemplate},
	page: pageOf,
})

// deployStepSchema is Ironic's DEPLOY_STEP_SCHEMA, of deploy templates and
// deploy_steps: its interfaces are master's DEPLOYING_INTERFACE_PRIORITY,
// the same list as the clean steps'.
var deployStepSchema = stepSchema{interfaces: stepInterfaces, number: "priority"}

// checkDeployTemplateDoc validates a document as Ironic's TEMPLATE_SCHEMA
// and duplicate_steps, and fills dt (the UUID apart). A patched document's
// errors name the "patch" (patched_validate_with_schema).
func checkDeployTemplateDoc(doc map[string]any, dt *baremetal.DeployTemplate, w writeCtx) error {
	what := docName(w, "deploy_template")
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
	checked, err := deployStepSchema.check(schemaErrorFor(what), doc["steps"])
	if err != nil {
		return err
	}
	if err := duplicateSteps(checked); err != nil {
		return err
	}
	steps := make([]baremetal.DeployStep, len(checked))
	for i, st := range checked {
		steps[i] = baremetal.DeployStep{Interface: st.iface, Step: st.step, Args: st.args, Priority: st.number}
	}
	dt.Name = name
	dt.Steps = steps
	dt.Extra = objField(doc["extra"])
	dt.Description = desc
	return nil
}
