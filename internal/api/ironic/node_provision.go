package ironic

import (
	"fmt"
	"maps"
	"net/http"
	"slices"
	"strings"

	"github.com/ferrometal/ferro/internal/baremetal"
	"github.com/ferrometal/ferro/internal/conductor"
	"github.com/ferrometal/ferro/internal/pyjson"
	"github.com/ferrometal/ferro/internal/states"
)

// provisionVerbs maps Ironic's provision targets to the minor version
// that introduced them (MIN_VERB_VERSIONS), checked before the state.
// unhold and service are not in that table: Ironic checks their versions
// after the state machine (allow_unhold_verb, allow_service_verb).
var provisionVerbs = map[string]int{
	"manage": v4ManageableState, "provide": v4ManageableState, "inspect": v6InspectState,
	"abort": v13AbortVerb, "clean": v15ManualClean, "adopt": v17AdoptVerb,
	"rescue": v38RescueInterface, "unrescue": v38RescueInterface,
	"deploy": v73DeployVerbs, "undeploy": v73DeployVerbs,
	"active": 0, "deleted": 0, "rebuild": 0, "unhold": 0, "service": 0,
}

// lateVerbs are the verbs whose version Ironic checks after the state.
var lateVerbs = map[string]int{"unhold": v85UnholdVerb, "service": v87Service}

// supportedVerbs are the verbs ferro runs; the deployment ones only on
// nodes with the fake deploy (or rescue) interface.
var supportedVerbs = []string{"manage", "provide", "inspect", "abort", "clean",
	"active", "deleted", "rebuild", "deploy", "undeploy", "adopt", "rescue", "unrescue", "unhold", "service"}

// verbAliases are the 1.73 names of active and deleted.
var verbAliases = map[string]string{"deploy": "active", "undeploy": "deleted"}

// verbArgs are the body arguments each verb takes besides target.
var verbArgs = map[string][]string{
	"active": {"configdrive", "deploy_steps"}, "rebuild": {"configdrive", "deploy_steps"},
	"rescue":  {"rescue_password"},
	"clean":   {"clean_steps", "disable_ramdisk", "runbook"},
	"service": {"service_steps", "disable_ramdisk", "runbook"},
}

// stepInterfaces are the interfaces a clean or service step (and a
// runbook's) may name: Ironic's CLEANING_INTERFACE_PRIORITY (the steps
// schemas' enum).
var stepInterfaces = []string{"vendor", "power", "management", "firmware", "deploy", "bios", "raid"}

// stepKeys are the keys of Ironic's _STEPS_SCHEMA items.
var stepKeys = []string{"args", "execute_on_child_nodes", "interface", "limit_child_node_execution", "order", "step"}

// checkSteps validates clean_steps or service_steps (kind "clean",
// "service") as Ironic's _STEPS_SCHEMA: a list of objects with interface
// and step, optional args, order and the child-node keys, nothing else.
// A step to run on child nodes is dropped, as Ironic's conductor drops it
// when it validates the steps (it never runs).
func checkSteps(kind string, v any) ([]conductor.CleanStep, error) {
	bad := func(format string, args ...any) error {
		return badRequest("Invalid %s_steps: %s", kind, fmt.Sprintf(format, args...))
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
			if !slices.Contains(stepKeys, k) {
				return nil, bad("Additional properties are not allowed (%s was unexpected)", pyRepr(k))
			}
		}
		for _, k := range []string{"interface", "step"} {
			if _, ok := m[k]; !ok {
				return nil, bad("%s is a required property", pyRepr(k))
			}
		}
		iface, ok := m["interface"].(string)
		if !ok || !slices.Contains(stepInterfaces, iface) {
			return nil, bad("%s is not one of %s", pyRepr(m["interface"]), pyRepr(anySlice(stepInterfaces)))
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
		if o, present := m["order"]; present && !validStepOrder(o) {
			return nil, bad("%s is not valid under any of the given schemas", pyRepr(o))
		}
		eocn, present := m["execute_on_child_nodes"]
		if _, isBool := eocn.(bool); present && !isBool {
			return nil, bad("%s is not of type 'boolean'", pyRepr(eocn))
		}
		if l, present := m["limit_child_node_execution"]; present {
			if _, ok := l.([]any); !ok {
				return nil, bad("%s is not of type 'array'", pyRepr(l))
			}
		}
		if eocn == true {
			if l, ok := m["limit_child_node_execution"].([]any); ok {
				for _, e := range l {
					if id, _ := e.(string); !isUUIDLike(id) {
						return nil, badRequest("Invalid entry detected for execute_on_child_node parameter in step %s.", pyRepr(e))
					}
				}
			}
			continue
		}
		steps = append(steps, conductor.CleanStep{Interface: iface, Step: step, Args: args})
	}
	return steps, nil
}

