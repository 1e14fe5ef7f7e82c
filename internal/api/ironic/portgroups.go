package ironic

import (
	"context"
	"slices"
	"time"

	"github.com/ferrometal/ferro/internal/baremetal"
	"github.com/ferrometal/ferro/internal/inventory"
	"github.com/ferrometal/ferro/internal/store"
)

// defaultPortgroupMode is Ironic's [DEFAULT]default_portgroup_mode.
const defaultPortgroupMode = "active-backup"

// portgroupFields are a portgroup's fields in view order, each with the
// version that may ask for it in ?fields= (and sort by it). Ironic 21.4
// hides none below its version, mode and properties included.
var portgroupFields = []struct {
	name string
	min  int
}{
	{"uuid", 0}, {"created_at", 0}, {"updated_at", 0}, {"address", 0}, {"extra", 0}, {"internal_info", 0},
	{"mode", v26PortgroupMode}, {"name", 0}, {"node_uuid", 0}, {"properties", v26PortgroupMode},
	{"standalone_ports_supported", 0},
}

var portgroupFieldMin = func() map[string]int {
	m := map[string]int{}
	for _, f := range portgroupFields {
		m[f.name] = f.min
	}
	return m
}()

// portgroupResource describes portgroups (1.23; per node from 1.24).
var portgroupResource = &resource[*baremetal.Portgroup]{
	path:        "portgroups",
	key:         "portgroups",
	what:        "portgroup",
	noun:        "portgroup",
	wildcard:    "portgroup",
	minVersion:  v23Portgroups,
	byName:      true,
	asWritten:   true,
	exactKey:    true,
	badName:     checkPortgroupName,
	defaults:    []string{"uuid", "address", "name"},
	invalidSort: []string{"extra", "internal_info", "properties"},
	sortColumns: portgroupSortColumns,
	fieldMin:    portgroupFieldMin,
	internal:    []string{"created_at", "id", "links", "updated_at", "uuid", "internal_info", "ports"},
	mandatory:   []string{"node_uuid"},
	subLinks:    []string{"ports"},
	view:        viewPortgroup,
	doc:         portgroupDoc,
	check:       checkPortgroupDoc,
	uuid:        func(pg *baremetal.Portgroup) string { return pg.UUID },
	setNew:      func(pg *baremetal.Portgroup, id string, _ time.Time) { pg.UUID = id },
	node:        func(pg *baremetal.Portgroup) string { return pg.NodeUUID },
	anyPower:    true,
	nodeListMin: v24PortgroupSubcontrol,
	listArgs:    []string{"address"},
	filter:      portgroupFilter,
	buffered:    true,
	precheck:    portgroupPrecheck,
	patchGate: func(rq *request, ops []patchOp) error {
		if rq.minor < v26PortgroupMode && (firstOpTouches(ops, "/mode") || firstOpTouches(ops, "/properties")) {
			return notAcceptable()
		}
		return nil
	},
	reread:   true,
	conflict: portgroupConflict,
	newT:     func() *baremetal.Portgroup { return &baremetal.Portgroup{} },
	clone:    clonePtr[baremetal.Portgroup],
	get: func(ctx context.Context, s store.Store, id string) (*baremetal.Portgroup, error) {
		return s.GetPortgroup(ctx, id)
	},
	list: func(ctx context.Context, s store.Store, f listFilter) ([]*baremetal.Portgroup, error) {
		return s.ListPortgroups(ctx, store.PortgroupFilter{Page: f.page, NodeUUID: f.node, Address: f.address})
	},
	create: func(ctx context.Context, s store.Store, pg *baremetal.Portgroup) error {
		return s.CreatePortgroup(ctx, pg)
	},
	update: func(ctx context.Context, s store.Store, pg *baremetal.Portgroup) error {
		return s.UpdatePortgroup(ctx, pg)
	},
	delete: func(ctx context.Context, tx store.Store, id string) error {
		ports, err := tx.ListPorts(ctx, store.PortFilter{PortgroupUUID: id, Page: store.Page{Limit: 1}})
		if err != nil {
			return err
		}
		if len(ports) > 0 {
			return badRequest("Cannot complete the requested action because portgroup %s contains ports.", id)
		}
		return tx.DeletePortgroup(ctx, id)
	},
}

