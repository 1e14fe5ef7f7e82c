package ironic

import (
	"context"
	"errors"
	"net/http"
	"slices"
	"strings"

	"github.com/google/uuid"

	"github.com/ferrometal/ferro/internal/auth"
	"github.com/ferrometal/ferro/internal/baremetal"
	"github.com/ferrometal/ferro/internal/inventory"
	"github.com/ferrometal/ferro/internal/states"
	"github.com/ferrometal/ferro/internal/store"
)

// portField is one member of a port's view.
type portField struct {
	name  string
	min   int
	write func(b []byte, p *baremetal.Port) []byte
}

var portFields = []portField{
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

var portFieldMin = func() map[string]int {
	m := map[string]int{}
	for _, f := range portFields {
		m[f.name] = f.min
	}
	return m
}()

var defaultPortFields = []string{"uuid", "address"}

func appendPort(b []byte, p *baremetal.Port, minor int, base string, fs fieldSet) []byte {
	o := newObj(b)
	for i := range portFields {
		f := &portFields[i]
		if minor < f.min || !fs.want(f.name) {
			continue
		}
		o.key(f.name)
		o.b = f.write(o.b, p)
	}
	o.key("links")
	o.b = appendLinks(o.b, base, "ports", p.UUID)
	return o.end()
}

var portInvalidSortKeys = []string{"extra", "internal_info", "local_link_connection"}

// listPorts serves GET /v1/ports[/detail], /v1/nodes/{node}/ports[/detail]
// and /v1/portgroups/{portgroup}/ports[/detail].
func (s *server) listPorts(rq *request, detailPath bool) error {
	parentNode := rq.r.PathValue("node")
	parentPG := rq.r.PathValue("portgroup")
	allowed := []string{"node", "node_uuid", "address", "marker", "limit", "sort_key", "sort_dir", "fields", "portgroup", "detail"}
	if detailPath {
		allowed = allowed[:len(allowed)-1]
		allowed = slices.DeleteFunc(allowed, func(s string) bool { return s == "fields" })
	}
	if parentPG != "" && rq.minor < v24PortgroupSubcontrol {
		return resourceNotFound()
	}
	a, err := rq.queryArgs(allowed...)
	if err != nil {
		return err
	}
	p, err := s.paging(a, portInvalidSortKeys, false)
	if err != nil {
		return err
	}
	if err := rq.sortAndFields(a, &p, portFieldMin, defaultPortFields, detailPath); err != nil {
		return err
	}
	if err := rq.checkSortColumn(p.sortKey, portSortColumns); err != nil {
		return err
	}
	pgIdent := a.str("portgroup")
	if pgIdent != "" && rq.minor < v24PortgroupSubcontrol {
		return notAcceptable()
	}
	nodeUUIDArg, err := a.uuidArg("node_uuid")
	if err != nil {
		return err
	}
	nodeIdent := a.str("node")
	if nodeUUIDArg == "" && nodeIdent != "" && rq.minor < v5NodeName && !isUUIDLike(nodeIdent) {
		return notAcceptable()
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
		return err
	}
	if nodeIdent != "" && pgIdent != "" {
		return newError(http.StatusForbidden, "Operation not permitted.")
	}
	var f store.PortFilter
	f.Page = p.page
	switch {
	case pgIdent != "":
		pg, err := s.lookupPortgroup(rq.ctx(), s.store, pgIdent)
		if err != nil {
			return err
		}
		f.PortgroupUUID = pg.UUID
	case nodeIdent != "":
		n, err := s.lookupNode(rq.ctx(), s.store, nodeIdent, rq.minor)
		if err != nil {
			return err
		}
		f.NodeUUID = n.UUID
	case address != "":
		f.Address = address
	}
	if err := checkMarker(rq.ctx(), p.page.Marker, s.store.GetPort, portNotFound); err != nil {
		return err
	}
	own, err := rq.listProject(auth.RulePortListAll, "")
	if err != nil {
		return err
	}
	if own != "" {
		f.Limit = 0
	}
	ports, err := s.store.ListPorts(rq.ctx(), f)
	if err != nil {
		return err
	}
	if own != "" {
		// Ports of the caller's project's nodes only, as Ironic's port list.
		mine, err := s.projectNodes(rq, own)
		if err != nil {
			return err
		}
		ports = slices.DeleteFunc(ports, func(p *baremetal.Port) bool { return !mine[p.NodeUUID] })
		if len(ports) > p.limit {
			ports = ports[:p.limit]
		}
	}
	fs := newFieldSet(p.fields)
	js := rq.streamJSON(http.StatusOK)
	js.b = append(js.b, `{"ports": [`...)
	for i, port := range ports {
		if i > 0 {
			js.b = append(js.b, ", "...)
		}
		js.b = appendPort(js.b, port, rq.minor, rq.base, fs)
		js.flush()
	}
	js.b = append(js.b, ']')
	var last string
	if len(ports) > 0 {
		last = ports[len(ports)-1].UUID
	}
	resource := "ports"
	switch {
	case parentNode != "":
		resource = "nodes/" + parentNode + "/ports"
	case parentPG != "":
		resource = "portgroups/" + parentPG + "/ports"
	}
	if detailPath {
		resource += "/detail"
	}
	extra := a.filters("limit", "marker", "sort_key", "sort_dir", "fields", "detail")
	js.b = appendListEnd(js.b, rq.nextLink(resource, p, len(ports), last, extra...))
	return js.end()
}

// getPort is GET /v1/ports/{port}.
func (s *server) getPort(rq *request) error {
	a, err := rq.queryArgs("fields")
	if err != nil {
		return err
	}
	id := rq.r.PathValue("port")
	if !isUUIDLike(id) {
		return badRequest("Invalid input for field/attribute port_uuid. Value: '%s'. Expected a UUID but received %s.", id, id)
	}
	p, err := s.store.GetPort(rq.ctx(), id)
	if err != nil {
		if errors.Is(err, store.ErrNotFound) {
			return portNotFound(id)
		}
		return err
	}
	fields, err := rq.itemFields(a, portFieldMin)
	if err != nil {
		return err
	}
	return rq.writeJSON(http.StatusOK, appendPort(make([]byte, 0, 1024), p, rq.minor, rq.base, newFieldSet(fields)))
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
	return map[string]any{
		"uuid": p.UUID, "address": p.Address, "node_uuid": str(p.NodeUUID),
		"portgroup_uuid": str(p.PortgroupUUID), "extra": obj(p.Extra),
		"internal_info": obj(p.InternalInfo), "pxe_enabled": p.PXEEnabled,
		"local_link_connection": obj(p.LocalLinkConnection),
		"physical_network":      str(p.PhysicalNetwork), "is_smartnic": p.IsSmartNIC,
		"created_at": nil, "updated_at": nil,
	}
}

// checkPortDoc validates a port document and fills p from it.
func checkPortDoc(doc map[string]any, p *baremetal.Port, minor int, create bool) error {
	for k := range doc {
		if _, ok := portSchema[k]; !ok {
			return badRequest("Unknown attribute for argument port: %s", k)
		}
	}
	for _, k := range []string{"address", "node_uuid"} {
		if v, ok := doc[k]; !ok || v == nil {
			return invalidInput(k, nil, "Mandatory field missing.")
		}
	}
	for _, k := range slices.Sorted(mapsKeys(doc)) {
		v := doc[k]
		switch portSchema[k] {
		case kString:
			if _, ok := v.(string); !ok && v != nil {
				return invalidInput(k, v, "Wrong type. Expected '<class 'str'>', got '"+pyTypeName(v)+"'")
			}
		case kObject:
			if _, ok := v.(map[string]any); !ok && v != nil {
				return invalidInput(k, v, "Wrong type. Expected '<class 'dict'>', got '"+pyTypeName(v)+"'")
			}
		case kBoolish:
			if _, err := boolField(k, v); err != nil {
				return invalidInput(k, v, "Wrong type. Expected '<class 'bool'>', got '"+pyTypeName(v)+"'")
			}
		}
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
	// Fields the version does not have (Ironic's _check_allowed_port_fields).
	gated := map[string]int{
		"pxe_enabled": v19PortAdvancedNet, "local_link_connection": v19PortAdvancedNet,
		"portgroup_uuid": v24PortgroupSubcontrol, "physical_network": v34PortPhysicalNetwork,
		"is_smartnic": v53SmartNIC,
	}
	if create {
		for k, m := range gated {
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

// createPort is POST /v1/ports.
func (s *server) createPort(rq *request) error {
	doc, err := rq.createBody("port")
	if err != nil {
		return err
	}
	p := &baremetal.Port{}
	if err := checkPortDoc(doc, p, rq.minor, true); err != nil {
		return err
	}
	if p.UUID == "" {
		p.UUID = uuid.NewString()
	}
	p.CreatedAt = s.now().UTC()
	if _, err := s.store.GetNode(rq.ctx(), p.NodeUUID); err != nil {
		if errors.Is(err, store.ErrNotFound) {
			return badRequest("Node %s could not be found.", p.NodeUUID)
		}
		return err
	}
	pxeGiven := doc["pxe_enabled"] != nil && p.PXEEnabled
	err = s.cond.WithNodeLock(rq.ctx(), p.NodeUUID, func(ctx context.Context, tx store.Store, n *baremetal.Node) error {
		if err := s.checkPortPortgroup(ctx, tx, p, pxeGiven); err != nil {
			return err
		}
		if err := checkPortPhysnet(ctx, tx, p, nil); err != nil {
			return err
		}
		if other, err := tx.GetPortByAddress(ctx, p.Address); err == nil && other.UUID != p.UUID {
			return conflict("A port with MAC address %s already exists.", p.Address)
		}
		if _, err := tx.GetPort(ctx, p.UUID); err == nil {
			return conflict("A port with UUID %s already exists.", p.UUID)
		}
		if err := tx.CreatePort(ctx, p); err != nil {
			if errors.Is(err, store.ErrConflict) {
				return conflict("A port with MAC address %s already exists.", p.Address)
			}
			return err
		}
		return nil
	})
	if err != nil {
		if errors.Is(err, store.ErrNotFound) && !isAPIError(err) {
			return badRequest("Node %s could not be found.", p.NodeUUID)
		}
		return err
	}
	rq.location("ports/" + p.UUID)
	return rq.writeJSON(http.StatusCreated, appendPort(make([]byte, 0, 1024), p, rq.minor, rq.base, nil))
}

func isAPIError(err error) bool {
	var ae *apiError
	return errors.As(err, &ae)
}

// checkPortPortgroup checks that a port's portgroup exists, belongs to the
// port's node and accepts it.
func (s *server) checkPortPortgroup(ctx context.Context, tx store.Store, p *baremetal.Port, pxeGiven bool) error {
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

// portInternalAttrs are the paths a port PATCH may not touch.
var portInternalAttrs = []string{"created_at", "id", "links", "updated_at", "uuid", "internal_info"}

// patchPort is PATCH /v1/ports/{port}.
func (s *server) patchPort(rq *request) error {
	if _, err := rq.queryArgs(); err != nil {
		return err
	}
	id := rq.r.PathValue("port")
	if !isUUIDLike(id) {
		return badRequest("Invalid input for field/attribute port_uuid. Value: '%s'. Expected a UUID but received %s.", id, id)
	}
	ops, err := rq.readPatch()
	if err != nil {
		return err
	}
	for _, op := range ops {
		if slices.Contains(portInternalAttrs, op.top()) {
			return badRequest("'%s' is an internal attribute and can not be updated", op.Path)
		}
		if op.Op == "remove" && (op.Path == "/address" || op.Path == "/node_uuid") {
			return badRequest("'%s' is a mandatory attribute and can not be removed", op.Path)
		}
	}
	gated := map[string]int{
		"pxe_enabled": v19PortAdvancedNet, "local_link_connection": v19PortAdvancedNet,
		"portgroup_uuid": v24PortgroupSubcontrol, "physical_network": v34PortPhysicalNetwork,
		"is_smartnic": v53SmartNIC, "local_link_connection/network_type": v64NetworkType,
	}
	for field, m := range gated {
		if rq.minor < m && (len(patchValues(ops, "/"+field)) > 0 || pathRemoved(ops, "/"+field)) {
			return notAcceptable()
		}
	}
	cur, err := s.store.GetPort(rq.ctx(), id)
	if err != nil {
		if errors.Is(err, store.ErrNotFound) {
			return portNotFound(id)
		}
		return err
	}
	compute := func(ctx context.Context, tx store.Store, old *baremetal.Port) (*baremetal.Port, error) {
		doc, err := applyPatch(portDoc(old), ops)
		if err != nil {
			return nil, err
		}
		delete(doc, "internal_info")
		delete(doc, "created_at")
		delete(doc, "updated_at")
		np := *old
		if err := checkPortDoc(doc, &np, rq.minor, false); err != nil {
			return nil, err
		}
		if np.UUID != old.UUID {
			return nil, badRequest("'/uuid' is an internal attribute and can not be updated")
		}
		if np.NodeUUID != old.NodeUUID {
			if _, err := tx.GetNode(ctx, np.NodeUUID); err != nil {
				if errors.Is(err, store.ErrNotFound) {
					return nil, badRequest("Node %s could not be found.", np.NodeUUID)
				}
				return nil, err
			}
		}
		return &np, nil
	}
	if _, err := compute(rq.ctx(), s.store, cur); err != nil {
		return err
	}
	err = s.cond.WithNodeLock(rq.ctx(), cur.NodeUUID, func(ctx context.Context, tx store.Store, n *baremetal.Node) error {
		old, err := tx.GetPort(ctx, id)
		if err != nil {
			if errors.Is(err, store.ErrNotFound) {
				return portNotFound(id)
			}
			return err
		}
		np, err := compute(ctx, tx, old)
		if err != nil {
			return err
		}
		if n.ProvisionState == states.Inspecting && rq.minor >= v39InspectWait {
			return conflict("Cannot update port \"%s\" on \"%s\" while it is in state \"%s\".", old.UUID, n.UUID, states.Inspecting)
		}
		pxeGiven := len(patchValues(ops, "/pxe_enabled")) > 0 && np.PXEEnabled
		if np.PortgroupUUID != old.PortgroupUUID || np.NodeUUID != old.NodeUUID || pxeGiven {
			if err := s.checkPortPortgroup(ctx, tx, np, pxeGiven); err != nil {
				return err
			}
		}
		if err := checkPortPhysnet(ctx, tx, np, old); err != nil {
			return err
		}
		if np.Address != old.Address {
			if other, err := tx.GetPortByAddress(ctx, np.Address); err == nil && other.UUID != np.UUID {
				return conflict("A port with MAC address %s already exists.", np.Address)
			}
		}
		if err := tx.UpdatePort(ctx, np); err != nil {
			if errors.Is(err, store.ErrConflict) {
				return conflict("A port with MAC address %s already exists.", np.Address)
			}
			return err
		}
		return nil
	})
	if err != nil {
		if errors.Is(err, store.ErrNotFound) && !isAPIError(err) {
			return portNotFound(id)
		}
		return err
	}
	p, err := s.store.GetPort(rq.ctx(), id)
	if err != nil {
		return err
	}
	return rq.writeJSON(http.StatusOK, appendPort(make([]byte, 0, 1024), p, rq.minor, rq.base, nil))
}

// deletePort is DELETE /v1/ports/{port}.
func (s *server) deletePort(rq *request) error {
	if _, err := rq.queryArgs(); err != nil {
		return err
	}
	id := rq.r.PathValue("port")
	if !isUUIDLike(id) {
		return badRequest("Invalid input for field/attribute port_uuid. Value: '%s'. Expected a UUID but received %s.", id, id)
	}
	p, err := s.store.GetPort(rq.ctx(), id)
	if err != nil {
		if errors.Is(err, store.ErrNotFound) {
			return portNotFound(id)
		}
		return err
	}
	err = s.cond.WithNodeLock(rq.ctx(), p.NodeUUID, func(ctx context.Context, tx store.Store, n *baremetal.Node) error {
		if err := tx.DeletePort(ctx, p.UUID); err != nil {
			if errors.Is(err, store.ErrNotFound) {
				return portNotFound(id)
			}
			return err
		}
		return nil
	})
	if err != nil {
		if errors.Is(err, store.ErrNotFound) && !isAPIError(err) {
			return portNotFound(id)
		}
		return err
	}
	return rq.writeEmpty(http.StatusNoContent)
}
