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

	"github.com/ferrometal/ferro/internal/auth"
	"github.com/ferrometal/ferro/internal/baremetal"
	"github.com/ferrometal/ferro/internal/driver"
	"github.com/ferrometal/ferro/internal/states"
	"github.com/ferrometal/ferro/internal/store"
)

// lookupNode resolves a node by UUID or name as Ironic's get_rpc_node:
// names need 1.5, and a malformed identifier is a 400.
func (s *server) lookupNode(ctx context.Context, tx store.Store, ident string, minor int) (*baremetal.Node, error) {
	if !isUUIDLike(ident) {
		if minor < v5NodeName {
			return nil, nodeNotFound(ident)
		}
		if !isValidLogicalName(ident) {
			return nil, badRequest("Expected a logical name or UUID but received %s.", ident)
		}
	}
	n, err := tx.GetNode(ctx, ident)
	if err != nil {
		if errors.Is(err, store.ErrNotFound) {
			return nil, nodeNotFound(ident)
		}
		return nil, err
	}
	return n, nil
}

// node is lookupNode on the server's store.
func (s *server) node(rq *request) (*baremetal.Node, error) {
	return s.lookupNode(rq.ctx(), s.store, rq.r.PathValue("node"), rq.minor)
}

// checkNodeIdent validates a path identifier before handing it to the
// conductor, with the same answers as lookupNode.
func checkNodeIdent(ident string, minor int) error {
	if !isUUIDLike(ident) {
		if minor < v5NodeName {
			return nodeNotFound(ident)
		}
		if !isValidLogicalName(ident) {
			return badRequest("Expected a logical name or UUID but received %s.", ident)
		}
	}
	return nil
}

// withNodeLock runs fn under the node's lock, mapping a missing node to
// Ironic's NodeNotFound.
func (s *server) withNodeLock(rq *request, ident string, fn func(ctx context.Context, tx store.Store, n *baremetal.Node) error) error {
	if err := checkNodeIdent(ident, rq.minor); err != nil {
		return err
	}
	err := s.cond.WithNodeLock(rq.ctx(), ident, fn)
	if err != nil {
		var ae *apiError
		if !errors.As(err, &ae) && errors.Is(err, store.ErrNotFound) {
			return nodeNotFound(ident)
		}
	}
	return err
}

// getNode is GET /v1/nodes/{node}.
func (s *server) getNode(rq *request) error {
	a, err := rq.queryArgs("fields")
	if err != nil {
		return err
	}
	n, err := s.node(rq)
	if err != nil {
		return err
	}
	fields := a.stringList("fields")
	if fields != nil {
		if rq.minor < v8FieldsSubset {
			return notAcceptable()
		}
		if err := checkNodeFields(fields, rq.minor); err != nil {
			return err
		}
	}
	bp := getBuf()
	b := appendNode(*bp, n, rq.render(s), newFieldSet(fields))
	err = rq.writeJSON(http.StatusOK, b)
	putBuf(bp, b)
	return err
}

// nodeListArgs are the parameters of GET /v1/nodes.
var nodeListArgs = []string{
	"chassis_uuid", "instance_uuid", "associated", "maintenance", "retired", "provision_state",
	"marker", "limit", "sort_key", "sort_dir", "driver", "fields", "resource_class", "fault",
	"conductor_group", "detail", "conductor", "owner", "description_contains", "lessee",
	"project", "shard", "sharded",
}

// nodeDetailArgs are those of GET /v1/nodes/detail, which has no fields.
var nodeDetailArgs = slices.DeleteFunc(slices.Clone(nodeListArgs), func(s string) bool {
	return s == "fields" || s == "detail"
})

// nodeInvalidSortKeys are the fields Ironic refuses to sort nodes by.
var nodeInvalidSortKeys = []string{
	"properties", "driver_info", "extra", "instance_info", "driver_internal_info",
	"clean_step", "deploy_step", "raid_config", "target_raid_config", "traits", "network_data",
}

