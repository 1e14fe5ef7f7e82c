package ironic

import (
	"encoding/json"
	"errors"
	"net/http"
	"strconv"
	"time"

	"github.com/ferrometal/ferro/internal/baremetal"
	"github.com/ferrometal/ferro/internal/inspection/rules"
	"github.com/ferrometal/ferro/internal/store"
)

// inspectionRuleResource is Ironic's inspection rule (1.96,
// ironic/api/controllers/v1/inspection_rule.py): the rules the agent
// inspect interface runs after its hooks, validated by the one rule
// engine (package inspection/rules). A sensitive rule never shows its
// conditions and actions. The rules of [inspection_rules]built_in_rules
// are not listed, as in Ironic: they live in their file, not here.
var inspectionRuleResource = describe(&resource[baremetal.InspectionRule, store.InspectionRuleFilter]{
	path:       "inspection_rules",
	noun:       "rule", // InspectionRuleNotFound: "Rule %s could not be found."
	what:       "inspection_rule",
	wildcard:   "rule",
	minVersion: v96InspectionRules,
	tooOld:     versionDisallows("inspection rules", false),
	// Ironic reads the rule by the UUID as written (get_by_uuid).
	exactKey:  true,
	asWritten: true,
	fields: append([]viewField[*baremetal.InspectionRule]{
		{"uuid", 0, strOf(func(r *baremetal.InspectionRule) string { return r.UUID })},
		{"description", 0, func(b []byte, r *baremetal.InspectionRule, _ *renderCtx) []byte {
			if r.Description == nil {
				return append(b, "null"...)
			}
			return appendString(b, *r.Description)
		}},
		{"priority", 0, func(b []byte, r *baremetal.InspectionRule, _ *renderCtx) []byte {
			return strconv.AppendInt(b, int64(r.Priority), 10)
		}},
		{"sensitive", 0, boolOf(func(r *baremetal.InspectionRule) bool { return r.Sensitive })},
		{"phase", 0, nullStrOf(func(r *baremetal.InspectionRule) string { return r.Phase })},
		{"conditions", 0, func(b []byte, r *baremetal.InspectionRule, _ *renderCtx) []byte {
			return appendRuleOps(b, r, r.Conditions, true)
		}},
		{"actions", 0, func(b []byte, r *baremetal.InspectionRule, _ *renderCtx) []byte {
			return appendRuleOps(b, r, r.Actions, false)
		}},
	}, stampFields(func(r *baremetal.InspectionRule) time.Time { return r.CreatedAt },
		func(r *baremetal.InspectionRule) *time.Time { return r.UpdatedAt })...),
	defaults:    []string{"uuid", "priority", "phase", "description"},
	invalidSort: []string{"actions", "conditions"},
	// models.InspectionRule; scope is a column ferro keeps no field for.
	sortColumns: baseSortColumns(sortColumns{"priority": 0, "description": 0, "sensitive": 0, "phase": 0}),
	params: []listParam[baremetal.InspectionRule, store.InspectionRuleFilter]{
		{name: "phase", read: setString[baremetal.InspectionRule](func(f *store.InspectionRuleFilter) *string { return &f.Phase })},
	},
	internal: []string{"created_at", "id", "links", "updated_at", "uuid"},
	doc:      inspectionRuleDoc,
	check:    checkInspectionRuleDoc,
	uuid:     func(r *baremetal.InspectionRule) string { return r.UUID },
	setNew:   func(r *baremetal.InspectionRule, id string, now time.Time) { r.UUID, r.CreatedAt = id, now },
	reread:   true,
	storeOps: storeOps[baremetal.InspectionRule, store.InspectionRuleFilter]{store.Store.GetInspectionRule, store.Store.ListInspectionRules,
		store.Store.CreateInspectionRule, store.Store.UpdateInspectionRule, store.Store.DeleteInspectionRule},
	page: func(f *store.InspectionRuleFilter) *store.Page { return &f.Page },
})

// inspectionRuleRoutes registers /v1/inspection_rules. Ironic's controller
// has no /detail (the word is an identifier that is not a UUID there) and
// checks the identifier before anything else but the version.
func (s *server) inspectionRuleRoutes() {
	r := inspectionRuleResource
	list := r.listHandler(s, false, 0)
	s.handle("GET /v1/inspection_rules", list)
	s.handle("GET /v1/inspection_rules/{$}", list)
	s.handle("POST /v1/inspection_rules", r.createHandler(s))
	s.handle("GET /v1/inspection_rules/{rule}", inspectionRuleIdent(r.getHandler(s), false))
	s.handle("PATCH /v1/inspection_rules/{rule}", inspectionRuleIdent(r.patchHandler(s), true))
	s.handle("DELETE /v1/inspection_rules/{rule}", inspectionRuleIdent(r.deleteHandler(s), false))
}

