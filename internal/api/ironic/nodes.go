package ironic

import (
	"context"
	"errors"
	"net/http"
	"slices"
	"strings"

	"github.com/ferrometal/ferro/internal/auth"
	"github.com/ferrometal/ferro/internal/baremetal"
	"github.com/ferrometal/ferro/internal/store"
)

// nodeResource describes nodes. Their list and show are the generic
// steps; their writes (node_write.go) are their own, because a node is
// written through its state machine, its driver's interfaces and its own
// lock.
var nodeResource = describe(&resource[baremetal.Node, store.NodeFilter]{
	path:       "nodes",
	noun:       "node",
	byName:     true,
	jsonSuffix: true,
	asWritten:  true,
	find:       lookupNode,
	fields:     nodeFields,
	defaults:   defaultNodeFields,
	fieldError: nodeFieldError,
	subLinks: []subLink{{"ports", 0}, {"states", v14StatesLinks}, {"portgroups", v24PortgroupSubcontrol},
		{"volume", v32Volume}},
	invalidSort: nodeInvalidSortKeys,
	// The node controller checks ?fields= before the sort key's version,
	// and leaves a sort key that is no column to the store.
	listChecks: []listCheck{checkFields, checkSortField},
	params:     nodeListParams,
	parents:    []parentList{{"chassis/{chassis}", 0}},
	ownWrites:  true,
	uuid:       func(n *baremetal.Node) string { return n.UUID },
	storeOps:   storeOps[baremetal.Node, store.NodeFilter]{get: store.Store.GetNode, list: listNodesToRender},
	page:       func(f *store.NodeFilter) *store.Page { return &f.Page },
	memo:       func(n *baremetal.Node) *baremetal.Memo { return n.Memo },
	live:       "conductor",
})

// listNodesToRender is the node list's read: its nodes are only rendered,
// so their free-form fields may stay the JSON text stored (KeepJSON),
// which the view writes as it would write the decoded objects.
func listNodesToRender(s store.Store, ctx context.Context, f store.NodeFilter) ([]*baremetal.Node, error) {
	f.KeepJSON = true
	return s.ListNodes(ctx, f)
}