// ironicProvisionStates are every state Ironic's machine knows, for the
// provision_state filter.
var ironicProvisionStates = []string{
	"enroll", "verifying", "manageable", "inspecting", "inspect wait", "inspect failed",
	"cleaning", "clean wait", "clean failed", "clean hold", "available", "deploying",
	"wait call-back", "deploy failed", "deploy hold", "active", "deleting", "deleted", "error",
	"rebuild", "adopting", "adopt failed", "rescue", "rescuing", "rescue wait", "rescue failed",
	"unrescuing", "unrescue failed", "servicing", "service wait", "service failed", "service hold",
}

var validFaults = []string{"power failure", "clean failure", "rescue abort failure", "service failure"}

// listNodes is GET /v1/nodes and GET /v1/nodes/detail.
func (s *server) listNodes(rq *request, detailPath bool) error {
	allowed := nodeListArgs
	if detailPath {
		allowed = nodeDetailArgs
	}
	a, err := rq.queryArgs(allowed...)
	if err != nil {
		return err
	}
	p, err := s.paging(a, nodeInvalidSortKeys, false)
	if err != nil {
		return err
	}
	if detailPath {
		p.fields = nil
	} else {
		if err := rq.returnFields(a, &p, defaultNodeFields); err != nil {
			return err
		}
		if p.fieldsGiven {
			if err := checkNodeFields(p.fields, rq.minor); err != nil {
				return err
			}
		}
	}
	if m, ok := nodeFieldMin[p.sortKey]; ok && rq.minor < m {
		return notAcceptable()
	}

	var f store.NodeFilter
	f.Page = p.page
	if ps, ok := a.optStr("provision_state"); ok {
		if rq.minor < v9ProvisionStateFilter {
			return notAcceptable()
		}
		if !slices.Contains(ironicProvisionStates, ps) {
			return badRequest("Provision state \"%s\" is not valid", ps)
		}
		f.ProvisionState = []string{ps}
	}
	if d, ok := a.optStr("driver"); ok {
		if rq.minor < v16DriverFilter {
			return notAcceptableMin(v16DriverFilter)
		}
		f.Driver = d
	}
	if rc, ok := a.optStr("resource_class"); ok {
		if rq.minor < v21ResourceClass {
			return notAcceptableMin(v21ResourceClass)
		}
		f.ResourceClass = rc
	}
	if fault, ok := a.optStr("fault"); ok {
		if rq.minor < v42Fault {
			return notAcceptableMin(v42Fault)
		}
		if !slices.Contains(validFaults, fault) {
			return badRequest("Unrecognized fault \"%s\" is specified, allowed faults are %s", fault, pyRepr(anySlice(validFaults)))
		}
		f.Fault = fault
	}
	if g, ok := a.optStr("conductor_group"); ok {
		if rq.minor < v46ConductorGroup {
			return notAcceptableMin(v46ConductorGroup)
		}
		g = strings.ToLower(g)
		f.ConductorGroup = &g
	}
	conductorFilter, hasConductor := a.optStr("conductor")
	if hasConductor && rq.minor < v49Conductors {
		return notAcceptableMin(v49Conductors)
	}
	if o, ok := a.optStr("owner"); ok {
		if rq.minor < v50Owner {
			return notAcceptableMin(v50Owner)
		}
		f.Owner = o
	}
	if l, ok := a.optStr("lessee"); ok {
		if rq.minor < v65Lessee {
			return notAcceptableMin(v65Lessee)
		}
		f.Lessee = l
	}
	project, hasProject := a.optStr("project")
	if hasProject && rq.minor < v65Lessee {
		return notAcceptableMin(v65Lessee)
	}
	if own, err := rq.listProject(auth.RuleNodeListAll, project); err != nil {
		return err
	} else if own != "" {
		project, hasProject = own, true
	}
	if shards := a.stringList("shard"); shards != nil {
		if rq.minor < v82Shard {
			return notAcceptableMin(v82Shard)
		}
		f.Shard = shards
	}
	sharded, err := a.boolean("sharded")
	if err != nil {
		return err
	}
	if sharded != nil && rq.minor < v82Shard {
		return notAcceptableMin(v82Shard)
	}
	if f.InstanceUUID, err = a.uuidArg("instance_uuid"); err != nil {
		return err
	}
	chassis, err := a.uuidArg("chassis_uuid")
	if err != nil {
		return err
	}
	if rq.r.PathValue("chassis") != "" {
		// GET /v1/chassis/{chassis}/nodes.
		id, err := chassisResource.ident(rq)
		if err != nil {
			return err
		}
		c, err := chassisResource.lookup(rq.ctx(), s.store, id)
		if err != nil {
			return err
		}
		chassis = c.UUID
	}
	if f.Associated, err = a.boolean("associated"); err != nil {
		return err
	}
	if f.Maintenance, err = a.boolean("maintenance"); err != nil {
		return err
	}
	if f.Retired, err = a.boolean("retired"); err != nil {
		return err
	}
	descContains, hasDesc := a.optStr("description_contains")

	if err := checkMarker(rq.ctx(), p.page.Marker, s.store.GetNode, nodeNotFound); err != nil {
		return err
	}
	rc := rq.render(s)
	// Filters the store does not have run here, over an unlimited query.
	post := hasConductor || hasProject || sharded != nil || chassis != "" || hasDesc
	if post {
		f.Limit = 0
	}
	nodes, err := s.store.ListNodes(rq.ctx(), f)
	if err != nil {
		return err
	}
	if post {
		nodes = slices.DeleteFunc(nodes, func(n *baremetal.Node) bool {
			switch {
			case chassis != "" && !strings.EqualFold(n.ChassisUUID, chassis):
			case hasDesc && !strings.Contains(n.Description, descContains):
			case hasProject && n.Owner != project && n.Lessee != project:
			case sharded != nil && (n.Shard != "") != *sharded:
			case hasConductor && rc.conductorFor(n) != conductorFilter:
			default:
				return false
			}
			return true
		})
		if len(nodes) > p.limit {
			nodes = nodes[:p.limit]
		}
	}

	fs := newFieldSet(p.fields)
	js := rq.streamJSON(http.StatusOK)
	js.b = append(js.b, `{"nodes": [`...)
	for i, n := range nodes {
		if i > 0 {
			js.b = append(js.b, ", "...)
		}
		js.b = appendNode(js.b, n, rc, fs)
		js.flush()
	}
	js.b = append(js.b, ']')
	var last string
	if len(nodes) > 0 {
		last = nodes[len(nodes)-1].UUID
	}
	// Unlike Ironic, which keeps only a few, the next link carries every
	// filter, so that following it pages through the same selection.
	extra := a.filters("limit", "marker", "sort_key", "sort_dir", "fields", "detail")
	resource := "nodes"
	if detailPath {
		resource = "nodes/detail"
	}
	js.b = appendListEnd(js.b, rq.nextLink(resource, p, len(nodes), last, extra...))
	return js.end()
}

