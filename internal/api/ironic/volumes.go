package ironic

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/ferrometal/ferro/internal/baremetal"
	"github.com/ferrometal/ferro/internal/store"
)

// volumeResource describes one of the node-scoped volume resources (API
// 1.32): connectors and targets share every list, show, create, PATCH and
// delete step, and differ only in what this description says.
type volumeResource[T any] struct {
	plural      string // "connectors": the URL segment and the list's key
	noun        string // "volume connector", for messages
	defaults    []string
	invalidSort []string
	fieldMin    map[string]int
	schema      map[string]fieldKind
	required    []string
	// view writes the fields (all of them when fs is nil).
	view func(o *objWriter, v T, fs fieldSet)
	// doc is v as the document PATCH applies to; fill sets v from a
	// checked document.
	doc  func(v T) map[string]any
	fill func(doc map[string]any, v T) error
	uuid func(v T) string
	node func(v T) string
	// conflict words a store conflict on v.
	conflict func(v T) *apiError

	newT   func() T
	clone  func(v T) T
	get    func(ctx context.Context, s store.Store, id string) (T, error)
	list   func(ctx context.Context, s store.Store, f store.VolumeFilter) ([]T, error)
	create func(ctx context.Context, s store.Store, v T) error
	update func(ctx context.Context, s store.Store, v T) error
	delete func(ctx context.Context, s store.Store, id string) error
}

func fieldMinOf(names ...string) map[string]int {
	m := map[string]int{}
	for _, n := range names {
		m[n] = v32Volume
	}
	return m
}

var volumeConnectors = &volumeResource[*baremetal.VolumeConnector]{
	plural:      "connectors",
	noun:        "volume connector",
	defaults:    []string{"uuid", "node_uuid", "type", "connector_id"},
	invalidSort: []string{"extra"},
	fieldMin:    fieldMinOf("uuid", "node_uuid", "type", "connector_id", "extra", "created_at", "updated_at"),
	schema: map[string]fieldKind{
		"uuid": kString, "node_uuid": kStringReq, "type": kStringReq, "connector_id": kStringReq, "extra": kObject,
	},
	required: []string{"connector_id", "node_uuid", "type"},
	view: func(o *objWriter, c *baremetal.VolumeConnector, fs fieldSet) {
		if fs.want("uuid") {
			o.str("uuid", c.UUID)
		}
		if fs.want("node_uuid") {
			o.str("node_uuid", c.NodeUUID)
		}
		if fs.want("type") {
			o.str("type", c.Type)
		}
		if fs.want("connector_id") {
			o.str("connector_id", c.ConnectorID)
		}
		if fs.want("extra") {
			o.key("extra")
			o.b = appendObject(o.b, c.Extra)
		}
		appendStamps(o, c.CreatedAt, c.UpdatedAt, fs)
	},
	doc: func(c *baremetal.VolumeConnector) map[string]any {
		return map[string]any{"uuid": c.UUID, "node_uuid": c.NodeUUID, "type": c.Type,
			"connector_id": c.ConnectorID, "extra": emptyIfNil(c.Extra)}
	},
	fill: func(doc map[string]any, c *baremetal.VolumeConnector) error {
		c.NodeUUID = strField(doc["node_uuid"])
		c.Type = strField(doc["type"])
		c.ConnectorID = strField(doc["connector_id"])
		c.Extra = objField(doc["extra"])
		return nil
	},
	uuid: func(c *baremetal.VolumeConnector) string { return c.UUID },
	node: func(c *baremetal.VolumeConnector) string { return c.NodeUUID },
	conflict: func(c *baremetal.VolumeConnector) *apiError {
		return conflict("A volume connector with type %s and connector ID %s already exists.", c.Type, c.ConnectorID)
	},
	newT: func() *baremetal.VolumeConnector { return &baremetal.VolumeConnector{} },
	clone: func(c *baremetal.VolumeConnector) *baremetal.VolumeConnector {
		n := *c
		return &n
	},
	get: func(ctx context.Context, s store.Store, id string) (*baremetal.VolumeConnector, error) {
		return s.GetVolumeConnector(ctx, id)
	},
	list: func(ctx context.Context, s store.Store, f store.VolumeFilter) ([]*baremetal.VolumeConnector, error) {
		return s.ListVolumeConnectors(ctx, f)
	},
	create: func(ctx context.Context, s store.Store, c *baremetal.VolumeConnector) error {
		return s.CreateVolumeConnector(ctx, c)
	},
	update: func(ctx context.Context, s store.Store, c *baremetal.VolumeConnector) error {
		return s.UpdateVolumeConnector(ctx, c)
	},
	delete: func(ctx context.Context, s store.Store, id string) error { return s.DeleteVolumeConnector(ctx, id) },
}

