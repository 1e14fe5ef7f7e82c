package ironic

import (
	"context"
	"errors"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/ferrometal/ferro/internal/auth"
	"github.com/ferrometal/ferro/internal/baremetal"
	"github.com/ferrometal/ferro/internal/inventory"
	"github.com/ferrometal/ferro/internal/states"
	"github.com/ferrometal/ferro/internal/store"
)

// portFields are a port's fields in view order, each with the version
// it appeared in: below it the field is neither shown nor may be asked for.
var portFields = append(headFields(func(p *baremetal.Port) string { return p.UUID },
	func(p *baremetal.Port) time.Time { return p.CreatedAt }, func(p *baremetal.Port) *time.Time { return p.UpdatedAt }),
	[]viewField[*baremetal.Port]{
		{"address", 0, strOf(func(p *baremetal.Port) string { return p.Address })},
		{"extra", 0, objOf(func(p *baremetal.Port) baremetal.JSON { return p.Extra })},
		{"internal_info", v18PortInternalInfo, objOf(func(p *baremetal.Port) baremetal.JSON { return p.InternalInfo })},
		{"is_smartnic", v53SmartNIC, boolOf(func(p *baremetal.Port) bool { return p.IsSmartNIC })},
		{"local_link_connection", v19PortAdvancedNet, llcView},
		{"physical_network", v34PortPhysicalNetwork, nullStrOf(func(p *baremetal.Port) string { return p.PhysicalNetwork })},
		{"pxe_enabled", v19PortAdvancedNet, boolOf(func(p *baremetal.Port) bool { return p.PXEEnabled })},
		{"node_uuid", 0, nullStrOf(func(p *baremetal.Port) string { return p.NodeUUID })},
		{"portgroup_uuid", v24PortgroupSubcontrol, nullStrOf(func(p *baremetal.Port) string { return p.PortgroupUUID })},
		{"name", v88PortName, nullStrOf(func(p *baremetal.Port) string { return p.Name })},
		{"description", v97PortDescription, nullStrOf(func(p *baremetal.Port) string { return p.Description })},
		{"vendor", v100PortVendor, nullStrOf(func(p *baremetal.Port) string { return p.Vendor })},
		{"category", v101PortCategory, nullStrOf(func(p *baremetal.Port) string { return p.Category })},
		{"available_for_dynamic_portgroup", v111DynamicPortgroup, boolOf(portDynamic)},
	}...)

// portDynamic is a port's available_for_dynamic_portgroup.
func portDynamic(p *baremetal.Port) bool {
	return p.AvailableForDynamicPortgroup == nil || *p.AvailableForDynamicPortgroup
}

// portGated are the writable fields a version below theirs may not set
// (Ironic's _check_allowed_port_fields).
var portGated = gatedWrites(portFields, portSchema)

