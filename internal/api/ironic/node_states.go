package ironic

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/ferrometal/ferro/internal/baremetal"
	"github.com/ferrometal/ferro/internal/conductor"
	"github.com/ferrometal/ferro/internal/states"
	"github.com/ferrometal/ferro/internal/store"
)

// getNodeStates is GET /v1/nodes/{node}/states.
func (s *server) getNodeStates(rq *request) error {
	if _, err := rq.queryArgs(); err != nil {
		return err
	}
	n, err := s.node(rq)
	if err != nil {
		return err
	}
	return rq.writeJSON(http.StatusOK, appendNodeStates(make([]byte, 0, 512), n, rq.minor))
}

// bodyArgs decodes a JSON object body whose members are the method's
// arguments: any other member is "Unexpected arguments", as Ironic's
// argument validation says.
func (rq *request) bodyArgs(allowed ...string) (map[string]any, error) {
	body, err := rq.readBody()
	if err != nil {
		return nil, err
	}
	v, err := decodeJSON(body)
	if err != nil {
		return nil, err
	}
	if v == nil {
		return map[string]any{}, nil
	}
	m, ok := v.(map[string]any)
	if !ok {
		return nil, badRequest("Expected a JSON object in the request body, received %s", pyRepr(v))
	}
	var unknown []string
	for k := range m {
		if !slices.Contains(allowed, k) {
			unknown = append(unknown, k)
		}
	}
	if len(unknown) > 0 {
		slices.Sort(unknown)
		return nil, badRequest("Unexpected arguments: %s", strings.Join(unknown, ", "))
	}
	return m, nil
}

// stringArg returns a string argument ("" when absent or null), 400 when
// it is another type.
func stringArg(m map[string]any, name string) (string, error) {
	v, ok := m[name]
	if !ok || v == nil {
		return "", nil
	}
	s, ok := v.(string)
	if !ok {
		return "", badRequest("Expected string for %s: %v", name, pyRepr(v))
	}
	return s, nil
}

// requiredString is stringArg for a mandatory argument.
func requiredString(m map[string]any, name string) (string, error) {
	if _, ok := m[name]; !ok {
		return "", badRequest("Missing mandatory parameter: %s", name)
	}
	return stringArg(m, name)
}

var allowedPowerTargets = []string{
	baremetal.PowerOn, baremetal.PowerOff, baremetal.PowerReboot, "soft rebooting", "soft power off",
}

