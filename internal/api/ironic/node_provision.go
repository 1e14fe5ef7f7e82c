package ironic

import (
	"fmt"
	"maps"
	"net/http"
	"slices"
	"strings"

	"github.com/ferrometal/ferro/internal/conductor"
	"github.com/ferrometal/ferro/internal/states"
)

// provisionVerbs maps Ironic's provision targets to the minor version
// that introduced them (MIN_VERB_VERSIONS); ferro runs manage, provide,
// inspect and abort.
var provisionVerbs = map[string]int{
	"manage": v4ManageableState, "provide": v4ManageableState, "inspect": v6InspectState,
	"abort": v13AbortVerb, "clean": v15ManualClean, "adopt": v17AdoptVerb,
	"rescue": v38RescueInterface, "unrescue": v38RescueInterface,
	"deploy": v73DeployVerbs, "undeploy": v73DeployVerbs,
	"active": 0, "deleted": 0, "rebuild": 0,
	// Not in MIN_VERB_VERSIONS, but refused below their versions all the
	// same (allow_unhold_verb, allow_service_verb).
	"unhold": v85UnholdVerb, "service": v87Service,
}

// supportedVerbs are the verbs ferro runs; the deployment ones only on
// nodes with the fake deploy (or rescue) interface.
var supportedVerbs = []string{"manage", "provide", "inspect", "abort", "clean",
	"active", "deleted", "rebuild", "deploy", "undeploy", "adopt", "rescue", "unrescue"}

// verbAliases are the 1.73 names of active and deleted.
var verbAliases = map[string]string{"deploy": "active", "undeploy": "deleted"}

// verbArgs are the body arguments each verb takes besides target.
var verbArgs = map[string][]string{
	"active": {"configdrive", "deploy_steps"}, "rebuild": {"configdrive", "deploy_steps"},
	"rescue": {"rescue_password"},
	"clean":  {"clean_steps", "disable_ramdisk"},
}

// cleanStepInterfaces are the interfaces a clean step may name, as Ironic
// 21.4's CLEANING_INTERFACE_PRIORITY (the clean steps schema's enum).
var cleanStepInterfaces = []string{"vendor", "power", "management", "deploy", "bios", "raid"}

// checkCleanSteps validates clean_steps as Ironic's _CLEAN_STEPS_SCHEMA:
// a list of objects with interface and step, optional args, nothing else.
func checkCleanSteps(v any) ([]conductor.CleanStep, error) {
	bad := func(format string, args ...any) error {
		return badRequest("Invalid clean_steps: %s", fmt.Sprintf(format, args...))
	}
	raw, ok := v.([]any)
	if !ok {
		return nil, bad("%s is not of type 'array'", pyRepr(v))
	}
	steps := make([]conductor.CleanStep, 0, len(raw))
	for _, r := range raw {
		m, ok := r.(map[string]any)
		if !ok {
			return nil, bad("%s is not of type 'object'", pyRepr(r))
		}
		for _, k := range slices.Sorted(maps.Keys(m)) {
			if k != "args" && k != "interface" && k != "step" {
				return nil, bad("Additional properties are not allowed (%s was unexpected)", pyRepr(k))
			}
		}
		for _, k := range []string{"interface", "step"} {
			if _, ok := m[k]; !ok {
				return nil, bad("%s is a required property", pyRepr(k))
			}
		}
		iface, ok := m["interface"].(string)
		if !ok || !slices.Contains(cleanStepInterfaces, iface) {
			return nil, bad("%s is not one of %s", pyRepr(m["interface"]), pyRepr(anySlice(cleanStepInterfaces)))
		}
		step, ok := m["step"].(string)
		if !ok {
			return nil, bad("%s is not of type 'string'", pyRepr(m["step"]))
		}
		if step == "" {
			return nil, bad("'' is too short")
		}
		var args map[string]any
		if a, present := m["args"]; present {
			if args, ok = a.(map[string]any); !ok {
				return nil, bad("%s is not of type 'object'", pyRepr(a))
			}
		}
		steps = append(steps, conductor.CleanStep{Interface: iface, Step: step, Args: args})
	}
	return steps, nil
}

// setProvisionState is PUT /v1/nodes/{node}/states/provision.
func (s *server) setProvisionState(rq *request) error {
	m, target, err := rq.commandArgs("target", "configdrive", "clean_steps", "deploy_steps", "service_steps",
		"rescue_password", "disable_ramdisk", "runbook")
	if err != nil {
		return err
	}
	ident := rq.r.PathValue("node")
	n, err := s.node(rq)
	if err != nil {
		return err
	}
	if min, ok := provisionVerbs[target]; ok && rq.minor < min {
		return notAcceptable()
	}
	event := target
	if alias, ok := verbAliases[target]; ok {
		event = alias
	}
	if _, known := provisionVerbs[target]; !known || !states.Can(n.ProvisionState, event) {
		if known && !slices.Contains(supportedVerbs, target) {
			return badRequest("The requested action \"%s\" is not supported by ferro; supported actions are: %s.",
				target, strings.Join(supportedVerbs, ", "))
		}
		if n.Reservation != "" {
			return conflict("Node %s is locked by host %s, please retry after the current operation is completed.", n.UUID, n.Reservation)
		}
		return invalidStateRequested(target, n.UUID, n.ProvisionState)
	}
	for _, k := range []string{"configdrive", "clean_steps", "deploy_steps", "service_steps", "rescue_password", "disable_ramdisk", "runbook"} {
		if v, ok := m[k]; ok && v != nil && !slices.Contains(verbArgs[event], k) {
			switch k {
			case "clean_steps":
				return badRequest("\"clean_steps\" is only valid when setting target provision state to clean")
			case "service_steps":
				return badRequest("\"service_steps\" is only valid when setting target provision state to service")
			}
			return badRequest("\"%s\" is not valid when setting target provision state to %s", k, target)
		}
	}
	if event == "rescue" {
		if pw, _ := m["rescue_password"].(string); strings.TrimSpace(pw) == "" {
			return badRequest("A non-empty \"rescue_password\" is required when setting target provision state to rescue")
		}
	}
	if n.ProvisionState == states.InspectWait && target == "abort" && rq.minor < v41InspectAbort {
		return notAcceptable()
	}
	if event == "clean" {
		if v, ok := m["clean_steps"]; !ok || v == nil || isEmptyList(v) {
			return badRequest("\"clean_steps\" is required when setting target provision state to clean")
		}
		steps, err := checkCleanSteps(m["clean_steps"])
		if err != nil {
			return err
		}
		if err := s.cond.DoNodeClean(rq.ctx(), n.UUID, steps); err != nil {
			return s.nodeActionError(err, ident)
		}
		rq.location("nodes/" + ident + "/states")
		return rq.writeEmpty(http.StatusAccepted)
	}
	if err := s.cond.DoProvisionAction(rq.ctx(), n.UUID, event); err != nil {
		return s.nodeActionError(err, ident)
	}
	rq.location("nodes/" + ident + "/states")
	return rq.writeEmpty(http.StatusAccepted)
}

// isEmptyList reports whether v is [] (Ironic's "not clean_steps" is true for it).
func isEmptyList(v any) bool {
	l, ok := v.([]any)
	return ok && len(l) == 0
}
