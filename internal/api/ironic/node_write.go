package ironic

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/google/uuid"

	"github.com/ferrometal/ferro/internal/baremetal"
	"github.com/ferrometal/ferro/internal/driver"
	"github.com/ferrometal/ferro/internal/states"
	"github.com/ferrometal/ferro/internal/store"
)

// nodeWrite is one field a client writes on a node: its JSON kind, its
// value in the document a PATCH applies to, and how a checked value is set
// (nil: fillNode sets it, with its own checks).
type nodeWrite struct {
	name string
	kind fieldKind
	// patchOnly: a create may not give it; noPatch: a PATCH may not touch
	// it, but it is part of the document Ironic validates.
	patchOnly, noPatch bool
	doc                func(n *baremetal.Node) any
	set                func(n *baremetal.Node, v any)
}

func nodeString(name string, field func(n *baremetal.Node) *string) nodeWrite {
	return nodeWrite{name: name, kind: kString,
		doc: func(n *baremetal.Node) any { return nullable(*field(n)) },
		set: func(n *baremetal.Node, v any) { *field(n) = strField(v) }}
}

// nodeUUIDString is a field holding a UUID, kept in canonical form.
func nodeUUIDString(name string, field func(n *baremetal.Node) *string) nodeWrite {
	w := nodeString(name, field)
	w.set = func(n *baremetal.Node, v any) {
		if *field(n) = strField(v); *field(n) != "" {
			*field(n) = canonicalUUID(*field(n))
		}
	}
	return w
}

func nodeObject(name string, field func(n *baremetal.Node) *baremetal.JSON) nodeWrite {
	return nodeWrite{name: name, kind: kObject,
		doc: func(n *baremetal.Node) any { return emptyIfNil(*field(n)) },
		set: func(n *baremetal.Node, v any) { *field(n) = objField(v) }}
}

func nodeFlag(name string, field func(n *baremetal.Node) *bool) nodeWrite {
	return nodeWrite{name: name, kind: kBoolish,
		doc: func(n *baremetal.Node) any { return *field(n) },
		set: func(n *baremetal.Node, v any) {
			b, _ := boolField(name, v)
			*field(n) = b != nil && *b
		}}
}

// nodeOptFlag is a boolean that may be unset (null).
func nodeOptFlag(name string, field func(n *baremetal.Node) **bool) nodeWrite {
	return nodeWrite{name: name, kind: kBoolish,
		doc: func(n *baremetal.Node) any {
			if *field(n) == nil {
				return nil
			}
			return **field(n)
		},
		set: func(n *baremetal.Node, v any) { *field(n), _ = boolField(name, v) }}
}

