package ironic

import (
	"context"
	"errors"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/ferrometal/ferro/internal/baremetal"
	"github.com/ferrometal/ferro/internal/store"
)

// resource describes one of the REST resources that are rows of a table
// (chassis, deploy templates, volume connectors and targets, ports,
// portgroups): they share every list, show, create, PATCH and delete
// step, and differ only in what this description says. A new field is a
// change to the description alone.
type resource[T any] struct {
	path     string // below /v1: "chassis", "volume/connectors"; the links' resource
	key      string // the list's key: "chassis", "connectors"
	what     string // the body's name in schema errors: "chassis", "connector"
	noun     string // "volume connector", for messages
	wildcard string // the route's name for the identifier: "chassis", "volume"
	// minVersion is the microversion the resource appeared in: below it
	// every route answers 404.
	minVersion int
	// idField names the identifier in the error for one that is not a
	// UUID; byName accepts a name too (never an error then).
	idField string
	byName  bool
	// asWritten: a not-found error names the UUID as the client wrote it,
	// not in canonical form.
	asWritten bool
	// exactKey: the store is asked for the identifier exactly as written,
	// not in canonical form (a port's UUID in capitals is not found).
	exactKey bool
	// badName, when set, refuses a name (an identifier that is not a
	// UUID) before it is looked up.
	badName func(name string) error

	defaults    []string // a list's fields when fields is not given
	invalidSort []string
	sortColumns sortColumns // what Ironic sorts on (sortkeys.go)
	fieldMin    map[string]int
	internal    []string // what a PATCH may not touch
	mandatory   []string // what a PATCH may not remove
	subLinks    []string // sub-resources a full view links to: "nodes"

	// view writes the fields (all of them when fs is nil) the microversion
	// has, links apart.
	view func(o *objWriter, v T, fs fieldSet, minor int)
	// doc is v as the document a PATCH applies to; check validates a
	// created or patched document and fills v from it, but for the UUID
	// (docUUID's, set by setNew).
	doc   func(v T) map[string]any
	check func(doc map[string]any, v T, w writeCtx) error
	uuid  func(v T) string
	// setNew gives a new v its UUID and creation time.
	setNew func(v T, id string, now time.Time)
	// node is the node v belongs to, nil for resources that belong to
	// none: a node's resources change under its lock, only while it is
	// powered off (unless anyPower), and are listed per node too, from
	// nodeListMin on.
	node        func(v T) string
	anyPower    bool
	nodeListMin int
	// portgroupListMin > 0: listed per portgroup too, from that version.
	portgroupListMin int
	// listArgs are the list's filters beyond node; filter reads them (and
	// the node, and the parent in the path) into a store filter, and says
	// the collection's path for the next link. nil: the node filter only.
	listArgs []string
	filter   func(rq *request, s *server, a args) (listFilter, string, error)
	// own, when set, is the policy's scope of a list: nil keep for all
	// items, else only those keep accepts (read whole, then cut to the
	// page).
	own func(rq *request, s *server) (keep func(v T) bool, err error)
	// buffered: a list is sent in one piece (with a Content-Length) however
	// long, not streamed.
	buffered bool
	// precheck runs before a create or update is written, in its
	// transaction, with the node (locked) and the item before (nil on
	// create): duplicates found here get precise messages.
	precheck func(ctx context.Context, tx store.Store, n *baremetal.Node, v, old T, w writeCtx) error
	// patchGate refuses a PATCH before the item is read (fields the
	// microversion does not have).
	patchGate func(rq *request, ops []patchOp) error
	// reread: a create or PATCH answers with the item as stored, not as
	// written (the store fills in defaults and timestamps).
	reread bool
	// conflict words a store conflict other than a taken UUID, inUse a
	// refused delete; nil when the store cannot answer either.
	conflict func(ctx context.Context, tx store.Store, v T) error
	inUse    func(id string) *apiError

	newT   func() T
	clone  func(v T) T
	get    func(ctx context.Context, s store.Store, id string) (T, error)
	list   func(ctx context.Context, s store.Store, f listFilter) ([]T, error)
	create func(ctx context.Context, s store.Store, v T) error
	update func(ctx context.Context, s store.Store, v T) error
	// delete may refuse with an API error of its own (a portgroup with
	// ports).
	delete func(ctx context.Context, s store.Store, id string) error
}

