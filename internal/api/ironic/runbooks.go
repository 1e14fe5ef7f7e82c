package ironic

import (
	"context"
	"encoding/json"
	"maps"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/ferrometal/ferro/internal/auth"
	"github.com/ferrometal/ferro/internal/baremetal"
	"github.com/ferrometal/ferro/internal/store"
)

// runbookResource is Ironic's runbook (1.92; traits and description 1.112,
// ironic/api/controllers/v1/runbook.py): named steps a project runs on its
// nodes for manual cleaning or servicing, found by UUID or name. Its rules
// are checked against its owner (itemCheck), and a project lists the
// runbooks it owns and the public ones.
var runbookResource = describe(&resource[baremetal.Runbook, store.RunbookFilter]{
	path:       "runbooks",
	noun:       "runbook",
	wildcard:   "runbook",
	minVersion: v92Runbooks,
	tooOld:     versionDisallows("runbooks", true),
	byName:     true,
	badName:    runbookIdentError("runbook_ident"),
	fields: append([]viewField[*baremetal.Runbook]{
		{"uuid", 0, strOf(func(rb *baremetal.Runbook) string { return rb.UUID })},
		{"name", 0, strOf(func(rb *baremetal.Runbook) string { return rb.Name })},
		{"description", v112RunbookTraits, func(b []byte, rb *baremetal.Runbook, _ *renderCtx) []byte {
			if rb.Description == nil {
				return append(b, "null"...)
			}
			return appendString(b, *rb.Description)
		}},
		{"steps", 0, func(b []byte, rb *baremetal.Runbook, _ *renderCtx) []byte {
			return appendSteps(b, len(rb.Steps), "order", func(i int) (string, string, baremetal.JSON, int) {
				st := rb.Steps[i]
				return st.Interface, st.Step, st.Args, st.Order
			})
		}},
		{"disable_ramdisk", 0, boolOf(func(rb *baremetal.Runbook) bool { return rb.DisableRamdisk })},
		{"public", 0, boolOf(func(rb *baremetal.Runbook) bool { return rb.Public })},
		{"owner", 0, func(b []byte, rb *baremetal.Runbook, _ *renderCtx) []byte {
			if rb.Owner == nil {
				return append(b, "null"...)
			}
			return appendString(b, *rb.Owner)
		}},
		{"extra", 0, objOf(func(rb *baremetal.Runbook) baremetal.JSON { return rb.Extra })},
		{"traits", v112RunbookTraits, func(b []byte, rb *baremetal.Runbook, _ *renderCtx) []byte {
			return appendStrings(b, rb.Traits)
		}},
	}, stampFields(func(rb *baremetal.Runbook) time.Time { return rb.CreatedAt },
		func(rb *baremetal.Runbook) *time.Time { return rb.UpdatedAt })...),
	unknownBelow: true,
	defaults:     []string{"uuid", "name"},
	invalidSort:  []string{"extra", "steps", "traits"},
	// models.Runbook: every column sorts at every version (Ironic's
	// check_allowed_fields knows only node fields).
	sortColumns: baseSortColumns(sortColumns{"name": 0, "description": 0, "public": 0, "owner": 0, "disable_ramdisk": 0}),
	listChecks:  []listCheck{checkFields, checkSortColumn},
	params: []listParam[baremetal.Runbook, store.RunbookFilter]{
		{name: "project", always: true, read: runbookListScope},
	},
	patchGate: func(rq *request, ops []patchOp) error {
		allowed := []string{"disable_ramdisk", "extra", "name", "owner", "public", "steps"}
		if rq.minor >= v112RunbookTraits {
			allowed = append(allowed, "description")
		}
		check := onlyPatching(allowed...)
		for _, op := range ops {
			if err := check(op); err != nil {
				return err
			}
		}
		return nil
	},
	itemCheck: checkRunbookItem,
	doc:       runbookDoc,
	check:     checkRunbookDoc,
	uuid:      func(rb *baremetal.Runbook) string { return rb.UUID },
	setNew:    func(rb *baremetal.Runbook, id string, now time.Time) { rb.UUID, rb.CreatedAt = id, now },
	conflict: func(_ context.Context, _ store.Store, rb *baremetal.Runbook) error {
		return conflict("A runbook with name %s already exists.", rb.Name)
	},
	storeOps: storeOps[baremetal.Runbook, store.RunbookFilter]{store.Store.GetRunbook, store.Store.ListRunbooks,
		store.Store.CreateRunbook, store.Store.UpdateRunbook, store.Store.DeleteRunbook},
	page: func(f *store.RunbookFilter) *store.Page { return &f.Page },
})

