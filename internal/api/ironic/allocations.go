package ironic

import (
	"context"
	"errors"
	"net/http"
	"slices"
	"unicode/utf8"

	"github.com/google/uuid"

	"github.com/ferrometal/ferro/internal/auth"
	"github.com/ferrometal/ferro/internal/baremetal"
	"github.com/ferrometal/ferro/internal/states"
	"github.com/ferrometal/ferro/internal/store"
)

type allocationField struct {
	name  string
	min   int
	write func(b []byte, a *baremetal.Allocation) []byte
}

var allocationFields = []allocationField{
	{"uuid", 0, func(b []byte, a *baremetal.Allocation) []byte { return appendString(b, a.UUID) }},
	{"created_at", 0, func(b []byte, a *baremetal.Allocation) []byte { return appendTime(b, a.CreatedAt) }},
	{"updated_at", 0, func(b []byte, a *baremetal.Allocation) []byte { return appendNullTime(b, a.UpdatedAt) }},
	{"candidate_nodes", 0, func(b []byte, a *baremetal.Allocation) []byte {
		if a.CandidateNodes == nil {
			return append(b, "[]"...)
		}
		return appendStrings(b, a.CandidateNodes)
	}},
	{"extra", 0, func(b []byte, a *baremetal.Allocation) []byte { return appendObject(b, a.Extra) }},
	{"last_error", 0, func(b []byte, a *baremetal.Allocation) []byte { return appendNullString(b, a.LastError) }},
	{"name", 0, func(b []byte, a *baremetal.Allocation) []byte { return appendNullString(b, a.Name) }},
	{"owner", v60AllocationOwner, func(b []byte, a *baremetal.Allocation) []byte { return appendNullString(b, a.Owner) }},
	{"resource_class", 0, func(b []byte, a *baremetal.Allocation) []byte { return appendNullString(b, a.ResourceClass) }},
	{"state", 0, func(b []byte, a *baremetal.Allocation) []byte { return appendString(b, a.State) }},
	{"traits", 0, func(b []byte, a *baremetal.Allocation) []byte {
		if a.Traits == nil {
			return append(b, "[]"...)
		}
		return appendStrings(b, a.Traits)
	}},
	{"node_uuid", 0, func(b []byte, a *baremetal.Allocation) []byte { return appendNullString(b, a.NodeUUID) }},
}

var allocationFieldMin = func() map[string]int {
	m := map[string]int{}
	for _, f := range allocationFields {
		m[f.name] = f.min
	}
	return m
}()

func appendAllocation(b []byte, a *baremetal.Allocation, minor int, base string, fs fieldSet) []byte {
	o := newObj(b)
	for i := range allocationFields {
		f := &allocationFields[i]
		if minor < f.min || !fs.want(f.name) {
			continue
		}
		o.key(f.name)
		o.b = f.write(o.b, a)
	}
	o.key("links")
	o.b = appendLinks(o.b, base, "allocations", a.UUID)
	return o.end()
}

// allocationsAllowed is Ironic's gate: below 1.52, reads are 404 and
// writes 405.
func allocationsAllowed(rq *request) error {
	if rq.minor >= v52Allocation {
		return nil
	}
	if rq.r.Method == http.MethodGet || rq.r.Method == http.MethodHead {
		return notFound("The API version does not allow allocations")
	}
	return newError(http.StatusMethodNotAllowed, "The API version does not allow allocations")
}

func (s *server) lookupAllocation(ctx context.Context, ident string) (*baremetal.Allocation, error) {
	if !isUUIDLike(ident) && !isValidLogicalName(ident) {
		return nil, badRequest("Expected a logical name or UUID but received %s.", ident)
	}
	a, err := s.store.GetAllocation(ctx, ident)
	if err != nil {
		if errors.Is(err, store.ErrNotFound) {
			return nil, allocationNotFound(ident)
		}
		return nil, err
	}
	return a, nil
}

var allocationInvalidSortKeys = []string{"extra", "candidate_nodes", "traits"}