// inspectionRuleIdent refuses an identifier that is not a UUID as Ironic
// does: PATCH's args.uuid, the others' request_parameter_schema.
func inspectionRuleIdent(next func(*request) error, patch bool) func(*request) error {
	return func(rq *request) error {
		if err := inspectionRuleResource.versionCheck(rq); err != nil {
			return err
		}
		if id := rq.r.PathValue("rule"); !isUUIDLike(id) {
			if patch {
				return badRequest("Expected UUID for inspection_rule_uuid: %s", id)
			}
			return badRequest("Schema error: %s is not a 'uuid'", pyRepr(id))
		}
		return next(rq)
	}
}

// versionDisallows is the answer of a controller below its version, as
// Ironic's deploy templates, allocations and inspection rules word it: 404
// for reads, 405 for writes; in webob's body where Ironic raises it in the
// controller's _route (deploy templates, allocations), in the API's own
// where a handler's api_version decorator does (inspection rules).
func versionDisallows(what string, webob bool) func(rq *request) error {
	msg := "The API version does not allow " + what
	return func(rq *request) error {
		status := http.StatusMethodNotAllowed
		if rq.r.Method == http.MethodGet || rq.r.Method == http.MethodHead {
			status = http.StatusNotFound
		}
		return &apiError{status: status, msg: msg, webob: webob}
	}
}

// appendRuleOps appends a rule's conditions or actions as Ironic shows
// them (convert_conditions, convert_actions): op and args, the loop when
// it is set and, for a condition with a loop, how its results combine;
// null for a sensitive rule.
func appendRuleOps(b []byte, r *baremetal.InspectionRule, ops []map[string]any, conditions bool) []byte {
	if r.Sensitive {
		return append(b, "null"...)
	}
	out := make([]any, len(ops))
	for i, op := range ops {
		m := map[string]any{"op": op["op"], "args": op["args"]}
		if loop, ok := op["loop"]; ok && nonEmpty(loop) {
			m["loop"] = loop
			if conditions {
				m["multiple"] = "any"
				if v, ok := op["multiple"]; ok {
					m["multiple"] = v
				}
			}
		}
		out[i] = m
	}
	return appendValue(b, out, nil)
}

// nonEmpty is Python's truth of a decoded JSON value.
func nonEmpty(v any) bool {
	switch x := v.(type) {
	case nil:
		return false
	case []any:
		return len(x) > 0
	case map[string]any:
		return len(x) > 0
	case string:
		return x != ""
	case bool:
		return x
	case json.Number:
		f, err := x.Float64()
		return err != nil || f != 0
	}
	return true
}

// inspectionRuleDoc is a rule as the document a PATCH applies to (the
// object's as_dict).
func inspectionRuleDoc(r *baremetal.InspectionRule) map[string]any {
	conds := make([]any, len(r.Conditions))
	for i, c := range r.Conditions {
		conds[i] = c
	}
	acts := make([]any, len(r.Actions))
	for i, a := range r.Actions {
		acts[i] = a
	}
	doc := map[string]any{"uuid": r.UUID, "description": nil, "priority": json.Number(strconv.Itoa(r.Priority)),
		"sensitive": r.Sensitive, "phase": nullable(r.Phase), "conditions": conds, "actions": acts}
	if r.Description != nil {
		doc["description"] = *r.Description
	}
	return doc
}

// checkInspectionRuleDoc validates a created or patched rule as Ironic:
// the request's JSON schema ("Schema error: …" on create, "Schema error
// for patch: …" on PATCH), then validate_rule (the operators and their
// arguments, the phase and the priority); and fills r but for its UUID.
// A PATCH may not make a sensitive rule not sensitive.
func checkInspectionRuleDoc(doc map[string]any, r *baremetal.InspectionRule, w writeCtx) error {
	if !w.create && r.Sensitive {
		for _, op := range w.ops {
			if op.Path == "/sensitive" && op.Op != "remove" && op.Value != nil && !nonEmpty(op.Value) {
				return wholePatchError(w.ops, "Inspection rules cannot have the sensitive flag unset.")
			}
		}
	}
	parsed, err := rules.FromMap(doc, false)
	if err != nil {
		var ve *rules.ValidationError
		if !errors.As(err, &ve) {
			return err
		}
		switch {
		case ve.Schema != "" && w.create:
			return badRequest("Schema error: %s", ve.Schema)
		case ve.Schema != "":
			return schemaError("patch", "%s", ve.Schema)
		}
		return badRequest("%s", ve.Msg)
	}
	st := parsed.ToStored()
	r.Description, r.Priority, r.Sensitive, r.Phase = st.Description, st.Priority, st.Sensitive, st.Phase
	r.Conditions, r.Actions = st.Conditions, st.Actions
	return nil
}