var volumeTargets = &volumeResource[*baremetal.VolumeTarget]{
	plural:      "targets",
	noun:        "volume target",
	defaults:    []string{"uuid", "node_uuid", "volume_type", "boot_index", "volume_id"},
	invalidSort: []string{"extra", "properties"},
	fieldMin:    fieldMinOf("uuid", "node_uuid", "volume_type", "boot_index", "volume_id", "properties", "extra", "created_at", "updated_at"),
	schema: map[string]fieldKind{
		"uuid": kString, "node_uuid": kStringReq, "volume_type": kStringReq, "volume_id": kStringReq,
		"boot_index": kAny, "properties": kObject, "extra": kObject,
	},
	required: []string{"boot_index", "node_uuid", "volume_id", "volume_type"},
	view: func(o *objWriter, vt *baremetal.VolumeTarget, fs fieldSet) {
		if fs.want("uuid") {
			o.str("uuid", vt.UUID)
		}
		if fs.want("node_uuid") {
			o.str("node_uuid", vt.NodeUUID)
		}
		if fs.want("volume_type") {
			o.str("volume_type", vt.VolumeType)
		}
		if fs.want("boot_index") {
			o.key("boot_index")
			o.b = appendValue(o.b, json.Number(strconv.Itoa(vt.BootIndex)), nil)
		}
		if fs.want("volume_id") {
			o.str("volume_id", vt.VolumeID)
		}
		if fs.want("properties") {
			o.key("properties")
			o.b = appendObject(o.b, vt.Properties)
		}
		if fs.want("extra") {
			o.key("extra")
			o.b = appendObject(o.b, vt.Extra)
		}
		appendStamps(o, vt.CreatedAt, vt.UpdatedAt, fs)
	},
	doc: func(vt *baremetal.VolumeTarget) map[string]any {
		return map[string]any{"uuid": vt.UUID, "node_uuid": vt.NodeUUID, "volume_type": vt.VolumeType,
			"volume_id": vt.VolumeID, "boot_index": vt.BootIndex,
			"properties": emptyIfNil(vt.Properties), "extra": emptyIfNil(vt.Extra)}
	},
	fill: func(doc map[string]any, vt *baremetal.VolumeTarget) error {
		bi, ok := intValue(doc["boot_index"])
		if !ok {
			return invalidInput("boot_index", doc["boot_index"], "Wrong type. Expected an integer")
		}
		vt.BootIndex = bi
		vt.NodeUUID = strField(doc["node_uuid"])
		vt.VolumeType = strField(doc["volume_type"])
		vt.VolumeID = strField(doc["volume_id"])
		vt.Properties = objField(doc["properties"])
		vt.Extra = objField(doc["extra"])
		return nil
	},
	uuid: func(vt *baremetal.VolumeTarget) string { return vt.UUID },
	node: func(vt *baremetal.VolumeTarget) string { return vt.NodeUUID },
	conflict: func(vt *baremetal.VolumeTarget) *apiError {
		return conflict("A volume target with boot index '%d' for the same node already exists.", vt.BootIndex)
	},
	newT: func() *baremetal.VolumeTarget { return &baremetal.VolumeTarget{} },
	clone: func(vt *baremetal.VolumeTarget) *baremetal.VolumeTarget {
		n := *vt
		return &n
	},
	get: func(ctx context.Context, s store.Store, id string) (*baremetal.VolumeTarget, error) {
		return s.GetVolumeTarget(ctx, id)
	},
	list: func(ctx context.Context, s store.Store, f store.VolumeFilter) ([]*baremetal.VolumeTarget, error) {
		return s.ListVolumeTargets(ctx, f)
	},
	create: func(ctx context.Context, s store.Store, vt *baremetal.VolumeTarget) error {
		return s.CreateVolumeTarget(ctx, vt)
	},
	update: func(ctx context.Context, s store.Store, vt *baremetal.VolumeTarget) error {
		return s.UpdateVolumeTarget(ctx, vt)
	},
	delete: func(ctx context.Context, s store.Store, id string) error { return s.DeleteVolumeTarget(ctx, id) },
}

