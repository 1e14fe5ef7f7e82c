package ironic

import (
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