// runbookRoutes registers /v1/runbooks. Ironic's controller has no
// /detail: the word is a runbook's name there.
func (s *server) runbookRoutes() {
	r := runbookResource
	list := r.listHandler(s, false, 0)
	s.handle("GET /v1/runbooks", list)
	s.handle("GET /v1/runbooks/{$}", list)
	s.handle("POST /v1/runbooks", r.createHandler(s))
	s.handle("GET /v1/runbooks/{runbook}", r.getHandler(s))
	s.handle("PATCH /v1/runbooks/{runbook}", r.patchHandler(s))
	s.handle("DELETE /v1/runbooks/{runbook}", r.deleteHandler(s))
	s.handle("GET /v1/runbooks/{runbook}/traits", s.getRunbookTraits)
	s.handle("PUT /v1/runbooks/{runbook}/traits", s.setRunbookTraits)
	s.handle("PUT /v1/runbooks/{runbook}/traits/{trait}", s.setRunbookTraits)
	s.handle("DELETE /v1/runbooks/{runbook}/traits", s.deleteRunbookTraits)
	s.handle("DELETE /v1/runbooks/{runbook}/traits/{trait}", s.deleteRunbookTraits)
}

// runbookStepSchema is Ironic's RUNBOOK_STEP_SCHEMA: a clean (or service)
// step with its order; args may be left out.
var runbookStepSchema = stepSchema{interfaces: stepInterfaces, number: "order", argsOptional: true}

// runbookIdentError is Ironic's args.uuid_or_name for a path's runbook:
// an identifier that is neither a UUID nor a logical name.
func runbookIdentError(arg string) func(ident string) error {
	return func(ident string) error {
		if isUUIDLike(ident) || isValidLogicalName(ident) {
			return nil
		}
		return badRequest("Expected UUID or name for %s: %s", arg, ident)
	}
}

// runbookListScope is the list's check_list_policy, with Ironic's project
// argument: a boolean there (args.boolean), which the owner filter then
// compares with the runbooks' owners. So project=true asks for another
// "project" (403 without list_all) and with list_all matches no owner,
// only the public runbooks; project=false is no filter.
func runbookListScope(q *listQuery[baremetal.Runbook, store.RunbookFilter], v string, given bool) error {
	asked := false
	if given {
		b, err := boolArg("project", v)
		if err != nil {
			return err
		}
		asked = b != nil && *b
	}
	c := q.rq.creds
	if auth.Allowed(auth.RuleRunbookListAll, c, auth.Target{}) {
		if asked {
			q.where(func(rb *baremetal.Runbook) bool { return rb.Public })
		}
		return nil
	}
	if c.ProjectID == "" || asked {
		return forbidden(auth.RuleRunbookListAll)
	}
	q.f.Project = c.ProjectID
	return nil
}

