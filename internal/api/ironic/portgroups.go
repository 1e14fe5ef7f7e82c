package ironic

import (
	"context"
	"errors"
	"net/http"
	"slices"

	"github.com/google/uuid"

	"github.com/ferrometal/ferro/internal/baremetal"
	"github.com/ferrometal/ferro/internal/inventory"
	"github.com/ferrometal/ferro/internal/store"
)

// defaultPortgroupMode is Ironic's [DEFAULT]default_portgroup_mode.
const defaultPortgroupMode = "active-backup"

type portgroupField struct {
	name string
	// min is the version that may ask for the field in ?fields= (and
	// sort by it).
	min int
	// always: shown at every version all the same. Ironic 21.4 hides no
	// portgroup field, mode and properties included, below their version.
	always bool
	write  func(b []byte, pg *baremetal.Portgroup) []byte
}

var portgroupFields = []portgroupField{
	{"uuid", 0, false, func(b []byte, pg *baremetal.Portgroup) []byte { return appendString(b, pg.UUID) }},
	{"created_at", 0, false, func(b []byte, pg *baremetal.Portgroup) []byte { return appendTime(b, pg.CreatedAt) }},
	{"updated_at", 0, false, func(b []byte, pg *baremetal.Portgroup) []byte { return appendNullTime(b, pg.UpdatedAt) }},
	{"address", 0, false, func(b []byte, pg *baremetal.Portgroup) []byte { return appendNullString(b, pg.Address) }},
	{"extra", 0, false, func(b []byte, pg *baremetal.Portgroup) []byte { return appendObject(b, pg.Extra) }},
	{"internal_info", 0, false, func(b []byte, pg *baremetal.Portgroup) []byte { return appendObject(b, pg.InternalInfo) }},
	{"mode", v26PortgroupMode, true, func(b []byte, pg *baremetal.Portgroup) []byte { return appendNullString(b, pg.Mode) }},
	{"name", 0, false, func(b []byte, pg *baremetal.Portgroup) []byte { return appendNullString(b, pg.Name) }},
	{"node_uuid", 0, false, func(b []byte, pg *baremetal.Portgroup) []byte { return appendNullString(b, pg.NodeUUID) }},
	{"properties", v26PortgroupMode, true, func(b []byte, pg *baremetal.Portgroup) []byte { return appendObject(b, pg.Properties) }},
	{"standalone_ports_supported", 0, false, func(b []byte, pg *baremetal.Portgroup) []byte {
		return appendBool(b, pg.StandalonePortsSupported)
	}},
}

var portgroupFieldMin = func() map[string]int {
	m := map[string]int{}
	for _, f := range portgroupFields {
		m[f.name] = f.min
	}
	return m
}()

var defaultPortgroupFields = []string{"uuid", "address", "name"}

func appendPortgroup(b []byte, pg *baremetal.Portgroup, minor int, base string, fs fieldSet) []byte {
	o := newObj(b)
	for i := range portgroupFields {
		f := &portgroupFields[i]
		if (minor < f.min && !f.always) || !fs.want(f.name) {
			continue
		}
		o.key(f.name)
		o.b = f.write(o.b, pg)
	}
	o.key("links")
	o.b = appendLinks(o.b, base, "portgroups", pg.UUID)
	if fs == nil {
		o.key("ports")
		o.b = appendSubLinks(o.b, base, "portgroups", pg.UUID, "/ports")
	}
	return o.end()
}

// lookupPortgroup finds a portgroup by UUID or name.
func (s *server) lookupPortgroup(ctx context.Context, tx store.Store, ident string) (*baremetal.Portgroup, error) {
	if !isUUIDLike(ident) && !isValidLogicalName(ident) {
		return nil, badRequest("Expected a logical name or UUID but received %s.", ident)
	}
	pg, err := tx.GetPortgroup(ctx, ident)
	if err != nil {
		if errors.Is(err, store.ErrNotFound) {
			return nil, portgroupNotFound(ident)
		}
		return nil, err
	}
	return pg, nil
}

var portgroupInvalidSortKeys = []string{"extra", "internal_info", "properties"}