// portResource describes ports (every version; per node, and per
// portgroup from 1.24).
var portResource = describe(&resource[baremetal.Port, store.PortFilter]{
	path:        "ports",
	noun:        "port",
	idField:     "port_uuid",
	asWritten:   true,
	exactKey:    true,
	byName:      true, // from 1.88: findPort
	find:        findPort,
	prepare:     portNodeIdent,
	fields:      portFields,
	defaults:    []string{"uuid", "address"},
	invalidSort: []string{"extra", "internal_info", "local_link_connection"},
	sortColumns: portSortColumns,
	internal:    []string{"created_at", "id", "links", "updated_at", "uuid", "internal_info"},
	mandatory:   []string{"address", "node_uuid"},
	doc:         portDoc,
	check:       checkPortDoc,
	uuid:        func(p *baremetal.Port) string { return p.UUID },
	setNew:      func(p *baremetal.Port, id string, now time.Time) { p.UUID, p.CreatedAt = id, now },
	node:        func(p *baremetal.Port) string { return p.NodeUUID },
	anyPower:    true,
	parents:     []parentList{{"nodes/{node}", 0}, {"portgroups/{portgroup}", v24PortgroupSubcontrol}},
	params: []listParam[baremetal.Port, store.PortFilter]{
		{name: "portgroup", min: v24PortgroupSubcontrol, plain406: true, ifSet: true},
		{name: "node_uuid", read: func(_ *portQuery, v string, _ bool) error { return checkUUIDArg("node_uuid", v) }},
		{name: "node", read: func(q *portQuery, v string, _ bool) error {
			// A node's name needs 1.5, unless node_uuid names the node.
			if !q.args.has("node_uuid") && v != "" && q.rq.minor < v5NodeName && !isUUIDLike(v) {
				return notAcceptable()
			}
			return nil
		}},
		{name: "address", read: func(q *portQuery, _ string, _ bool) error { _, err := macArg(q.args); return err }},
		// The nodes of shards (1.82) or of conductor groups (Ironic
		// master, at every version).
		{name: "shard", min: v82Shard},
		{name: "conductor_groups"},
		// Ironic master's LIKE '%keyword%' on the description, at every
		// version (SQL's LIKE: case-insensitive, as MySQL and SQLite).
		{name: "description_contains", read: func(q *portQuery, v string, given bool) error {
			if given && v != "" {
				kw := strings.ToLower(v)
				q.where(func(p *baremetal.Port) bool { return strings.Contains(strings.ToLower(p.Description), kw) })
			}
			return nil
		}},
	},
	resolve: portScope,
	own: func(rq *request, s *server) (func(*baremetal.Port) bool, error) {
		own, err := rq.listProject(auth.RulePortListAll, "")
		if err != nil || own == "" {
			return nil, err
		}
		// Ports of the caller's project's nodes only, as Ironic's port list.
		mine, err := s.projectNodes(rq, own)
		if err != nil {
			return nil, err
		}
		return func(p *baremetal.Port) bool { return mine[p.NodeUUID] }, nil
	},
	precheck: portPrecheck,
	patchGate: func(rq *request, ops []patchOp) error {
		for field, m := range portGated {
			if rq.minor < m && (len(patchValues(ops, "/"+field)) > 0 || pathRemoved(ops, "/"+field)) {
				return notAcceptable()
			}
		}
		const nt = "/local_link_connection/network_type"
		if rq.minor < v64NetworkType && (len(patchValues(ops, nt)) > 0 || pathRemoved(ops, nt)) {
			return notAcceptable()
		}
		return nil
	},
	reread: true,
	conflict: func(_ context.Context, _ store.Store, p *baremetal.Port) error {
		return conflict("A port with MAC address %s already exists.", p.Address)
	},
	storeOps: storeOps[baremetal.Port, store.PortFilter]{store.Store.GetPort, store.Store.ListPorts,
		store.Store.CreatePort, store.Store.UpdatePort, store.Store.DeletePort},
	page: func(f *store.PortFilter) *store.Page { return &f.Page },
})

type portQuery = listQuery[baremetal.Port, store.PortFilter]

// portScope reads a port list's filter: a portgroup (of ?portgroup=,
// 1.24, or the path), a node (of ?node=, ?node_uuid= or the path), not
// both, or else an address.
func portScope(q *portQuery) error {
	rq, a := q.rq, q.args
	parentNode := rq.r.PathValue("node")
	parentPG := rq.r.PathValue("portgroup")
	pgIdent := a.str("portgroup")
	nodeIdent := a.str("node")
	if a.has("node_uuid") {
		nodeIdent = a.str("node_uuid")
	}
	if parentNode != "" {
		nodeIdent = parentNode
	}
	if parentPG != "" {
		pgIdent = parentPG
	}
	address, _ := macArg(a) // checked by its row
	shard := a.str("shard")
	if (nodeIdent != "" && pgIdent != "") || (shard != "" && (nodeIdent != "" || pgIdent != "")) {
		return newError(http.StatusForbidden, "Operation not permitted.")
	}
	if a.str("conductor_groups") != "" && (nodeIdent != "" || pgIdent != "" || address != "") {
		return badRequest("Filtering by conductor_groups cannot be combined with node_ident, portgroup_ident, or node address filters.")
	}
	switch {
	case pgIdent != "":
		pg, err := q.s.lookupPortgroup(rq.ctx(), q.s.store, pgIdent, rq.minor)
		if err != nil {
			return err
		}
		q.f.PortgroupUUID = pg.UUID
	case nodeIdent != "":
		n, err := lookupNode(rq.ctx(), q.s.store, nodeIdent, rq.minor)
		if err != nil {
			return err
		}
		q.f.NodeUUID = n.UUID
	case address != "":
		q.f.Address = address
	default:
		keep, err := nodeGroupFilter(rq, q.s, a)
		if err != nil {
			return err
		}
		if keep != nil {
			q.where(func(p *baremetal.Port) bool { return keep[p.NodeUUID] })
		}
	}
	switch {
	case parentNode != "":
		q.path = "nodes/" + parentNode + "/ports"
	case parentPG != "":
		q.path = "portgroups/" + parentPG + "/ports"
	}
	return nil
}