// listAllocations is GET /v1/allocations.
func (s *server) listAllocations(rq *request) error {
	if err := allocationsAllowed(rq); err != nil {
		return err
	}
	a, err := rq.queryArgs("node", "resource_class", "state", "marker", "limit", "sort_key", "sort_dir", "fields", "owner")
	if err != nil {
		return err
	}
	p, err := s.paging(a, allocationInvalidSortKeys, false)
	if err != nil {
		return err
	}
	if err := rq.checkSortColumn(p.sortKey, allocationSortColumns); err != nil {
		return err
	}
	fields := a.stringList("fields")
	if fields != nil {
		if err := checkFields(fields, rq.minor, allocationFieldMin); err != nil {
			return err
		}
		p.fields, p.fieldsGiven = fields, true
	}
	var f store.AllocationFilter
	f.Page = p.page
	f.ResourceClass = a.str("resource_class")
	f.State = a.str("state")
	if o, ok := a.optStr("owner"); ok {
		if rq.minor < v60AllocationOwner {
			return notAcceptable()
		}
		f.Owner = o
	}
	if ident := a.str("node"); ident != "" {
		n, err := s.lookupNode(rq.ctx(), s.store, ident, rq.minor)
		if err != nil {
			var ae *apiError
			if errors.As(err, &ae) && ae.status == http.StatusNotFound {
				ae.status = http.StatusBadRequest
			}
			return err
		}
		f.NodeUUID = n.UUID
	}
	if own, err := rq.listProject(auth.RuleAllocListAll, f.Owner); err != nil {
		return err
	} else if own != "" {
		f.Owner = own
	}
	if err := checkMarker(rq.ctx(), p.page.Marker, s.store.GetAllocation, allocationNotFound); err != nil {
		return err
	}
	allocs, err := s.store.ListAllocations(rq.ctx(), f)
	if err != nil {
		return err
	}
	fs := newFieldSet(p.fields)
	b := append(make([]byte, 0, 512*len(allocs)+64), `{"allocations": [`...)
	for i, al := range allocs {
		if i > 0 {
			b = append(b, ", "...)
		}
		b = appendAllocation(b, al, rq.minor, rq.base, fs)
	}
	b = append(b, ']')
	var last string
	if len(allocs) > 0 {
		last = allocs[len(allocs)-1].UUID
	}
	extra := a.filters("limit", "marker", "sort_key", "sort_dir", "fields")
	return rq.writeJSON(http.StatusOK, appendListEnd(b, rq.nextLink("allocations", p, len(allocs), last, extra...)))
}

// getAllocation is GET /v1/allocations/{allocation}.
func (s *server) getAllocation(rq *request) error {
	if err := allocationsAllowed(rq); err != nil {
		return err
	}
	a, err := rq.queryArgs("fields")
	if err != nil {
		return err
	}
	fields := a.stringList("fields")
	if err := checkFields(fields, rq.minor, allocationFieldMin); err != nil {
		return err
	}
	al, err := s.lookupAllocation(rq.ctx(), rq.r.PathValue("allocation"))
	if err != nil {
		return err
	}
	return rq.writeJSON(http.StatusOK, appendAllocation(make([]byte, 0, 512), al, rq.minor, rq.base, newFieldSet(fields)))
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
	for _, k := range slices.Sorted(mapsKeys(doc)) {
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
	if err := allocationsAllowed(rq); err != nil {
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
		n, err := s.lookupNode(rq.ctx(), s.store, nodeIdent, rq.minor)
		if err != nil {
			var ae *apiError
			if errors.As(err, &ae) && ae.status == http.StatusNotFound {
				ae.status = http.StatusBadRequest
			}
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
	for _, ident := range strList(doc["candidate_nodes"]) {
		n, err := s.lookupNode(rq.ctx(), s.store, ident, rq.minor)
		if err != nil {
			var ae *apiError
			if errors.As(err, &ae) && ae.status == http.StatusNotFound {
				ae.status = http.StatusBadRequest
			}
			return err
		}
		if !slices.Contains(al.CandidateNodes, n.UUID) {
			al.CandidateNodes = append(al.CandidateNodes, n.UUID)
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
	return rq.writeJSON(http.StatusCreated, appendAllocation(make([]byte, 0, 512), created, rq.minor, rq.base, nil))
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
	if err := allocationsAllowed(rq); err != nil {
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
	ops, err := rq.readPatch()
	if err != nil {
		return err
	}
	for _, op := range ops {
		if t := op.top(); t != "name" && t != "extra" {
			return badRequest("Cannot patch %s. Only the following can be updated: name, extra", op.Path)
		}
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
	return rq.writeJSON(http.StatusOK, appendAllocation(make([]byte, 0, 512), updated, rq.minor, rq.base, nil))
}

// deleteAllocation is DELETE /v1/allocations/{allocation}.
func (s *server) deleteAllocation(rq *request) error {
	if err := allocationsAllowed(rq); err != nil {
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
		return notFound("The API version does not allow allocations")
	}
	a, err := rq.queryArgs("fields")
	if err != nil {
		return err
	}
	fields := a.stringList("fields")
	if err := checkFields(fields, rq.minor, allocationFieldMin); err != nil {
		return err
	}
	al, err := s.nodeAllocation(rq)
	if err != nil {
		return err
	}
	return rq.writeJSON(http.StatusOK, appendAllocation(make([]byte, 0, 512), al, rq.minor, rq.base, newFieldSet(fields)))
}

// nodeAllocation is the allocation of the node in the path.
func (s *server) nodeAllocation(rq *request) (*baremetal.Allocation, error) {
	n, err := s.node(rq)
	if err != nil {
		return nil, err
	}
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
		return notFound("The API version does not allow allocations")
	}
	if _, err := rq.queryArgs(); err != nil {
		return err
	}
	al, err := s.nodeAllocation(rq)
	if err != nil {
		return err
	}
	if err := s.destroyAllocation(rq, al); err != nil {
		return err
	}
	return rq.writeEmpty(http.StatusNoContent)
}