// listPortgroups serves GET /v1/portgroups[/detail] and
// /v1/nodes/{node}/portgroups[/detail].
func (s *server) listPortgroups(rq *request, detailPath bool) error {
	parentNode := rq.r.PathValue("node")
	if rq.minor < v23Portgroups || (parentNode != "" && rq.minor < v24PortgroupSubcontrol) {
		return resourceNotFound()
	}
	allowed := []string{"node", "address", "marker", "limit", "sort_key", "sort_dir", "fields", "detail"}
	if detailPath {
		allowed = allowed[:len(allowed)-2]
	}
	a, err := rq.queryArgs(allowed...)
	if err != nil {
		return err
	}
	p, err := s.paging(a, portgroupInvalidSortKeys, false)
	if err != nil {
		return err
	}
	if err := rq.sortAndFields(a, &p, portgroupFieldMin, defaultPortgroupFields, detailPath); err != nil {
		return err
	}
	if err := rq.checkSortColumn(p.sortKey, portgroupSortColumns); err != nil {
		return err
	}
	var f store.PortgroupFilter
	f.Page = p.page
	nodeIdent := a.str("node")
	if parentNode != "" {
		nodeIdent = parentNode
	}
	if nodeIdent != "" {
		n, err := s.lookupNode(rq.ctx(), s.store, nodeIdent, rq.minor)
		if err != nil {
			return err
		}
		f.NodeUUID = n.UUID
	} else if f.Address, err = macArg(a); err != nil {
		return err
	}
	if err := checkMarker(rq.ctx(), p.page.Marker, s.store.GetPortgroup, portgroupNotFound); err != nil {
		return err
	}
	pgs, err := s.store.ListPortgroups(rq.ctx(), f)
	if err != nil {
		return err
	}
	fs := newFieldSet(p.fields)
	b := append(make([]byte, 0, 600*len(pgs)+64), `{"portgroups": [`...)
	for i, pg := range pgs {
		if i > 0 {
			b = append(b, ", "...)
		}
		b = appendPortgroup(b, pg, rq.minor, rq.base, fs)
	}
	b = append(b, ']')
	var last string
	if len(pgs) > 0 {
		last = pgs[len(pgs)-1].UUID
	}
	resource := "portgroups"
	if parentNode != "" {
		resource = "nodes/" + parentNode + "/portgroups"
	}
	if detailPath {
		resource += "/detail"
	}
	extra := a.filters("limit", "marker", "sort_key", "sort_dir", "fields", "detail")
	return rq.writeJSON(http.StatusOK, appendListEnd(b, rq.nextLink(resource, p, len(pgs), last, extra...)))
}

// getPortgroup is GET /v1/portgroups/{portgroup}.
func (s *server) getPortgroup(rq *request) error {
	if rq.minor < v23Portgroups {
		return resourceNotFound()
	}
	a, err := rq.queryArgs("fields")
	if err != nil {
		return err
	}
	pg, err := s.lookupPortgroup(rq.ctx(), s.store, rq.r.PathValue("portgroup"))
	if err != nil {
		return err
	}
	fields, err := rq.itemFields(a, portgroupFieldMin)
	if err != nil {
		return err
	}
	return rq.writeJSON(http.StatusOK, appendPortgroup(make([]byte, 0, 1024), pg, rq.minor, rq.base, newFieldSet(fields)))
}

var portgroupSchema = map[string]fieldKind{
	"uuid": kString, "name": kString, "address": kString, "node_uuid": kString,
	"extra": kObject, "standalone_ports_supported": kBoolish, "mode": kString, "properties": kObject,
}

func portgroupDoc(pg *baremetal.Portgroup) map[string]any {
	str := func(s string) any {
		if s == "" {
			return nil
		}
		return s
	}
	obj := func(m baremetal.JSON) any {
		if m == nil {
			return map[string]any{}
		}
		return m
	}
	return map[string]any{
		"uuid": pg.UUID, "name": str(pg.Name), "address": str(pg.Address), "node_uuid": str(pg.NodeUUID),
		"extra": obj(pg.Extra), "internal_info": obj(pg.InternalInfo),
		"standalone_ports_supported": pg.StandalonePortsSupported,
		"mode":                       str(pg.Mode), "properties": obj(pg.Properties),
		"created_at": nil, "updated_at": nil,
	}
}