// checkRunbookItem checks the route's rule against the runbook read, as
// check_runbook_policy_and_retrieve: a GET by another project is allowed
// when the runbook is public; a PATCH needs the rules of the fields it
// touches and may not give a public runbook an owner.
func checkRunbookItem(rq *request, rb *baremetal.Runbook, ops []patchOp) error {
	if rq.r.Method == http.MethodPatch {
		if err := authorizeRunbook(rq, rb, runbookPatchRules(ops)...); err != nil {
			return err
		}
		if len(patchValues(ops, "/owner")) > 0 {
			public := patchValues(ops, "/public")
			if (rb.Public && len(public) == 0) || (len(public) > 0 && nonEmpty(public[0])) {
				return wholePatchError(ops, "There cannot be an owner for a public runbook")
			}
		}
		return nil
	}
	err := authorizeRunbook(rq, rb, rq.route.Rule)
	if err != nil && (rq.r.Method == http.MethodGet || rq.r.Method == http.MethodHead) {
		if rb.Public {
			return nil
		}
		// check_and_retrieve_public_runbook raises HTTPForbidden without
		// its argument: Ironic's message keeps the placeholder.
		return &apiError{status: http.StatusForbidden, msg: "Access was denied to the following resource: %(resource)s"}
	}
	return err
}

// authorizeRunbook checks rules, in order, against the runbook's owner.
func authorizeRunbook(rq *request, rb *baremetal.Runbook, rules ...string) error {
	if !restricted(rq.creds) {
		return nil
	}
	for _, r := range rules {
		if !auth.Allowed(r, rq.creds, auth.Target{Owner: deref(rb.Owner)}) {
			return forbidden(r)
		}
	}
	return nil
}

// runbookPatchRules are the rules a runbook PATCH needs
// (_authorize_patch_and_get_runbook): update:owner and update:public for
// those paths, update for any other path (or an empty patch).
func runbookPatchRules(ops []patchOp) []string {
	var rules []string
	generic := false
	for _, op := range ops {
		switch {
		case strings.HasPrefix(op.Path, "/owner"):
			rules = append(rules, auth.RuleRunbookUpdateOwner)
		case strings.HasPrefix(op.Path, "/public"):
			rules = append(rules, auth.RuleRunbookUpdatePublic)
		default:
			generic = true
		}
	}
	if generic || len(rules) == 0 {
		rules = append(rules, auth.RuleRunbookUpdate)
	}
	return rules
}

// runbookDoc is a runbook as the document a PATCH applies to (as_dict).
func runbookDoc(rb *baremetal.Runbook) map[string]any {
	steps := make([]any, len(rb.Steps))
	for i, st := range rb.Steps {
		steps[i] = map[string]any{"interface": st.Interface, "step": st.Step,
			"args": emptyIfNil(st.Args), "order": json.Number(strconv.Itoa(st.Order))}
	}
	return map[string]any{"uuid": rb.UUID, "name": rb.Name, "description": derefAny(rb.Description), "steps": steps,
		"disable_ramdisk": rb.DisableRamdisk, "public": rb.Public, "owner": derefAny(rb.Owner),
		"extra": emptyIfNil(rb.Extra)}
}

// runbookNamePattern is RUNBOOK_NAME_SCHEMA's pattern (1.112), as jsonschema
// quotes it.
const runbookNamePattern = `'^[A-Za-z0-9\\-._~]+$'`