func emptyIfNil(m baremetal.JSON) map[string]any {
	if m == nil {
		return map[string]any{}
	}
	return m
}

// intValue accepts a JSON integer (not a bool, not a fraction).
func intValue(v any) (int, bool) {
	n, ok := v.(json.Number)
	if !ok {
		if i, ok := v.(int); ok {
			return i, true
		}
		return 0, false
	}
	i, err := n.Int64()
	if err != nil || i < -1<<31 || i > 1<<31-1 {
		return 0, false
	}
	return int(i), true
}

func appendStamps(o *objWriter, created time.Time, updated *time.Time, fs fieldSet) {
	if fs.want("created_at") {
		o.key("created_at")
		o.b = appendTime(o.b, created)
	}
	if fs.want("updated_at") {
		o.key("updated_at")
		o.b = appendNullTime(o.b, updated)
	}
}

func (vr *volumeResource[T]) notFound(id string) *apiError {
	return notFound("%s%s %s could not be found.", strings.ToUpper(vr.noun[:1]), vr.noun[1:], id)
}

func (vr *volumeResource[T]) appendOne(b []byte, v T, base string, fs fieldSet) []byte {
	o := newObj(b)
	vr.view(&o, v, fs)
	o.key("links")
	o.b = appendLinks(o.b, base, "volume/"+vr.plural, vr.uuid(v))
	return o.end()
}

// ident checks the {volume} path segment: volume resources have no names.
func (vr *volumeResource[T]) ident(rq *request) (string, error) {
	id := rq.r.PathValue("volume")
	if !isUUIDLike(id) {
		return "", invalidInput("uuid", id, "Expected a UUID but received "+id+".")
	}
	return canonicalUUID(id), nil
}

func (vr *volumeResource[T]) lookup(ctx context.Context, tx store.Store, id string) (T, error) {
	v, err := vr.get(ctx, tx, id)
	if err != nil {
		var zero T
		if errors.Is(err, store.ErrNotFound) {
			return zero, vr.notFound(id)
		}
		return zero, err
	}
	return v, nil
}