// portNodeIdent reads a created port's node_ident (1.94: the node by UUID
// or name, instead of node_uuid; one of them, as Ironic's oneOf).
func portNodeIdent(rq *request, s *server, doc map[string]any) error {
	ident, given := doc["node_ident"]
	if !given {
		return nil
	}
	if _, both := doc["node_uuid"]; both {
		return schemaError("port", "%s is valid under each of {'required': ['node_uuid']}, {'required': ['node_ident']}", pyRepr(doc))
	}
	name, ok := ident.(string)
	if !ok {
		return schemaError("port", "%s is not of type 'string'", pyRepr(ident))
	}
	if rq.minor < v94PortNodeName {
		return notAcceptable()
	}
	n, err := lookupNode(rq.ctx(), s.store, name, rq.minor)
	if err != nil {
		if isAPIError(err) {
			// Ironic names node_uuid, which it was not given.
			return badRequest("Node None could not be found.")
		}
		return err
	}
	delete(doc, "node_ident")
	doc["node_uuid"] = n.UUID
	return nil
}

// findPort finds a port by UUID (as written) or, from 1.88, by name (Ironic
// master's Port.get); below 1.88 a port is found by UUID only, as in 21.4.
func findPort(ctx context.Context, tx store.Store, ident string, minor int) (*baremetal.Port, error) {
	if !isUUIDLike(ident) {
		if minor < v88PortName {
			return nil, invalidInput("port_uuid", ident, "Expected a UUID but received "+ident+".")
		}
		if !isValidLogicalName(ident) {
			return nil, badRequest("Expected UUID or name for port_ident: %s", ident)
		}
		p, err := portByName(ctx, tx, ident)
		if err == nil && p == nil {
			err = portNotFound(ident)
		}
		return p, err
	}
	p, err := tx.GetPort(ctx, ident)
	if errors.Is(err, store.ErrNotFound) {
		return nil, portNotFound(ident)
	}
	return p, err
}

// portByName is the port of this name, nil when none has it. Names are
// few and the store has no index of them: the ports are read whole.
func portByName(ctx context.Context, tx store.Store, name string) (*baremetal.Port, error) {
	ports, err := tx.ListPorts(ctx, store.PortFilter{})
	if err != nil {
		return nil, err
	}
	for _, p := range ports {
		if p.Name == name {
			return p, nil
		}
	}
	return nil, nil
}

// nodeGroupFilter is the ?shard= or ?conductor_groups= filter of a list of
// a node's resources: the nodes in those shards or conductor groups (nil
// when neither is given; Ironic asks shard first).
func nodeGroupFilter(rq *request, s *server, a args) (map[string]bool, error) {
	var f store.NodeFilter
	var groups []string
	switch {
	case a.str("shard") != "":
		f.Shard = a.stringList("shard")
	case a.str("conductor_groups") != "":
		for _, g := range a.stringList("conductor_groups") {
			groups = append(groups, strings.ToLower(g))
		}
	default:
		return nil, nil
	}
	nodes, err := s.store.ListNodes(rq.ctx(), f)
	if err != nil {
		return nil, err
	}
	keep := map[string]bool{}
	for _, n := range nodes {
		if groups == nil || slices.Contains(groups, strings.ToLower(n.ConductorGroup)) {
			keep[n.UUID] = true
		}
	}
	return keep, nil
}

// portPrecheck checks a port's portgroup, physical network and MAC
// address, and that its node is not being inspected, before the port is
// written.
func portPrecheck(ctx context.Context, tx store.Store, n *baremetal.Node, p, old *baremetal.Port, w writeCtx) error {
	if p.Name != "" && (old == nil || old.Name != p.Name) {
		if other, err := portByName(ctx, tx, p.Name); err != nil {
			return err
		} else if other != nil && other.UUID != p.UUID {
			return conflict("A port with name %s already exists.", p.Name)
		}
	}
	if old == nil {
		pxeGiven := w.doc["pxe_enabled"] != nil && p.PXEEnabled
		if err := checkPortPortgroup(ctx, tx, p, pxeGiven); err != nil {
			return err
		}
		if err := checkPortPhysnet(ctx, tx, p, nil); err != nil {
			return err
		}
		if other, err := tx.GetPortByAddress(ctx, p.Address); err == nil && other.UUID != p.UUID {
			return conflict("A port with MAC address %s already exists.", p.Address)
		}
		return nil
	}
	if n.ProvisionState == states.Inspecting && w.minor >= v39InspectWait {
		return conflict("Cannot update port \"%s\" on \"%s\" while it is in state \"%s\".", old.UUID, n.UUID, states.Inspecting)
	}
	pxeGiven := len(patchValues(w.ops, "/pxe_enabled")) > 0 && p.PXEEnabled
	if p.PortgroupUUID != old.PortgroupUUID || p.NodeUUID != old.NodeUUID || pxeGiven {
		if err := checkPortPortgroup(ctx, tx, p, pxeGiven); err != nil {
			return err
		}
	}
	if err := checkPortPhysnet(ctx, tx, p, old); err != nil {
		return err
	}
	if p.Address != old.Address {
		if other, err := tx.GetPortByAddress(ctx, p.Address); err == nil && other.UUID != p.UUID {
			return conflict("A port with MAC address %s already exists.", p.Address)
		}
	}
	return nil
}

