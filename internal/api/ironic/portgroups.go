package ironic

import (
	"context"
	"time"
	"unicode/utf8"

	"github.com/ferrometal/ferro/internal/auth"
	"github.com/ferrometal/ferro/internal/baremetal"
	"github.com/ferrometal/ferro/internal/inventory"
	"github.com/ferrometal/ferro/internal/store"
)

// defaultPortgroupMode is Ironic's [DEFAULT]default_portgroup_mode.
const defaultPortgroupMode = "active-backup"

// portgroupFields are a portgroup's fields in view order, each with the
// version that may ask for it in ?fields= (and sort by it). Ironic 21.4
// hides none below its version, mode and properties included.
var portgroupFields = append(headFields(func(pg *baremetal.Portgroup) string { return pg.UUID },
	func(pg *baremetal.Portgroup) time.Time { return pg.CreatedAt }, func(pg *baremetal.Portgroup) *time.Time { return pg.UpdatedAt }),
	[]viewField[*baremetal.Portgroup]{
		{"address", 0, nullStrOf(func(pg *baremetal.Portgroup) string { return pg.Address })},
		{"extra", 0, objOf(func(pg *baremetal.Portgroup) baremetal.JSON { return pg.Extra })},
		{"internal_info", 0, objOf(func(pg *baremetal.Portgroup) baremetal.JSON { return pg.InternalInfo })},
		{"mode", v26PortgroupMode, nullStrOf(func(pg *baremetal.Portgroup) string { return pg.Mode })},
		{"name", 0, nullStrOf(func(pg *baremetal.Portgroup) string { return pg.Name })},
		{"node_uuid", 0, nullStrOf(func(pg *baremetal.Portgroup) string { return pg.NodeUUID })},
		{"properties", v26PortgroupMode, objOf(func(pg *baremetal.Portgroup) baremetal.JSON { return pg.Properties })},
		{"standalone_ports_supported", 0, boolOf(func(pg *baremetal.Portgroup) bool { return pg.StandalonePortsSupported })},
		{"physical_network", v102PortgroupPhysnet, nullStrOf(func(pg *baremetal.Portgroup) string { return pg.PhysicalNetwork })},
		{"category", v103PortgroupCategory, nullStrOf(func(pg *baremetal.Portgroup) string { return pg.Category })},
		{"dynamic_portgroup", v111DynamicPortgroup, boolOf(func(pg *baremetal.Portgroup) bool { return pg.DynamicPortgroup })},
	}...)

// portgroupGated are the writable fields a version below theirs may not set.
var portgroupGated = gatedWrites(portgroupFields, portgroupSchema)

// portgroupResource describes portgroups (1.23; per node from 1.24).
var portgroupResource = describe(&resource[baremetal.Portgroup, store.PortgroupFilter]{
	path:        "portgroups",
	noun:        "portgroup",
	minVersion:  v23Portgroups,
	tooOld:      func(*request) error { return versionNotFound() },
	byName:      true,
	jsonSuffix:  true,
	asWritten:   true,
	exactKey:    true,
	badName:     checkPortgroupName,
	fields:      portgroupFields,
	showBelow:   []string{"mode", "properties"},
	defaults:    []string{"uuid", "address", "name"},
	invalidSort: []string{"extra", "internal_info", "properties"},
	sortColumns: portgroupSortColumns,
	internal:    []string{"created_at", "id", "links", "updated_at", "uuid", "internal_info", "ports"},
	mandatory:   []string{"node_uuid"},
	subLinks:    []subLink{{"ports", 0}},
	doc:         portgroupDoc,
	check:       checkPortgroupDoc,
	uuid:        func(pg *baremetal.Portgroup) string { return pg.UUID },
	setNew:      func(pg *baremetal.Portgroup, id string, _ time.Time) { pg.UUID = id },
	node:        func(pg *baremetal.Portgroup) string { return pg.NodeUUID },
	anyPower:    true,
	parents:     []parentList{{"nodes/{node}", v24PortgroupSubcontrol}},
	// A node (of ?node= or the path, which wins), an address, the nodes of
	// shards (1.106) or of conductor groups (Ironic master, at every
	// version): one of them.
	params: []listParam[baremetal.Portgroup, store.PortgroupFilter]{{name: "node"}, {name: "address"},
		{name: "shard", min: v106PortgroupShard}, {name: "conductor_groups"}},
	resolve: func(q *listQuery[baremetal.Portgroup, store.PortgroupFilter]) (err error) {
		given := 0
		for _, k := range []string{"node", "address", "shard", "conductor_groups"} {
			if q.args.str(k) != "" || (k == "node" && q.rq.r.PathValue("node") != "") {
				given++
			}
		}
		if given > 1 {
			return badRequest("Filtering by node, address, or shard simultaneously is not supported.")
		}
		if q.f.NodeUUID, q.path, err = nodeScope(q.rq, q.s, q.args, q.path, true); err != nil || q.f.NodeUUID != "" {
			return err
		}
		if q.f.Address, err = macArg(q.args); err != nil || q.f.Address != "" {
			return err
		}
		keep, err := nodeGroupFilter(q.rq, q.s, q.args)
		if keep != nil {
			q.where(func(pg *baremetal.Portgroup) bool { return keep[pg.NodeUUID] })
		}
		return err
	},
	// The policy's scope: without list_all, the portgroups of the
	// caller's project's nodes.
	own:      ownByNode(auth.RulePGListAll, func(pg *baremetal.Portgroup) string { return pg.NodeUUID }),
	buffered: true,
	precheck: portgroupPrecheck,
	patchGate: func(rq *request, ops []patchOp) error {
		// Ironic's is_path_updated looks at the first operation only.
		for field, m := range portgroupGated {
			if rq.minor < m && firstOpTouches(ops, "/"+field) {
				return notAcceptable()
			}
		}
		return nil
	},
	reread:   true,
	conflict: portgroupConflict,
	page:     func(f *store.PortgroupFilter) *store.Page { return &f.Page },
	storeOps: storeOps[baremetal.Portgroup, store.PortgroupFilter]{store.Store.GetPortgroup, store.Store.ListPortgroups,
		store.Store.CreatePortgroup, store.Store.UpdatePortgroup, deletePortgroup},
})

