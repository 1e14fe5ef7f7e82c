package ironic

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/google/uuid"

	"github.com/ferrometal/ferro/internal/baremetal"
	"github.com/ferrometal/ferro/internal/store"
)

// deployTemplateFieldMin lists a deploy template's fields (all 1.55).
var deployTemplateFieldMin = map[string]int{
	"uuid": v55DeployTemplates, "name": v55DeployTemplates, "steps": v55DeployTemplates,
	"extra": v55DeployTemplates, "created_at": v55DeployTemplates, "updated_at": v55DeployTemplates,
}

var defaultDeployTemplateFields = []string{"uuid", "name"}

// deployStepInterfaces are the interfaces a deploy step may name
// (Ironic's DEPLOYING_INTERFACE_PRIORITY).
var deployStepInterfaces = []string{"bios", "deploy", "management", "power", "raid"}

func deployTemplateNotFound(ident string) *apiError {
	return notFound("Deploy template %s could not be found.", ident)
}

func appendDeployTemplate(b []byte, dt *baremetal.DeployTemplate, base string, fs fieldSet) []byte {
	o := newObj(b)
	if fs.want("uuid") {
		o.str("uuid", dt.UUID)
	}
	if fs.want("name") {
		o.str("name", dt.Name)
	}
	if fs.want("steps") {
		o.key("steps")
		o.b = append(o.b, '[')
		for i, st := range dt.Steps {
			if i > 0 {
				o.b = append(o.b, ", "...)
			}
			so := newObj(o.b)
			so.str("interface", st.Interface)
			so.str("step", st.Step)
			so.key("args")
			so.b = appendObject(so.b, st.Args)
			so.key("priority")
			so.b = strconv.AppendInt(so.b, int64(st.Priority), 10)
			o.b = so.end()
		}
		o.b = append(o.b, ']')
	}
	if fs.want("extra") {
		o.key("extra")
		o.b = appendObject(o.b, dt.Extra)
	}
	appendStamps(&o, dt.CreatedAt, dt.UpdatedAt, fs)
	o.key("links")
	o.b = appendLinks(o.b, base, "deploy_templates", dt.UUID)
	return o.end()
}

func (s *server) lookupDeployTemplate(rq *request, tx store.Store, ident string) (*baremetal.DeployTemplate, error) {
	if isUUIDLike(ident) {
		ident = canonicalUUID(ident)
	}
	dt, err := tx.GetDeployTemplate(rq.ctx(), ident)
	if err != nil {
		if errors.Is(err, store.ErrNotFound) {
			return nil, deployTemplateNotFound(ident)
		}
		return nil, err
	}
	return dt, nil
}

// listDeployTemplates is GET /v1/deploy_templates[/detail] (1.55).
func (s *server) listDeployTemplates(rq *request, detailPath bool) error {
	if rq.minor < v55DeployTemplates {
		return resourceNotFound()
	}
	allowed := []string{"marker", "limit", "sort_key", "sort_dir", "fields", "detail"}
	if detailPath {
		allowed = allowed[:4]
	}
	a, err := rq.queryArgs(allowed...)
	if err != nil {
		return err
	}
	p, err := s.paging(a, []string{"extra", "steps"}, false)
	if err != nil {
		return err
	}
	if err := rq.sortAndFields(a, &p, deployTemplateFieldMin, defaultDeployTemplateFields, detailPath); err != nil {
		return err
	}
	if err := checkMarker(rq.ctx(), p.page.Marker, s.store.GetDeployTemplate, deployTemplateNotFound); err != nil {
		return err
	}
	list, err := s.store.ListDeployTemplates(rq.ctx(), p.page)
	if err != nil {
		return err
	}
	fs := newFieldSet(p.fields)
	js := rq.streamJSON(http.StatusOK)
	js.b = append(js.b, `{"deploy_templates": [`...)
	for i, dt := range list {
		if i > 0 {
			js.b = append(js.b, ", "...)
		}
		js.b = appendDeployTemplate(js.b, dt, rq.base, fs)
		js.flush()
	}
	js.b = append(js.b, ']')
	var last string
	if len(list) > 0 {
		last = list[len(list)-1].UUID
	}
	resource := "deploy_templates"
	if detailPath {
		resource += "/detail"
	}
	extra := a.filters("limit", "marker", "sort_key", "sort_dir", "fields", "detail")
	if next := rq.nextLink(resource, p, len(list), last, extra...); next != "" {
		js.b = append(js.b, `, "next": `...)
		js.b = appendString(js.b, next)
	}
	js.b = append(js.b, '}')
	return js.end()
}

// getDeployTemplate is GET /v1/deploy_templates/{template}: by UUID or name.
func (s *server) getDeployTemplate(rq *request) error {
	if rq.minor < v55DeployTemplates {
		return resourceNotFound()
	}
	a, err := rq.queryArgs("fields")
	if err != nil {
		return err
	}
	dt, err := s.lookupDeployTemplate(rq, s.store, rq.r.PathValue("template"))
	if err != nil {
		return err
	}
	fields := a.stringList("fields")
	if fields != nil {
		if err := checkFields(fields, rq.minor, deployTemplateFieldMin); err != nil {
			return err
		}
	}
	return rq.writeJSON(http.StatusOK, appendDeployTemplate(make([]byte, 0, 512), dt, rq.base, newFieldSet(fields)))
}