// listHandler serves GET /v1/volume/<plural>[/detail] and
// /v1/nodes/{node}/volume/<plural>.
func (vr *volumeResource[T]) listHandler(s *server, detailPath bool) func(*request) error {
	return func(rq *request) error {
		if rq.minor < v32Volume {
			return resourceNotFound()
		}
		allowed := []string{"node", "marker", "limit", "sort_key", "sort_dir", "fields", "detail"}
		if detailPath {
			allowed = allowed[:5]
		}
		a, err := rq.queryArgs(allowed...)
		if err != nil {
			return err
		}
		p, err := s.paging(a, vr.invalidSort, false)
		if err != nil {
			return err
		}
		if err := rq.sortAndFields(a, &p, vr.fieldMin, vr.defaults, detailPath); err != nil {
			return err
		}
		nodeIdent := a.str("node")
		parent := rq.r.PathValue("node")
		if parent != "" {
			if nodeIdent != "" {
				return newError(http.StatusForbidden, "Operation not permitted.")
			}
			nodeIdent = parent
		}
		var f store.VolumeFilter
		f.Page = p.page
		if nodeIdent != "" {
			n, err := s.lookupNode(rq.ctx(), s.store, nodeIdent, rq.minor)
			if err != nil {
				return err
			}
			f.NodeUUID = n.UUID
		}
		if err := checkMarker(rq.ctx(), p.page.Marker, func(ctx context.Context, id string) (T, error) {
			return vr.get(ctx, s.store, id)
		}, vr.notFound); err != nil {
			return err
		}
		items, err := vr.list(rq.ctx(), s.store, f)
		if err != nil {
			return err
		}
		fs := newFieldSet(p.fields)
		js := rq.streamJSON(http.StatusOK)
		js.b = append(js.b, `{"`...)
		js.b = append(js.b, vr.plural...)
		js.b = append(js.b, `": [`...)
		for i, v := range items {
			if i > 0 {
				js.b = append(js.b, ", "...)
			}
			js.b = vr.appendOne(js.b, v, rq.base, fs)
			js.flush()
		}
		js.b = append(js.b, ']')
		var last string
		if len(items) > 0 {
			last = vr.uuid(items[len(items)-1])
		}
		resource := "volume/" + vr.plural
		if parent != "" {
			resource = "nodes/" + parent + "/volume/" + vr.plural
		}
		if detailPath {
			resource += "/detail"
		}
		extra := a.filters("limit", "marker", "sort_key", "sort_dir", "fields", "detail")
		if next := rq.nextLink(resource, p, len(items), last, extra...); next != "" {
			js.b = append(js.b, `, "next": `...)
			js.b = appendString(js.b, next)
		}
		js.b = append(js.b, '}')
		return js.end()
	}
}

// getHandler serves GET /v1/volume/<plural>/{volume}.
func (vr *volumeResource[T]) getHandler(s *server) func(*request) error {
	return func(rq *request) error {
		if rq.minor < v32Volume {
			return resourceNotFound()
		}
		a, err := rq.queryArgs("fields")
		if err != nil {
			return err
		}
		id, err := vr.ident(rq)
		if err != nil {
			return err
		}
		v, err := vr.lookup(rq.ctx(), s.store, id)
		if err != nil {
			return err
		}
		fields := a.stringList("fields")
		if fields != nil {
			if err := checkFields(fields, rq.minor, vr.fieldMin); err != nil {
				return err
			}
		}
		return rq.writeJSON(http.StatusOK, vr.appendOne(make([]byte, 0, 512), v, rq.base, newFieldSet(fields)))
	}
}

// check validates a document against the resource's schema and fills v.
func (vr *volumeResource[T]) check(doc map[string]any, v T) error {
	what := vr.plural[:len(vr.plural)-1]
	for _, k := range slices.Sorted(mapsKeys(doc)) {
		kind, ok := vr.schema[k]
		if !ok {
			return schemaError(what, "Additional properties are not allowed (%s was unexpected)", pyRepr(k))
		}
		if err := checkKind(what, k, doc[k], kind); err != nil {
			return err
		}
	}
	for _, k := range vr.required {
		if _, ok := doc[k]; !ok {
			return schemaError(what, "%s is a required property", pyRepr(k))
		}
	}
	if id := strField(doc["node_uuid"]); !isUUIDLike(id) {
		return invalidInput("node_uuid", id, "Expected a UUID but received "+id+".")
	}
	doc["node_uuid"] = canonicalUUID(strField(doc["node_uuid"]))
	return vr.fill(doc, v)
}

