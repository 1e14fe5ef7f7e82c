package ironic

import (
	"context"
	"errors"
	"maps"
	"net/http"
	"slices"
	"time"
	"unicode/utf8"

	"github.com/google/uuid"

	"github.com/ferrometal/ferro/internal/auth"
	"github.com/ferrometal/ferro/internal/baremetal"
	"github.com/ferrometal/ferro/internal/states"
	"github.com/ferrometal/ferro/internal/store"
)

// allocationFields are an allocation's fields in view order.
var allocationFields = append(headFields(func(a *baremetal.Allocation) string { return a.UUID },
	func(a *baremetal.Allocation) time.Time { return a.CreatedAt }, func(a *baremetal.Allocation) *time.Time { return a.UpdatedAt }),
	[]viewField[*baremetal.Allocation]{
		{"candidate_nodes", 0, stringsOf(func(a *baremetal.Allocation) []string { return a.CandidateNodes })},
		{"extra", 0, objOf(func(a *baremetal.Allocation) baremetal.JSON { return a.Extra })},
		{"last_error", 0, nullStrOf(func(a *baremetal.Allocation) string { return a.LastError })},
		{"name", 0, nullStrOf(func(a *baremetal.Allocation) string { return a.Name })},
		{"owner", v60AllocationOwner, nullStrOf(func(a *baremetal.Allocation) string { return a.Owner })},
		{"resource_class", 0, nullStrOf(func(a *baremetal.Allocation) string { return a.ResourceClass })},
		{"state", 0, strOf(func(a *baremetal.Allocation) string { return a.State })},
		{"traits", 0, stringsOf(func(a *baremetal.Allocation) []string { return a.Traits })},
		{"node_uuid", 0, nullStrOf(func(a *baremetal.Allocation) string { return a.NodeUUID })},
	}...)

type allocationQuery = listQuery[baremetal.Allocation, store.AllocationFilter]

// allocationResource describes allocations (1.52). Their list and show
// are the generic steps; their writes are their own (below): a created
// allocation is handed to the conductor, which picks its node.
var allocationResource = describe(&resource[baremetal.Allocation, store.AllocationFilter]{
	path:       "allocations",
	noun:       "allocation",
	minVersion: v52Allocation,
	tooOld:     versionDisallows("allocations", true),
	byName:     true,
	jsonSuffix: true,
	asWritten:  true,
	exactKey:   true,
	badName:    checkPortgroupName,
	// A bad ?fields= is a 400 before the allocation is looked up.
	fieldsBeforeLookup: true,
	fields:             allocationFields,
	invalidSort:        []string{"extra", "candidate_nodes", "traits"},
	sortColumns:        allocationSortColumns,
	// The allocation controller checks the sort key against the model's
	// columns only (owner sorts below 1.60), and before ?fields=.
	listChecks: []listCheck{checkSortColumn, checkFields},
	noDetail:   true,
	params: []listParam[baremetal.Allocation, store.AllocationFilter]{
		{name: "resource_class", read: setString[baremetal.Allocation](func(f *store.AllocationFilter) *string { return &f.ResourceClass })},
		{name: "state", read: setString[baremetal.Allocation](func(f *store.AllocationFilter) *string { return &f.State })},
		{name: "owner", min: v60AllocationOwner, plain406: true, read: setString[baremetal.Allocation](func(f *store.AllocationFilter) *string { return &f.Owner })},
		{name: "node", read: func(q *allocationQuery, v string, _ bool) error {
			if v == "" {
				return nil
			}
			n, err := lookupNodeArg(q.rq, q.s, v)
			if err != nil {
				return err
			}
			q.f.NodeUUID = n.UUID
			return nil
		}},
		// The policy's scope: a caller who may not list all allocations
		// sees its own project's.
		{read: func(q *allocationQuery, _ string, _ bool) error {
			own, err := q.rq.listProject(auth.RuleAllocListAll, q.f.Owner)
			if own != "" {
				q.f.Owner = own
			}
			return err
		}},
	},
	buffered:  true,
	ownWrites: true,
	uuid:      func(a *baremetal.Allocation) string { return a.UUID },
	storeOps: storeOps[baremetal.Allocation, store.AllocationFilter]{get: store.Store.GetAllocation,
		list: store.Store.ListAllocations},
	page: func(f *store.AllocationFilter) *store.Page { return &f.Page },
})