// nodeWrites are the fields a node create or PATCH may give. Each
// <kind>_interface is one too (nodeWriteFields adds them).
var nodeWrites = []nodeWrite{
	nodeOptFlag("automated_clean", func(n *baremetal.Node) **bool { return &n.AutomatedClean }),
	{name: "boot_mode", kind: kString, noPatch: true, doc: func(n *baremetal.Node) any { return nullable(n.BootMode) },
		set: func(n *baremetal.Node, v any) { n.BootMode = strField(v) }},
	// The chassis's existence is checked by the caller, which has a
	// transaction (checkNodeChassis).
	nodeUUIDString("chassis_uuid", func(n *baremetal.Node) *string { return &n.ChassisUUID }),
	{name: "conductor_group", kind: kString, doc: func(n *baremetal.Node) any { return n.ConductorGroup }},
	{name: "console_enabled", kind: kBoolish, noPatch: true, doc: func(n *baremetal.Node) any { return n.ConsoleEnabled },
		set: func(n *baremetal.Node, v any) {
			if b, _ := boolField("console_enabled", v); b != nil {
				n.ConsoleEnabled = *b
			}
		}},
	nodeString("description", func(n *baremetal.Node) *string { return &n.Description }),
	nodeFlag("disable_power_off", func(n *baremetal.Node) *bool { return &n.DisablePowerOff }),
	{name: "driver", kind: kStringReq, doc: func(n *baremetal.Node) any { return n.Driver },
		set: func(n *baremetal.Node, v any) { n.Driver = strField(v) }},
	nodeObject("driver_info", func(n *baremetal.Node) *baremetal.JSON { return &n.DriverInfo }),
	nodeObject("extra", func(n *baremetal.Node) *baremetal.JSON { return &n.Extra }),
	nodeObject("instance_info", func(n *baremetal.Node) *baremetal.JSON { return &n.InstanceInfo }),
	nodeString("instance_name", func(n *baremetal.Node) *string { return &n.InstanceName }),
	nodeUUIDString("instance_uuid", func(n *baremetal.Node) *string { return &n.InstanceUUID }),
	nodeString("lessee", func(n *baremetal.Node) *string { return &n.Lessee }),
	nodeFlag("maintenance", func(n *baremetal.Node) *bool { return &n.Maintenance }),
	nodeString("name", func(n *baremetal.Node) *string { return &n.Name }),
	nodeObject("network_data", func(n *baremetal.Node) *baremetal.JSON { return &n.NetworkData }),
	nodeString("owner", func(n *baremetal.Node) *string { return &n.Owner }),
	// Set to the parent's UUID once authorized (authorizeParent).
	nodeString("parent_node", func(n *baremetal.Node) *string { return &n.ParentNode }),
	nodeObject("properties", func(n *baremetal.Node) *baremetal.JSON { return &n.Properties }),
	onlyPatched(nodeFlag("protected", func(n *baremetal.Node) *bool { return &n.Protected })),
	onlyPatched(nodeString("protected_reason", func(n *baremetal.Node) *string { return &n.ProtectedReason })),
	nodeString("resource_class", func(n *baremetal.Node) *string { return &n.ResourceClass }),
	nodeFlag("retired", func(n *baremetal.Node) *bool { return &n.Retired }),
	nodeString("retired_reason", func(n *baremetal.Node) *string { return &n.RetiredReason }),
	{name: "secure_boot", kind: kBoolish, noPatch: true, doc: nodeOptFlag("", func(n *baremetal.Node) **bool { return &n.SecureBoot }).doc,
		set: func(n *baremetal.Node, v any) { n.SecureBoot, _ = boolField("secure_boot", v) }},
	nodeString("shard", func(n *baremetal.Node) *string { return &n.Shard }),
	{name: "uuid", kind: kString, noPatch: true, doc: func(n *baremetal.Node) any { return n.UUID }},
}

func onlyPatched(w nodeWrite) nodeWrite {
	w.patchOnly = true
	return w
}

// nodeWriteFields is nodeWrites with the interfaces, by name.
var nodeWriteFields = func() []nodeWrite {
	all := slices.Clone(nodeWrites)
	for _, kind := range apiInterfaceKinds {
		all = append(all, nodeWrite{name: kind + "_interface", kind: kString,
			doc: func(n *baremetal.Node) any { return nullable(n.Interfaces[kind]) }})
	}
	slices.SortFunc(all, func(a, b nodeWrite) int { return strings.Compare(a.name, b.name) })
	return all
}()

// nodeSchema is the JSON type of every field a node create accepts;
// nodePatchSchema of every field of a patched node's document.
var nodeSchema, nodePatchSchema = func() (create, patch map[string]fieldKind) {
	create, patch = map[string]fieldKind{}, map[string]fieldKind{}
	for _, w := range nodeWriteFields {
		patch[w.name] = w.kind
		if !w.patchOnly {
			create[w.name] = w.kind
		}
	}
	return create, patch
}()

// nodePatchAllowed are the top-level fields a node PATCH may touch.
var nodePatchAllowed = func() []string {
	var names []string
	for _, w := range nodeWriteFields {
		if !w.noPatch {
			names = append(names, w.name)
		}
	}
	return names
}()

// apiInterfaceKinds are the interface kinds the API exposes as
// <kind>_interface.
var apiInterfaceKinds = []string{
	"bios", "boot", "console", "deploy", "firmware", "inspect", "management", "network",
	"power", "raid", "rescue", "storage", "vendor",
}

const nodeDescriptionMax = 4096

