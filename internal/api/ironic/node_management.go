package ironic

import (
	"context"
	"net/http"
	"slices"

	"github.com/ferrometal/ferro/internal/baremetal"
	"github.com/ferrometal/ferro/internal/store"
)

// setMaintenance is PUT /v1/nodes/{node}/maintenance.
func (s *server) setMaintenance(rq *request) error {
	m, err := rq.bodyArgs("reason")
	if err != nil {
		return err
	}
	reason, err := stringArg(m, "reason")
	if err != nil {
		return err
	}
	if reason == "" {
		a, err := rq.queryArgs("reason")
		if err != nil {
			return err
		}
		reason = a.str("reason")
	}
	return s.maintenance(rq, true, reason)
}

// clearMaintenance is DELETE /v1/nodes/{node}/maintenance.
func (s *server) clearMaintenance(rq *request) error {
	if _, err := rq.queryArgs(); err != nil {
		return err
	}
	return s.maintenance(rq, false, "")
}

func (s *server) maintenance(rq *request, on bool, reason string) error {
	if _, err := s.node(rq); err != nil {
		return err
	}
	err := s.withNodeLock(rq, rq.r.PathValue("node"), func(ctx context.Context, tx store.Store, n *baremetal.Node) error {
		n.Maintenance = on
		n.MaintenanceReason = reason
		if !on {
			n.Fault = ""
		}
		return tx.UpdateNode(ctx, n)
	})
	if err != nil {
		return err
	}
	return rq.writeEmpty(http.StatusAccepted)
}

// validateNode is GET /v1/nodes/{node}/validate and the older
// GET /v1/nodes/validate?node=….
func (s *server) validateNode(rq *request) error {
	ident := rq.r.PathValue("node")
	if ident == "" {
		a, err := rq.queryArgs("node", "node_uuid")
		if err != nil {
			return err
		}
		ident = a.str("node_uuid")
		if ident == "" {
			ident = a.str("node")
		}
		if ident != "" && !isUUIDLike(ident) && rq.minor < v5NodeName {
			return notAcceptable()
		}
	} else if _, err := rq.queryArgs(); err != nil {
		return err
	}
	n, err := lookupNode(rq.ctx(), s.store, ident, rq.minor)
	if err != nil {
		return err
	}
	res, err := s.cond.ValidateNode(rq.ctx(), n.UUID)
	if err != nil {
		return s.nodeActionError(err, ident)
	}
	keys := make([]string, 0, len(res))
	for k := range res {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	o := newObj(make([]byte, 0, 512))
	for _, k := range keys {
		r := res[k]
		o.key(k)
		v := newObj(o.b)
		v.key("result")
		v.b = appendNullBool(v.b, r.Result)
		if r.Result == nil || !*r.Result || r.Reason != "" {
			v.key("reason")
			v.b = appendNullString(v.b, r.Reason)
		}
		o.b = v.end()
	}
	return rq.writeJSON(http.StatusOK, o.end())
}

// getBootDevice is GET /v1/nodes/{node}/management/boot_device.
func (s *server) getBootDevice(rq *request) error {
	n, err := s.pathNode(rq)
	if err != nil {
		return err
	}
	dev, persistent, err := s.cond.GetBootDevice(rq.ctx(), n.UUID)
	if err != nil {
		return s.nodeActionError(err, n.UUID)
	}
	o := newObj(make([]byte, 0, 64))
	o.nullStr("boot_device", dev)
	o.key("persistent")
	if dev == "" {
		o.b = append(o.b, "null"...)
	} else {
		o.b = appendBool(o.b, persistent)
	}
	return rq.writeJSON(http.StatusOK, o.end())
}

// setBootDevice is PUT /v1/nodes/{node}/management/boot_device.
func (s *server) setBootDevice(rq *request) error {
	m, dev, err := rq.commandArgs("boot_device", "persistent")
	if err != nil {
		return err
	}
	persistent, err := boolField("persistent", m["persistent"])
	if err != nil {
		return err
	}
	n, err := s.node(rq)
	if err != nil {
		return err
	}
	if err := s.cond.SetBootDevice(rq.ctx(), n.UUID, dev, persistent != nil && *persistent); err != nil {
		return s.nodeActionError(err, n.UUID)
	}
	return rq.writeEmpty(http.StatusNoContent)
}

// supportedBootDevices is GET /v1/nodes/{node}/management/boot_device/supported.
func (s *server) supportedBootDevices(rq *request) error {
	n, err := s.pathNode(rq)
	if err != nil {
		return err
	}
	devs, err := s.cond.SupportedBootDevices(rq.ctx(), n.UUID)
	if err != nil {
		return s.nodeActionError(err, n.UUID)
	}
	if devs == nil {
		devs = []string{}
	}
	o := newObj(make([]byte, 0, 128))
	o.key("supported_boot_devices")
	o.b = appendStrings(o.b, devs)
	return rq.writeJSON(http.StatusOK, o.end())
}