// lookupNodeArg is the node an allocation's argument names: one that is
// not there is a 400 (the argument is wrong), not a 404.
func lookupNodeArg(rq *request, s *server, ident string) (*baremetal.Node, error) {
	n, err := lookupNode(rq.ctx(), s.store, ident, rq.minor)
	if err != nil {
		var ae *apiError
		if errors.As(err, &ae) && ae.status == http.StatusNotFound {
			ae.status = http.StatusBadRequest
		}
		return nil, err
	}
	return n, nil
}

func (s *server) lookupAllocation(ctx context.Context, ident string) (*baremetal.Allocation, error) {
	return allocationResource.lookup(ctx, s.store, ident, maxMinor)
}

// allocationSchema is Ironic's ALLOCATION_SCHEMA.
var allocationSchema = map[string]fieldKind{
	"candidate_nodes": kStringList, "extra": kObject, "name": kString, "node": kString,
	"owner": kString, "resource_class": kString, "traits": kStringList, "uuid": kString,
}

func validateAllocationDoc(doc map[string]any) error {
	if err := checkAdditional("allocation", doc, func(k string) bool { _, ok := allocationSchema[k]; return ok }); err != nil {
		return err
	}
	for _, k := range slices.Sorted(maps.Keys(doc)) {
		if err := checkKind("allocation", k, doc[k], allocationSchema[k]); err != nil {
			return err
		}
	}
	if rc := strField(doc["resource_class"]); utf8.RuneCountInString(rc) > 80 {
		return schemaError("allocation", "%s is too long", pyRepr(rc))
	}
	for _, t := range strList(doc["traits"]) {
		if !validTrait(t) {
			return schemaError("allocation", "%s is not valid under any of the given schemas", pyRepr(t))
		}
	}
	if id, ok := doc["uuid"].(string); ok && !isUUIDLike(id) {
		return badRequest("Expected UUID for uuid: %s", id)
	}
	return nil
}