// invalidInput is Ironic's InvalidInput.
func invalidInput(field string, value any, msg string) *apiError {
	v := "None"
	if value != nil {
		if s, ok := value.(string); ok {
			v = s
		} else {
			v = pyRepr(value)
		}
	}
	return badRequest("Invalid input for field/attribute %s. Value: '%s'. %s", field, v, msg)
}

// portSchema lists a port's writable attributes.
var portSchema = map[string]fieldKind{
	"uuid": kString, "address": kString, "node_uuid": kString, "portgroup_uuid": kString,
	"extra": kObject, "pxe_enabled": kBoolish, "local_link_connection": kObject,
	"physical_network": kString, "is_smartnic": kBoolish,
	"name": kString, "description": kString, "vendor": kString, "category": kString,
	"available_for_dynamic_portgroup": kBoolish,
}

// portDoc is a port as the document PATCH applies to.
func portDoc(p *baremetal.Port) map[string]any {
	return map[string]any{
		"uuid": p.UUID, "address": p.Address, "node_uuid": nullable(p.NodeUUID),
		"portgroup_uuid": nullable(p.PortgroupUUID), "extra": emptyIfNil(p.Extra),
		"internal_info": emptyIfNil(p.InternalInfo), "pxe_enabled": p.PXEEnabled,
		"local_link_connection": emptyIfNil(p.LocalLinkConnection),
		"physical_network":      nullable(p.PhysicalNetwork), "is_smartnic": p.IsSmartNIC,
		"name": nullable(p.Name), "description": nullable(p.Description), "vendor": nullable(p.Vendor),
		"category": nullable(p.Category), "available_for_dynamic_portgroup": portDynamic(p),
		"created_at": nil, "updated_at": nil,
	}
}

// checkPortDoc validates a port document and fills p from it.
func checkPortDoc(doc map[string]any, p *baremetal.Port, w writeCtx) error {
	minor, create := w.minor, w.create
	patchOnly(doc, w, "internal_info", "created_at", "updated_at")
	if err := checkDocKinds(doc, portSchema, "port", true, "address", "node_uuid"); err != nil {
		return err
	}
	addr := strField(doc["address"])
	mac, ok := inventory.NormalizeMAC(addr)
	if !ok {
		return invalidInput("address", addr, "Expected a MAC address but received "+addr+".")
	}
	for _, k := range []string{"uuid", "node_uuid", "portgroup_uuid"} {
		if v := strField(doc[k]); v != "" && !isUUIDLike(v) {
			return invalidInput(k, v, "Expected a UUID but received "+v+".")
		}
	}
	for _, f := range []struct {
		name string
		max  int
	}{{"physical_network", 64}, {"description", 255}, {"vendor", 32}, {"category", 80}} {
		if v := strField(doc[f.name]); utf8.RuneCountInString(v) > f.max {
			return invalidInput(f.name, v, "Value should have a maximum character requirement of "+strconv.Itoa(f.max))
		}
	}
	llc := objField(doc["local_link_connection"])
	if llc != nil {
		if err := validateLocalLink(llc); err != nil {
			return err
		}
		if _, ok := llc["network_type"]; ok && minor < v64NetworkType {
			return notAcceptable()
		}
		// Ironic gates the OVN VTEP members on create only: a PATCH
		// may set them at any version.
		if _, ok := llc[vtepLogical]; ok && create && !vtepAllowed(minor) {
			return notAcceptable()
		}
	}
	if create {
		for k, m := range portGated {
			if v, ok := doc[k]; ok && v != nil && minor < m {
				return notAcceptable()
			}
		}
	}
	if id := strField(doc["uuid"]); id != "" {
		p.UUID = canonicalUUID(id)
	}
	p.Address = mac
	p.NodeUUID = canonicalUUID(strField(doc["node_uuid"]))
	p.PortgroupUUID = strField(doc["portgroup_uuid"])
	if p.PortgroupUUID != "" {
		p.PortgroupUUID = canonicalUUID(p.PortgroupUUID)
	}
	p.Extra = objField(doc["extra"])
	p.LocalLinkConnection = llc
	p.PhysicalNetwork = strField(doc["physical_network"])
	p.Name, p.Description = strField(doc["name"]), strField(doc["description"])
	p.Vendor, p.Category = strField(doc["vendor"]), strField(doc["category"])
	dyn, _ := boolField("available_for_dynamic_portgroup", doc["available_for_dynamic_portgroup"])
	p.AvailableForDynamicPortgroup = new(bool)
	*p.AvailableForDynamicPortgroup = dyn == nil || *dyn
	if v, _ := boolField("pxe_enabled", doc["pxe_enabled"]); v != nil {
		p.PXEEnabled = *v
	} else if create {
		p.PXEEnabled = true
	} else {
		p.PXEEnabled = false
	}
	sn, _ := boolField("is_smartnic", doc["is_smartnic"])
	p.IsSmartNIC = sn != nil && *sn
	if p.IsSmartNIC && (llc == nil || llc["port_id"] == nil || llc["hostname"] == nil) {
		return badRequest("Smart NIC port must have port_id and hostname in local_link_connection")
	}
	return nil
}

