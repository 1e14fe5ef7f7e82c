package ironic

import (
	"context"
	"errors"
	"net/http"
	"slices"
	"unicode/utf8"

	"github.com/google/uuid"

	"github.com/ferrometal/ferro/internal/baremetal"
	"github.com/ferrometal/ferro/internal/store"
)

// chassisFields is a chassis's view, as Ironic's Chassis object.
var chassisFields = []struct {
	name  string
	write func(b []byte, c *baremetal.Chassis) []byte
}{
	{"uuid", func(b []byte, c *baremetal.Chassis) []byte { return appendString(b, c.UUID) }},
	{"description", func(b []byte, c *baremetal.Chassis) []byte { return appendNullString(b, c.Description) }},
	{"extra", func(b []byte, c *baremetal.Chassis) []byte { return appendObject(b, c.Extra) }},
	{"created_at", func(b []byte, c *baremetal.Chassis) []byte { return appendTime(b, c.CreatedAt) }},
	{"updated_at", func(b []byte, c *baremetal.Chassis) []byte { return appendNullTime(b, c.UpdatedAt) }},
}

var chassisFieldMin = func() map[string]int {
	m := map[string]int{}
	for _, f := range chassisFields {
		m[f.name] = 0
	}
	return m
}()

var defaultChassisFields = []string{"uuid", "description"}

// chassisInvalidSortKeys are the fields Ironic refuses to sort chassis by.
var chassisInvalidSortKeys = []string{"extra"}

func chassisNotFound(ident string) *apiError {
	return notFound("Chassis %s could not be found.", ident)
}

func appendChassis(b []byte, c *baremetal.Chassis, base string, fs fieldSet) []byte {
	o := newObj(b)
	for _, f := range chassisFields {
		if !fs.want(f.name) {
			continue
		}
		o.key(f.name)
		o.b = f.write(o.b, c)
	}
	o.key("links")
	o.b = appendLinks(o.b, base, "chassis", c.UUID)
	if fs == nil {
		o.key("nodes")
		o.b = appendSubLinks(o.b, base, "chassis", c.UUID, "/nodes")
	}
	return o.end()
}

// chassisIdent checks the {chassis} path segment: chassis have no names.
func chassisIdent(rq *request) (string, error) {
	id := rq.r.PathValue("chassis")
	if !isUUIDLike(id) {
		return "", invalidInput("chassis_uuid", id, "Expected a UUID but received "+id+".")
	}
	return id, nil
}

func (s *server) lookupChassis(ctx context.Context, tx store.Store, id string) (*baremetal.Chassis, error) {
	c, err := tx.GetChassis(ctx, canonicalUUID(id))
	if err != nil {
		if errors.Is(err, store.ErrNotFound) {
			return nil, chassisNotFound(id)
		}
		return nil, err
	}
	return c, nil
}

// listChassis is GET /v1/chassis and GET /v1/chassis/detail.
func (s *server) listChassis(rq *request, detailPath bool) error {
	allowed := []string{"marker", "limit", "sort_key", "sort_dir", "fields", "detail"}
	if detailPath {
		allowed = allowed[:4]
	}
	a, err := rq.queryArgs(allowed...)
	if err != nil {
		return err
	}
	p, err := s.paging(a, chassisInvalidSortKeys, false)
	if err != nil {
		return err
	}
	if err := rq.sortAndFields(a, &p, chassisFieldMin, defaultChassisFields, detailPath); err != nil {
		return err
	}
	if err := checkMarker(rq.ctx(), p.page.Marker, s.store.GetChassis, chassisNotFound); err != nil {
		return err
	}
	list, err := s.store.ListChassis(rq.ctx(), p.page)
	if err != nil {
		return err
	}
	fs := newFieldSet(p.fields)
	js := rq.streamJSON(http.StatusOK)
	js.b = append(js.b, `{"chassis": [`...)
	for i, c := range list {
		if i > 0 {
			js.b = append(js.b, ", "...)
		}
		js.b = appendChassis(js.b, c, rq.base, fs)
		js.flush()
	}
	js.b = append(js.b, ']')
	var last string
	if len(list) > 0 {
		last = list[len(list)-1].UUID
	}
	resource := "chassis"
	if detailPath {
		resource = "chassis/detail"
	}
	extra := a.filters("limit", "marker", "sort_key", "sort_dir", "fields", "detail")
	if next := rq.nextLink(resource, p, len(list), last, extra...); next != "" {
		js.b = append(js.b, `, "next": `...)
		js.b = appendString(js.b, next)
	}
	js.b = append(js.b, '}')
	return js.end()
}

// getChassis is GET /v1/chassis/{chassis}.
func (s *server) getChassis(rq *request) error {
	a, err := rq.queryArgs("fields")
	if err != nil {
		return err
	}
	id, err := chassisIdent(rq)
	if err != nil {
		return err
	}
	c, err := s.lookupChassis(rq.ctx(), s.store, id)
	if err != nil {
		return err
	}
	fields := a.stringList("fields")
	if fields != nil {
		if rq.minor < v8FieldsSubset {
			return notAcceptable()
		}
		if err := checkFields(fields, rq.minor, chassisFieldMin); err != nil {
			return err
		}
	}
	return rq.writeJSON(http.StatusOK, appendChassis(make([]byte, 0, 512), c, rq.base, newFieldSet(fields)))
}