// createAllocation is POST /v1/allocations: the allocation is stored in
// state allocating and processed by the conductor before the answer.
func (s *server) createAllocation(rq *request) error {
	if err := allocationResource.versionCheck(rq); err != nil {
		return err
	}
	doc, err := rq.createBody("allocation")
	if err != nil {
		return err
	}
	if err := validateAllocationDoc(doc); err != nil {
		return err
	}
	if doc["owner"] != nil && rq.minor < v60AllocationOwner {
		return notAcceptable()
	}
	al := &baremetal.Allocation{
		Name: strField(doc["name"]), ResourceClass: strField(doc["resource_class"]),
		Extra: objField(doc["extra"]), Owner: strField(doc["owner"]),
		State: baremetal.AllocationAllocating, Traits: strList(doc["traits"]),
	}
	if al.Name != "" && !isValidLogicalName(al.Name) {
		return badRequest("Cannot create allocation with invalid name '%s'", al.Name)
	}
	if c := rq.creds; c != nil && !auth.Allowed(auth.RuleAllocCreateRestricted, c, auth.Target{}) {
		// A project member allocates for its own project, from its own nodes.
		if al.Owner != "" && al.Owner != c.ProjectID {
			return forbidden(auth.RuleAllocCreateRestricted)
		}
		al.Owner = c.ProjectID
	}
	var backfill *baremetal.Node
	if nodeIdent := strField(doc["node"]); nodeIdent != "" {
		if rq.minor < v58AllocationBackfill {
			return badRequest("Cannot set node when creating an allocation in this API version")
		}
		n, err := s.allocationNode(rq, nodeIdent)
		if err != nil {
			return err
		}
		backfill = n
	}
	if al.ResourceClass == "" {
		if backfill == nil {
			return badRequest("The resource_class field is mandatory when not backfilling")
		}
		al.ResourceClass = backfill.ResourceClass
	}
	if idents := strList(doc["candidate_nodes"]); len(idents) > 0 {
		if al.CandidateNodes, err = s.allocationCandidates(rq.ctx(), rq, idents); err != nil {
			return err
		}
	}
	switch id := strField(doc["uuid"]); {
	case id != "":
		al.UUID = canonicalUUID(id)
	case backfill != nil && backfill.InstanceUUID != "":
		al.UUID = backfill.InstanceUUID
	default:
		al.UUID = uuid.NewString()
	}
	if err := s.checkAllocationUnique(rq.ctx(), al); err != nil {
		return err
	}
	if backfill != nil {
		err = s.backfillAllocation(rq, al, backfill)
	} else {
		err = s.store.CreateAllocation(rq.ctx(), al)
		if err == nil {
			// As Ironic: the answer shows the allocation allocating; a
			// conductor worker finishes it. Without a free worker it is
			// done here, so that no allocation stays allocating.
			if serr := s.cond.StartAllocate(al.UUID); serr != nil {
				if aerr := s.cond.Allocate(rq.ctx(), al.UUID); aerr != nil {
					s.log.Warn("allocation failed", "allocation", al.UUID, "request_id", rq.id, "error", aerr)
				}
			}
		}
	}
	if err != nil {
		if errors.Is(err, store.ErrConflict) && !isAPIError(err) {
			if cerr := s.checkAllocationUnique(rq.ctx(), al); cerr != nil {
				return cerr
			}
			return conflict("Conflict.")
		}
		return err
	}
	// A new allocation is shown as it was stored (allocating), whatever
	// the worker has done since; a backfill as it ended.
	created := al
	if backfill != nil {
		if created, err = s.store.GetAllocation(rq.ctx(), al.UUID); err != nil {
			return err
		}
	}
	rq.location("allocations/" + created.UUID)
	return rq.writeJSON(http.StatusCreated, allocationResource.appendOne(make([]byte, 0, 512), created, rq.render(s), nil))
}

// checkAllocationUnique reports a duplicate name or UUID as Ironic words it.
func (s *server) checkAllocationUnique(ctx context.Context, al *baremetal.Allocation) error {
	if _, err := s.store.GetAllocation(ctx, al.UUID); err == nil {
		return conflict("An allocation with UUID %s already exists.", al.UUID)
	}
	if al.Name != "" {
		if _, err := s.store.GetAllocation(ctx, al.Name); err == nil {
			return conflict("An allocation with name %s already exists.", al.Name)
		}
	}
	return nil
}

// backfillAllocation records an allocation for a node that is already
// deployed or reserved (1.58): the node must be active or available and
// not associated with another allocation or instance.
func (s *server) backfillAllocation(rq *request, al *baremetal.Allocation, node *baremetal.Node) error {
	return s.withNodeLock(rq, node.UUID, func(ctx context.Context, tx store.Store, n *baremetal.Node) error {
		if n.ProvisionState != states.Active && n.ProvisionState != states.Available {
			return badRequest("Cannot create an allocation for node %s in provision state %s", n.UUID, n.ProvisionState)
		}
		if n.AllocationUUID != "" {
			return conflict("Node %s already has an allocation %s", n.UUID, n.AllocationUUID)
		}
		if n.InstanceUUID != "" && n.InstanceUUID != al.UUID {
			return conflict("Cannot create allocation %s for node %s: the node is associated with instance %s", al.UUID, n.UUID, n.InstanceUUID)
		}
		if al.ResourceClass != n.ResourceClass {
			return badRequest("Cannot backfill an allocation with resource class %s for node %s with resource class %s", al.ResourceClass, n.UUID, n.ResourceClass)
		}
		for _, t := range al.Traits {
			if !slices.Contains(n.Traits, t) {
				return badRequest("Cannot backfill an allocation for node %s: it does not have the trait %s", n.UUID, t)
			}
		}
		al.NodeUUID = n.UUID
		al.State = baremetal.AllocationActive
		if err := tx.CreateAllocation(ctx, al); err != nil {
			return err
		}
		n.AllocationUUID = al.UUID
		n.InstanceUUID = al.UUID
		return tx.UpdateNode(ctx, n)
	})
}