// setPowerState is PUT /v1/nodes/{node}/states/power.
func (s *server) setPowerState(rq *request) error {
	m, err := rq.bodyArgs("target", "timeout")
	if err != nil {
		return err
	}
	target, err := requiredString(m, "target")
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

// toInt accepts a JSON number (or a numeric string, as Ironic's int()).
func toInt(v any) (int, bool) {
	switch x := v.(type) {
	case float64:
		if x == float64(int(x)) {
			return int(x), true
		}
	case string:
		if n, err := strconv.Atoi(strings.TrimSpace(x)); err == nil {
			return n, true
		}
	case interface{ Int64() (int64, error) }:
		if n, err := x.Int64(); err == nil {
			return int(n), true
		}
	}
	return 0, false
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

// provisionVerbs maps Ironic's provision targets to the minor version
// that introduced them (MIN_VERB_VERSIONS); ferro runs manage, provide,
// inspect and abort.
var provisionVerbs = map[string]int{
	"manage": v4ManageableState, "provide": v4ManageableState, "inspect": v6InspectState,
	"abort": v13AbortVerb, "clean": v15ManualClean, "adopt": v17AdoptVerb,
	"rescue": v38RescueInterface, "unrescue": v38RescueInterface,
	"deploy": v73DeployVerbs, "undeploy": v73DeployVerbs,
	"active": 0, "deleted": 0, "rebuild": 0, "unhold": 0, "service": 0,
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
		for _, k := range slices.Sorted(mapsKeys(m)) {
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
	m, err := rq.bodyArgs("target", "configdrive", "clean_steps", "deploy_steps", "service_steps",
		"rescue_password", "disable_ramdisk", "runbook")
	if err != nil {
		return err
	}
	target, err := requiredString(m, "target")
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
			if k == "clean_steps" {
				return badRequest("\"clean_steps\" is only valid when setting target provision state to clean")
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

// setRAIDConfig is PUT /v1/nodes/{node}/states/raid: the body is the
// target RAID configuration, stored for the next cleaning.
func (s *server) setRAIDConfig(rq *request) error {
	if _, err := rq.queryArgs(); err != nil {
		return err
	}
	body, err := rq.readBody()
	if err != nil {
		return err
	}
	v, err := decodeJSON(body)
	if err != nil {
		return err
	}
	cfg, ok := v.(map[string]any)
	if !ok {
		return badRequest("Expected types <class 'dict'> for target_raid_config: %s", pyRepr(v))
	}
	n, err := s.node(rq)
	if err != nil {
		return err
	}
	if rq.minor < v12RAIDConfig {
		return notAcceptable()
	}
	if iface := n.Interfaces["raid"]; iface == "" || iface == "no-raid" {
		return notFound("Driver %s does not support raid (disabled or not implemented).", n.Driver)
	}
	if err := validateRAIDConfig(cfg); err != nil {
		return err
	}
	err = s.withNodeLock(rq, rq.r.PathValue("node"), func(ctx context.Context, tx store.Store, n *baremetal.Node) error {
		if len(cfg) == 0 {
			n.TargetRAIDConfig = nil
		} else {
			n.TargetRAIDConfig = cfg
		}
		return tx.UpdateNode(ctx, n)
	})
	if err != nil {
		return err
	}
	return rq.writeEmpty(http.StatusNoContent)
}

var raidLevels = []string{"0", "1", "2", "5", "6", "1+0", "5+0", "6+0", "JBOD"}

// validateRAIDConfig checks the shape Ironic's RAID schema requires: a
// logical_disks list whose entries have size_gb and raid_level.
func validateRAIDConfig(cfg map[string]any) error {
	if len(cfg) == 0 {
		return nil
	}
	bad := func(format string, args ...any) error {
		return badRequest("RAID config validation error: "+format, args...)
	}
	for k := range cfg {
		if k != "logical_disks" {
			return bad("Additional properties are not allowed ('%s' was unexpected)", k)
		}
	}
	disks, ok := cfg["logical_disks"].([]any)
	if !ok {
		return bad("'logical_disks' is a required property and must be an array")
	}
	if len(disks) == 0 {
		return bad("[] is too short")
	}
	for i, d := range disks {
		disk, ok := d.(map[string]any)
		if !ok {
			return bad("logical disk %d is not an object", i)
		}
		size, ok := disk["size_gb"]
		if !ok {
			return bad("'size_gb' is a required property")
		}
		if sz, isStr := size.(string); isStr {
			if sz != "MAX" {
				return bad("%s is not valid under any of the given schemas", pyRepr(size))
			}
		} else if n, ok := toInt(size); !ok || n < 0 {
			return bad("%s is not valid under any of the given schemas", pyRepr(size))
		}
		level, ok := disk["raid_level"].(string)
		if !ok {
			return bad("'raid_level' is a required property")
		}
		if !slices.Contains(raidLevels, level) {
			return bad("%s is not one of %s", pyRepr(level), pyRepr(anySlice(raidLevels)))
		}
	}
	return nil
}

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
	n, err := s.lookupNode(rq.ctx(), s.store, ident, rq.minor)
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
	if _, err := rq.queryArgs(); err != nil {
		return err
	}
	n, err := s.node(rq)
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
	m, err := rq.bodyArgs("boot_device", "persistent")
	if err != nil {
		return err
	}
	dev, err := requiredString(m, "boot_device")
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
	if _, err := rq.queryArgs(); err != nil {
		return err
	}
	n, err := s.node(rq)
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

// Traits (1.37).

func (s *server) traitsAllowed(rq *request) error {
	if rq.minor >= v37NodeTraits {
		return nil
	}
	// What Ironic's routing answers below 1.37, per method: the node
	// controller's own GET refuses the version, PUT reaches a controller
	// without put (405), DELETE finds no resource.
	switch rq.r.Method {
	case http.MethodGet:
		return notAcceptable()
	case http.MethodPut:
		rq.w.Header().Set("Allow", "DELETE, GET, PATCH, POST")
		return newError(http.StatusMethodNotAllowed, "The method specified is not allowed for this resource.")
	}
	return notFound("Resource could not be found.")
}

// getTraits is GET /v1/nodes/{node}/traits.
func (s *server) getTraits(rq *request) error {
	if err := s.traitsAllowed(rq); err != nil {
		return err
	}
	n, err := s.node(rq)
	if err != nil {
		return err
	}
	t := slices.Sorted(slices.Values(n.Traits))
	if t == nil {
		t = []string{}
	}
	o := newObj(nil)
	o.key("traits")
	o.b = appendStrings(o.b, t)
	return rq.writeJSON(http.StatusOK, o.end())
}

func invalidTrait(t string) error {
	return badRequest("Schema error for trait: %s does not match any of the acceptable trait names", pyRepr(t))
}

// setTraits is PUT /v1/nodes/{node}/traits (replace all) and
// PUT /v1/nodes/{node}/traits/{trait} (add one).
func (s *server) setTraits(rq *request) error {
	if err := s.traitsAllowed(rq); err != nil {
		return err
	}
	one := rq.r.PathValue("trait")
	var replace []string
	body, err := rq.readBody()
	if err != nil {
		return err
	}
	v, err := decodeJSON(body)
	if err != nil {
		return err
	}
	m, _ := v.(map[string]any)
	if v != nil && m == nil {
		return badRequest("Schema error for body: %s is not of type 'object'", pyRepr(v))
	}
	if one != "" {
		if len(m) > 0 {
			return badRequest("No body should be provided when adding a trait")
		}
		if !validTrait(one) {
			return invalidTrait(one)
		}
	} else {
		for k := range m {
			if k != "traits" {
				return badRequest("Schema error for body: Additional properties are not allowed (%s was unexpected)", pyRepr(k))
			}
		}
		tv, ok := m["traits"]
		if !ok {
			return badRequest("A single node trait may be added via PUT /v1/nodes/<node identifier>/traits/<trait> with no body, or all node traits may be replaced via PUT /v1/nodes/<node identifier>/traits with the list of traits specified in the request body.")
		}
		if err := checkKind("body", "traits", tv, kStringList); err != nil || tv == nil {
			return badRequest("Schema error for body: %s is not of type 'array'", pyRepr(tv))
		}
		replace = strList(tv)
		for _, t := range replace {
			if !validTrait(t) {
				return invalidTrait(t)
			}
		}
	}
	if _, err := s.node(rq); err != nil {
		return err
	}
	err = s.withNodeLock(rq, rq.r.PathValue("node"), func(ctx context.Context, tx store.Store, n *baremetal.Node) error {
		if one != "" {
			if !slices.Contains(n.Traits, one) {
				n.Traits = append(n.Traits, one)
			}
		} else {
			n.Traits = nil
			for _, t := range replace {
				if !slices.Contains(n.Traits, t) {
					n.Traits = append(n.Traits, t)
				}
			}
		}
		slices.Sort(n.Traits)
		if len(n.Traits) > 50 {
			return badRequest("Could not add traits to node %s: a node can have at most 50 traits", n.UUID)
		}
		return tx.UpdateNode(ctx, n)
	})
	if err != nil {
		return err
	}
	if one != "" {
		rq.location("nodes/" + rq.r.PathValue("node") + "/traits/" + one)
	}
	return rq.writeEmpty(http.StatusNoContent)
}

// deleteTraits is DELETE /v1/nodes/{node}/traits and …/traits/{trait}.
func (s *server) deleteTraits(rq *request) error {
	if err := s.traitsAllowed(rq); err != nil {
		return err
	}
	one := rq.r.PathValue("trait")
	if _, err := s.node(rq); err != nil {
		return err
	}
	err := s.withNodeLock(rq, rq.r.PathValue("node"), func(ctx context.Context, tx store.Store, n *baremetal.Node) error {
		if one == "" {
			n.Traits = nil
		} else {
			i := slices.Index(n.Traits, one)
			if i < 0 {
				return notFound("Node %s doesn't have a trait '%s'", n.UUID, one)
			}
			n.Traits = slices.Delete(n.Traits, i, i+1)
		}
		return tx.UpdateNode(ctx, n)
	})
	if err != nil {
		return err
	}
	return rq.writeEmpty(http.StatusNoContent)
}

// getConsole is GET /v1/nodes/{node}/states/console: ferro has no serial
// console, so it is never enabled.
func (s *server) getConsole(rq *request) error {
	if _, err := rq.queryArgs(); err != nil {
		return err
	}
	n, err := s.node(rq)
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

// listBIOS is GET /v1/nodes/{node}/bios (1.40): ferro caches no BIOS
// settings, so the list is empty.
func (s *server) listBIOS(rq *request) error {
	if rq.minor < v40BIOSInterface {
		return resourceNotFound()
	}
	if _, err := rq.queryArgs("fields", "detail"); err != nil {
		return err
	}
	if _, err := s.node(rq); err != nil {
		return err
	}
	return rq.writeJSON(http.StatusOK, []byte(`{"bios": []}`))
}

// getBIOSSetting is GET /v1/nodes/{node}/bios/{setting} (1.40).
func (s *server) getBIOSSetting(rq *request) error {
	if rq.minor < v40BIOSInterface {
		return resourceNotFound()
	}
	n, err := s.node(rq)
	if err != nil {
		return err
	}
	return notFound("Node %s doesn't have a BIOS setting '%s'", n.UUID, rq.r.PathValue("setting"))
}

// listVIFs is GET /v1/nodes/{node}/vifs (1.28): the VIFs recorded on the
// node's ports and portgroups.
func (s *server) listVIFs(rq *request) error {
	if rq.minor < 28 {
		return resourceNotFound()
	}
	if _, err := rq.queryArgs(); err != nil {
		return err
	}
	n, err := s.node(rq)
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