// checkPortgroupName refuses an identifier that is neither a UUID nor a
// logical name.
func checkPortgroupName(ident string) error {
	if !isValidLogicalName(ident) {
		return badRequest("Expected a logical name or UUID but received %s.", ident)
	}
	return nil
}

// lookupPortgroup finds a portgroup by UUID or name.
func (s *server) lookupPortgroup(ctx context.Context, tx store.Store, ident string, minor int) (*baremetal.Portgroup, error) {
	return portgroupResource.lookup(ctx, tx, ident, minor)
}

var portgroupSchema = map[string]fieldKind{
	"uuid": kString, "name": kString, "address": kString, "node_uuid": kString,
	"extra": kObject, "standalone_ports_supported": kBoolish, "mode": kString, "properties": kObject,
	"physical_network": kString, "category": kString,
}

// portgroupDoc is a portgroup as the document PATCH applies to.
func portgroupDoc(pg *baremetal.Portgroup) map[string]any {
	return map[string]any{
		"uuid": pg.UUID, "name": nullable(pg.Name), "address": nullable(pg.Address), "node_uuid": nullable(pg.NodeUUID),
		"extra": emptyIfNil(pg.Extra), "internal_info": emptyIfNil(pg.InternalInfo),
		"standalone_ports_supported": pg.StandalonePortsSupported,
		"mode":                       nullable(pg.Mode), "properties": emptyIfNil(pg.Properties),
		"physical_network": nullable(pg.PhysicalNetwork), "category": nullable(pg.Category),
		"created_at": nil, "updated_at": nil,
	}
}

// checkPortgroupDoc validates a portgroup document and fills pg from it.
func checkPortgroupDoc(doc map[string]any, pg *baremetal.Portgroup, w writeCtx) error {
	create := w.create
	patchOnly(doc, w, "internal_info", "created_at", "updated_at")
	if err := checkDocKinds(doc, portgroupSchema, "portgroup", true, "node_uuid"); err != nil {
		return err
	}
	if create {
		for k, m := range portgroupGated {
			if doc[k] != nil && w.minor < m {
				return notAcceptable()
			}
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
	for _, f := range []struct {
		name string
		max  int
	}{{"physical_network", 64}, {"category", 80}} {
		if v := strField(doc[f.name]); utf8.RuneCountInString(v) > f.max {
			return schemaError("portgroup", "%s is too long", pyRepr(v))
		}
	}
	pg.PhysicalNetwork, pg.Category = strField(doc["physical_network"]), strField(doc["category"])
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

// deletePortgroup deletes a portgroup that has no ports.
func deletePortgroup(tx store.Store, ctx context.Context, id string) error {
	ports, err := tx.ListPorts(ctx, store.PortFilter{PortgroupUUID: id, Page: store.Page{Limit: 1}})
	if err != nil {
		return err
	}
	if len(ports) > 0 {
		return badRequest("Cannot complete the requested action because portgroup %s contains ports.", id)
	}
	return tx.DeletePortgroup(ctx, id)
}