// validateNodeDoc checks a node document (a create body, or a node after
// a patch) against the schema and Ironic's extra validators.
func validateNodeDoc(doc map[string]any, schema map[string]fieldKind) error {
	if err := checkAdditional("node", doc, func(k string) bool { _, ok := schema[k]; return ok }); err != nil {
		return err
	}
	if _, ok := doc["driver"]; !ok {
		return schemaError("node", "'driver' is a required property  Failed validating 'required' in schema")
	}
	keys := slices.Sorted(maps.Keys(doc))
	for _, k := range keys {
		if err := checkKind("node", k, doc[k], schema[k]); err != nil {
			return err
		}
	}
	if d := strField(doc["description"]); utf8.RuneCountInString(d) > nodeDescriptionMax {
		return schemaError("node", "%s is too long  Failed validating 'maxLength' in schema['properties']['description']", pyRepr(d))
	}
	for _, l := range []struct {
		field    string
		min, max int
	}{{"resource_class", 0, 80}, {"instance_name", 1, 255}, {"parent_node", 0, 36}} {
		v, ok := doc[l.field].(string)
		switch n := utf8.RuneCountInString(v); {
		case !ok:
		case n > l.max:
			return schemaError("node", "%s is too long  Failed validating 'maxLength' in schema['properties']['%s']", pyRepr(v), l.field)
		case n < l.min:
			return schemaError("node", "%s should be non-empty  Failed validating 'minLength' in schema['properties']['%s']", pyRepr(v), l.field)
		}
	}
	for _, k := range []string{"uuid", "chassis_uuid", "instance_uuid"} {
		if v, ok := doc[k].(string); ok && !isUUIDLike(v) {
			return badRequest("Expected UUID for %s: %s", k, v)
		}
	}
	for _, k := range []string{"automated_clean", "console_enabled", "disable_power_off", "protected", "maintenance", "retired", "secure_boot"} {
		if _, err := boolField(k, doc[k]); err != nil {
			return err
		}
	}
	return nil
}

// rejectNewerFields is Ironic's reject_fields_in_newer_versions: a field
// the requested version does not have may only be given empty.
func rejectNewerFields(doc map[string]any, minor int) error {
	for k, v := range doc {
		m, ok := nodeResource.fieldMin[k]
		if !ok || minor >= m {
			continue
		}
		switch {
		case v == nil:
		case k == "conductor_group" && v == "":
		default:
			return notAcceptable()
		}
	}
	return nil
}

// reservedNodeNames are the words under /v1/nodes that are not node names.
var reservedNodeNames = []string{"detail", "maintenance", "management", "states", "validate", "vendor_passthru"}

// checkNodeName is Ironic's _check_names_acceptable.
func checkNodeName(name string, minor int, msgFormat string) error {
	if minor < v5NodeName {
		return notAcceptable()
	}
	if !validNodeName(name, minor) {
		return badRequest(msgFormat, name)
	}
	if slices.Contains(reservedNodeNames, name) {
		return badRequest("The word \"%s\" is reserved and can not be used as a node name. Reserved words are: %s.",
			name, strings.Join(reservedNodeNames, ", "))
	}
	return nil
}

// noConductorFor is Ironic's NoValidHost for a driver no conductor runs.
func noConductorFor(drv, group string) *apiError {
	return badRequest("No valid host was found. Reason: No conductor service registered which supports driver %s for conductor group \"%s\".", drv, group)
}

