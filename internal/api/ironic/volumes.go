package ironic

import (
	"context"
	"encoding/json"
	"maps"
	"net/http"
	"slices"
	"strconv"
	"time"

	"github.com/ferrometal/ferro/internal/auth"
	"github.com/ferrometal/ferro/internal/baremetal"
	"github.com/ferrometal/ferro/internal/store"
)

// volumeResource completes the description of volume connectors and
// targets (node-scoped, UUIDs only, 1.32). The document is checked against
// schema, with the mandatory fields required, and fill sets v from it.
func volumeResource[E any](r *resource[E, store.VolumeFilter], schema map[string]fieldKind, fill func(doc map[string]any, v *E) error) *resource[E, store.VolumeFilter] {
	r.path = "volume/" + r.key
	r.what = r.key[:len(r.key)-1]
	r.wildcard = "volume"
	r.minVersion = v32Volume
	r.volumeDetail = true
	r.idField = "uuid"
	r.internal = []string{"created_at", "id", "links", "updated_at", "uuid"}
	r.check = checkVolumeDoc(r.what, schema, r.mandatory, fill)
	r.params = []listParam[E, store.VolumeFilter]{{name: "node"}}
	r.resolve = func(q *listQuery[E, store.VolumeFilter]) (err error) {
		q.f.NodeUUID, q.path, err = nodeScope(q.rq, q.s, q.args, q.path, false)
		return err
	}
	r.parents = []parentList{{"nodes/{node}", 0}}
	// The policy's scope: without list_all, the caller's project's nodes'.
	r.own = ownByNode(auth.RuleVolumeListAll, r.node)
	r.page = func(f *store.VolumeFilter) *store.Page { return &f.Page }
	return describe(r)
}

// checkVolumeDoc validates a volume document against schema and required
// and fills v with fill.
func checkVolumeDoc[E any](what string, schema map[string]fieldKind, required []string, fill func(doc map[string]any, v *E) error) func(doc map[string]any, v *E, w writeCtx) error {
	return func(doc map[string]any, v *E, _ writeCtx) error {
		for _, k := range slices.Sorted(maps.Keys(doc)) {
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

var volumeConnectors = volumeResource(&resource[baremetal.VolumeConnector, store.VolumeFilter]{
	key:  "connectors",
	noun: "volume connector",
	fields: append([]viewField[*baremetal.VolumeConnector]{
		{"uuid", 0, strOf(func(c *baremetal.VolumeConnector) string { return c.UUID })},
		{"node_uuid", 0, strOf(func(c *baremetal.VolumeConnector) string { return c.NodeUUID })},
		{"type", 0, strOf(func(c *baremetal.VolumeConnector) string { return c.Type })},
		{"connector_id", 0, strOf(func(c *baremetal.VolumeConnector) string { return c.ConnectorID })},
		{"extra", 0, objOf(func(c *baremetal.VolumeConnector) baremetal.JSON { return c.Extra })},
	}, stampFields(func(c *baremetal.VolumeConnector) time.Time { return c.CreatedAt },
		func(c *baremetal.VolumeConnector) *time.Time { return c.UpdatedAt })...),
	defaults:    []string{"uuid", "node_uuid", "type", "connector_id"},
	invalidSort: []string{"extra"},
	sortColumns: volumeConnectorSortColumns,
	mandatory:   []string{"connector_id", "node_uuid", "type"},
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
	storeOps: storeOps[baremetal.VolumeConnector, store.VolumeFilter]{store.Store.GetVolumeConnector, store.Store.ListVolumeConnectors,
		store.Store.CreateVolumeConnector, store.Store.UpdateVolumeConnector, store.Store.DeleteVolumeConnector},
}, map[string]fieldKind{
	"uuid": kString, "node_uuid": kStringReq, "type": kStringReq, "connector_id": kStringReq, "extra": kObject,
}, func(doc map[string]any, c *baremetal.VolumeConnector) error {
	c.NodeUUID = strField(doc["node_uuid"])
	c.Type = strField(doc["type"])
	c.ConnectorID = strField(doc["connector_id"])
	c.Extra = objField(doc["extra"])
	return nil
})

var volumeTargets = volumeResource(&resource[baremetal.VolumeTarget, store.VolumeFilter]{
	key:  "targets",
	noun: "volume target",
	fields: append([]viewField[*baremetal.VolumeTarget]{
		{"uuid", 0, strOf(func(vt *baremetal.VolumeTarget) string { return vt.UUID })},
		{"node_uuid", 0, strOf(func(vt *baremetal.VolumeTarget) string { return vt.NodeUUID })},
		{"volume_type", 0, strOf(func(vt *baremetal.VolumeTarget) string { return vt.VolumeType })},
		{"boot_index", 0, func(b []byte, vt *baremetal.VolumeTarget, _ *renderCtx) []byte {
			return strconv.AppendInt(b, int64(vt.BootIndex), 10)
		}},
		{"volume_id", 0, strOf(func(vt *baremetal.VolumeTarget) string { return vt.VolumeID })},
		{"properties", 0, func(b []byte, vt *baremetal.VolumeTarget, rc *renderCtx) []byte {
			if rc.hideTargetProperties {
				o := newObj(b)
				o.str("redacted_contents", redactedTargetProperties)
				return o.end()
			}
			return appendObject(b, vt.Properties)
		}},
		{"extra", 0, objOf(func(vt *baremetal.VolumeTarget) baremetal.JSON { return vt.Extra })},
	}, stampFields(func(vt *baremetal.VolumeTarget) time.Time { return vt.CreatedAt },
		func(vt *baremetal.VolumeTarget) *time.Time { return vt.UpdatedAt })...),
	defaults:    []string{"uuid", "node_uuid", "volume_type", "boot_index", "volume_id"},
	invalidSort: []string{"extra", "properties"},
	sortColumns: volumeTargetSortColumns,
	mandatory:   []string{"boot_index", "node_uuid", "volume_id", "volume_type"},
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
	storeOps: storeOps[baremetal.VolumeTarget, store.VolumeFilter]{store.Store.GetVolumeTarget, store.Store.ListVolumeTargets,
		store.Store.CreateVolumeTarget, store.Store.UpdateVolumeTarget, store.Store.DeleteVolumeTarget},
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
		return versionNotFound()
	}
	if _, err := rq.queryArgs(); err != nil {
		return err
	}
	prefix := "volume"
	if node := rq.r.PathValue("node"); node != "" {
		n, err := lookupNode(rq.ctx(), s.store, node, rq.minor)
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