// checkRunbookDoc validates a created or patched runbook as Ironic:
// RUNBOOK_SCHEMA on create below 1.112 (the name a trait),
// RUNBOOK_MUTATION_SCHEMA_V112 on create from 1.112 and on every PATCH
// (any logical name, a description), then duplicate_steps and the UUID;
// and fills rb but for its UUID. A caller that is not system-scoped
// creates runbooks of its own project only, never public ones.
func checkRunbookDoc(doc map[string]any, rb *baremetal.Runbook, w writeCtx) error {
	what := docName(w, "runbook")
	if !w.create && len(patchValues(w.ops, "/public")) > 0 {
		// Ironic clears the owner before it applies a patch that sets
		// public: the owner is what the patch's own /owner operations leave.
		var owner any
		for _, op := range w.ops {
			if op.Path == "/owner" {
				owner = nil
				if op.Op == "add" || op.Op == "replace" {
					owner = op.Value
				}
			}
		}
		doc["owner"] = owner
	}
	v112 := !w.create || w.minor >= v112RunbookTraits
	known := []string{"disable_ramdisk", "extra", "name", "owner", "public", "steps", "uuid"}
	if v112 {
		known = append(known, "description")
	}
	for _, k := range slices.Sorted(maps.Keys(doc)) {
		if !slices.Contains(known, k) {
			return schemaError(what, "Additional properties are not allowed (%s was unexpected)", pyRepr(k))
		}
	}
	for _, k := range []string{"steps", "name"} {
		if _, ok := doc[k]; !ok {
			return schemaError(what, "%s is a required property", pyRepr(k))
		}
	}
	if err := checkRunbookName(what, doc["name"], v112); err != nil {
		return err
	}
	for _, f := range []struct {
		name string
		k    fieldKind
		max  int
	}{{"uuid", kString, 0}, {"description", kString, 255}, {"owner", kString, 255}, {"extra", kObject, 0}} {
		v := doc[f.name]
		if err := checkRunbookKind(what, v, f.k); err != nil {
			return err
		}
		if s, ok := v.(string); ok && f.max > 0 && utf8.RuneCountInString(s) > f.max {
			return schemaError(what, "%s is too long", pyRepr(s))
		}
	}
	for _, k := range []string{"disable_ramdisk", "public"} {
		switch doc[k].(type) {
		case nil, bool:
		default:
			return schemaError(what, "%s is not of type 'boolean', 'null'", pyRepr(doc[k]))
		}
	}
	steps, err := runbookStepSchema.check(schemaErrorFor(what), doc["steps"])
	if err != nil {
		return err
	}
	if err := duplicateSteps(steps); err != nil {
		return err
	}
	if v, ok := doc["uuid"].(string); ok && !isUUIDLike(v) {
		return badRequest("Expected UUID for uuid: %s", v)
	}
	owner := optString(doc["owner"])
	public := doc["public"] == true
	if w.create && (w.creds == nil || !w.creds.System) {
		var project string
		if w.creds != nil {
			project = w.creds.ProjectID
		}
		if deref(owner) != "" && *owner != project {
			return badRequest("Cannot create a runbook as a project scoped admin with an owner other than your own project.")
		}
		if project != "" && public {
			return badRequest("Cannot create a public runbook as a project scoped admin.")
		}
		owner = nil // Ironic's project_id: None without a project
		if project != "" {
			owner = &project
		}
	}
	rb.Name = doc["name"].(string)
	rb.Steps = make([]baremetal.RunbookStep, len(steps))
	for i, st := range steps {
		rb.Steps[i] = baremetal.RunbookStep{Interface: st.iface, Step: st.step, Args: st.args, Order: st.number}
	}
	rb.DisableRamdisk = doc["disable_ramdisk"] == true
	rb.Public = public
	rb.Owner = owner
	rb.Extra = objField(doc["extra"])
	rb.Description = optString(doc["description"])
	if w.create {
		rb.Traits = []string{}
	}
	return nil
}

// checkRunbookName is the name's schema: a trait (TRAITS_SCHEMA) below
// 1.112, else RUNBOOK_NAME_SCHEMA.
func checkRunbookName(what string, v any, v112 bool) error {
	name, ok := v.(string)
	switch {
	case !ok:
		return schemaError(what, "%s is not of type 'string'", pyRepr(v))
	case name == "":
		return schemaError(what, "'' is too short")
	case utf8.RuneCountInString(name) > 255:
		return schemaError(what, "%s is too long", pyRepr(name))
	case v112 && !isValidLogicalName(name):
		return schemaError(what, "%s does not match %s", pyRepr(name), runbookNamePattern)
	case !v112:
		return checkTraitSchema(what, name)
	}
	return nil
}

// checkTraitSchema is a value checked against TRAITS_SCHEMA by Ironic's
// args.schema, which adds the root cause of an anyOf: the first
// alternative's, the custom trait pattern.
func checkTraitSchema(what string, v any) error {
	t, ok := v.(string)
	switch {
	case !ok:
		return schemaError(what, "%s is not of type 'string'", pyRepr(v))
	case t == "":
		return schemaError(what, "'' is too short")
	case utf8.RuneCountInString(t) > 255:
		return schemaError(what, "%s is too long", pyRepr(t))
	case !validTrait(t):
		return schemaError(what, "%s is not valid under any of the given schemas. Possible root cause: %s does not match '^CUSTOM_[A-Z0-9_]+$'", pyRepr(t), pyRepr(t))
	}
	return nil
}

