package ironic

// Authorization of the Ironic API, in one place: the route's rule before
// its handler runs (authorize), and what only a handler can check once it
// has read the body or the object — a create on the node the body names,
// a resource moved to another node or portgroup, the rules of the fields a
// node PATCH touches, an allocation's node and candidates, and which
// fields of a node a caller may see. Each follows the Ironic helper named
// beside it (ironic/api/controllers/v1/utils.py and the controllers); the
// rules are internal/auth's table of Ironic's defaults.

import (
	"context"
	"errors"
	"net/http"
	"slices"
	"strings"

	"github.com/ferrometal/ferro/internal/auth"
	"github.com/ferrometal/ferro/internal/baremetal"
	"github.com/ferrometal/ferro/internal/states"
	"github.com/ferrometal/ferro/internal/store"
)

// forbidden is Ironic's HTTPForbidden.
func forbidden(rule string) error {
	return newError(http.StatusForbidden, "Access was denied to the following resource: %s", rule)
}

// restricted reports whether policy applies to c: Ironic enforces it
// only with auth_strategy keystone, so neither noauth (no credentials)
// nor an http_basic user (Unrestricted) is ever refused.
func restricted(c *auth.Credentials) bool { return c != nil && !c.Unrestricted }

func nodeTarget(n *baremetal.Node) auth.Target { return auth.Target{Owner: n.Owner, Lessee: n.Lessee} }

// authorize applies a route's policy before its handler runs, as
// Ironic's check_*_policy_and_retrieve: a rule the credentials satisfy
// without an object passes at once; otherwise the object is looked up
// (a missing one is its own 404, for everyone), a project-scoped caller
// who may not see it gets the same 404 (Ironic conceals other projects'
// nodes; allocations from everyone), and one who may see it but not do
// this gets 403.
func (s *server) authorize(rq *request, route auth.Route) error {
	c := rq.creds
	first := route.Rule
	switch route.Target {
	case auth.TargetNodeList, auth.TargetPatch, auth.TargetNodeAllocation:
		first = auth.RuleNodeGet // the node must be visible first
	}
	if !restricted(c) || auth.Allowed(first, c, auth.Target{}) {
		return nil
	}
	switch route.Target {
	case auth.TargetNone, auth.TargetList:
		return forbidden(route.Rule)
	case auth.TargetBodyNode, auth.TargetRunbook:
		// The handler checks the rule on the node of the body
		// (authorizeRefs), or on the runbook it reads.
		return nil
	}
	t, hidden, err := s.policyTarget(rq, route.Target)
	if err != nil {
		return err
	}
	getRule := auth.RuleNodeGet
	if route.Target == auth.TargetAllocation {
		getRule = auth.RuleAllocationGet
	}
	if !auth.Allowed(getRule, c, t) {
		if c.ProjectID != "" || route.Target == auth.TargetAllocation {
			return hidden
		}
		return forbidden(getRule)
	}
	switch route.Target {
	case auth.TargetNodeList, auth.TargetPatch, auth.TargetNodeAllocation:
		// Visible is enough here: the list is narrowed, the patch's
		// fields and the node's allocation are checked by the handler.
		return nil
	}
	if !auth.Allowed(route.Rule, c, t) {
		return forbidden(route.Rule)
	}
	return nil
}

