package ironic

import (
	"context"
	"errors"
	"net/http"
	"slices"
	"time"

	"github.com/ferrometal/ferro/internal/baremetal"
	"github.com/ferrometal/ferro/internal/states"
	"github.com/ferrometal/ferro/internal/store"
)

// getNodeStates is GET /v1/nodes/{node}/states.
func (s *server) getNodeStates(rq *request) error {
	n, err := s.pathNode(rq)
	if err != nil {
		return err
	}
	return rq.writeJSON(http.StatusOK, appendNodeStates(make([]byte, 0, 512), n, rq.minor))
}

var allowedPowerTargets = []string{
	baremetal.PowerOn, baremetal.PowerOff, baremetal.PowerReboot, "soft rebooting", "soft power off",
}

// setPowerState is PUT /v1/nodes/{node}/states/power.
func (s *server) setPowerState(rq *request) error {
	m, target, err := rq.commandArgs("target", "timeout")
	if err != nil {
		return err
	}
	var timeout time.Duration
	if tv, ok := m["timeout"]; ok && tv != nil {
		n, ok := toInt(tv)
		if !ok {
			return badRequest("Expected an integer for timeout: %s", pyRepr(tv))
		}
		if rq.minor < v27SoftPowerOff {
			return notAcceptable()
		}
		if n < 1 {
			return badRequest("timeout has to be positive integer")
		}
		timeout = time.Duration(n) * time.Second
	}
	n, err := s.node(rq)
	if err != nil {
		return err
	}
	if (target == "soft rebooting" || target == "soft power off") && rq.minor < v27SoftPowerOff {
		return notAcceptable()
	}
	if !slices.Contains(allowedPowerTargets, target) {
		return invalidStateRequested(target, rq.r.PathValue("node"), n.PowerState)
	}
	if n.ProvisionState == states.CleanWait || n.ProvisionState == states.Cleaning {
		return invalidStateRequested(target, rq.r.PathValue("node"), n.ProvisionState)
	}
	if target == "soft rebooting" || target == "soft power off" {
		return badRequest("Driver %s does not support %s (disabled or not implemented).", n.Driver, "soft power")
	}
	if err := s.cond.ChangePowerState(rq.ctx(), n.UUID, target, timeout); err != nil {
		return s.nodeActionError(err, n.UUID)
	}
	rq.location("nodes/" + rq.r.PathValue("node") + "/states")
	return rq.writeEmpty(http.StatusAccepted)
}

func invalidStateRequested(action, node, state string) *apiError {
	if state == "" {
		state = "None"
	}
	return badRequest("The requested action \"%s\" can not be performed on node \"%s\" while it is in state \"%s\".", action, node, state)
}

// nodeActionError maps a conductor error for a node action; a vanished
// node is NodeNotFound.
func (s *server) nodeActionError(err error, ident string) error {
	var ae *apiError
	if !errors.As(err, &ae) && errors.Is(err, store.ErrNotFound) {
		return nodeNotFound(ident)
	}
	return err
}

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