func pyTypeName(v any) string {
	switch v.(type) {
	case string:
		return "<class 'str'>"
	case bool:
		return "<class 'bool'>"
	case map[string]any:
		return "<class 'dict'>"
	case []any:
		return "<class 'list'>"
	case nil:
		return "<class 'NoneType'>"
	}
	if n, ok := v.(interface{ String() string }); ok && strings.ContainsAny(n.String(), ".eE") {
		return "<class 'float'>"
	}
	return "<class 'int'>"
}

func isAPIError(err error) bool {
	var ae *apiError
	return errors.As(err, &ae)
}

// checkPortPortgroup checks that a port's portgroup exists, belongs to the
// port's node and accepts it.
func checkPortPortgroup(ctx context.Context, tx store.Store, p *baremetal.Port, pxeGiven bool) error {
	if p.PortgroupUUID == "" {
		return nil
	}
	pg, err := tx.GetPortgroup(ctx, p.PortgroupUUID)
	if err != nil {
		if errors.Is(err, store.ErrNotFound) {
			return badRequest("Portgroup %s could not be found.", p.PortgroupUUID)
		}
		return err
	}
	if pg.NodeUUID != p.NodeUUID {
		return badRequest("Port can not be added to a portgroup belonging to a different node.")
	}
	if pxeGiven && !pg.StandalonePortsSupported {
		return conflict("Port group %s doesn't support standalone ports. This port cannot be created as a member of that port group because either 'extra/vif_port_id' was specified or 'pxe_enabled' was set to True.", pg.UUID)
	}
	return nil
}

// checkPortPhysnet is Ironic's validate_port_physnet: a port joining a
// portgroup, or changing its physical network inside one, must have the
// physical network of the portgroup's other ports (409 otherwise). old is
// the port before the change, nil on create.
func checkPortPhysnet(ctx context.Context, tx store.Store, p, old *baremetal.Port) error {
	if p.PortgroupUUID == "" {
		return nil
	}
	if old != nil && old.PortgroupUUID == p.PortgroupUUID && old.PhysicalNetwork == p.PhysicalNetwork {
		return nil
	}
	members, err := tx.ListPorts(ctx, store.PortFilter{PortgroupUUID: p.PortgroupUUID})
	if err != nil {
		return err
	}
	for _, m := range members {
		if m.UUID == p.UUID {
			continue
		}
		if m.PhysicalNetwork != p.PhysicalNetwork {
			none := func(s string) string {
				if s == "" {
					return "None"
				}
				return s
			}
			return conflict("Port with physical network %s cannot become a member of port group %s which has ports in physical network %s.",
				none(p.PhysicalNetwork), p.PortgroupUUID, none(m.PhysicalNetwork))
		}
		break // the members agree with each other: one is enough
	}
	return nil
}