// createNode is POST /v1/nodes.
func (s *server) createNode(rq *request) error {
	doc, err := rq.createBody("node")
	if err != nil {
		return err
	}
	if err := validateNodeDoc(doc, nodeSchema); err != nil {
		return err
	}
	if err := rejectNewerFields(doc, rq.minor); err != nil {
		return err
	}
	n := &baremetal.Node{Interfaces: map[string]string{}}
	if id := strField(doc["uuid"]); id != "" {
		n.UUID = canonicalUUID(id)
	} else {
		n.UUID = uuid.NewString()
	}
	if name, ok := doc["name"].(string); ok {
		if err := checkNodeName(name, rq.minor, "Cannot create node with invalid name '%s'"); err != nil {
			return err
		}
	}
	if err := s.fillNode(n, doc, nil, false); err != nil {
		return err
	}
	if n.ParentNode != "" {
		// Ironic's authorize_node_link against the new node's owner; the
		// parent is kept by UUID.
		parent, err := s.authorizeNodeLink(rq, n.Owner, n.ParentNode, "parent_node")
		if err != nil {
			return err
		}
		n.ParentNode = parent.UUID
	}
	if rq.minor < v11EnrollState {
		n.ProvisionState = states.Available
	} else {
		n.ProvisionState = states.Enroll
	}
	if n.ResourceClass == "" {
		n.ResourceClass = s.opts.DefaultResourceClass
	}
	n.CreatedAt = s.now().UTC()
	err = s.store.InTx(rq.ctx(), func(tx store.Store) error {
		if err := s.checkNodeChassis(rq.ctx(), tx, n, ""); err != nil {
			return err
		}
		if err := tx.CreateNode(rq.ctx(), n); err != nil {
			return s.nodeConflict(rq.ctx(), err, n, "")
		}
		return nil
	})
	if err != nil {
		return err
	}
	// The node as written is the node as stored: no need to read it back.
	rq.location("nodes/" + n.UUID)
	return nodeResource.writeOne(rq, s, http.StatusCreated, n, nil)
}

// nodeConflict turns a store conflict on a node write into Ironic's
// message: duplicate name, UUID or instance.
func (s *server) nodeConflict(ctx context.Context, err error, n *baremetal.Node, selfUUID string) error {
	if !errors.Is(err, store.ErrConflict) {
		return err
	}
	if n.Name != "" {
		if other, gerr := s.store.GetNode(ctx, n.Name); gerr == nil && other.UUID != selfUUID {
			return conflict("A node with name %s already exists.", n.Name)
		}
	}
	if selfUUID == "" {
		if _, gerr := s.store.GetNode(ctx, n.UUID); gerr == nil {
			return conflict("A node with UUID %s already exists.", n.UUID)
		}
	}
	if n.InstanceUUID != "" {
		return conflict("Instance %s is already associated with a node, it cannot be associated with this other node %s", n.InstanceUUID, n.UUID)
	}
	return conflict("Conflict.")
}

// fillNode sets n's API-settable fields from a validated document. For a
// patch, old is the node before it and patched names the fields the patch
// touched; interfaces the patch left alone keep their values unless the
// driver changed.
func (s *server) fillNode(n *baremetal.Node, doc map[string]any, patched map[string]bool, resetIfaces bool) error {
	oldDriver := n.Driver
	for _, w := range nodeWrites {
		if w.set != nil {
			w.set(n, doc[w.name])
		}
	}
	group := strings.ToLower(strField(doc["conductor_group"]))
	if !validConductorGroup(group) {
		return badRequest("Expected a conductor group but received %s.", group)
	}
	n.ConductorGroup = group

	reg := s.cond.Registry()
	if _, ok := reg.HardwareType(n.Driver); !ok {
		return noConductorFor(n.Driver, n.ConductorGroup)
	}
	driverChanged := patched != nil && n.Driver != oldDriver
	if n.Interfaces == nil {
		n.Interfaces = map[string]string{}
	}
	for _, kind := range driver.Kinds {
		field := kind + "_interface"
		requested, given := doc[field].(string)
		explicit := given && (patched == nil || patched[field])
		switch {
		case explicit:
			if err := reg.CheckInterface(n.Driver, kind, requested); err != nil {
				return badRequest("%s", sentence(trimSentinel(err, driver.ErrInvalidParameter)))
			}
			n.Interfaces[kind] = requested
			continue
		case patched != nil && patched[field]:
			// Removed or set to null: back to the default.
		case patched != nil && !driverChanged && n.Interfaces[kind] != "":
			continue
		case patched != nil && driverChanged && !resetIfaces && n.Interfaces[kind] != "":
			// Ironic's check_and_update_node_interfaces: without
			// reset_interfaces, an interface the new hardware type does
			// not support is an error, not a silent reset.
			if reg.CheckInterface(n.Driver, kind, n.Interfaces[kind]) == nil {
				continue
			}
			return badRequest("%s interface implementation '%s' is not supported by hardware type %s.", kind, n.Interfaces[kind], n.Driver)
		}
		def, err := reg.DefaultInterface(n.Driver, kind)
		if err != nil {
			return badRequest("For hardware type '%s', no default value found for %s interface could be determined. Please ensure the interfaces are enabled.", n.Driver, kind)
		}
		n.Interfaces[kind] = def
	}
	return nil
}