// patchAllocation is PATCH /v1/allocations/{allocation} (1.57): name and
// extra only.
func (s *server) patchAllocation(rq *request) error {
	if err := allocationResource.versionCheck(rq); err != nil {
		return err
	}
	if rq.minor < v57AllocationUpdate {
		return newError(http.StatusMethodNotAllowed, "The API version does not allow updating allocations")
	}
	if _, err := rq.queryArgs(); err != nil {
		return err
	}
	al, err := s.lookupAllocation(rq.ctx(), rq.r.PathValue("allocation"))
	if err != nil {
		return err
	}
	ops, err := rq.readAnyPathPatchOf(onlyPatching("name", "extra"))
	if err != nil {
		return err
	}
	for _, v := range patchValues(ops, "/name") {
		if name, ok := v.(string); ok && name != "" && !isValidLogicalName(name) {
			return badRequest("Cannot update allocation with invalid name '%s'", name)
		}
	}
	doc := map[string]any{"name": nil, "extra": map[string]any{}}
	if al.Name != "" {
		doc["name"] = al.Name
	}
	if al.Extra != nil {
		doc["extra"] = al.Extra
	}
	out, err := applyPatch(doc, ops)
	if err != nil {
		return err
	}
	for _, k := range []string{"name", "extra"} {
		if err := checkKind("allocation", k, out[k], allocationSchema[k]); err != nil {
			return err
		}
	}
	na := *al
	na.Name = strField(out["name"])
	na.Extra = objField(out["extra"])
	if na.Name != "" && na.Name != al.Name {
		if other, err := s.store.GetAllocation(rq.ctx(), na.Name); err == nil && other.UUID != al.UUID {
			return conflict("An allocation with name %s already exists.", na.Name)
		}
	}
	if err := s.store.UpdateAllocation(rq.ctx(), &na); err != nil {
		if errors.Is(err, store.ErrConflict) {
			return conflict("An allocation with name %s already exists.", na.Name)
		}
		if errors.Is(err, store.ErrNotFound) {
			return allocationNotFound(rq.r.PathValue("allocation"))
		}
		return err
	}
	updated, err := s.store.GetAllocation(rq.ctx(), al.UUID)
	if err != nil {
		return err
	}
	return rq.writeJSON(http.StatusOK, allocationResource.appendOne(make([]byte, 0, 512), updated, rq.render(s), nil))
}

// deleteAllocation is DELETE /v1/allocations/{allocation}.
func (s *server) deleteAllocation(rq *request) error {
	if err := allocationResource.versionCheck(rq); err != nil {
		return err
	}
	if _, err := rq.queryArgs(); err != nil {
		return err
	}
	al, err := s.lookupAllocation(rq.ctx(), rq.r.PathValue("allocation"))
	if err != nil {
		return err
	}
	if err := s.destroyAllocation(rq, al); err != nil {
		return err
	}
	return rq.writeEmpty(http.StatusNoContent)
}