// policyTarget looks up the object of the request's path that its rule is
// checked against, and the error that conceals it.
func (s *server) policyTarget(rq *request, kind auth.TargetKind) (auth.Target, error, error) {
	ctx := rq.ctx()
	// nodeOf is the target of an item that belongs to a node: a node that
	// is gone has no owner, which no project matches.
	nodeOf := func(uuid string, hidden error) (auth.Target, error, error) {
		n, err := s.store.GetNode(ctx, uuid)
		switch {
		case err == nil:
			return nodeTarget(n), hidden, nil
		case errors.Is(err, store.ErrNotFound):
			return auth.Target{}, hidden, nil
		}
		return auth.Target{}, nil, err
	}
	switch kind {
	case auth.TargetNode, auth.TargetNodeList, auth.TargetPatch, auth.TargetNodeAllocation:
		if id := rq.r.PathValue("portgroup"); id != "" && kind == auth.TargetNodeList {
			pg, err := s.lookupPortgroup(ctx, s.store, id, rq.minor)
			if err != nil {
				return auth.Target{}, nil, err
			}
			return nodeOf(pg.NodeUUID, portgroupNotFound(id))
		}
		ident := rq.r.PathValue("node")
		if ident == "" {
			ident = rq.r.URL.Query().Get("node")
		}
		n, err := lookupNode(ctx, s.store, ident, rq.minor)
		if err != nil {
			return auth.Target{}, nil, err
		}
		return nodeTarget(n), nodeNotFound(ident), nil
	case auth.TargetPort:
		id := rq.r.PathValue("port")
		p, err := portResource.lookup(ctx, s.store, id, rq.minor)
		if err != nil {
			return auth.Target{}, nil, err
		}
		return nodeOf(p.NodeUUID, portNotFound(id))
	case auth.TargetPortgroup:
		id := rq.r.PathValue("portgroup")
		pg, err := s.lookupPortgroup(ctx, s.store, id, rq.minor)
		if err != nil {
			return auth.Target{}, nil, err
		}
		return nodeOf(pg.NodeUUID, portgroupNotFound(id))
	case auth.TargetVolumeConnector:
		id := rq.r.PathValue("volume")
		v, err := volumeConnectors.lookup(ctx, s.store, id, rq.minor)
		if err != nil {
			return auth.Target{}, nil, err
		}
		return nodeOf(v.NodeUUID, volumeConnectors.notFound(id))
	case auth.TargetVolumeTarget:
		id := rq.r.PathValue("volume")
		v, err := volumeTargets.lookup(ctx, s.store, id, rq.minor)
		if err != nil {
			return auth.Target{}, nil, err
		}
		return nodeOf(v.NodeUUID, volumeTargets.notFound(id))
	case auth.TargetAllocation:
		id := rq.r.PathValue("allocation")
		al, err := s.lookupAllocation(ctx, id)
		if err != nil {
			return auth.Target{}, nil, err
		}
		return auth.Target{Owner: al.Owner}, allocationNotFound(id), nil
	}
	return auth.Target{}, nil, errors.New("no policy target for this route")
}

// visibleNode reports whether the caller may see n (baremetal:node:get).
func (rq *request) visibleNode(n *baremetal.Node) bool {
	return !restricted(rq.creds) || auth.Allowed(auth.RuleNodeGet, rq.creds, nodeTarget(n))
}

// authorizeRefs checks what a created or patched item of a resource names
// (old is nil on a create): the create's rule (the route's) on the node of
// the body, as Ironic's check_owner_policy — 403 for a node the caller may
// not use, whether or not it exists —; a move to another node, as
// authorize_node_link; and a port's portgroup, which must be one the
// caller can see.
func (s *server) authorizeRefs(rq *request, oldNode, newNode string, old, v any) error {
	if old == nil {
		if err := s.authorizeOn(rq, rq.route.Rule, newNode); err != nil {
			return err
		}
	} else if newNode != oldNode {
		var owner string // a node that is gone had no owner
		if o, err := s.store.GetNode(rq.ctx(), oldNode); err == nil {
			owner = o.Owner
		}
		if _, err := s.authorizeNodeLink(rq, owner, newNode, "node_uuid"); err != nil {
			return err
		}
	}
	if p, ok := v.(*baremetal.Port); ok && p.PortgroupUUID != "" && restricted(rq.creds) {
		if op, ok := old.(*baremetal.Port); !ok || op.PortgroupUUID != p.PortgroupUUID {
			pg, err := s.store.GetPortgroup(rq.ctx(), p.PortgroupUUID)
			if err != nil {
				return nil // the write's own check words a missing one
			}
			if n, err := s.store.GetNode(rq.ctx(), pg.NodeUUID); err != nil || !rq.visibleNode(n) {
				return badRequest("Portgroup %s could not be found.", p.PortgroupUUID)
			}
		}
	}
	return nil
}

// authorizeOn checks rule on the node ident names, without concealing it
// (Ironic's check_owner_policy with conceal_node=False): a node that is
// not there has no owner, so a project-scoped caller gets 403 either way.
func (s *server) authorizeOn(rq *request, rule, ident string) error {
	c := rq.creds
	if !restricted(c) || auth.Allowed(rule, c, auth.Target{}) {
		return nil
	}
	var t auth.Target
	if ident != "" {
		if n, err := s.store.GetNode(rq.ctx(), ident); err == nil {
			t = nodeTarget(n)
		}
	}
	if !auth.Allowed(rule, c, t) {
		return forbidden(rule)
	}
	return nil
}

// authorizeNodeLink is Ironic's authorize_node_link: a resource whose
// node has owner (a port, a volume target; a node's parent_node) may name
// node to only if the caller can see it and it has the same owner — for
// every caller, as Ironic compares the owners whatever the auth strategy.
// Every refusal has the words of a node that is not there. It returns the
// node linked to.
func (s *server) authorizeNodeLink(rq *request, owner, to, field string) (*baremetal.Node, error) {
	refused := badRequest("Unable to apply the requested %s '%s'. Requested value was invalid.", field, to)
	n, err := lookupNode(rq.ctx(), s.store, to, rq.minor)
	if err != nil || !rq.visibleNode(n) {
		return nil, refused
	}
	if n.Owner != owner {
		s.log.Warn("refused a link to a node of another owner", "field", field,
			"owner", owner, "node", n.UUID, "node_owner", n.Owner, "request_id", rq.id)
		return nil, refused
	}
	return n, nil
}

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

