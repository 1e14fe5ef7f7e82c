package ironic

import (
	"context"
	"net/http"
	"slices"

	"github.com/ferrometal/ferro/internal/baremetal"
	"github.com/ferrometal/ferro/internal/store"
)

// listVIFs is GET /v1/nodes/{node}/vifs (1.28): the VIFs recorded on the
// node's ports and portgroups.
func (s *server) listVIFs(rq *request) error {
	n, err := s.pathNodeSince(rq, v28VIFs)
	if err != nil {
		return err
	}
	ports, err := s.store.ListPorts(rq.ctx(), store.PortFilter{NodeUUID: n.UUID})
	if err != nil {
		return err
	}
	pgs, err := s.store.ListPortgroups(rq.ctx(), store.PortgroupFilter{NodeUUID: n.UUID})
	if err != nil {
		return err
	}
	var vifs []string
	add := func(internal, extra baremetal.JSON) {
		for _, v := range []any{internal["tenant_vif_port_id"], extra["vif_port_id"]} {
			if id, ok := v.(string); ok && id != "" && !slices.Contains(vifs, id) {
				vifs = append(vifs, id)
			}
		}
	}
	for _, p := range ports {
		add(p.InternalInfo, p.Extra)
	}
	for _, pg := range pgs {
		add(pg.InternalInfo, pg.Extra)
	}
	b := append(make([]byte, 0, 64+48*len(vifs)), `{"vifs": [`...)
	for i, id := range vifs {
		if i > 0 {
			b = append(b, ", "...)
		}
		b = append(b, `{"id": `...)
		b = appendString(b, id)
		b = append(b, '}')
	}
	return rq.writeJSON(http.StatusOK, append(b, "]}"...))
}

// attachVIF is POST /v1/nodes/{node}/vifs (1.28). ferro records tenant
// VIFs only as Ironic's noop network interface does: not at all, so the
// attach succeeds (204) and the list stays as the ports say. The flat and
// neutron interfaces would bind a Neutron port, which ferro does not do.
func (s *server) attachVIF(rq *request) error {
	n, err := s.pathNodeSince(rq, v28VIFs)
	if err != nil {
		return err
	}
	v, err := rq.readJSON()
	if err != nil {
		return err
	}
	vif, err := asObject(v, func(v any) *apiError { return schemaError("vif", "%s is not of type 'object'", pyRepr(v)) })
	if err != nil {
		return err
	}
	id, ok := vif["id"]
	if !ok {
		return schemaError("vif", "'id' is a required property")
	}
	if err := checkVIFID("id", id); err != nil {
		return err
	}
	if rq.minor >= vifAttachPortMinor {
		_, port := vif["port_uuid"]
		_, pg := vif["portgroup_uuid"]
		if port && pg {
			return badRequest("Cannot specify both port_uuid and portgroup_uuid")
		}
	}
	return s.noopVIF(rq, n)
}

// vifAttachPortMinor is 1.67, where a VIF may name its port or portgroup.
const vifAttachPortMinor = 67

// detachVIF is DELETE /v1/nodes/{node}/vifs/{vif} (1.28); see attachVIF.
func (s *server) detachVIF(rq *request) error {
	n, err := s.pathNodeSince(rq, v28VIFs)
	if err != nil {
		return err
	}
	if err := checkVIFID("vif_id", rq.r.PathValue("vif")); err != nil {
		return err
	}
	return s.noopVIF(rq, n)
}

// checkVIFID is Ironic's uuid_or_name check of a VIF id.
func checkVIFID(name string, v any) error {
	id, ok := v.(string)
	if !ok {
		return schemaError("vif", "%s is not of type 'string'", pyRepr(v))
	}
	if !isValidLogicalName(id) && !isUUIDLike(id) {
		return badRequest("Expected UUID or name for %s: %s", name, id)
	}
	return nil
}

// noopVIF answers an attach or detach under the node's lock (a locked node
// is 409, as Ironic's conductor): 204 with the noop network interface,
// which does nothing, 400 with the others.
func (s *server) noopVIF(rq *request, n *baremetal.Node) error {
	err := s.withNodeLock(rq, n.UUID, func(_ context.Context, _ store.Store, n *baremetal.Node) error {
		if iface := n.Interface("network"); iface != "noop" {
			return badRequest("Node %s: attaching and detaching VIFs needs Neutron, which ferro does not drive for the %s network interface; use the noop network interface.", n.UUID, iface)
		}
		return nil
	})
	if err != nil {
		return err
	}
	return rq.writeEmpty(http.StatusNoContent)
}