// createHandler serves POST /v1/volume/<plural>.
func (vr *volumeResource[T]) createHandler(s *server) func(*request) error {
	return func(rq *request) error {
		if rq.minor < v32Volume {
			return resourceNotFound()
		}
		doc, err := rq.createBody(vr.plural[:len(vr.plural)-1])
		if err != nil {
			return err
		}
		v := vr.newT()
		if err := vr.check(doc, v); err != nil {
			return err
		}
		id := strField(doc["uuid"])
		if id != "" && !isUUIDLike(id) {
			return invalidInput("uuid", id, "Expected a UUID but received "+id+".")
		}
		if id == "" {
			id = uuid.NewString()
		}
		setUUIDAndTime(v, canonicalUUID(id), s)
		err = s.cond.WithNodeLock(rq.ctx(), vr.node(v), func(ctx context.Context, tx store.Store, n *baremetal.Node) error {
			if _, err := vr.get(ctx, tx, vr.uuid(v)); err == nil {
				return conflict("A %s with UUID %s already exists.", vr.noun, vr.uuid(v))
			}
			if err := vr.create(ctx, tx, v); err != nil {
				if errors.Is(err, store.ErrConflict) {
					return vr.conflict(v)
				}
				return err
			}
			return nil
		})
		if err != nil {
			if errors.Is(err, store.ErrNotFound) && !isAPIError(err) {
				return badRequest("Node %s could not be found.", vr.node(v))
			}
			return err
		}
		rq.location("volume/" + vr.plural + "/" + vr.uuid(v))
		return rq.writeJSON(http.StatusCreated, vr.appendOne(make([]byte, 0, 512), v, rq.base, nil))
	}
}

// setUUIDAndTime sets a new volume resource's UUID and creation time.
func setUUIDAndTime(v any, id string, s *server) {
	now := s.now().UTC()
	switch x := v.(type) {
	case *baremetal.VolumeConnector:
		x.UUID, x.CreatedAt = id, now
	case *baremetal.VolumeTarget:
		x.UUID, x.CreatedAt = id, now
	}
}

// mustBePoweredOff is the conductor's check before a volume resource of a
// node changes or goes.
func mustBePoweredOff(n *baremetal.Node, action string) error {
	if n.PowerState != baremetal.PowerOff {
		return invalidStateRequested(action, n.UUID, n.PowerState)
	}
	return nil
}

var volumeInternalAttrs = []string{"created_at", "id", "links", "updated_at", "uuid"}

// patchHandler serves PATCH /v1/volume/<plural>/{volume}.
func (vr *volumeResource[T]) patchHandler(s *server) func(*request) error {
	return func(rq *request) error {
		if rq.minor < v32Volume {
			return resourceNotFound()
		}
		if _, err := rq.queryArgs(); err != nil {
			return err
		}
		id, err := vr.ident(rq)
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
			if slices.Contains(volumeInternalAttrs, op.top()) {
				return badRequest("'%s' is an internal attribute and can not be updated", op.Path)
			}
			if op.Op == "remove" && slices.Contains(vr.required, op.top()) && op.Path == "/"+op.top() {
				return badRequest("'%s' is a mandatory attribute and can not be removed", op.Path)
			}
		}
		cur, err := vr.lookup(rq.ctx(), s.store, id)
		if err != nil {
			return err
		}
		compute := func(old T) (T, error) {
			var zero T
			doc, err := applyPatch(vr.doc(old), ops)
			if err != nil {
				return zero, err
			}
			delete(doc, "uuid")
			nv := vr.clone(old)
			if err := vr.check(doc, nv); err != nil {
				return zero, err
			}
			return nv, nil
		}
		if _, err := compute(cur); err != nil {
			return err
		}
		var out T
		err = s.cond.WithNodeLock(rq.ctx(), vr.node(cur), func(ctx context.Context, tx store.Store, n *baremetal.Node) error {
			old, err := vr.lookup(ctx, tx, id)
			if err != nil {
				return err
			}
			nv, err := compute(old)
			if err != nil {
				return err
			}
			if err := mustBePoweredOff(n, vr.noun+" update"); err != nil {
				return err
			}
			if vr.node(nv) != vr.node(old) {
				if _, err := tx.GetNode(ctx, vr.node(nv)); err != nil {
					if errors.Is(err, store.ErrNotFound) {
						return badRequest("Node %s could not be found.", vr.node(nv))
					}
					return err
				}
			}
			if err := vr.update(ctx, tx, nv); err != nil {
				if errors.Is(err, store.ErrConflict) {
					return vr.conflict(nv)
				}
				return err
			}
			out = nv
			return nil
		})
		if err != nil {
			if errors.Is(err, store.ErrNotFound) && !isAPIError(err) {
				return vr.notFound(id)
			}
			return err
		}
		return rq.writeJSON(http.StatusOK, vr.appendOne(make([]byte, 0, 512), out, rq.base, nil))
	}
}