func anySlice(ss []string) []any {
	out := make([]any, len(ss))
	for i, s := range ss {
		out[i] = s
	}
	return out
}

// nodeSchema is the JSON type of every field a node create accepts.
var nodeSchema = map[string]fieldKind{
	"automated_clean": kBoolish, "bios_interface": kString, "boot_interface": kString,
	"boot_mode": kString, "chassis_uuid": kString, "conductor_group": kString,
	"console_enabled": kBoolish, "console_interface": kString, "deploy_interface": kString,
	"description": kString, "driver": kStringReq, "driver_info": kObject, "extra": kObject,
	"inspect_interface": kString, "instance_info": kObject, "instance_uuid": kString,
	"lessee": kString, "management_interface": kString, "maintenance": kBoolish,
	"name": kString, "network_data": kObject, "network_interface": kString, "owner": kString,
	"power_interface": kString, "properties": kObject, "raid_interface": kString,
	"rescue_interface": kString, "resource_class": kString, "retired": kBoolish,
	"retired_reason": kString, "secure_boot": kBoolish, "shard": kString,
	"storage_interface": kString, "uuid": kString, "vendor_interface": kString,
}

// nodePatchSchema adds what only a PATCH may set.
var nodePatchSchema = func() map[string]fieldKind {
	m := maps.Clone(nodeSchema)
	m["protected"] = kBoolish
	m["protected_reason"] = kString
	return m
}()