func viewPortgroup(o *objWriter, pg *baremetal.Portgroup, fs fieldSet, _ int) {
	if fs.want("uuid") {
		o.str("uuid", pg.UUID)
	}
	appendStamps(o, pg.CreatedAt, pg.UpdatedAt, fs)
	if fs.want("address") {
		o.key("address")
		o.b = appendNullString(o.b, pg.Address)
	}
	if fs.want("extra") {
		o.key("extra")
		o.b = appendObject(o.b, pg.Extra)
	}
	if fs.want("internal_info") {
		o.key("internal_info")
		o.b = appendObject(o.b, pg.InternalInfo)
	}
	if fs.want("mode") {
		o.key("mode")
		o.b = appendNullString(o.b, pg.Mode)
	}
	if fs.want("name") {
		o.key("name")
		o.b = appendNullString(o.b, pg.Name)
	}
	if fs.want("node_uuid") {
		o.key("node_uuid")
		o.b = appendNullString(o.b, pg.NodeUUID)
	}
	if fs.want("properties") {
		o.key("properties")
		o.b = appendObject(o.b, pg.Properties)
	}
	if fs.want("standalone_ports_supported") {
		o.key("standalone_ports_supported")
		o.b = appendBool(o.b, pg.StandalonePortsSupported)
	}
}

// checkPortgroupName refuses an identifier that is neither a UUID nor a
// logical name.
func checkPortgroupName(ident string) error {
	if !isValidLogicalName(ident) {
		return badRequest("Expected a logical name or UUID but received %s.", ident)
	}
	return nil
}

// lookupPortgroup finds a portgroup by UUID or name.
func (s *server) lookupPortgroup(ctx context.Context, tx store.Store, ident string) (*baremetal.Portgroup, error) {
	return portgroupResource.lookup(ctx, tx, ident)
}

// portgroupFilter reads a portgroup list's node (of ?node= or the path,
// which wins) or else its address.
func portgroupFilter(rq *request, s *server, a args) (listFilter, string, error) {
	var f listFilter
	resource := "portgroups"
	nodeIdent := a.str("node")
	if parent := rq.r.PathValue("node"); parent != "" {
		nodeIdent = parent
		resource = "nodes/" + parent + "/portgroups"
	}
	if nodeIdent != "" {
		n, err := s.lookupNode(rq.ctx(), s.store, nodeIdent, rq.minor)
		if err != nil {
			return f, "", err
		}
		f.node = n.UUID
		return f, resource, nil
	}
	var err error
	f.address, err = macArg(a)
	return f, resource, err
}

var portgroupSchema = map[string]fieldKind{
	"uuid": kString, "name": kString, "address": kString, "node_uuid": kString,
	"extra": kObject, "standalone_ports_supported": kBoolish, "mode": kString, "properties": kObject,
}

func portgroupDoc(pg *baremetal.Portgroup) map[string]any {
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
		"uuid": pg.UUID, "name": str(pg.Name), "address": str(pg.Address), "node_uuid": str(pg.NodeUUID),
		"extra": obj(pg.Extra), "internal_info": obj(pg.InternalInfo),
		"standalone_ports_supported": pg.StandalonePortsSupported,
		"mode":                       str(pg.Mode), "properties": obj(pg.Properties),
		"created_at": nil, "updated_at": nil,
	}
}

