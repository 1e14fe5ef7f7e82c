package ironic

import (
	"errors"
	"net/http"
	"strconv"

	"github.com/ferrometal/ferro/internal/baremetal"
	"github.com/ferrometal/ferro/internal/store"
)

// appendHistoryEvent appends one history entry; without detail the event
// text is cut at 255 characters as Ironic does.
func appendHistoryEvent(b []byte, e *baremetal.HistoryEvent, nodeUUID, base string, detail bool, minor int) []byte {
	o := newObj(b)
	o.str("uuid", e.UUID)
	o.key("created_at")
	o.b = appendTime(o.b, e.CreatedAt)
	o.str("severity", e.Severity)
	ev := e.Event
	if !detail && len(ev) > 255 {
		ev = ev[:251] + "..."
	}
	o.str("event", ev)
	if detail {
		o.nullStr("event_type", e.EventType)
		o.nullStr("conductor", e.Conductor)
		o.nullStr("user", e.User)
		if minor >= v113HistoryProject {
			o.nullStr("project", e.Project)
		}
		if minor >= v115HistoryFields {
			o.nullStr("state", e.State)
			o.nullStr("target_provision_state", e.TargetProvisionState)
			o.key("duration_seconds")
			if e.DurationSeconds == nil {
				o.b = append(o.b, "null"...)
			} else {
				o.b = strconv.AppendInt(o.b, *e.DurationSeconds, 10)
			}
		}
	}
	o.key("links")
	o.b = appendLinkList(o.b, []link{{rel: "self", href: base + "/v1/nodes/" + nodeUUID + "/history/" + e.UUID}})
	return o.end()
}

// listHistory is GET /v1/nodes/{node}/history (1.78).
func (s *server) listHistory(rq *request) error {
	if rq.minor < v78NodeHistory {
		return resourceNotFound()
	}
	a, err := rq.queryArgs("detail", "marker", "limit")
	if err != nil {
		return err
	}
	detail, err := a.boolean("detail")
	if err != nil {
		return err
	}
	p, err := s.paging(a, nil, false)
	if err != nil {
		return err
	}
	n, err := s.node(rq)
	if err != nil {
		return err
	}
	events, err := s.store.ListHistory(rq.ctx(), n.UUID)
	if err != nil {
		return err
	}
	events, err = pageAfter(events, p, func(e *baremetal.HistoryEvent) string { return e.UUID }, historyNotFound)
	if err != nil {
		return err
	}
	isDetail := detail != nil && *detail
	b := append(make([]byte, 0, 256*len(events)+64), `{"history": [`...)
	for i, e := range events {
		if i > 0 {
			b = append(b, ", "...)
		}
		b = appendHistoryEvent(b, e, n.UUID, rq.base, isDetail, rq.minor)
	}
	b = append(b, ']')
	if len(events) > 0 && len(events) == p.limit {
		next := rq.base + "/v1/nodes/" + rq.r.PathValue("node") + "/history?"
		if detail != nil {
			if *detail {
				next += "detail=True&"
			} else {
				next += "detail=False&"
			}
		}
		next += "limit=" + strconv.Itoa(p.limit) + "&marker=" + events[len(events)-1].UUID
		b = append(b, `, "next": `...)
		b = appendString(b, next)
	}
	return rq.writeJSON(http.StatusOK, append(b, '}'))
}

// getHistoryEvent is GET /v1/nodes/{node}/history/{event} (1.78).
func (s *server) getHistoryEvent(rq *request) error {
	n, err := s.pathNodeSince(rq, v78NodeHistory)
	if err != nil {
		return err
	}
	id := rq.r.PathValue("event")
	events, err := s.store.ListHistory(rq.ctx(), n.UUID)
	if err != nil {
		return err
	}
	for _, e := range events {
		if e.UUID == id {
			return rq.writeJSON(http.StatusOK, appendHistoryEvent(nil, e, n.UUID, rq.base, true, rq.minor))
		}
	}
	return historyNotFound(id)
}

func historyNotFound(id string) *apiError {
	return notFound("Node history record %s could not be found.", id)
}

// getInventory is GET /v1/nodes/{node}/inventory (1.81).
func (s *server) getInventory(rq *request) error {
	n, err := s.pathNodeSince(rq, v81NodeInventory)
	if err != nil {
		return err
	}
	inv, err := s.store.GetInventory(rq.ctx(), n.UUID)
	if err != nil {
		if errors.Is(err, store.ErrNotFound) {
			return notFound("Node inventory record for node %s could not be found.", n.UUID)
		}
		return err
	}
	o := newObj(make([]byte, 0, 4096))
	o.key("inventory")
	o.b = appendObject(o.b, inv.Inventory)
	o.key("plugin_data")
	o.b = appendObject(o.b, inv.PluginData)
	return rq.writeJSON(http.StatusOK, o.end())
}