// validStepOrder is the schema's order: an integer ≥ 0 or a string of digits.
func validStepOrder(v any) bool {
	if s, ok := v.(string); ok {
		return digitsRE.MatchString(s)
	}
	if !pyjson.IsInt(v) {
		return false
	}
	n, err := pyjson.Int(v)
	return err == nil && n >= 0
}

// checkDisableRamdisk is Ironic's check_allow_disable_ramdisk.
func checkDisableRamdisk(minor int, event string) error {
	switch event {
	case "clean":
		if minor < v70CleanDisableRamdisk {
			return newError(http.StatusNotAcceptable, "disable_ramdisk is not acceptable in this API version")
		}
		return nil
	case "service":
		if minor < v108ServiceNoRamdisk {
			return newError(http.StatusNotAcceptable, "disable_ramdisk is not acceptable in this API version")
		}
		return nil
	}
	return badRequest("disable_ramdisk is supported only with manual cleaning or servicing")
}

// setProvisionState is PUT /v1/nodes/{node}/states/provision.
func (s *server) setProvisionState(rq *request) error {
	m, target, err := rq.commandArgs("target", "configdrive", "clean_steps", "deploy_steps", "service_steps",
		"rescue_password", "disable_ramdisk", "runbook")
	if err != nil {
		return err
	}
	disableRamdisk, err := boolField("disable_ramdisk", m["disable_ramdisk"])
	if err != nil {
		return err
	}
	runbook, err := runbookArg(m)
	if err != nil {
		return err
	}
	if runbook == "" {
		delete(m, "runbook") // Ironic's "if runbook": an empty one is none
	}
	if v := m["deploy_steps"]; v != nil {
		if _, ok := v.([]any); !ok { // args.types(None, list)
			return badRequest("Expected types <class 'NoneType'>, <class 'list'> for deploy_steps: %s", pyStr(v))
		}
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
	// As Ironic: a runbook's steps and disable_ramdisk replace the body's
	// before disable_ramdisk is checked against the verb.
	var rb *baremetal.Runbook
	if runbook != "" {
		if rb, err = s.provisionRunbook(rq, n, event, runbook, m); err != nil {
			return err
		}
		disableRamdisk = &rb.DisableRamdisk
	}
	if disableRamdisk != nil {
		if err := checkDisableRamdisk(rq.minor, event); err != nil {
			return err
		}
	}
	for _, k := range []string{"configdrive", "clean_steps", "deploy_steps", "rescue_password", "service_steps", "runbook"} {
		v, ok := m[k]
		if k == "deploy_steps" {
			if err := checkAllowDeploySteps(rq.minor, target, v); err != nil {
				return err
			}
			continue
		}
		if !ok || v == nil || slices.Contains(verbArgs[event], k) {
			continue
		}
		// Ironic tests these for truth: an empty one is no argument.
		if k != "rescue_password" && k != "runbook" && !pyjson.Truthy(v) {
			continue
		}
		switch k {
		case "clean_steps":
			return badRequest("\"clean_steps\" is only valid when setting target provision state to clean")
		case "service_steps":
			return badRequest("\"service_steps\" is only valid when setting target provision state to service")
		}
		return badRequest("\"%s\" is not valid when setting target provision state to %s", k, target)
	}
	if event == "rescue" {
		if pw, _ := m["rescue_password"].(string); strings.TrimSpace(pw) == "" {
			return badRequest("A non-empty \"rescue_password\" is required when setting target provision state to rescue")
		}
	}
	if target == "abort" {
		if (n.ProvisionState == states.InspectWait && rq.minor < v41InspectAbort) ||
			(n.ProvisionState == states.DeployWait && rq.minor < v110DeployWaitAbort) {
			return notAcceptable()
		}
	}
	if min, ok := lateVerbs[target]; ok && rq.minor < min {
		return notAcceptable()
	}
	if event == "clean" {
		steps, err := stepsOf("clean", m, rb)
		if err != nil {
			return err
		}
		if err := s.cond.DoNodeClean(rq.ctx(), n.UUID, steps); err != nil {
			return s.nodeActionError(err, ident)
		}
		rq.location("nodes/" + ident + "/states")
		return rq.writeEmpty(http.StatusAccepted)
	}
	if event == "service" {
		steps, err := stepsOf("service", m, rb)
		if err != nil {
			return err
		}
		if err := s.cond.DoNodeService(rq.ctx(), n.UUID, steps, disableRamdisk != nil && *disableRamdisk); err != nil {
			return s.nodeActionError(err, ident)
		}
		rq.location("nodes/" + ident + "/states")
		return rq.writeEmpty(http.StatusAccepted)
	}
	if event == "active" || event == "rebuild" {
		steps, err := deployStepsOf(m["deploy_steps"])
		if err != nil {
			return err
		}
		if err := s.cond.DoNodeDeploy(rq.ctx(), n.UUID, event, steps); err != nil {
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

// checkAllowDeploySteps is Ironic's check_allow_deploy_steps: deploy_steps
// (when not empty) need 1.69 and the target active or rebuild (not the
// 1.73 alias deploy).
func checkAllowDeploySteps(minor int, target string, v any) error {
	if !pyjson.Truthy(v) {
		return nil
	}
	if minor < v69DeploySteps {
		return notAcceptableMin(v69DeploySteps)
	}
	if target != "active" && target != "rebuild" {
		return badRequest("\"deploy_steps\" is only valid when setting target provision state to active or rebuild")
	}
	return nil
}

// deployStepsOf checks deploy_steps against Ironic's _DEPLOY_STEPS_SCHEMA
// (items of DEPLOY_STEP_SCHEMA: interface, step, args and priority, all
// required); none when empty. A priority given as digits is a number here.
func deployStepsOf(v any) ([]baremetal.DeployStep, error) {
	if !pyjson.Truthy(v) {
		return nil, nil
	}
	bad := func(format string, args ...any) *apiError {
		return badRequest("Invalid deploy_steps: %s", fmt.Sprintf(format, args...))
	}
	checked, err := deployStepSchema.checkItems(bad, v.([]any))
	if err != nil {
		return nil, err
	}
	steps := make([]baremetal.DeployStep, len(checked))
	for i, st := range checked {
		steps[i] = baremetal.DeployStep{Interface: st.iface, Step: st.step, Args: st.args, Priority: st.number}
	}
	return steps, nil
}

// pyStr is Python's str of a decoded JSON value: a string as it is.
func pyStr(v any) string {
	if s, ok := v.(string); ok {
		return s
	}
	return pyRepr(v)
}

// runbookArg is the body's runbook, "" when none (Ironic's "if runbook"),
// 400 when it is not a string (args.types(None, str)).
func runbookArg(m map[string]any) (string, error) {
	v := m["runbook"]
	if s, ok := v.(string); ok || v == nil {
		return s, nil
	}
	return "", badRequest("Expected types <class 'NoneType'>, <class 'str'> for runbook: %s", pyRepr(v))
}

// stepsOf is what a manual cleaning or a servicing (kind "clean",
// "service") runs: the runbook's steps in their order, or the body's
// clean_steps/service_steps, required and checked.
func stepsOf(kind string, m map[string]any, rb *baremetal.Runbook) ([]conductor.CleanStep, error) {
	if rb != nil {
		return conductor.RunbookSteps(rb), nil
	}
	key := kind + "_steps"
	if v, ok := m[key]; !ok || v == nil || isEmptyList(v) {
		return nil, badRequest("\"%s\" is required when setting target provision state to %s", key, kind)
	}
	return checkSteps(kind, m[key])
}

// isEmptyList reports whether v is [] (Ironic's "not clean_steps" is true for it).
func isEmptyList(v any) bool {
	l, ok := v.([]any)
	return ok && len(l) == 0
}