// checkPortgroupDoc validates a portgroup document and fills pg from it.
func checkPortgroupDoc(doc map[string]any, pg *baremetal.Portgroup, w writeCtx) error {
	create := w.create
	if !create {
		// What a PATCH may not change, which the schema does not have.
		delete(doc, "internal_info")
		delete(doc, "created_at")
		delete(doc, "updated_at")
	}
	for k := range doc {
		if _, ok := portgroupSchema[k]; !ok {
			return badRequest("Unknown attribute for argument portgroup: %s", k)
		}
	}
	if v, ok := doc["node_uuid"]; !ok || v == nil {
		return invalidInput("node_uuid", nil, "Mandatory field missing.")
	}
	for _, k := range slices.Sorted(mapsKeys(doc)) {
		v := doc[k]
		switch portgroupSchema[k] {
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
	if create && w.minor < v26PortgroupMode {
		if doc["mode"] != nil || doc["properties"] != nil {
			return notAcceptable()
		}
	}
	for _, k := range []string{"uuid", "node_uuid"} {
		if v := strField(doc[k]); v != "" && !isUUIDLike(v) {
			return invalidInput(k, v, "Expected a UUID but received "+v+".")
		}
	}
	if addr := strField(doc["address"]); addr != "" {
		mac, ok := inventory.NormalizeMAC(addr)
		if !ok {
			return invalidInput("address", addr, "Expected a MAC address but received "+addr+".")
		}
		pg.Address = mac
	} else {
		pg.Address = ""
	}
	name := strField(doc["name"])
	if name != "" && (!isValidLogicalName(name) || isUUIDLike(name)) {
		if create {
			return badRequest("Cannot create portgroup with invalid name '%s'", name)
		}
		return badRequest("Portgroup %s: Cannot change name to invalid name '%s'", pg.UUID, name)
	}
	if id := strField(doc["uuid"]); id != "" {
		pg.UUID = canonicalUUID(id)
	}
	pg.Name = name
	pg.NodeUUID = canonicalUUID(strField(doc["node_uuid"]))
	pg.Extra = objField(doc["extra"])
	pg.Properties = objField(doc["properties"])
	pg.Mode = strField(doc["mode"])
	if pg.Mode == "" {
		pg.Mode = defaultPortgroupMode
	}
	sps, _ := boolField("standalone_ports_supported", doc["standalone_ports_supported"])
	pg.StandalonePortsSupported = sps == nil || *sps
	return nil
}

// portgroupConflict words a store conflict on a portgroup write.
func portgroupConflict(ctx context.Context, tx store.Store, pg *baremetal.Portgroup) error {
	if pg.Name != "" {
		if other, err := tx.GetPortgroup(ctx, pg.Name); err == nil && other.UUID != pg.UUID {
			return conflict("A portgroup with name %s already exists.", pg.Name)
		}
	}
	if pg.Address != "" {
		if others, err := tx.ListPortgroups(ctx, store.PortgroupFilter{Address: pg.Address}); err == nil {
			for _, o := range others {
				if o.UUID != pg.UUID {
					return conflict("A portgroup with MAC address %s already exists.", pg.Address)
				}
			}
		}
	}
	return conflict("A portgroup with UUID %s already exists.", pg.UUID)
}

// portgroupPrecheck finds duplicates before writing, for precise messages.
func portgroupPrecheck(ctx context.Context, tx store.Store, _ *baremetal.Node, pg, _ *baremetal.Portgroup, _ writeCtx) error {
	if pg.Name != "" {
		if other, err := tx.GetPortgroup(ctx, pg.Name); err == nil && other.UUID != pg.UUID {
			return conflict("A portgroup with name %s already exists.", pg.Name)
		}
	}
	if pg.Address != "" {
		others, err := tx.ListPortgroups(ctx, store.PortgroupFilter{Address: pg.Address})
		if err != nil {
			return err
		}
		for _, o := range others {
			if o.UUID != pg.UUID {
				return conflict("A portgroup with MAC address %s already exists.", pg.Address)
			}
		}
	}
	return nil
}
