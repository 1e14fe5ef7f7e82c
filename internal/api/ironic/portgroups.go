package ironic

import (
	"context"
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
var portgroupFields = []viewField[*baremetal.Portgroup]{
	{"uuid", 0, func(b []byte, pg *baremetal.Portgroup) []byte { return appendString(b, pg.UUID) }},
	{"created_at", 0, func(b []byte, pg *baremetal.Portgroup) []byte { return appendTime(b, pg.CreatedAt) }},
	{"updated_at", 0, func(b []byte, pg *baremetal.Portgroup) []byte { return appendNullTime(b, pg.UpdatedAt) }},
	{"address", 0, func(b []byte, pg *baremetal.Portgroup) []byte { return appendNullString(b, pg.Address) }},
	{"extra", 0, func(b []byte, pg *baremetal.Portgroup) []byte { return appendObject(b, pg.Extra) }},
	{"internal_info", 0, func(b []byte, pg *baremetal.Portgroup) []byte { return appendObject(b, pg.InternalInfo) }},
	{"mode", v26PortgroupMode, func(b []byte, pg *baremetal.Portgroup) []byte { return appendNullString(b, pg.Mode) }},
	{"name", 0, func(b []byte, pg *baremetal.Portgroup) []byte { return appendNullString(b, pg.Name) }},
	{"node_uuid", 0, func(b []byte, pg *baremetal.Portgroup) []byte { return appendNullString(b, pg.NodeUUID) }},
	{"properties", v26PortgroupMode, func(b []byte, pg *baremetal.Portgroup) []byte { return appendObject(b, pg.Properties) }},
	{"standalone_ports_supported", 0, func(b []byte, pg *baremetal.Portgroup) []byte {
		return appendBool(b, pg.StandalonePortsSupported)
	}},
}

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
	fieldMin:    tableFieldMin(portgroupFields),
	internal:    []string{"created_at", "id", "links", "updated_at", "uuid", "internal_info", "ports"},
	mandatory:   []string{"node_uuid"},
	subLinks:    []string{"ports"},
	view:        tableView(portgroupFields, false),
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
	f, resource, err := nodeFilter(rq, s, a, "portgroups", true)
	if err != nil || f.node != "" {
		return f, resource, err
	}
	f.address, err = macArg(a)
	return f, resource, err
}

var portgroupSchema = map[string]fieldKind{
	"uuid": kString, "name": kString, "address": kString, "node_uuid": kString,
	"extra": kObject, "standalone_ports_supported": kBoolish, "mode": kString, "properties": kObject,
}

// portgroupDoc is a portgroup as the document PATCH applies to.
func portgroupDoc(pg *baremetal.Portgroup) map[string]any {
	return map[string]any{
		"uuid": pg.UUID, "name": nullable(pg.Name), "address": nullable(pg.Address), "node_uuid": nullable(pg.NodeUUID),
		"extra": emptyIfNil(pg.Extra), "internal_info": emptyIfNil(pg.InternalInfo),
		"standalone_ports_supported": pg.StandalonePortsSupported,
		"mode":                       nullable(pg.Mode), "properties": emptyIfNil(pg.Properties),
		"created_at": nil, "updated_at": nil,
	}
}

// checkPortgroupDoc validates a portgroup document and fills pg from it.
func checkPortgroupDoc(doc map[string]any, pg *baremetal.Portgroup, w writeCtx) error {
	create := w.create
	patchOnly(doc, w, "internal_info", "created_at", "updated_at")
	if err := checkDocKinds(doc, portgroupSchema, "portgroup", "node_uuid"); err != nil {
		return err
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

// portgroupConflict words a store conflict on a portgroup write: the
// name or MAC address another portgroup has, else the UUID.
func portgroupConflict(ctx context.Context, tx store.Store, pg *baremetal.Portgroup) error {
	if err := portgroupPrecheck(ctx, tx, nil, pg, nil, writeCtx{}); isAPIError(err) {
		return err
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
