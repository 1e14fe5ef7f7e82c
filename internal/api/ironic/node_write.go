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

	"github.com/ferrometal/ferro/internal/baremetal"
	"github.com/ferrometal/ferro/internal/states"
	"github.com/ferrometal/ferro/internal/store"
)

// updateAllowedStates are the states with a target in which a node may
// still be updated: Ironic's UPDATE_ALLOWED_STATES (ironic/common/states.py).
// A node in one of them that a task holds answers NodeLocked instead.
var updateAllowedStates = []string{
	states.DeployFailed, states.Inspecting, states.InspectFailed, states.InspectWait,
	states.CleanFailed, states.Error, states.Verifying, "adopt failed", "rescue failed",
	"unrescue failed", "service failed",
}

// nodePatchDoc is the node as the JSON document a PATCH applies to: the
// patchable fields, unset ones as null and dicts as objects.
func nodePatchDoc(n *baremetal.Node) map[string]any {
	str := func(s string) any {
		if s == "" {
			return nil
		}
		return s
	}
	obj := func(m baremetal.JSON) any {
		if m == nil {
			return map[string]any{}
		}
		return m
	}
	boolp := func(b *bool) any {
		if b == nil {
			return nil
		}
		return *b
	}
	doc := map[string]any{
		"automated_clean":  boolp(n.AutomatedClean),
		"chassis_uuid":     str(n.ChassisUUID),
		"conductor_group":  n.ConductorGroup,
		"description":      str(n.Description),
		"driver":           n.Driver,
		"driver_info":      obj(n.DriverInfo),
		"extra":            obj(n.Extra),
		"instance_info":    obj(n.InstanceInfo),
		"instance_uuid":    str(n.InstanceUUID),
		"lessee":           str(n.Lessee),
		"maintenance":      n.Maintenance,
		"name":             str(n.Name),
		"network_data":     obj(n.NetworkData),
		"owner":            str(n.Owner),
		"properties":       obj(n.Properties),
		"protected":        n.Protected,
		"protected_reason": str(n.ProtectedReason),
		"resource_class":   str(n.ResourceClass),
		"retired":          n.Retired,
		"retired_reason":   str(n.RetiredReason),
		"shard":            str(n.Shard),
		// Not patchable, but part of the document Ironic validates.
		"boot_mode":       str(n.BootMode),
		"secure_boot":     boolp(n.SecureBoot),
		"console_enabled": n.ConsoleEnabled,
		"uuid":            n.UUID,
	}
	for _, kind := range apiInterfaceKinds {
		doc[kind+"_interface"] = str(n.Interfaces[kind])
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
	reset, err := a.boolean("reset_interfaces")
	if err != nil {
		return err
	}
	if reset != nil && rq.minor < v45ResetInterfaces {
		return notAcceptable()
	}
	ops, err := rq.readPatch()
	if err != nil {
		return err
	}
	for _, op := range ops {
		if !slices.Contains(nodePatchAllowed, op.top()) {
			return badRequest("Cannot patch %s. Only the following can be updated: %s", op.Path, strings.Join(nodePatchAllowed, ", "))
		}
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
	if err := rq.authorizePatch(ops, cur); err != nil {
		return err
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
	return rq.writeJSON(http.StatusOK, appendNode(make([]byte, 0, 4096), n, rq.render(s), nil))
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