// checkNodeChassis checks that the chassis a node names exists, unless it
// is the one the node had (old).
func (s *server) checkNodeChassis(ctx context.Context, tx store.Store, n *baremetal.Node, old string) error {
	if n.ChassisUUID == "" || n.ChassisUUID == old {
		return nil
	}
	if _, err := tx.GetChassis(ctx, n.ChassisUUID); err != nil {
		if errors.Is(err, store.ErrNotFound) {
			return badRequest("Chassis %s could not be found.", n.ChassisUUID)
		}
		return err
	}
	return nil
}

// validNameMessage is the format of Ironic's error for a bad new name.
func validNameMessage(ident string) string {
	return fmt.Sprintf("Node %s: Cannot change name to invalid name ", ident) + "'%s'"
}

// updateAllowedStates are the states with a target in which a node may
// still be updated: Ironic's UPDATE_ALLOWED_STATES (ironic/common/states.py).
// A node in one of them that a task holds answers NodeLocked instead.
var updateAllowedStates = []string{
	states.DeployFailed, states.Inspecting, states.InspectFailed, states.InspectWait,
	states.CleanFailed, states.Error, states.Verifying, "adopt failed", "rescue failed",
	"unrescue failed", "service failed", states.ServiceHold,
}

// nodePatchDoc is the node as the JSON document a PATCH applies to: the
// patchable fields, unset ones as null and dicts as objects.
func nodePatchDoc(n *baremetal.Node) map[string]any {
	doc := make(map[string]any, len(nodeWriteFields))
	for _, w := range nodeWriteFields {
		doc[w.name] = w.doc(n)
	}
	return doc
}

// cloneNode copies a node deeply enough for a patch to change it.
func cloneNode(n *baremetal.Node) *baremetal.Node {
	c := *n
	c.Interfaces = maps.Clone(n.Interfaces)
	c.Traits = slices.Clone(n.Traits)
	return &c
}