// checkRunbookKind is a property's type, worded as jsonschema words a
// list of types.
func checkRunbookKind(what string, v any, k fieldKind) error {
	switch k {
	case kString:
		if _, ok := v.(string); ok || v == nil {
			return nil
		}
		return schemaError(what, "%s is not of type 'string', 'null'", pyRepr(v))
	case kObject:
		if _, ok := v.(map[string]any); ok || v == nil {
			return nil
		}
		return schemaError(what, "%s is not of type 'object', 'null'", pyRepr(v))
	}
	return nil
}

// provisionRunbook is Ironic's _handle_runbook for PUT
// /v1/nodes/{node}/states/provision with a runbook: the runbook the body
// names (resolveRunbook) for the verb, whose steps replace the verb's
// (clean_steps for clean, service_steps for service; giving both is a 400)
// and whose disable_ramdisk replaces the body's. Any other verb is refused
// as check_allow_disable_ramdisk refuses the runbook's disable_ramdisk, and
// servicing with it needs 1.108.
func (s *server) provisionRunbook(rq *request, n *baremetal.Node, event, ident string, body map[string]any) (*baremetal.Runbook, error) {
	rb, err := s.resolveRunbook(rq, n, ident)
	if err != nil {
		return nil, err
	}
	switch event {
	case "clean", "service":
		if key := event + "_steps"; nonEmpty(body[key]) {
			return nil, badRequest("Please provide either \"%s\" or a runbook, but not both.", key)
		}
		if event == "service" && rq.minor < v108ServiceNoRamdisk {
			return nil, newError(http.StatusNotAcceptable, "disable_ramdisk is not acceptable in this API version")
		}
		return rb, nil
	}
	return nil, badRequest("disable_ramdisk is supported only with manual cleaning or servicing")
}

// resolveRunbook is the runbook ident names (a UUID or a name) that node n
// may run: below 1.92 there are none (406); the caller needs
// baremetal:runbook:use on it; the node must have one of its traits (from
// 1.112) or, below, a trait equal to its name.
func (s *server) resolveRunbook(rq *request, n *baremetal.Node, ident string) (*baremetal.Runbook, error) {
	if rq.minor < v92Runbooks {
		return nil, notAcceptable()
	}
	rb, err := s.lookupRunbook(rq, ident)
	if err != nil {
		return nil, err
	}
	if err := authorizeRunbook(rq, rb, auth.RuleRunbookUse); err != nil {
		return nil, err
	}
	if rq.minor < v112RunbookTraits {
		if !slices.Contains(n.Traits, rb.Name) {
			return nil, badRequest("This runbook has not been approved for use on this node %s. Please ask an administrator to add it to your node traits.", n.UUID)
		}
		return rb, nil
	}
	if len(rb.Traits) == 0 {
		return nil, badRequest("Runbook %s has no traits configured. Please ask an administrator to add traits to the runbook.", rb.UUID)
	}
	if !slices.ContainsFunc(rb.Traits, func(t string) bool { return slices.Contains(n.Traits, t) }) {
		return nil, badRequest("This runbook has not been approved for use on this node %s. The node does not have any of the runbook's traits %s. Please ask an administrator to add a matching trait to your node.",
			n.UUID, pyRepr(anySlice(slices.Sorted(slices.Values(rb.Traits)))))
	}
	return rb, nil
}

// optString is a document's string or null as a pointer.
func optString(v any) *string {
	if s, ok := v.(string); ok {
		return &s
	}
	return nil
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

// derefAny is *s, or nil (JSON null) for nil.
func derefAny(s *string) any {
	if s == nil {
		return nil
	}
	return *s
}