// ownByNode is the list scope of a resource that belongs to a node
// (portgroups, volume connectors and targets): without listAll, the items
// of the nodes the caller's project owns or leases.
func ownByNode[E any](listAll string, node func(*E) string) func(rq *request, s *server) (func(*E) bool, error) {
	return func(rq *request, s *server) (func(*E) bool, error) {
		own, err := rq.listProject(listAll, "")
		if err != nil || own == "" {
			return nil, err
		}
		mine, err := s.projectNodes(rq, own)
		if err != nil {
			return nil, err
		}
		return func(v *E) bool { return mine[node(v)] }, nil
	}
}

// showPassword reports whether driver_info secrets are shown unmasked.
func (rq *request) showPassword() bool {
	return rq.creds != nil && auth.Allowed(auth.RuleShowPassword, rq.creds, auth.Target{})
}

// nodeFieldChecks reports whether the fields of the nodes shown to the
// caller are checked one by one (Ironic's node_sanitize: for whoever does
// not pass baremetal:node:get:filter_threshold, under keystone only).
func (rq *request) nodeFieldChecks() bool {
	return restricted(rq.creds) && !auth.Allowed(auth.RuleNodeFilterThreshold, rq.creds, auth.Target{})
}

// redacts reports whether a node field guarded by rule is replaced by
// Ironic's redaction text for this caller.
func (rc *renderCtx) redacts(n *baremetal.Node, rule string) bool {
	return rc.fieldChecks && !auth.Allowed(rule, rc.creds, nodeTarget(n))
}

// Ironic's words for a redacted node field, by rule.
const (
	redactedDriverInfo   = "** Redacted - requires baremetal:node:get:driver_info permission. **"
	redactedInternalInfo = "** Redacted - Requires baremetal:node:get:driver_internal_info permission. **"
	redactedLastError    = "** Value Redacted - Requires baremetal:node:get:last_error permission. **"
	redactedReservation  = "** Redacted - requires baremetal:node:get:reservation permission. **"
	// redactedTargetProperties replaces a volume target's properties.
	redactedTargetProperties = "** Value redacted: Requires permission baremetal:volume:view_target_properties access. Permission denied. **"
)

// hidesTargetProperties reports whether volume targets' properties are
// redacted for the caller (Ironic: without view_target_properties).
func (rq *request) hidesTargetProperties() bool {
	return restricted(rq.creds) && !auth.Allowed(auth.RuleVolumeTargetProperties, rq.creds, auth.Target{})
}

// nodePathRules are the rules of a node PATCH by path prefix, in Ironic's
// order (NodesController._authorize_patch_and_get_node): the first prefix
// a path starts with decides.
var nodePathRules = []struct{ prefix, rule string }{
	{"/instance_info", "baremetal:node:update_instance_info"},
	{"/extra", "baremetal:node:update_extra"},
	{"/driver_info", "baremetal:node:update:driver_info"},
	{"/properties", "baremetal:node:update:properties"},
	{"/chassis_uuid", "baremetal:node:update:chassis_uuid"},
	{"/instance_uuid", "baremetal:node:update:instance_uuid"},
	{"/instance_name", "baremetal:node:update_instance_info"},
	{"/lessee", "baremetal:node:update:lessee"},
	{"/owner", "baremetal:node:update:owner"},
	{"/driver", "baremetal:node:update:driver_interfaces"},
	{"/network_data", "baremetal:node:update:network_data"},
	{"/conductor_group", "baremetal:node:update:conductor_group"},
	{"/name", "baremetal:node:update:name"},
	{"/retired", "baremetal:node:update:retired"},
	{"/shard", "baremetal:node:update:shard"},
	{"/parent_node", "baremetal:node:update:parent_node"},
	{"/disable_power_off", "baremetal:node:update:disable_power_off"},
}

// nodePatchRules are the rules a node PATCH needs, in order: the rule of
// each path, and baremetal:node:update for a path without one (or an
// empty patch). An interface (<kind>_interface) needs
// update:driver_interfaces, turning automated cleaning off
// disable_cleaning.
func nodePatchRules(ops []patchOp) []string {
	var rules []string
	generic := false
	add := func(r string) {
		if !slices.Contains(rules, r) {
			rules = append(rules, r)
		}
	}
	for _, op := range ops {
		switch r := nodePathRule(op); r {
		case "":
			generic = true
		default:
			add(r)
		}
	}
	if generic || len(rules) == 0 {
		add(auth.RuleNodeUpdate)
	}
	return rules
}