// lookupNode resolves a node by UUID or name as Ironic's get_rpc_node:
// names need 1.5, and a malformed identifier is a 400.
func lookupNode(ctx context.Context, tx store.Store, ident string, minor int) (*baremetal.Node, error) {
	if err := checkNodeIdent(ident, minor); err != nil {
		return nil, err
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

// node is the node of the request's path.
func (s *server) node(rq *request) (*baremetal.Node, error) {
	return nodeResource.lookup(rq.ctx(), s.store, rq.r.PathValue("node"), rq.minor)
}

// pathNode is the node of the request's path, for a request whose query
// may have only the allowed arguments.
func (s *server) pathNode(rq *request, allowed ...string) (*baremetal.Node, error) {
	if _, err := rq.queryArgs(allowed...); err != nil {
		return nil, err
	}
	return s.node(rq)
}

// pathNodeSince is pathNode for a sub-resource that appeared in version
// min: below it, the resource is not found.
func (s *server) pathNodeSince(rq *request, min int, allowed ...string) (*baremetal.Node, error) {
	if rq.minor < min {
		return nil, resourceNotFound()
	}
	return s.pathNode(rq, allowed...)
}

// checkNodeIdent validates a node identifier before it is looked up or
// handed to the conductor.
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
	if err != nil && !isAPIError(err) && errors.Is(err, store.ErrNotFound) && rq.ctx().Value(jsonSuffixKey{}) != nil {
		// The node's name may end in the .json the request lost.
		err = s.cond.WithNodeLock(rq.ctx(), ident+".json", fn)
	}
	if err != nil {
		var ae *apiError
		if !errors.As(err, &ae) && errors.Is(err, store.ErrNotFound) {
			return nodeNotFound(ident)
		}
	}
	return err
}

// nodeInvalidSortKeys are the fields Ironic refuses to sort nodes by.
var nodeInvalidSortKeys = []string{
	"properties", "driver_info", "extra", "instance_info", "driver_internal_info",
	"clean_step", "deploy_step", "raid_config", "target_raid_config", "traits", "network_data", "service_step",
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

type nodeQuery = listQuery[baremetal.Node, store.NodeFilter]

var (
	setNodeString = setString[baremetal.Node, store.NodeFilter]
	setNodeBool   = setBool[baremetal.Node, store.NodeFilter]
)

// nodeListParams are the filters of GET /v1/nodes, in the order they are
// checked. Those the store does not have run on its answer (q.where).
var nodeListParams = []listParam[baremetal.Node, store.NodeFilter]{
	{name: "provision_state", min: v9ProvisionStateFilter, plain406: true, read: func(q *nodeQuery, v string, _ bool) error {
		if !slices.Contains(ironicProvisionStates, v) {
			return badRequest("Provision state \"%s\" is not valid", v)
		}
		q.f.ProvisionState = []string{v}
		return nil
	}},
	{name: "driver", min: v16DriverFilter, read: setNodeString(func(f *store.NodeFilter) *string { return &f.Driver })},
	{name: "resource_class", min: v21ResourceClass, read: setNodeString(func(f *store.NodeFilter) *string { return &f.ResourceClass })},
	{name: "fault", min: v42Fault, read: func(q *nodeQuery, v string, _ bool) error {
		if !slices.Contains(validFaults, v) {
			return badRequest("Unrecognized fault \"%s\" is specified, allowed faults are %s", v, pyRepr(anySlice(validFaults)))
		}
		q.f.Fault = v
		return nil
	}},
	{name: "conductor_group", min: v46ConductorGroup, read: func(q *nodeQuery, v string, _ bool) error {
		g := strings.ToLower(v)
		q.f.ConductorGroup = &g
		return nil
	}},
	{name: "conductor", min: v49Conductors, read: func(q *nodeQuery, v string, _ bool) error {
		q.where(func(n *baremetal.Node) bool { return q.rc.conductorFor(n) == v })
		return nil
	}},
	{name: "owner", min: v50Owner, read: setNodeString(func(f *store.NodeFilter) *string { return &f.Owner })},
	{name: "lessee", min: v65Lessee, read: setNodeString(func(f *store.NodeFilter) *string { return &f.Lessee })},
	// Also the policy's scope: a caller who may not list all nodes sees
	// its own project's.
	{name: "project", min: v65Lessee, always: true, read: func(q *nodeQuery, v string, given bool) error {
		own, err := q.rq.listProject(auth.RuleNodeListAll, v)
		if err != nil {
			return err
		}
		if own != "" {
			v, given = own, true
		}
		switch {
		case given && v != "":
			// In the query, not after it: a filter after it reads every
			// node for each page.
			q.f.Project = v
		case given:
			q.where(func(n *baremetal.Node) bool { return n.Owner == v || n.Lessee == v })
		}
		return nil
	}},
	{name: "shard", min: v82Shard, read: func(q *nodeQuery, v string, _ bool) error {
		q.f.Shard = splitList(v)
		return nil
	}},
	{name: "sharded", min: v82Shard, valueFirst: true, read: func(q *nodeQuery, v string, _ bool) error {
		sharded, err := parseBool("sharded", v)
		if err != nil {
			return err
		}
		q.where(func(n *baremetal.Node) bool { return (n.Shard != "") == sharded })
		return nil
	}},
	{name: "instance_name", read: func(q *nodeQuery, v string, _ bool) error {
		if q.rq.minor < v104InstanceName {
			return newError(http.StatusNotAcceptable, "instance_name is not acceptable in this API version")
		}
		q.where(func(n *baremetal.Node) bool { return n.InstanceName == v })
		return nil
	}},
	// Child nodes (1.83) are left out of every list, at every version,
	// unless include_children; parent_node lists one node's children.
	{name: "parent_node", min: v83ParentNode, read: func(q *nodeQuery, v string, _ bool) error {
		q.f.ParentNode = &v
		return nil
	}},
	{name: "include_children", min: v83ParentNode, always: true, valueFirst: true, read: func(q *nodeQuery, v string, given bool) error {
		include := false
		if given {
			b, err := boolArg("include_children", v)
			if err != nil {
				return err
			}
			include = b != nil && *b
		}
		switch {
		case include:
			q.f.ParentNode = nil // Ironic ignores parent_node then
		case q.f.ParentNode == nil:
			q.f.ParentNode = new(string)
		}
		return nil
	}},
	{name: "instance_uuid", read: func(q *nodeQuery, v string, _ bool) error {
		q.f.InstanceUUID = v
		return checkUUIDArg("instance_uuid", v)
	}},
	// Also GET /v1/chassis/{chassis}/nodes.
	{name: "chassis_uuid", always: true, read: func(q *nodeQuery, v string, given bool) error {
		if given {
			if err := checkUUIDArg("chassis_uuid", v); err != nil {
				return err
			}
		}
		if q.rq.r.PathValue("chassis") != "" {
			id, err := chassisResource.ident(q.rq)
			if err != nil {
				return err
			}
			c, err := chassisResource.lookup(q.rq.ctx(), q.s.store, id, q.rq.minor)
			if err != nil {
				return err
			}
			v = c.UUID
		}
		if v != "" {
			q.where(func(n *baremetal.Node) bool { return strings.EqualFold(n.ChassisUUID, v) })
		}
		return nil
	}},
	{name: "associated", read: setNodeBool("associated", func(f *store.NodeFilter) **bool { return &f.Associated })},
	{name: "maintenance", read: setNodeBool("maintenance", func(f *store.NodeFilter) **bool { return &f.Maintenance })},
	{name: "retired", read: setNodeBool("retired", func(f *store.NodeFilter) **bool { return &f.Retired })},
	{name: "description_contains", read: func(q *nodeQuery, v string, _ bool) error {
		q.where(func(n *baremetal.Node) bool { return strings.Contains(n.Description, v) })
		return nil
	}},
}