// deleteHandler serves DELETE /v1/volume/<plural>/{volume}.
func (vr *volumeResource[T]) deleteHandler(s *server) func(*request) error {
	return func(rq *request) error {
		if rq.minor < v32Volume {
			return resourceNotFound()
		}
		if _, err := rq.queryArgs(); err != nil {
			return err
		}
		id, err := vr.ident(rq)
		if err != nil {
			return err
		}
		cur, err := vr.lookup(rq.ctx(), s.store, id)
		if err != nil {
			return err
		}
		err = s.cond.WithNodeLock(rq.ctx(), vr.node(cur), func(ctx context.Context, tx store.Store, n *baremetal.Node) error {
			if err := mustBePoweredOff(n, vr.noun+" deletion"); err != nil {
				return err
			}
			if err := vr.delete(ctx, tx, id); err != nil {
				if errors.Is(err, store.ErrNotFound) {
					return vr.notFound(id)
				}
				return err
			}
			return nil
		})
		if err != nil {
			if errors.Is(err, store.ErrNotFound) && !isAPIError(err) {
				return vr.notFound(id)
			}
			return err
		}
		return rq.writeEmpty(http.StatusNoContent)
	}
}

// getVolume is GET /v1/volume and GET /v1/nodes/{node}/volume: links to
// the connectors and targets.
func (s *server) getVolume(rq *request) error {
	if rq.minor < v32Volume {
		return resourceNotFound()
	}
	if _, err := rq.queryArgs(); err != nil {
		return err
	}
	prefix := "volume"
	if node := rq.r.PathValue("node"); node != "" {
		n, err := s.lookupNode(rq.ctx(), s.store, node, rq.minor)
		if err != nil {
			return err
		}
		prefix = "nodes/" + n.UUID + "/volume"
	}
	o := newObj(make([]byte, 0, 1024))
	o.key("links")
	o.b = appendSubLinks(o.b, rq.base, prefix, "", "")
	for _, sub := range []string{"connectors", "targets"} {
		o.key(sub)
		o.b = appendSubLinks(o.b, rq.base, prefix, sub, "")
	}
	return rq.writeJSON(http.StatusOK, o.end())
}

// volumeRoutes registers the volume endpoints of one resource.
func volumeRoutes[T any](s *server, vr *volumeResource[T]) {
	base := "/v1/volume/" + vr.plural
	s.handle("GET "+base, vr.listHandler(s, false))
	s.handle("GET "+base+"/{$}", vr.listHandler(s, false))
	s.handle("GET "+base+"/detail", vr.listHandler(s, true))
	s.handle("POST "+base, vr.createHandler(s))
	s.handle("GET "+base+"/{volume}", vr.getHandler(s))
	s.handle("PATCH "+base+"/{volume}", vr.patchHandler(s))
	s.handle("DELETE "+base+"/{volume}", vr.deleteHandler(s))
	s.handle("GET /v1/nodes/{node}/volume/"+vr.plural, vr.listHandler(s, false))
	s.handle("GET /v1/nodes/{node}/volume/"+vr.plural+"/detail", vr.listHandler(s, true))
}
