package ironic

import (
	"net/http"
	"strings"

	"github.com/ferrometal/ferro/internal/auth"
	"github.com/ferrometal/ferro/internal/baremetal"
	"github.com/ferrometal/ferro/internal/store"
)

// forbidden is Ironic's HTTPForbidden.
func forbidden(rule string) error {
	return newError(http.StatusForbidden, "Access was denied to the following resource: %s", rule)
}

// authorize applies a route's policy before its handler runs, as
// Ironic's check_*_policy_and_retrieve: a rule the credentials satisfy
// without looking at an object passes at once; otherwise the object is
// loaded, a project-scoped caller who may not even see it gets the
// object's 404 (Ironic conceals nodes from other projects), and one who
// may see it but not do this gets 403. Without credentials (noauth) or
// with Unrestricted ones (http_basic) everything passes, as in Ironic.
func (s *server) authorize(rq *request, route auth.Route) error {
	c := rq.creds
	if c == nil || c.Unrestricted || auth.Allowed(route.Rule, c, auth.Target{}) {
		return nil
	}
	var (
		t       auth.Target
		getRule string
		hidden  error
	)
	switch route.Target {
	case auth.TargetNode:
		ident := rq.r.PathValue("node")
		if ident == "" {
			ident = rq.r.URL.Query().Get("node")
		}
		n, err := lookupNode(rq.ctx(), s.store, ident, rq.minor)
		if err != nil {
			return forbidden(route.Rule)
		}
		t, getRule, hidden = nodeTarget(n), auth.RuleNodeGet, nodeNotFound(ident)
	case auth.TargetPort, auth.TargetPortgroup:
		// The node the port or portgroup belongs to is the target.
		var nodeUUID string
		if route.Target == auth.TargetPort {
			id := rq.r.PathValue("port")
			p, err := s.store.GetPort(rq.ctx(), id)
			if err != nil {
				return forbidden(route.Rule)
			}
			nodeUUID, getRule, hidden = p.NodeUUID, auth.RulePortGet, portNotFound(id)
		} else {
			id := rq.r.PathValue("portgroup")
			pg, err := s.lookupPortgroup(rq.ctx(), s.store, id, rq.minor)
			if err != nil {
				return forbidden(route.Rule)
			}
			nodeUUID, getRule, hidden = pg.NodeUUID, auth.RulePortgroupGet, portgroupNotFound(id)
		}
		n, err := s.store.GetNode(rq.ctx(), nodeUUID)
		if err != nil {
			return forbidden(route.Rule)
		}
		t = nodeTarget(n)
	case auth.TargetAllocation:
		id := rq.r.PathValue("allocation")
		al, err := s.lookupAllocation(rq.ctx(), id)
		if err != nil {
			return forbidden(route.Rule)
		}
		t, getRule, hidden = auth.Target{Owner: al.Owner}, auth.RuleAllocationGet, allocationNotFound(id)
	default:
		return forbidden(route.Rule)
	}
	if c.ProjectID != "" && !auth.Allowed(getRule, c, t) {
		return hidden
	}
	if !auth.Allowed(route.Rule, c, t) {
		return forbidden(route.Rule)
	}
	return nil
}

func nodeTarget(n *baremetal.Node) auth.Target { return auth.Target{Owner: n.Owner, Lessee: n.Lessee} }

// listProject is Ironic's check_list_policy: the project a list is
// narrowed to, "" when the caller may list everything. A caller without
// the list_all rule sees its own project's objects only, and asking for
// another project's is 403.
func (rq *request) listProject(listAll, asked string) (string, error) {
	c := rq.creds
	if auth.Allowed(listAll, c, auth.Target{}) {
		return "", nil
	}
	if c.ProjectID == "" || (asked != "" && asked != c.ProjectID) {
		return "", forbidden(listAll)
	}
	return c.ProjectID, nil
}

// projectNodes is the set of nodes project owns or leases.
func (s *server) projectNodes(rq *request, project string) (map[string]bool, error) {
	nodes, err := s.store.ListNodes(rq.ctx(), store.NodeFilter{})
	if err != nil {
		return nil, err
	}
	set := map[string]bool{}
	for _, n := range nodes {
		if n.Owner == project || n.Lessee == project {
			set[n.UUID] = true
		}
	}
	return set, nil
}

// showPassword reports whether driver_info secrets are shown unmasked.
func (rq *request) showPassword() bool {
	return rq.creds != nil && auth.Allowed(auth.RuleShowPassword, rq.creds, auth.Target{})
}

// nodePatchRule is the rule a PATCH of a node's top-level field needs on
// top of baremetal:node:update, as Ironic's node controller checks them.
func nodePatchRule(field string) string {
	switch field {
	case "driver_info", "properties", "chassis_uuid", "instance_uuid", "lessee", "owner",
		"network_data", "conductor_group", "name", "shard", "parent_node":
		return "baremetal:node:update:" + field
	case "retired", "retired_reason":
		return "baremetal:node:update:retired"
	case "extra":
		return "baremetal:node:update_extra"
	case "instance_info":
		return "baremetal:node:update_instance_info"
	case "driver":
		return "baremetal:node:update:driver_interfaces"
	}
	if strings.HasSuffix(field, "_interface") {
		return "baremetal:node:update:driver_interfaces"
	}
	return ""
}

// authorizePatch checks the field rules of a node PATCH against the node.
func (rq *request) authorizePatch(ops []patchOp, n *baremetal.Node) error {
	c := rq.creds
	if c == nil || c.Unrestricted {
		return nil
	}
	for _, op := range ops {
		if r := nodePatchRule(op.top()); r != "" && !auth.Allowed(r, c, nodeTarget(n)) {
			return forbidden(r)
		}
	}
	return nil
}