// writeCtx is what a document is checked with: the request's
// microversion, and whether it creates an item (or patches one).
type writeCtx struct {
	minor  int
	create bool
	doc    map[string]any // a create's document
	ops    []patchOp      // a PATCH's operations
}

// listFilter selects a list's items.
type listFilter struct {
	page            store.Page
	node, portgroup string
	address         string
}

// clonePtr is a shallow copy of *v: what a PATCH starts from.
func clonePtr[E any](v *E) *E {
	n := *v
	return &n
}

// fieldMinOf gives every named field the same microversion.
func fieldMinOf(minor int, names ...string) map[string]int {
	m := map[string]int{}
	for _, n := range names {
		m[n] = minor
	}
	return m
}

// viewField is one field of a table-driven view: its name, the version
// it appeared in and how it is written.
type viewField[T any] struct {
	name  string
	min   int
	write func(b []byte, v T) []byte
}

// tableView is a view that writes table's fields in order; hideBelow: a
// field is not shown below its version (else it is, at every version).
func tableView[T any](table []viewField[T], hideBelow bool) func(o *objWriter, v T, fs fieldSet, minor int) {
	return func(o *objWriter, v T, fs fieldSet, minor int) {
		for i := range table {
			f := &table[i]
			if (hideBelow && minor < f.min) || !fs.want(f.name) {
				continue
			}
			o.key(f.name)
			o.b = f.write(o.b, v)
		}
	}
}

// tableFieldMin is table's field → version map (what ?fields= may ask).
func tableFieldMin[T any](table []viewField[T]) map[string]int {
	m := map[string]int{}
	for _, f := range table {
		m[f.name] = f.min
	}
	return m
}

