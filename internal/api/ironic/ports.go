package ironic

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"time"

	"github.com/ferrometal/ferro/internal/auth"
	"github.com/ferrometal/ferro/internal/baremetal"
	"github.com/ferrometal/ferro/internal/inventory"
	"github.com/ferrometal/ferro/internal/states"
	"github.com/ferrometal/ferro/internal/store"
)

// portFields are a port's fields in view order, each with the version
// it appeared in: below it the field is neither shown nor may be asked for.
var portFields = []viewField[*baremetal.Port]{
	{"uuid", 0, func(b []byte, p *baremetal.Port) []byte { return appendString(b, p.UUID) }},
	{"created_at", 0, func(b []byte, p *baremetal.Port) []byte { return appendTime(b, p.CreatedAt) }},
	{"updated_at", 0, func(b []byte, p *baremetal.Port) []byte { return appendNullTime(b, p.UpdatedAt) }},
	{"address", 0, func(b []byte, p *baremetal.Port) []byte { return appendString(b, p.Address) }},
	{"extra", 0, func(b []byte, p *baremetal.Port) []byte { return appendObject(b, p.Extra) }},
	{"internal_info", v18PortInternalInfo, func(b []byte, p *baremetal.Port) []byte { return appendObject(b, p.InternalInfo) }},
	{"is_smartnic", v53SmartNIC, func(b []byte, p *baremetal.Port) []byte { return appendBool(b, p.IsSmartNIC) }},
	{"local_link_connection", v19PortAdvancedNet, func(b []byte, p *baremetal.Port) []byte {
		return appendObject(b, p.LocalLinkConnection)
	}},
	{"physical_network", v34PortPhysicalNetwork, func(b []byte, p *baremetal.Port) []byte {
		return appendNullString(b, p.PhysicalNetwork)
	}},
	{"pxe_enabled", v19PortAdvancedNet, func(b []byte, p *baremetal.Port) []byte { return appendBool(b, p.PXEEnabled) }},
	{"node_uuid", 0, func(b []byte, p *baremetal.Port) []byte { return appendNullString(b, p.NodeUUID) }},
	{"portgroup_uuid", v24PortgroupSubcontrol, func(b []byte, p *baremetal.Port) []byte {
		return appendNullString(b, p.PortgroupUUID)
	}},
}

var portFieldMin = tableFieldMin(portFields)

// portGated are the writable fields a version below theirs may not set
// (Ironic's _check_allowed_port_fields).
var portGated = map[string]int{
	"pxe_enabled": v19PortAdvancedNet, "local_link_connection": v19PortAdvancedNet,
	"portgroup_uuid": v24PortgroupSubcontrol, "physical_network": v34PortPhysicalNetwork,
	"is_smartnic": v53SmartNIC,
}

// portResource describes ports (every version; per node, and per
// portgroup from 1.24).
var portResource = &resource[*baremetal.Port]{
	path:             "ports",
	key:              "ports",
	what:             "port",
	noun:             "port",
	wildcard:         "port",
	idField:          "port_uuid",
	asWritten:        true,
	exactKey:         true,
	defaults:         []string{"uuid", "address"},
	invalidSort:      []string{"extra", "internal_info", "local_link_connection"},
	sortColumns:      portSortColumns,
	fieldMin:         portFieldMin,
	internal:         []string{"created_at", "id", "links", "updated_at", "uuid", "internal_info"},
	mandatory:        []string{"address", "node_uuid"},
	view:             tableView(portFields, true),
	doc:              portDoc,
	check:            checkPortDoc,
	uuid:             func(p *baremetal.Port) string { return p.UUID },
	setNew:           func(p *baremetal.Port, id string, now time.Time) { p.UUID, p.CreatedAt = id, now },
	node:             func(p *baremetal.Port) string { return p.NodeUUID },
	anyPower:         true,
	portgroupListMin: v24PortgroupSubcontrol,
	listArgs:         []string{"node_uuid", "address", "portgroup"},
	filter:           portFilter,
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
	newT:  func() *baremetal.Port { return &baremetal.Port{} },
	clone: clonePtr[baremetal.Port],
	get: func(ctx context.Context, s store.Store, id string) (*baremetal.Port, error) {
		return s.GetPort(ctx, id)
	},
	list: func(ctx context.Context, s store.Store, f listFilter) ([]*baremetal.Port, error) {
		return s.ListPorts(ctx, store.PortFilter{Page: f.page, NodeUUID: f.node, PortgroupUUID: f.portgroup, Address: f.address})
	},
	create: func(ctx context.Context, s store.Store, p *baremetal.Port) error { return s.CreatePort(ctx, p) },
	update: func(ctx context.Context, s store.Store, p *baremetal.Port) error { return s.UpdatePort(ctx, p) },
	delete: func(ctx context.Context, s store.Store, id string) error { return s.DeletePort(ctx, id) },
}