var digitsRE = regexp.MustCompile(`^[0-9]+$`)

// checkDeployTemplateDoc validates a document as Ironic's TEMPLATE_SCHEMA
// and duplicate_steps, and fills dt.
func checkDeployTemplateDoc(doc map[string]any, dt *baremetal.DeployTemplate) error {
	const what = "deploy_template"
	for _, k := range slices.Sorted(mapsKeys(doc)) {
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
		for _, k := range slices.Sorted(mapsKeys(m)) {
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
	if id != "" {
		dt.UUID = canonicalUUID(id)
	}
	dt.Name = name
	dt.Steps = steps
	dt.Extra = objField(doc["extra"])
	dt.Description = desc
	return nil
}

// createDeployTemplate is POST /v1/deploy_templates.
func (s *server) createDeployTemplate(rq *request) error {
	if rq.minor < v55DeployTemplates {
		return resourceNotFound()
	}
	doc, err := rq.createBody("deploy_template")
	if err != nil {
		return err
	}
	dt := &baremetal.DeployTemplate{}
	if err := checkDeployTemplateDoc(doc, dt); err != nil {
		return err
	}
	if dt.UUID == "" {
		dt.UUID = uuid.NewString()
	}
	dt.CreatedAt = s.now().UTC()
	if err := s.store.CreateDeployTemplate(rq.ctx(), dt); err != nil {
		if errors.Is(err, store.ErrConflict) {
			if _, gerr := s.store.GetDeployTemplate(rq.ctx(), dt.UUID); gerr == nil {
				return conflict("A deploy template with UUID %s already exists.", dt.UUID)
			}
			return conflict("A deploy template with name %s already exists.", dt.Name)
		}
		return err
	}
	rq.location("deploy_templates/" + dt.UUID)
	return rq.writeJSON(http.StatusCreated, appendDeployTemplate(make([]byte, 0, 512), dt, rq.base, nil))
}

var deployTemplateInternalAttrs = []string{"created_at", "id", "links", "updated_at", "uuid"}

// patchDeployTemplate is PATCH /v1/deploy_templates/{template}.
func (s *server) patchDeployTemplate(rq *request) error {
	if rq.minor < v55DeployTemplates {
		return resourceNotFound()
	}
	if _, err := rq.queryArgs(); err != nil {
		return err
	}
	body, err := rq.readBody()
	if err != nil {
		return err
	}
	ops, err := parsePatch(body)
	if err != nil {
		return err
	}
	for _, op := range ops {
		if slices.Contains(deployTemplateInternalAttrs, op.top()) {
			return badRequest("'%s' is an internal attribute and can not be updated", op.Path)
		}
	}
	var out *baremetal.DeployTemplate
	err = s.store.InTx(rq.ctx(), func(tx store.Store) error {
		old, err := s.lookupDeployTemplate(rq, tx, rq.r.PathValue("template"))
		if err != nil {
			return err
		}
		steps := make([]any, len(old.Steps))
		for i, st := range old.Steps {
			steps[i] = map[string]any{"interface": st.Interface, "step": st.Step,
				"args": emptyIfNil(st.Args), "priority": json.Number(strconv.Itoa(st.Priority))}
		}
		doc, err := applyPatch(map[string]any{
			"uuid": old.UUID, "name": old.Name, "steps": steps, "extra": emptyIfNil(old.Extra),
			"description": nullable(old.Description),
		}, ops)
		if err != nil {
			return err
		}
		ndt := *old
		if err := checkDeployTemplateDoc(doc, &ndt); err != nil {
			return err
		}
		if ndt.UUID != old.UUID {
			return badRequest("'/uuid' is an internal attribute and can not be updated")
		}
		if err := tx.UpdateDeployTemplate(rq.ctx(), &ndt); err != nil {
			if errors.Is(err, store.ErrConflict) {
				return conflict("A deploy template with name %s already exists.", ndt.Name)
			}
			return err
		}
		out = &ndt
		return nil
	})
	if err != nil {
		return err
	}
	return rq.writeJSON(http.StatusOK, appendDeployTemplate(make([]byte, 0, 512), out, rq.base, nil))
}

// deleteDeployTemplate is DELETE /v1/deploy_templates/{template}.
func (s *server) deleteDeployTemplate(rq *request) error {
	if rq.minor < v55DeployTemplates {
		return resourceNotFound()
	}
	if _, err := rq.queryArgs(); err != nil {
		return err
	}
	dt, err := s.lookupDeployTemplate(rq, s.store, rq.r.PathValue("template"))
	if err != nil {
		return err
	}
	if err := s.store.DeleteDeployTemplate(rq.ctx(), dt.UUID); err != nil {
		if errors.Is(err, store.ErrNotFound) {
			return deployTemplateNotFound(dt.UUID)
		}
		return fmt.Errorf("delete deploy template %s: %w", dt.UUID, err)
	}
	return rq.writeEmpty(http.StatusNoContent)
}