// checkDocKinds checks a port or portgroup document as Ironic's WSME
// types do: every attribute known to schema (what names the body), the
// mandatory ones given and not null, and each of the right kind.
func checkDocKinds(doc map[string]any, schema map[string]fieldKind, what string, mandatory ...string) error {
	for k := range doc {
		if _, ok := schema[k]; !ok {
			return badRequest("Unknown attribute for argument %s: %s", what, k)
		}
	}
	for _, k := range mandatory {
		if v, ok := doc[k]; !ok || v == nil {
			return invalidInput(k, nil, "Mandatory field missing.")
		}
	}
	for _, k := range slices.Sorted(mapsKeys(doc)) {
		v := doc[k]
		switch schema[k] {
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
	return nil
}

// patchOnly drops from a patched document the fields a PATCH may not
// change that its schema does not have.
func patchOnly(doc map[string]any, w writeCtx, fields ...string) {
	if !w.create {
		for _, f := range fields {
			delete(doc, f)
		}
	}
}

func appendStamps(o *objWriter, created time.Time, updated *time.Time, fs fieldSet) {
	if fs.want("created_at") {
		o.key("created_at")
		o.b = appendTime(o.b, created)
	}
	if fs.want("updated_at") {
		o.key("updated_at")
		o.b = appendNullTime(o.b, updated)
	}
}

func (r *resource[T]) notFound(id string) *apiError {
	return notFound("%s%s %s could not be found.", strings.ToUpper(r.noun[:1]), r.noun[1:], id)
}

func (r *resource[T]) uuidConflict(v T) *apiError {
	return conflict("A %s with UUID %s already exists.", r.noun, r.uuid(v))
}

// storeConflict words a store conflict on v.
func (r *resource[T]) storeConflict(ctx context.Context, tx store.Store, v T) error {
	if r.conflict == nil {
		return r.uuidConflict(v)
	}
	return r.conflict(ctx, tx, v)
}

func (r *resource[T]) appendOne(b []byte, v T, minor int, base string, fs fieldSet) []byte {
	o := newObj(b)
	r.view(&o, v, fs, minor)
	o.key("links")
	o.b = appendLinks(o.b, base, r.path, r.uuid(v))
	if fs == nil {
		for _, sub := range r.subLinks {
			o.key(sub)
			o.b = appendSubLinks(o.b, base, r.path, r.uuid(v), "/"+sub)
		}
	}
	return o.end()
}

// ident checks the identifier path segment.
func (r *resource[T]) ident(rq *request) (string, error) {
	id := rq.r.PathValue(r.wildcard)
	switch {
	case !isUUIDLike(id) && r.byName:
		return id, nil
	case !isUUIDLike(id):
		return "", invalidInput(r.idField, id, "Expected a UUID but received "+id+".")
	case r.asWritten:
		return id, nil
	}
	return canonicalUUID(id), nil
}

// target checks a request for one item, its microversion and query
// (allowed are the arguments it may have), and returns the item's
// identifier.
func (r *resource[T]) target(rq *request, allowed ...string) (string, args, error) {
	if rq.minor < r.minVersion {
		return "", args{}, resourceNotFound()
	}
	a, err := rq.queryArgs(allowed...)
	if err != nil {
		return "", args{}, err
	}
	id, err := r.ident(rq)
	if err != nil {
		return "", args{}, err
	}
	return id, a, nil
}

func (r *resource[T]) lookup(ctx context.Context, tx store.Store, id string) (T, error) {
	key := id
	switch {
	case isUUIDLike(id) && !r.exactKey:
		key = canonicalUUID(id)
	case r.badName != nil:
		// a name, or a UUID taken as written (which passes as a name)
		if err := r.badName(id); err != nil {
			var zero T
			return zero, err
		}
	}
	v, err := r.get(ctx, tx, key)
	if err != nil {
		var zero T
		if errors.Is(err, store.ErrNotFound) {
			return zero, r.notFound(id)
		}
		return zero, err
	}
	return v, nil
}

// within runs fn where changes to v are made: under the lock of v's node,
// which it is given, or in a transaction (node nil).
func (r *resource[T]) within(ctx context.Context, s *server, v T, fn func(ctx context.Context, tx store.Store, n *baremetal.Node) error) error {
	if r.node != nil {
		return s.cond.WithNodeLock(ctx, r.node(v), fn)
	}
	return s.store.InTx(ctx, func(tx store.Store) error { return fn(ctx, tx, nil) })
}

// listHandler serves GET /v1/<path>[/detail] and, for a node's resources,
// /v1/nodes/{node}/<path>[/detail].
func (r *resource[T]) listHandler(s *server, detailPath bool) func(*request) error {
	return func(rq *request) error {
		if rq.minor < r.minVersion || (rq.r.PathValue("node") != "" && rq.minor < r.nodeListMin) ||
			(rq.r.PathValue("portgroup") != "" && rq.minor < r.portgroupListMin) {
			return resourceNotFound()
		}
		allowed := []string{"marker", "limit", "sort_key", "sort_dir"}
		if !detailPath {
			allowed = append(allowed, "fields", "detail")
		}
		if r.node != nil {
			allowed = append(allowed, "node")
		}
		allowed = append(allowed, r.listArgs...)
		a, err := rq.queryArgs(allowed...)
		if err != nil {
			return err
		}
		p, err := s.paging(a, r.invalidSort, false)
		if err != nil {
			return err
		}
		if err := rq.sortAndFields(a, &p, r.fieldMin, r.defaults, detailPath); err != nil {
			return err
		}
		if err := rq.checkSortColumn(p.sortKey, r.sortColumns); err != nil {
			return err
		}
		var f listFilter
		resource := r.path
		switch {
		case r.filter != nil:
			f, resource, err = r.filter(rq, s, a)
		case r.node != nil:
			f, resource, err = nodeFilter(rq, s, a, r.path, false)
		}
		if err != nil {
			return err
		}
		f.page = p.page
		if err := checkMarker(rq.ctx(), p.page.Marker, func(ctx context.Context, id string) (T, error) {
			return r.get(ctx, s.store, id)
		}, r.notFound); err != nil {
			return err
		}
		var keep func(T) bool
		if r.own != nil {
			if keep, err = r.own(rq, s); err != nil {
				return err
			}
			if keep != nil {
				f.page.Limit = 0
			}
		}
		items, err := r.list(rq.ctx(), s.store, f)
		if err != nil {
			return err
		}
		if keep != nil {
			items = slices.DeleteFunc(items, func(v T) bool { return !keep(v) })
			if len(items) > p.limit {
				items = items[:p.limit]
			}
		}
		fs := newFieldSet(p.fields)
		js := rq.streamJSON(http.StatusOK)
		js.whole = r.buffered
		js.b = append(js.b, `{"`...)
		js.b = append(js.b, r.key...)
		js.b = append(js.b, `": [`...)
		for i, v := range items {
			if i > 0 {
				js.b = append(js.b, ", "...)
			}
			js.b = r.appendOne(js.b, v, rq.minor, rq.base, fs)
			js.flush()
		}
		js.b = append(js.b, ']')
		var last string
		if len(items) > 0 {
			last = r.uuid(items[len(items)-1])
		}
		if detailPath {
			resource += "/detail"
		}
		extra := a.filters("limit", "marker", "sort_key", "sort_dir", "fields", "detail")
		js.b = appendListEnd(js.b, rq.nextLink(resource, p, len(items), last, extra...))
		return js.end()
	}
}

// nodeFilter is a list's filter on the node of ?node= or of the path,
// and the collection's path (below /v1). Both given is a 403, unless
// parentWins (then the path's node is used).
func nodeFilter(rq *request, s *server, a args, path string, parentWins bool) (listFilter, string, error) {
	var f listFilter
	nodeIdent := a.str("node")
	if parent := rq.r.PathValue("node"); parent != "" {
		if nodeIdent != "" && !parentWins {
			return f, "", newError(http.StatusForbidden, "Operation not permitted.")
		}
		nodeIdent = parent
		path = "nodes/" + parent + "/" + path
	}
	if nodeIdent != "" {
		n, err := s.lookupNode(rq.ctx(), s.store, nodeIdent, rq.minor)
		if err != nil {
			return f, "", err
		}
		f.node = n.UUID
	}
	return f, path, nil
}

// getHandler serves GET /v1/<path>/{id}.
func (r *resource[T]) getHandler(s *server) func(*request) error {
	return func(rq *request) error {
		id, a, err := r.target(rq, "fields")
		if err != nil {
			return err
		}
		v, err := r.lookup(rq.ctx(), s.store, id)
		if err != nil {
			return err
		}
		fields, err := rq.itemFields(a, r.fieldMin)
		if err != nil {
			return err
		}
		return rq.writeJSON(http.StatusOK, r.appendOne(make([]byte, 0, 512), v, rq.minor, rq.base, newFieldSet(fields)))
	}
}

// createHandler serves POST /v1/<path>.
func (r *resource[T]) createHandler(s *server) func(*request) error {
	return func(rq *request) error {
		if rq.minor < r.minVersion {
			return resourceNotFound()
		}
		doc, err := rq.createBody(r.what)
		if err != nil {
			return err
		}
		v := r.newT()
		w := writeCtx{minor: rq.minor, create: true, doc: doc}
		if err := r.check(doc, v, w); err != nil {
			return err
		}
		id, err := docUUID(doc)
		if err != nil {
			return err
		}
		if id == "" {
			id = uuid.NewString()
		}
		r.setNew(v, id, s.now().UTC())
		if r.node != nil {
			// Before the lock, which would wait for a node that is not there.
			if _, err := s.store.GetNode(rq.ctx(), r.node(v)); err != nil {
				if errors.Is(err, store.ErrNotFound) {
					return badRequest("Node %s could not be found.", r.node(v))
				}
				return err
			}
		}
		err = r.within(rq.ctx(), s, v, func(ctx context.Context, tx store.Store, n *baremetal.Node) error {
			if r.precheck != nil {
				var none T
				if err := r.precheck(ctx, tx, n, v, none, w); err != nil {
					return err
				}
			}
			if _, err := r.get(ctx, tx, id); err == nil {
				return r.uuidConflict(v)
			}
			if err := r.create(ctx, tx, v); err != nil {
				if errors.Is(err, store.ErrConflict) {
					return r.storeConflict(ctx, tx, v)
				}
				return err
			}
			return nil
		})
		if err != nil {
			if r.node != nil && errors.Is(err, store.ErrNotFound) && !isAPIError(err) {
				return badRequest("Node %s could not be found.", r.node(v))
			}
			return err
		}
		if v, err = r.stored(rq.ctx(), s, v); err != nil {
			return err
		}
		rq.location(r.path + "/" + id)
		return rq.writeJSON(http.StatusCreated, r.appendOne(make([]byte, 0, 512), v, rq.minor, rq.base, nil))
	}
}

// stored is v as the store has it after a write, when the description
// asks for that (reread), else v.
func (r *resource[T]) stored(ctx context.Context, s *server, v T) (T, error) {
	if !r.reread {
		return v, nil
	}
	return r.get(ctx, s.store, r.uuid(v))
}

// docUUID is the UUID a create document asks for, in canonical form; ""
// when it asks for none.
func docUUID(doc map[string]any) (string, error) {
	id := strField(doc["uuid"])
	if id == "" {
		return "", nil
	}
	if !isUUIDLike(id) {
		return "", invalidInput("uuid", id, "Expected a UUID but received "+id+".")
	}
	return canonicalUUID(id), nil
}

// mustBePoweredOff is the conductor's check before a resource of a node
// changes or goes.
func mustBePoweredOff(n *baremetal.Node, action string) error {
	if n.PowerState != baremetal.PowerOff {
		return invalidStateRequested(action, n.UUID, n.PowerState)
	}
	return nil
}

// patchHandler serves PATCH /v1/<path>/{id}.
func (r *resource[T]) patchHandler(s *server) func(*request) error {
	return func(rq *request) error {
		id, _, err := r.target(rq)
		if err != nil {
			return err
		}
		ops, err := rq.readPatch()
		if err != nil {
			return err
		}
		for _, op := range ops {
			if slices.Contains(r.internal, op.top()) {
				return badRequest("'%s' is an internal attribute and can not be updated", op.Path)
			}
			if op.Op == "remove" && slices.Contains(r.mandatory, op.top()) && op.Path == "/"+op.top() {
				return badRequest("'%s' is a mandatory attribute and can not be removed", op.Path)
			}
		}
		if r.patchGate != nil {
			if err := r.patchGate(rq, ops); err != nil {
				return err
			}
		}
		// The UUID is internal: the patched document keeps the old one.
		compute := func(old T) (T, error) {
			var zero T
			doc, err := applyPatch(r.doc(old), ops)
			if err != nil {
				return zero, err
			}
			delete(doc, "uuid")
			nv := r.clone(old)
			if err := r.check(doc, nv, writeCtx{minor: rq.minor, ops: ops}); err != nil {
				return zero, err
			}
			return nv, nil
		}
		// Checked before the lock is taken, so a bad patch waits for none.
		cur, err := r.lookup(rq.ctx(), s.store, id)
		if err != nil {
			return err
		}
		if _, err := compute(cur); err != nil {
			return err
		}
		var out T
		err = r.within(rq.ctx(), s, cur, func(ctx context.Context, tx store.Store, n *baremetal.Node) error {
			old, err := r.lookup(ctx, tx, id)
			if err != nil {
				return err
			}
			nv, err := compute(old)
			if err != nil {
				return err
			}
			if r.node != nil {
				if !r.anyPower {
					if err := mustBePoweredOff(n, r.noun+" update"); err != nil {
						return err
					}
				}
				if r.node(nv) != r.node(old) {
					if _, err := tx.GetNode(ctx, r.node(nv)); err != nil {
						if errors.Is(err, store.ErrNotFound) {
							return badRequest("Node %s could not be found.", r.node(nv))
						}
						return err
					}
				}
			}
			if r.precheck != nil {
				if err := r.precheck(ctx, tx, n, nv, old, writeCtx{minor: rq.minor, ops: ops}); err != nil {
					return err
				}
			}
			if err := r.update(ctx, tx, nv); err != nil {
				if errors.Is(err, store.ErrConflict) {
					return r.storeConflict(ctx, tx, nv)
				}
				return err
			}
			out = nv
			return nil
		})
		if err != nil {
			if errors.Is(err, store.ErrNotFound) && !isAPIError(err) {
				return r.notFound(id)
			}
			return err
		}
		if out, err = r.stored(rq.ctx(), s, out); err != nil {
			return err
		}
		return rq.writeJSON(http.StatusOK, r.appendOne(make([]byte, 0, 512), out, rq.minor, rq.base, nil))
	}
}

// deleteHandler serves DELETE /v1/<path>/{id}.
func (r *resource[T]) deleteHandler(s *server) func(*request) error {
	return func(rq *request) error {
		id, _, err := r.target(rq)
		if err != nil {
			return err
		}
		cur, err := r.lookup(rq.ctx(), s.store, id)
		if err != nil {
			return err
		}
		err = r.within(rq.ctx(), s, cur, func(ctx context.Context, tx store.Store, n *baremetal.Node) error {
			if r.node != nil && !r.anyPower {
				if err := mustBePoweredOff(n, r.noun+" deletion"); err != nil {
					return err
				}
			}
			if err := r.delete(ctx, tx, r.uuid(cur)); err != nil {
				switch {
				case errors.Is(err, store.ErrNotFound):
					return r.notFound(id)
				case errors.Is(err, store.ErrConflict) && r.inUse != nil:
					return r.inUse(id)
				}
				return err
			}
			return nil
		})
		if err != nil {
			if errors.Is(err, store.ErrNotFound) && !isAPIError(err) {
				return r.notFound(id)
			}
			return err
		}
		return rq.writeEmpty(http.StatusNoContent)
	}
}

// routes registers the resource's endpoints.
func (r *resource[T]) routes(s *server) {
	base := "/v1/" + r.path
	item := base + "/{" + r.wildcard + "}"
	s.handle("GET "+base, r.listHandler(s, false))
	s.handle("GET "+base+"/{$}", r.listHandler(s, false))
	s.handle("GET "+base+"/detail", r.listHandler(s, true))
	s.handle("POST "+base, r.createHandler(s))
	s.handle("GET "+item, r.getHandler(s))
	s.handle("PATCH "+item, r.patchHandler(s))
	s.handle("DELETE "+item, r.deleteHandler(s))
	if r.node != nil {
		s.handle("GET /v1/nodes/{node}/"+r.path, r.listHandler(s, false))
		s.handle("GET /v1/nodes/{node}/"+r.path+"/detail", r.listHandler(s, true))
	}
	if r.portgroupListMin > 0 {
		s.handle("GET /v1/portgroups/{portgroup}/"+r.path, r.listHandler(s, false))
		s.handle("GET /v1/portgroups/{portgroup}/"+r.path+"/detail", r.listHandler(s, true))
	}
}