func nodePathRule(op patchOp) string {
	for _, m := range nodePathRules {
		if strings.HasPrefix(op.Path, m.prefix) {
			return m.rule
		}
	}
	if top := op.top(); strings.HasSuffix(top, "_interface") && op.Path == "/"+top {
		return "baremetal:node:update:driver_interfaces"
	}
	if strings.HasPrefix(op.Path, "/automated_clean") && op.Op != "remove" && isFalse(op.Value) {
		return auth.RuleNodeDisableCleaning
	}
	return ""
}

// isFalse is oslo's bool_from_string(v) is False, for a patch value.
func isFalse(v any) bool {
	switch x := v.(type) {
	case bool:
		return !x
	case string:
		return slices.Contains([]string{"0", "f", "false", "n", "no", "off"}, strings.ToLower(strings.TrimSpace(x)))
	}
	return pyRepr(v) == "0"
}

// authorizePatch checks the rules of the fields a node PATCH touches
// against the node (403 naming the first that fails), and what Ironic
// checks of an owner change: an active node's owner changes only with
// update_owner_provisioned, and never while an allocation with an owner
// holds the node (409 both).
func (s *server) authorizePatch(rq *request, ops []patchOp, n *baremetal.Node) error {
	c := rq.creds
	if restricted(c) {
		for _, r := range nodePatchRules(ops) {
			if !auth.Allowed(r, c, nodeTarget(n)) {
				return forbidden(r)
			}
		}
	}
	if len(patchValues(ops, "/owner")) == 0 {
		return nil
	}
	if n.ProvisionState == states.Active && restricted(c) && !auth.Allowed(auth.RuleNodeUpdateOwnerProvisioned, c, nodeTarget(n)) {
		return conflict("Cannot update owner of node \"%s\" while it is in state \"%s\".", n.UUID, states.Active)
	}
	if n.AllocationUUID != "" {
		if al, err := s.store.GetAllocation(rq.ctx(), n.AllocationUUID); err == nil && al.Owner != "" {
			return conflict("Cannot update owner of node \"%s\" while it is allocated to an allocation with an  owner.", n.UUID)
		}
	}
	return nil
}

// authorizeNodeAllocation checks the route's rule on the allocation of the
// path's node, which authorize has shown the caller may see (Ironic's
// NodeAllocationController).
func (rq *request) authorizeNodeAllocation(al *baremetal.Allocation) error {
	c := rq.creds
	if restricted(c) && !auth.Allowed(rq.route.Rule, c, auth.Target{Owner: al.Owner}) {
		return forbidden(rq.route.Rule)
	}
	return nil
}

// allocationNode is the node an allocation's "node" (a backfill) names:
// one the caller may not see answers as one that is not there (400), as
// Ironic's check_owner_policy(baremetal:node:get, conceal_node=…).
func (s *server) allocationNode(rq *request, ident string) (*baremetal.Node, error) {
	n, err := lookupNodeArg(rq, s, ident)
	if err != nil {
		return nil, err
	}
	if !rq.visibleNode(n) {
		return nil, badRequest("Node %s could not be found.", ident)
	}
	return n, nil
}

// allocationCandidates resolves an allocation's candidate_nodes (UUIDs or
// names) to UUIDs in their order, as Ironic's check_node_list: a caller
// without create_restricted may name only nodes its project owns or
// leases, and every other name is "not found" — all of them in one 400.
func (s *server) allocationCandidates(ctx context.Context, rq *request, idents []string) ([]string, error) {
	project := ""
	if c := rq.creds; restricted(c) && !auth.Allowed(auth.RuleAllocCreateRestricted, c, auth.Target{}) {
		project = c.ProjectID
		if project == "" {
			project = "\x00" // a caller of no project matches no node
		}
	}
	var out, missing []string
	for _, ident := range idents {
		var n *baremetal.Node
		if isUUIDLike(ident) || isValidLogicalName(ident) {
			n, _ = s.store.GetNode(ctx, ident)
		}
		if n == nil || (project != "" && n.Owner != project && n.Lessee != project) {
			if !slices.Contains(missing, ident) {
				missing = append(missing, ident)
			}
			continue
		}
		if !slices.Contains(out, n.UUID) {
			out = append(out, n.UUID)
		}
	}
	if len(missing) > 0 {
		return nil, badRequest("Nodes cannot be found: %s", strings.Join(missing, ", "))
	}
	return out, nil
}