// checkPortgroupDoc validates a portgroup document and fills pg from it.
func checkPortgroupDoc(doc map[string]any, pg *baremetal.Portgroup, minor int, create bool) error {
	for k := range doc {
		if _, ok := portgroupSchema[k]; !ok {
			return badRequest("Unknown attribute for argument portgroup: %s", k)
		}
	}
	if v, ok := doc["node_uuid"]; !ok || v == nil {
		return invalidInput("node_uuid", nil, "Mandatory field missing.")
	}
	for _, k := range slices.Sorted(mapsKeys(doc)) {
		v := doc[k]
		switch portgroupSchema[k] {
		case kString:
			if _, ok := v.(string); !ok && v != nil {
				return invalidInput(k, v, "Wrong type. Expected '<class 'str'>', got '"+pyTypeName(v)+"'")
			}
		case kObject:
			if _, ok := v.(map[string]any); !ok && v != nil {
				return invalidInput(k, v, "Wrong type. Expected '<class 'dict'>', got '"+pyTypeName(v)+"'")
			}
		case kBoolish:
			if _, err := boolField(k, v); err != nil {
				return invalidInput(k, v, "Wrong type. Expected '<class 'bool'>', got '"+pyTypeName(v)+"'")
			}
		}
	}
	if create && minor < v26PortgroupMode {
		if doc["mode"] != nil || doc["properties"] != nil {
			return notAcceptable()
		}
	}
	for _, k := range []string{"uuid", "node_uuid"} {
		if v := strField(doc[k]); v != "" && !isUUIDLike(v) {
			return invalidInput(k, v, "Expected a UUID but received "+v+".")
		}
	}
	if addr := strField(doc["address"]); addr != "" {
		mac, ok := inventory.NormalizeMAC(addr)
		if !ok {
			return invalidInput("address", addr, "Expected a MAC address but received "+addr+".")
		}
		pg.Address = mac
	} else {
		pg.Address = ""
	}
	name := strField(doc["name"])
	if name != "" && (!isValidLogicalName(name) || isUUIDLike(name)) {
		if create {
			return badRequest("Cannot create portgroup with invalid name '%s'", name)
		}
		return badRequest("Portgroup %s: Cannot change name to invalid name '%s'", pg.UUID, name)
	}
	if id := strField(doc["uuid"]); id != "" {
		pg.UUID = canonicalUUID(id)
	}
	pg.Name = name
	pg.NodeUUID = canonicalUUID(strField(doc["node_uuid"]))
	pg.Extra = objField(doc["extra"])
	pg.Properties = objField(doc["properties"])
	pg.Mode = strField(doc["mode"])
	if pg.Mode == "" {
		pg.Mode = defaultPortgroupMode
	}
	sps, _ := boolField("standalone_ports_supported", doc["standalone_ports_supported"])
	pg.StandalonePortsSupported = sps == nil || *sps
	return nil
}

// portgroupConflict words a store conflict on a portgroup write.
func portgroupConflict(ctx context.Context, tx store.Store, pg *baremetal.Portgroup) error {
	if pg.Name != "" {
		if other, err := tx.GetPortgroup(ctx, pg.Name); err == nil && other.UUID != pg.UUID {
			return conflict("A portgroup with name %s already exists.", pg.Name)
		}
	}
	if pg.Address != "" {
		if others, err := tx.ListPortgroups(ctx, store.PortgroupFilter{Address: pg.Address}); err == nil {
			for _, o := range others {
				if o.UUID != pg.UUID {
					return conflict("A portgroup with MAC address %s already exists.", pg.Address)
				}
			}
		}
	}
	return conflict("A portgroup with UUID %s already exists.", pg.UUID)
}

// createPortgroup is POST /v1/portgroups.
func (s *server) createPortgroup(rq *request) error {
	if rq.minor < v23Portgroups {
		return resourceNotFound()
	}
	doc, err := rq.createBody("portgroup")
	if err != nil {
		return err
	}
	pg := &baremetal.Portgroup{}
	if err := checkPortgroupDoc(doc, pg, rq.minor, true); err != nil {
		return err
	}
	if pg.UUID == "" {
		pg.UUID = uuid.NewString()
	}
	if _, err := s.store.GetNode(rq.ctx(), pg.NodeUUID); err != nil {
		if errors.Is(err, store.ErrNotFound) {
			return badRequest("Node %s could not be found.", pg.NodeUUID)
		}
		return err
	}
	err = s.cond.WithNodeLock(rq.ctx(), pg.NodeUUID, func(ctx context.Context, tx store.Store, n *baremetal.Node) error {
		if err := portgroupPrecheck(ctx, tx, pg); err != nil {
			return err
		}
		if err := tx.CreatePortgroup(ctx, pg); err != nil {
			if errors.Is(err, store.ErrConflict) {
				return portgroupConflict(ctx, tx, pg)
			}
			return err
		}
		return nil
	})
	if err != nil {
		if errors.Is(err, store.ErrNotFound) && !isAPIError(err) {
			return badRequest("Node %s could not be found.", pg.NodeUUID)
		}
		return err
	}
	created, err := s.store.GetPortgroup(rq.ctx(), pg.UUID)
	if err != nil {
		return err
	}
	rq.location("portgroups/" + created.UUID)
	return rq.writeJSON(http.StatusCreated, appendPortgroup(make([]byte, 0, 1024), created, rq.minor, rq.base, nil))
}

// portgroupPrecheck finds duplicates before writing, for precise messages.
func portgroupPrecheck(ctx context.Context, tx store.Store, pg *baremetal.Portgroup) error {
	if pg.Name != "" {
		if other, err := tx.GetPortgroup(ctx, pg.Name); err == nil && other.UUID != pg.UUID {
			return conflict("A portgroup with name %s already exists.", pg.Name)
		}
	}
	if pg.Address != "" {
		others, err := tx.ListPortgroups(ctx, store.PortgroupFilter{Address: pg.Address})
		if err != nil {
			return err
		}
		for _, o := range others {
			if o.UUID != pg.UUID {
				return conflict("A portgroup with MAC address %s already exists.", pg.Address)
			}
		}
	}
	return nil
}

