package ironic

import (
	"context"
	"net/http"

	"github.com/ferrometal/ferro/internal/baremetal"
	"github.com/ferrometal/ferro/internal/store"
)

// getConsole is GET /v1/nodes/{node}/states/console: ferro has no serial
// console, so it is never enabled.
func (s *server) getConsole(rq *request) error {
	n, err := s.pathNode(rq)
	if err != nil {
		return err
	}
	o := newObj(nil)
	o.boolean("console_enabled", n.ConsoleEnabled)
	// Ironic's fake console answers an empty console_info once enabled.
	info := "null"
	if n.ConsoleEnabled {
		info = "{}"
	}
	o.raw("console_info", []byte(info))
	return rq.writeJSON(http.StatusOK, o.end())
}

// setConsole is PUT /v1/nodes/{node}/states/console {"enabled": bool}.
// Only the fake console interface has a console to start; it starts at
// once, so the node shows the new mode by the time the 202 is read.
func (s *server) setConsole(rq *request) error {
	m, err := rq.bodyArgs("enabled")
	if err != nil {
		return err
	}
	if _, ok := m["enabled"]; !ok {
		return badRequest("Missing mandatory parameter: enabled")
	}
	enabled, err := boolField("enabled", m["enabled"])
	if err != nil || enabled == nil {
		return badRequest("Invalid value for enabled: %s", pyRepr(m["enabled"]))
	}
	n, err := s.node(rq)
	if err != nil {
		return err
	}
	if iface := n.Interfaces["console"]; iface != "fake" {
		return badRequest("Driver %s does not support console (disabled or not implemented).", n.Driver)
	}
	err = s.withNodeLock(rq, n.UUID, func(ctx context.Context, tx store.Store, n *baremetal.Node) error {
		n.ConsoleEnabled = *enabled
		return tx.UpdateNode(ctx, n)
	})
	if err != nil {
		return err
	}
	rq.location("nodes/" + n.UUID + "/states/console")
	return rq.writeEmpty(http.StatusAccepted)
}