// nodePatchAllowed are the top-level fields a node PATCH may touch.
var nodePatchAllowed = []string{
	"automated_clean", "bios_interface", "boot_interface", "chassis_uuid", "conductor_group",
	"console_interface", "deploy_interface", "description", "driver", "driver_info", "extra",
	"inspect_interface", "instance_info", "instance_uuid", "lessee", "maintenance",
	"management_interface", "name", "network_data", "network_interface", "owner",
	"power_interface", "properties", "protected", "protected_reason", "raid_interface",
	"rescue_interface", "resource_class", "retired", "retired_reason", "shard",
	"storage_interface", "vendor_interface",
}

// apiInterfaceKinds are the interface kinds the API exposes as
// <kind>_interface (firmware arrives in 1.86, above ferro's maximum).
var apiInterfaceKinds = []string{
	"bios", "boot", "console", "deploy", "inspect", "management", "network",
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
	if rc := strField(doc["resource_class"]); utf8.RuneCountInString(rc) > 80 {
		return schemaError("node", "%s is too long  Failed validating 'maxLength' in schema['properties']['resource_class']", pyRepr(rc))
	}
	for _, k := range []string{"uuid", "chassis_uuid", "instance_uuid"} {
		if v, ok := doc[k].(string); ok && !isUUIDLike(v) {
			return badRequest("Expected UUID for %s: %s", k, v)
		}
	}
	for _, k := range []string{"automated_clean", "console_enabled", "protected", "maintenance", "retired", "secure_boot"} {
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
		m, ok := nodeFieldMin[k]
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
	bp := getBuf()
	b := appendNode(*bp, n, rq.render(s), nil)
	err = rq.writeJSON(http.StatusCreated, b)
	putBuf(bp, b)
	return err
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
	n.Driver = strField(doc["driver"])
	n.Name = strField(doc["name"])
	n.Description = strField(doc["description"])
	n.ResourceClass = strField(doc["resource_class"])
	n.Owner = strField(doc["owner"])
	n.Lessee = strField(doc["lessee"])
	n.InstanceUUID = strField(doc["instance_uuid"])
	if n.InstanceUUID != "" {
		n.InstanceUUID = canonicalUUID(n.InstanceUUID)
	}
	n.Shard = strField(doc["shard"])
	n.BootMode = strField(doc["boot_mode"])
	n.RetiredReason = strField(doc["retired_reason"])
	n.DriverInfo = objField(doc["driver_info"])
	n.Properties = objField(doc["properties"])
	n.Extra = objField(doc["extra"])
	n.InstanceInfo = objField(doc["instance_info"])
	n.NetworkData = objField(doc["network_data"])
	n.AutomatedClean, _ = boolField("automated_clean", doc["automated_clean"])
	n.SecureBoot, _ = boolField("secure_boot", doc["secure_boot"])
	if v, _ := boolField("console_enabled", doc["console_enabled"]); v != nil {
		n.ConsoleEnabled = *v
	} else if patched == nil {
		n.ConsoleEnabled = false
	}
	maint, _ := boolField("maintenance", doc["maintenance"])
	n.Maintenance = maint != nil && *maint
	retired, _ := boolField("retired", doc["retired"])
	n.Retired = retired != nil && *retired
	if patched != nil {
		prot, _ := boolField("protected", doc["protected"])
		n.Protected = prot != nil && *prot
		n.ProtectedReason = strField(doc["protected_reason"])
	}

	group := strings.ToLower(strField(doc["conductor_group"]))
	if !validConductorGroup(group) {
		return badRequest("Expected a conductor group but received %s.", group)
	}
	n.ConductorGroup = group
	// The chassis's existence is checked by the caller, which has a
	// transaction (checkNodeChassis).
	n.ChassisUUID = ""
	if c := strField(doc["chassis_uuid"]); c != "" {
		n.ChassisUUID = canonicalUUID(c)
	}

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