// patchNode is PATCH /v1/nodes/{node}.
func (s *server) patchNode(rq *request) error {
	a, err := rq.queryArgs("reset_interfaces")
	if err != nil {
		return err
	}
	reset, err := a.booleanSince(rq, "reset_interfaces", v45ResetInterfaces)
	if err != nil {
		return err
	}
	ops, err := rq.readPatchOf(onlyPatching(nodePatchAllowed...))
	if err != nil {
		return err
	}
	for _, f := range nodeFields {
		if rq.minor < f.min && len(patchValues(ops, "/"+f.name)) > 0 {
			return notAcceptable()
		}
	}
	if reset != nil && *reset && len(patchValues(ops, "/driver")) == 0 {
		return badRequest("The reset_interfaces parameter can only be used when changing the node's driver.")
	}
	if d := patchValues(ops, "/description"); len(d) > 0 {
		if s, ok := d[0].(string); ok && utf8.RuneCountInString(s) > nodeDescriptionMax {
			return badRequest("Cannot update node with description exceeding %d characters", nodeDescriptionMax)
		}
	}
	for _, nd := range patchValues(ops, "/network_data") {
		if _, ok := nd.(map[string]any); !ok && nd != nil {
			return badRequest("Invalid network_data: %s is not of type 'object' ", pyRepr(nd))
		}
	}
	ident := rq.r.PathValue("node")
	for _, name := range patchValues(ops, "/name") {
		s, _ := name.(string)
		if s == "" {
			s = pyRepr(name)
		}
		if err := checkNodeName(s, rq.minor, validNameMessage(ident)); err != nil {
			return err
		}
	}
	resetIfaces := reset != nil && *reset
	compute := func(n *baremetal.Node) (*baremetal.Node, error) {
		return s.computeNodePatch(n, ops, ident, rq.minor, resetIfaces)
	}

	// Validate against the current node first, so that a bad patch is a
	// 400 even when the node is locked, as in Ironic where the checks run
	// before the conductor takes the lock.
	cur, err := s.node(rq)
	if err != nil {
		return err
	}
	if err := s.authorizePatch(rq, ops, cur); err != nil {
		return err
	}
	// Ironic's authorize_node_link_patch: the parent is checked against the
	// node's owner before the patch, and kept by UUID.
	if v := patchValues(ops, "/parent_node"); len(v) > 0 {
		if to, ok := v[0].(string); ok && to != "" {
			parent, err := s.authorizeNodeLink(rq, cur.Owner, to, "parent_node")
			if err != nil {
				return err
			}
			if parent.UUID != cur.UUID {
				compute = func(n *baremetal.Node) (*baremetal.Node, error) {
					nn, err := s.computeNodePatch(n, ops, ident, rq.minor, resetIfaces)
					if err == nil {
						nn.ParentNode = parent.UUID
					}
					return nn, err
				}
			}
		}
	}
	if _, err := compute(cur); err != nil {
		return err
	}
	var uuid string
	err = s.withNodeLock(rq, ident, func(ctx context.Context, tx store.Store, n *baremetal.Node) error {
		nn, err := compute(n)
		if err != nil {
			return err
		}
		if err := s.checkNodeChassis(ctx, tx, nn, n.ChassisUUID); err != nil {
			return err
		}
		if err := tx.UpdateNode(ctx, nn); err != nil {
			if errors.Is(err, store.ErrConflict) {
				return s.nodeConflictTx(ctx, tx, nn)
			}
			return err
		}
		uuid = nn.UUID
		return nil
	})
	if err != nil {
		return err
	}
	n, err := s.store.GetNode(rq.ctx(), uuid)
	if err != nil {
		return err
	}
	return nodeResource.writeOne(rq, s, http.StatusOK, n, nil)
}

// nodeConflictTx words a conflict found while updating a node.
func (s *server) nodeConflictTx(ctx context.Context, tx store.Store, n *baremetal.Node) error {
	if n.Name != "" {
		if other, err := tx.GetNode(ctx, n.Name); err == nil && other.UUID != n.UUID {
			return conflict("A node with name %s already exists.", n.Name)
		}
	}
	if n.InstanceUUID != "" {
		return conflict("Instance %s is already associated with a node, it cannot be associated with this other node %s", n.InstanceUUID, n.UUID)
	}
	return conflict("Conflict.")
}