// chassisSchema lists a chassis's writable attributes (Ironic's
// CHASSIS_SCHEMA).
var chassisSchema = map[string]fieldKind{"uuid": kString, "description": kString, "extra": kObject}

// checkChassisDoc validates a chassis document and fills c from it.
func checkChassisDoc(doc map[string]any, c *baremetal.Chassis) error {
	for _, k := range slices.Sorted(mapsKeys(doc)) {
		kind, ok := chassisSchema[k]
		if !ok {
			return badRequest("Unknown attribute for argument chassis: %s", k)
		}
		v := doc[k]
		switch kind {
		case kString:
			if _, ok := v.(string); !ok && v != nil {
				return invalidInput(k, v, "Wrong type. Expected '<class 'str'>', got '"+pyTypeName(v)+"'")
			}
		case kObject:
			if _, ok := v.(map[string]any); !ok && v != nil {
				return invalidInput(k, v, "Wrong type. Expected '<class 'dict'>', got '"+pyTypeName(v)+"'")
			}
		}
	}
	if id := strField(doc["uuid"]); id != "" {
		if !isUUIDLike(id) {
			return invalidInput("uuid", id, "Expected a UUID but received "+id+".")
		}
		c.UUID = canonicalUUID(id)
	}
	d := strField(doc["description"])
	if utf8.RuneCountInString(d) > 255 {
		return invalidInput("description", d, "Value should have a maximum character requirement of 255")
	}
	c.Description = d
	c.Extra = objField(doc["extra"])
	return nil
}

// createChassis is POST /v1/chassis.
func (s *server) createChassis(rq *request) error {
	doc, err := rq.createBody("chassis")
	if err != nil {
		return err
	}
	c := &baremetal.Chassis{}
	if err := checkChassisDoc(doc, c); err != nil {
		return err
	}
	if c.UUID == "" {
		c.UUID = uuid.NewString()
	}
	c.CreatedAt = s.now().UTC()
	if err := s.store.CreateChassis(rq.ctx(), c); err != nil {
		if errors.Is(err, store.ErrConflict) {
			return conflict("A chassis with UUID %s already exists.", c.UUID)
		}
		return err
	}
	rq.location("chassis/" + c.UUID)
	return rq.writeJSON(http.StatusCreated, appendChassis(make([]byte, 0, 512), c, rq.base, nil))
}

// chassisInternalAttrs are the paths a chassis PATCH may not touch.
var chassisInternalAttrs = []string{"created_at", "id", "links", "nodes", "updated_at", "uuid"}

// patchChassis is PATCH /v1/chassis/{chassis}.
func (s *server) patchChassis(rq *request) error {
	if _, err := rq.queryArgs(); err != nil {
		return err
	}
	id, err := chassisIdent(rq)
	if err != nil {
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
		if slices.Contains(chassisInternalAttrs, op.top()) {
			return badRequest("'%s' is an internal attribute and can not be updated", op.Path)
		}
	}
	var out *baremetal.Chassis
	err = s.store.InTx(rq.ctx(), func(tx store.Store) error {
		old, err := s.lookupChassis(rq.ctx(), tx, id)
		if err != nil {
			return err
		}
		extra := any(map[string]any(old.Extra))
		if old.Extra == nil {
			extra = map[string]any{}
		}
		doc, err := applyPatch(map[string]any{
			"uuid": old.UUID, "description": nullable(old.Description), "extra": extra,
		}, ops)
		if err != nil {
			return err
		}
		nc := *old
		if err := checkChassisDoc(doc, &nc); err != nil {
			return err
		}
		if nc.UUID != old.UUID {
			return badRequest("'/uuid' is an internal attribute and can not be updated")
		}
		if err := tx.UpdateChassis(rq.ctx(), &nc); err != nil {
			return err
		}
		out = &nc
		return nil
	})
	if err != nil {
		return err
	}
	return rq.writeJSON(http.StatusOK, appendChassis(make([]byte, 0, 512), out, rq.base, nil))
}

// nullable is s, or nil for "": an unset string field in a PATCH document.
func nullable(s string) any {
	if s == "" {
		return nil
	}
	return s
}

// deleteChassis is DELETE /v1/chassis/{chassis}.
func (s *server) deleteChassis(rq *request) error {
	if _, err := rq.queryArgs(); err != nil {
		return err
	}
	id, err := chassisIdent(rq)
	if err != nil {
		return err
	}
	if err := s.store.DeleteChassis(rq.ctx(), canonicalUUID(id)); err != nil {
		switch {
		case errors.Is(err, store.ErrNotFound):
			return chassisNotFound(id)
		case errors.Is(err, store.ErrConflict):
			return badRequest("Cannot complete the requested action because chassis %s contains nodes.", id)
		}
		return err
	}
	return rq.writeEmpty(http.StatusNoContent)
}
