package ironic

import (
	"context"
	"encoding/json"
	"net/http"
	"slices"
	"strconv"
	"time"

	"github.com/ferrometal/ferro/internal/baremetal"
	"github.com/ferrometal/ferro/internal/store"
)

// volumeResource completes the description of volume connectors and
// targets (node-scoped, UUIDs only, 1.32). The document is checked against
// schema, with the mandatory fields required, and fill sets v from it.
func volumeResource[T any](r *resource[T], schema map[string]fieldKind, fill func(doc map[string]any, v T) error) *resource[T] {
	r.path = "volume/" + r.key
	r.what = r.key[:len(r.key)-1]
	r.wildcard = "volume"
	r.minVersion = v32Volume
	r.idField = "uuid"
	r.internal = []string{"created_at", "id", "links", "updated_at", "uuid"}
	r.check = checkVolumeDoc(r.what, schema, r.mandatory, fill)
	return r
}

// checkVolumeDoc validates a volume document against schema and required
// and fills v with fill.
func checkVolumeDoc[T any](what string, schema map[string]fieldKind, required []string, fill func(doc map[string]any, v T) error) func(doc map[string]any, v T, w writeCtx) error {
	return func(doc map[string]any, v T, _ writeCtx) error {
		for _, k := range slices.Sorted(mapsKeys(doc)) {
			kind, ok := schema[k]
			if !ok {
				return schemaError(what, "Additional properties are not allowed (%s was unexpected)", pyRepr(k))
			}
			if err := checkKind(what, k, doc[k], kind); err != nil {
				return err
			}
		}
		for _, k := range required {
			if _, ok := doc[k]; !ok {
				return schemaError(what, "%s is a required property", pyRepr(k))
			}
		}
		if id := strField(doc["node_uuid"]); !isUUIDLike(id) {
			return invalidInput("node_uuid", id, "Expected a UUID but received "+id+".")
		}
		doc["node_uuid"] = canonicalUUID(strField(doc["node_uuid"]))
		return fill(doc, v)
	}
}

var volumeConnectors = volumeResource(&resource[*baremetal.VolumeConnector]{
	key:         "connectors",
	noun:        "volume connector",
	defaults:    []string{"uuid", "node_uuid", "type", "connector_id"},
	invalidSort: []string{"extra"},
	sortColumns: volumeConnectorSortColumns,
	fieldMin:    fieldMinOf(v32Volume, "uuid", "node_uuid", "type", "connector_id", "extra", "created_at", "updated_at"),
	mandatory:   []string{"connector_id", "node_uuid", "type"},
	view: func(o *objWriter, c *baremetal.VolumeConnector, fs fieldSet, _ int) {
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
	uuid:   func(c *baremetal.VolumeConnector) string { return c.UUID },
	setNew: func(c *baremetal.VolumeConnector, id string, now time.Time) { c.UUID, c.CreatedAt = id, now },
	node:   func(c *baremetal.VolumeConnector) string { return c.NodeUUID },
	conflict: func(_ context.Context, _ store.Store, c *baremetal.VolumeConnector) error {
		return conflict("A volume connector with type %s and connector ID %s already exists.", c.Type, c.ConnectorID)
	},
	newT:  func() *baremetal.VolumeConnector { return &baremetal.VolumeConnector{} },
	clone: clonePtr[baremetal.VolumeConnector],
	get: func(ctx context.Context, s store.Store, id string) (*baremetal.VolumeConnector, error) {
		return s.GetVolumeConnector(ctx, id)
	},
	list: func(ctx context.Context, s store.Store, f listFilter) ([]*baremetal.VolumeConnector, error) {
		return s.ListVolumeConnectors(ctx, store.VolumeFilter{Page: f.page, NodeUUID: f.node})
	},
	create: func(ctx context.Context, s store.Store, c *baremetal.VolumeConnector) error {
		return s.CreateVolumeConnector(ctx, c)
	},
	update: func(ctx context.Context, s store.Store, c *baremetal.VolumeConnector) error {
		return s.UpdateVolumeConnector(ctx, c)
	},
	delete: func(ctx context.Context, s store.Store, id string) error { return s.DeleteVolumeConnector(ctx, id) },
}, map[string]fieldKind{
	"uuid": kString, "node_uuid": kStringReq, "type": kStringReq, "connector_id": kStringReq, "extra": kObject,
}, func(doc map[string]any, c *baremetal.VolumeConnector) error {
	c.NodeUUID = strField(doc["node_uuid"])
	c.Type = strField(doc["type"])
	c.ConnectorID = strField(doc["connector_id"])
	c.Extra = objField(doc["extra"])
	return nil
})

var volumeTargets = volumeResource(&resource[*baremetal.VolumeTarget]{
	key:         "targets",
	noun:        "volume target",
	defaults:    []string{"uuid", "node_uuid", "volume_type", "boot_index", "volume_id"},
	invalidSort: []string{"extra", "properties"},
	sortColumns: volumeTargetSortColumns,
	fieldMin:    fieldMinOf(v32Volume, "uuid", "node_uuid", "volume_type", "boot_index", "volume_id", "properties", "extra", "created_at", "updated_at"),
	mandatory:   []string{"boot_index", "node_uuid", "volume_id", "volume_type"},
	view: func(o *objWriter, vt *baremetal.VolumeTarget, fs fieldSet, _ int) {
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
	uuid:   func(vt *baremetal.VolumeTarget) string { return vt.UUID },
	setNew: func(vt *baremetal.VolumeTarget, id string, now time.Time) { vt.UUID, vt.CreatedAt = id, now },
	node:   func(vt *baremetal.VolumeTarget) string { return vt.NodeUUID },
	conflict: func(_ context.Context, _ store.Store, vt *baremetal.VolumeTarget) error {
		return conflict("A volume target with boot index '%d' for the same node already exists.", vt.BootIndex)
	},
	newT:  func() *baremetal.VolumeTarget { return &baremetal.VolumeTarget{} },
	clone: clonePtr[baremetal.VolumeTarget],
	get: func(ctx context.Context, s store.Store, id string) (*baremetal.VolumeTarget, error) {
		return s.GetVolumeTarget(ctx, id)
	},
	list: func(ctx context.Context, s store.Store, f listFilter) ([]*baremetal.VolumeTarget, error) {
		return s.ListVolumeTargets(ctx, store.VolumeFilter{Page: f.page, NodeUUID: f.node})
	},
	create: func(ctx context.Context, s store.Store, vt *baremetal.VolumeTarget) error {
		return s.CreateVolumeTarget(ctx, vt)
	},
	update: func(ctx context.Context, s store.Store, vt *baremetal.VolumeTarget) error {
		return s.UpdateVolumeTarget(ctx, vt)
	},
	delete: func(ctx context.Context, s store.Store, id string) error { return s.DeleteVolumeTarget(ctx, id) },
}, map[string]fieldKind{
	"uuid": kString, "node_uuid": kStringReq, "volume_type": kStringReq, "volume_id": kStringReq,
	"boot_index": kAny, "properties": kObject, "extra": kObject,
}, func(doc map[string]any, vt *baremetal.VolumeTarget) error {
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
})

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