// portFilter reads a port list's filter: a portgroup (of ?portgroup=,
// 1.24, or the path), a node (of ?node=, ?node_uuid= or the path), not
// both, or else an address.
func portFilter(rq *request, s *server, a args) (listFilter, string, error) {
	var f listFilter
	parentNode := rq.r.PathValue("node")
	parentPG := rq.r.PathValue("portgroup")
	pgIdent := a.str("portgroup")
	if pgIdent != "" && rq.minor < v24PortgroupSubcontrol {
		return f, "", notAcceptable()
	}
	nodeUUIDArg, err := a.uuidArg("node_uuid")
	if err != nil {
		return f, "", err
	}
	nodeIdent := a.str("node")
	if nodeUUIDArg == "" && nodeIdent != "" && rq.minor < v5NodeName && !isUUIDLike(nodeIdent) {
		return f, "", notAcceptable()
	}
	if nodeUUIDArg != "" {
		nodeIdent = nodeUUIDArg
	}
	if parentNode != "" {
		nodeIdent = parentNode
	}
	if parentPG != "" {
		pgIdent = parentPG
	}
	address, err := macArg(a)
	if err != nil {
		return f, "", err
	}
	if nodeIdent != "" && pgIdent != "" {
		return f, "", newError(http.StatusForbidden, "Operation not permitted.")
	}
	switch {
	case pgIdent != "":
		pg, err := s.lookupPortgroup(rq.ctx(), s.store, pgIdent)
		if err != nil {
			return f, "", err
		}
		f.portgroup = pg.UUID
	case nodeIdent != "":
		n, err := s.lookupNode(rq.ctx(), s.store, nodeIdent, rq.minor)
		if err != nil {
			return f, "", err
		}
		f.node = n.UUID
	case address != "":
		f.address = address
	}
	resource := "ports"
	switch {
	case parentNode != "":
		resource = "nodes/" + parentNode + "/ports"
	case parentPG != "":
		resource = "portgroups/" + parentPG + "/ports"
	}
	return f, resource, nil
}

// portPrecheck checks a port's portgroup, physical network and MAC
// address, and that its node is not being inspected, before the port is
// written.
func portPrecheck(ctx context.Context, tx store.Store, n *baremetal.Node, p, old *baremetal.Port, w writeCtx) error {
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
}

// portDoc is a port as the document PATCH applies to.
func portDoc(p *baremetal.Port) map[string]any {
	return map[string]any{
		"uuid": p.UUID, "address": p.Address, "node_uuid": nullable(p.NodeUUID),
		"portgroup_uuid": nullable(p.PortgroupUUID), "extra": emptyIfNil(p.Extra),
		"internal_info": emptyIfNil(p.InternalInfo), "pxe_enabled": p.PXEEnabled,
		"local_link_connection": emptyIfNil(p.LocalLinkConnection),
		"physical_network":      nullable(p.PhysicalNetwork), "is_smartnic": p.IsSmartNIC,
		"created_at": nil, "updated_at": nil,
	}
}

// checkPortDoc validates a port document and fills p from it.
func checkPortDoc(doc map[string]any, p *baremetal.Port, w writeCtx) error {
	minor, create := w.minor, w.create
	patchOnly(doc, w, "internal_info", "created_at", "updated_at")
	if err := checkDocKinds(doc, portSchema, "port", "address", "node_uuid"); err != nil {
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
	if pn := strField(doc["physical_network"]); len(pn) > 64 {
		return invalidInput("physical_network", pn, "Value should have a maximum character requirement of 64")
	}
	llc := objField(doc["local_link_connection"])
	if llc != nil {
		if err := validateLocalLink(llc); err != nil {
			return err
		}
		if _, ok := llc["network_type"]; ok && minor < v64NetworkType {
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

func mapsKeys(m map[string]any) func(func(string) bool) {
	return func(yield func(string) bool) {
		for k := range m {
			if !yield(k) {
				return
			}
		}
	}
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

// validateLocalLink checks local_link_connection as Ironic's
// LOCAL_LINK_CONN_SCHEMA and normalises switch_id.
func validateLocalLink(llc map[string]any) error {
	bad := func(msg string) error { return invalidInput("local_link_connection", llc, msg) }
	for k, v := range llc {
		switch k {
		case "port_id", "switch_id", "hostname", "switch_info":
			if _, ok := v.(string); !ok {
				return bad(pyRepr(v) + " is not of type 'string'")
			}
		case "network_type":
			if v != "managed" && v != "unmanaged" {
				return bad(pyRepr(v) + " is not one of ['managed', 'unmanaged']")
			}
		default:
			return bad("Additional properties are not allowed (" + pyRepr(k) + " was unexpected)")
		}
	}
	has := func(k string) bool { _, ok := llc[k]; return ok }
	switch {
	case len(llc) == 0:
	case has("port_id") && has("switch_id"):
	case has("port_id") && has("hostname"):
	case llc["network_type"] == "unmanaged":
	default:
		return bad("local_link_connection must contain port_id and switch_id, or port_id and hostname (Smart NIC), or network_type unmanaged")
	}
	if sw, ok := llc["switch_id"].(string); ok {
		if mac, ok := inventory.NormalizeMAC(sw); ok {
			llc["switch_id"] = mac
		} else if isDatapathID(sw) {
			llc["switch_id"] = strings.ToLower(sw)
		} else {
			return badRequest("Expected a MAC address or OpenFlow datapath ID but received %s.", sw)
		}
	}
	return nil
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