// computeNodePatch applies a validated patch to a copy of n and checks the
// result as Ironic's API and conductor do.
func (s *server) computeNodePatch(old *baremetal.Node, ops []patchOp, ident string, minor int, resetIfaces bool) (*baremetal.Node, error) {
	removeInstanceOnly := len(ops) == 1 && ops[0].Op == "remove" && ops[0].Path == "/instance_uuid"
	switch {
	case old.Maintenance && removeInstanceOnly:
	case old.TargetProvisionState != "" && !slices.Contains(updateAllowedStates, old.ProvisionState):
		return nil, conflict("Node %s can not be updated while a state transition is in progress.", ident)
	case old.ProvisionState == states.Inspecting && minor >= v39InspectWait:
		return nil, conflict("Cannot update node \"%s\" while it is in state \"%s\".", old.UUID, states.Inspecting)
	}
	doc, err := applyPatch(nodePatchDoc(old), ops)
	if err != nil {
		return nil, err
	}
	// Fields Ironic prunes before validation.
	for k := range doc {
		if _, ok := nodePatchSchema[k]; !ok {
			delete(doc, k)
		}
	}
	if _, ok := doc["driver"]; !ok {
		doc["driver"] = nil
	}
	if doc["driver"] == nil {
		return nil, schemaError("node", "None is not of type 'string'  Failed validating 'type' in schema['properties']['driver']")
	}
	if err := validateNodeDoc(doc, nodePatchSchema); err != nil {
		return nil, err
	}
	if id, _ := doc["uuid"].(string); id != old.UUID {
		return nil, badRequest("Cannot patch /uuid. Only the following can be updated: %s", strings.Join(nodePatchAllowed, ", "))
	}
	n := cloneNode(old)
	if err := s.fillNode(n, doc, touchedTops(ops), resetIfaces); err != nil {
		return nil, err
	}
	if n.Driver != old.Driver && n.ConsoleEnabled {
		return nil, conflict("Node %s can not update the driver while the console is enabled. Please stop the console first.", ident)
	}
	if !n.Maintenance {
		n.MaintenanceReason = ""
		n.Fault = ""
	}
	if !n.Protected {
		if n.ProtectedReason != "" && pathTouched(ops, "/protected_reason") {
			return nil, badRequest("Cannot set protected_reason for node %s without protected=True", n.UUID)
		}
		n.ProtectedReason = ""
	} else if !old.Protected && n.ProvisionState != states.Active && n.ProvisionState != "rescue" {
		return nil, conflict("Node %s can only be made protected in provision states \"active\" or \"rescue\", not \"%s\".", n.UUID, n.ProvisionState)
	}
	if !n.Retired {
		if n.RetiredReason != "" && pathTouched(ops, "/retired_reason") {
			return nil, badRequest("Cannot set retired_reason for node %s without retired=True", n.UUID)
		}
		n.RetiredReason = ""
	} else if !old.Retired && n.ProvisionState == states.Available {
		// Ironic's conductor (_check_update_retired): an available node
		// would be handed out; manage it first.
		return nil, conflict("Node %s can not have 'retired' set in provision state 'available', the current state is '%s'", n.UUID, n.ProvisionState)
	}
	// Nova names the instance in instance_info; Ironic copies it to
	// instance_name (1.104) when that is not set.
	if pathTouched(ops, "/instance_info") && n.InstanceName == "" {
		if dn, ok := n.InstanceInfo["display_name"].(string); ok {
			n.InstanceName = dn
		}
	}
	if n.InstanceUUID != old.InstanceUUID && n.InstanceUUID == "" {
		// Removing the instance drops the allocation's claim too.
		if n.AllocationUUID != "" && n.AllocationUUID == old.InstanceUUID {
			n.AllocationUUID = ""
		}
	}
	return n, nil
}

// deleteNode is DELETE /v1/nodes/{node}.
func (s *server) deleteNode(rq *request) error {
	if _, err := rq.queryArgs(); err != nil {
		return err
	}
	ident := rq.r.PathValue("node")
	// A missing node is a 404 even while another node is locked.
	if _, err := s.node(rq); err != nil {
		return err
	}
	err := s.withNodeLock(rq, ident, func(ctx context.Context, tx store.Store, n *baremetal.Node) error {
		if !n.Maintenance && n.InstanceUUID != "" {
			return conflict("Node %s is associated with instance %s.", n.UUID, n.InstanceUUID)
		}
		if !n.Maintenance && !states.DeletableStates[n.ProvisionState] {
			return conflict("Can not delete node \"%s\" while it is in provision state \"%s\". Valid provision states to perform deletion are: %s, or set the node into maintenance mode",
				n.UUID, n.ProvisionState, pyRepr(anySlice(deletableStateList())))
		}
		if n.Protected {
			return newError(http.StatusForbidden, "Node %s is protected and cannot be undeployed, rebuilt or deleted", n.UUID)
		}
		allocs, err := tx.ListAllocations(ctx, store.AllocationFilter{NodeUUID: n.UUID})
		if err != nil {
			return err
		}
		for _, al := range allocs {
			if err := tx.DeleteAllocation(ctx, al.UUID); err != nil && !errors.Is(err, store.ErrNotFound) {
				return fmt.Errorf("delete allocation %s of node %s: %w", al.UUID, n.UUID, err)
			}
		}
		return tx.DeleteNode(ctx, n.UUID)
	})
	if err != nil {
		return err
	}
	return rq.writeEmpty(http.StatusNoContent)
}

func deletableStateList() []string {
	var out []string
	for _, st := range states.All {
		if states.DeletableStates[st] {
			out = append(out, st)
		}
	}
	return out
}