var portgroupInternalAttrs = []string{"created_at", "id", "links", "updated_at", "uuid", "internal_info", "ports"}

// patchPortgroup is PATCH /v1/portgroups/{portgroup}.
func (s *server) patchPortgroup(rq *request) error {
	if rq.minor < v23Portgroups {
		return resourceNotFound()
	}
	if _, err := rq.queryArgs(); err != nil {
		return err
	}
	ops, err := rq.readPatch()
	if err != nil {
		return err
	}
	for _, op := range ops {
		if slices.Contains(portgroupInternalAttrs, op.top()) {
			return badRequest("'%s' is an internal attribute and can not be updated", op.Path)
		}
		if op.Op == "remove" && op.Path == "/node_uuid" {
			return badRequest("'%s' is a mandatory attribute and can not be removed", op.Path)
		}
	}
	if rq.minor < v26PortgroupMode && (firstOpTouches(ops, "/mode") || firstOpTouches(ops, "/properties")) {
		return notAcceptable()
	}
	cur, err := s.lookupPortgroup(rq.ctx(), s.store, rq.r.PathValue("portgroup"))
	if err != nil {
		return err
	}
	compute := func(ctx context.Context, tx store.Store, old *baremetal.Portgroup) (*baremetal.Portgroup, error) {
		doc, err := applyPatch(portgroupDoc(old), ops)
		if err != nil {
			return nil, err
		}
		delete(doc, "internal_info")
		delete(doc, "created_at")
		delete(doc, "updated_at")
		npg := *old
		if err := checkPortgroupDoc(doc, &npg, rq.minor, false); err != nil {
			return nil, err
		}
		if npg.NodeUUID != old.NodeUUID {
			if _, err := tx.GetNode(ctx, npg.NodeUUID); err != nil {
				if errors.Is(err, store.ErrNotFound) {
					return nil, badRequest("Node %s could not be found.", npg.NodeUUID)
				}
				return nil, err
			}
		}
		return &npg, nil
	}
	if _, err := compute(rq.ctx(), s.store, cur); err != nil {
		return err
	}
	err = s.cond.WithNodeLock(rq.ctx(), cur.NodeUUID, func(ctx context.Context, tx store.Store, n *baremetal.Node) error {
		old, err := tx.GetPortgroup(ctx, cur.UUID)
		if err != nil {
			return err
		}
		npg, err := compute(ctx, tx, old)
		if err != nil {
			return err
		}
		if err := portgroupPrecheck(ctx, tx, npg); err != nil {
			return err
		}
		if err := tx.UpdatePortgroup(ctx, npg); err != nil {
			if errors.Is(err, store.ErrConflict) {
				return portgroupConflict(ctx, tx, npg)
			}
			return err
		}
		return nil
	})
	if err != nil {
		if errors.Is(err, store.ErrNotFound) && !isAPIError(err) {
			return portgroupNotFound(rq.r.PathValue("portgroup"))
		}
		return err
	}
	pg, err := s.store.GetPortgroup(rq.ctx(), cur.UUID)
	if err != nil {
		return err
	}
	return rq.writeJSON(http.StatusOK, appendPortgroup(make([]byte, 0, 1024), pg, rq.minor, rq.base, nil))
}

// deletePortgroup is DELETE /v1/portgroups/{portgroup}.
func (s *server) deletePortgroup(rq *request) error {
	if rq.minor < v23Portgroups {
		return resourceNotFound()
	}
	if _, err := rq.queryArgs(); err != nil {
		return err
	}
	pg, err := s.lookupPortgroup(rq.ctx(), s.store, rq.r.PathValue("portgroup"))
	if err != nil {
		return err
	}
	err = s.cond.WithNodeLock(rq.ctx(), pg.NodeUUID, func(ctx context.Context, tx store.Store, n *baremetal.Node) error {
		ports, err := tx.ListPorts(ctx, store.PortFilter{PortgroupUUID: pg.UUID, Page: store.Page{Limit: 1}})
		if err != nil {
			return err
		}
		if len(ports) > 0 {
			return badRequest("Cannot complete the requested action because portgroup %s contains ports.", pg.UUID)
		}
		return tx.DeletePortgroup(ctx, pg.UUID)
	})
	if err != nil {
		if errors.Is(err, store.ErrNotFound) && !isAPIError(err) {
			return portgroupNotFound(rq.r.PathValue("portgroup"))
		}
		return err
	}
	return rq.writeEmpty(http.StatusNoContent)
}