// destroyAllocation removes an allocation and, under the node's lock,
// its claim on the node. An active node keeps its allocation unless in
// maintenance.
func (s *server) destroyAllocation(rq *request, al *baremetal.Allocation) error {
	if al.NodeUUID == "" {
		if err := s.store.DeleteAllocation(rq.ctx(), al.UUID); err != nil && !errors.Is(err, store.ErrNotFound) {
			return err
		}
		return nil
	}
	err := s.cond.WithNodeLock(rq.ctx(), al.NodeUUID, func(ctx context.Context, tx store.Store, n *baremetal.Node) error {
		if n.ProvisionState == states.Active && !n.Maintenance {
			return conflict("Cannot remove allocation %s since node %s is in state active and not in maintenance.", al.UUID, n.UUID)
		}
		if n.AllocationUUID == al.UUID {
			n.AllocationUUID = ""
			if n.InstanceUUID == al.UUID {
				n.InstanceUUID = ""
			}
			if err := tx.UpdateNode(ctx, n); err != nil {
				return err
			}
		}
		return tx.DeleteAllocation(ctx, al.UUID)
	})
	if err != nil && errors.Is(err, store.ErrNotFound) && !isAPIError(err) {
		// The node is gone; so is the claim.
		if derr := s.store.DeleteAllocation(rq.ctx(), al.UUID); derr != nil && !errors.Is(derr, store.ErrNotFound) {
			return derr
		}
		return nil
	}
	return err
}

// getNodeAllocation is GET /v1/nodes/{node}/allocation.
func (s *server) getNodeAllocation(rq *request) error {
	if rq.minor < v52Allocation {
		return nodeAllocationTooOld()
	}
	a, err := rq.queryArgs("fields")
	if err != nil {
		return err
	}
	fields := a.stringList("fields")
	if err := allocationResource.checkFields(fields, rq.minor); err != nil {
		return err
	}
	n, err := s.node(rq)
	if err != nil {
		// Ironic's get_all looks the node up as a list's filter: a node
		// that is not there (or is concealed) is a 400, not a 404.
		var ae *apiError
		if errors.As(err, &ae) && ae.status == http.StatusNotFound {
			ae.status = http.StatusBadRequest
		}
		return err
	}
	al, err := s.allocationOf(rq, n)
	if err != nil {
		return err
	}
	if err := rq.authorizeNodeAllocation(al); err != nil {
		return err
	}
	return allocationResource.writeOne(rq, s, http.StatusOK, al, newFieldSet(fields))
}

// nodeAllocationTooOld is /v1/nodes/{node}/allocation below 1.52: the
// nodes controller has no such sub-resource then, and pecan's 404 has an
// empty description.
func nodeAllocationTooOld() error {
	return &apiError{status: http.StatusNotFound, webob: true}
}

// nodeAllocation is the allocation of the node in the path.
func (s *server) nodeAllocation(rq *request) (*baremetal.Allocation, error) {
	n, err := s.node(rq)
	if err != nil {
		return nil, err
	}
	return s.allocationOf(rq, n)
}

// allocationOf is the allocation of n, the node in the path.
func (s *server) allocationOf(rq *request, n *baremetal.Node) (*baremetal.Allocation, error) {
	allocs, err := s.store.ListAllocations(rq.ctx(), store.AllocationFilter{NodeUUID: n.UUID})
	if err != nil {
		return nil, err
	}
	if len(allocs) == 0 {
		return nil, notFound("Allocation for node %s was not found", rq.r.PathValue("node"))
	}
	return allocs[0], nil
}

// deleteNodeAllocation is DELETE /v1/nodes/{node}/allocation.
func (s *server) deleteNodeAllocation(rq *request) error {
	if rq.minor < v52Allocation {
		return nodeAllocationTooOld()
	}
	if _, err := rq.queryArgs(); err != nil {
		return err
	}
	al, err := s.nodeAllocation(rq)
	if err != nil {
		return err
	}
	if err := rq.authorizeNodeAllocation(al); err != nil {
		return err
	}
	if err := s.destroyAllocation(rq, al); err != nil {
		return err
	}
	return rq.writeEmpty(http.StatusNoContent)
}
