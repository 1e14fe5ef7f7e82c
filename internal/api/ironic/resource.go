package ironic

// A resource of the API (nodes, ports, portgroups, chassis, allocations,
// deploy templates, volume connectors and targets) is a description, not a
// handler: one resource[E, F] value says what the resource's list, show,
// create, PATCH and delete steps need, and those steps (below) are the
// same for every resource. Where a resource truly differs from them, the
// difference is a field of the description with its reason beside it
// (listChecks, fieldError, tooOld, find, fieldsBeforeLookup, showBelow,
// ownWrites, …), and resource_test.go shows each.
//
// What a microversion adds is a row:
//
//   - A field: a viewField row in the resource's table, with the version
//     it appeared in (node_view.go's nodeFields, ports.go's portFields, …).
//     Below that version the field is not shown, ?fields= may not name it
//     and a list may not sort by it (406), and a write that sets it is
//     refused (406: nodes' rejectNewerFields and PATCH gate, the others'
//     gatedWrites), all derived from the row:
//
//	{"name", v88PortName, nullStrOf(func(p *baremetal.Port) string { return p.Name })},
//
//     A field a client may write is also a row of the resource's schema
//     (nodes: a nodeWrites row in node_write.go, from which the create and
//     PATCH schemas, the PATCH document and fillNode derive; ports: the
//     schema, portDoc and checkPortDoc).
//
//   - A filter: a listParam row with the query parameter's name, its
//     version and what the value does to the store's filter (q.f) or,
//     for what the store cannot filter, a test of each item (q.where);
//     nodes.go's nodeListParams:
//
//	{name: "parent_node", min: v83ParentNode, read: setNodeString(func(f *store.NodeFilter) *string { return &f.ParentNode })},
//
//   - A sort key: a column in sortkeys.go's table of the resource, with
//     the version of its field.
//
//   - A sub-resource link of the full view: a subLink row (name, version);
//     another collection that lists the resource: a parentList row.
//
//   - A resource: a resource[E, F] value given to describe (ports.go is a
//     complete example, chassis.go a short one) and its routes() call in
//     routes.go.
//
// test/apicompare then shows that nothing else changed.

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/ferrometal/ferro/internal/auth"
	"github.com/ferrometal/ferro/internal/baremetal"
	"github.com/ferrometal/ferro/internal/store"
)

// resource describes one REST resource whose items are rows of a table;
// *E is the item, F the store's list filter.
type resource[E, F any] struct {
	path string // below /v1: "chassis", "volume/connectors"; the links' resource
	noun string // "volume connector", for messages
	// key is the list's key ("connectors"; path when empty), what the
	// body's name in schema errors ("connector"; the noun's words joined by
	// _ when empty), wildcard the route's name for the identifier
	// ("volume"; what when empty).
	key, what, wildcard string
	// minVersion is the microversion the resource appeared in: below it
	// every route answers tooOld's error (404 when nil).
	minVersion int
	tooOld     func(rq *request) error

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
	// jsonSuffix: below 1.91 an item not found under the identifier whose
	// .json the request lost is looked for with it (Ironic's
	// get_rpc_*_with_suffix: nodes, portgroups, allocations, templates).
	jsonSuffix bool
	// badName, when set, refuses a name (an identifier that is not a
	// UUID) before it is looked up.
	badName func(name string) error
	// find, when set, replaces the generic lookup: a node's name is an
	// identifier only from 1.5 (lookupNode).
	find func(ctx context.Context, tx store.Store, ident string, minor int) (*E, error)
	// fieldsBeforeLookup: a show checks ?fields= before it looks the item
	// up, so that a bad field is a 400 even for an item that is not there
	// (allocations).
	fieldsBeforeLookup bool

	// fields is the view, in order, each field with its version.
	fields []viewField[*E]
	// showBelow: fields shown below their version too (only ?fields=
	// and sorting are gated): Ironic 21.4's portgroups show mode and
	// properties at every version.
	showBelow []string
	// subLinks are the sub-resources a full view links to: "nodes".
	subLinks []subLink
	defaults []string // a list's fields when fields is not given
	// fieldError words an unknown name in ?fields= (nil: Ironic's common
	// 'Field(s) "x" are not valid').
	fieldError func(name string) *apiError
	// unknownBelow: ?fields= naming a field newer than the request is a
	// field that is not there (400), not a 406: Ironic's runbook view
	// simply lacks its 1.112 fields below 1.112.
	unknownBelow bool

	invalidSort []string
	sortColumns sortColumns // what Ironic sorts on (sortkeys.go); nil: the store decides
	// listChecks is the order a list checks its sort key and fields in
	// (nil: defaultListChecks): the first error found is the answer, and
	// Ironic's controllers differ.
	listChecks []listCheck
	// noDetail: the list has neither ?detail= nor /detail (allocations).
	noDetail bool
	// volumeDetail: ?detail= as Ironic's volume controllers take it
	// (returnFieldsOf).
	volumeDetail bool
	// params are the list's filters, in the order they are checked.
	params []listParam[E, F]
	// resolve, when set, runs after params: for filters that decide
	// together (a port's node, portgroup or address, the path's parent).
	resolve func(q *listQuery[E, F]) error
	// parents are the other collections that list the resource:
	// "nodes/{node}" for ports, from a version.
	parents []parentList
	// own, when set, is the policy's scope of a list: nil keep for all
	// items, else only those keep accepts (read whole, then cut to the
	// page).
	own func(rq *request, s *server) (keep func(v *E) bool, err error)
	// buffered: a list is sent in one piece (with a Content-Length) however
	// long, not streamed.
	buffered bool
	// memo, when set, is where an item read for rendering only keeps its
	// rendered full views (nil: nowhere), and live names the field
	// rendered anew into a kept view every time (viewMemo).
	memo func(v *E) *baremetal.Memo
	live string

	internal  []string // what a PATCH may not touch
	mandatory []string // what a PATCH may not remove

	// ownWrites: create, PATCH and delete are the resource's own handlers,
	// registered in routes.go, not the generic steps below: a node's
	// writes run through its state machine, driver interfaces and lock,
	// an allocation's through the conductor, which picks its node.
	ownWrites bool
	// doc is v as the document a PATCH applies to; check validates a
	// created or patched document and fills v from it, but for the UUID
	// (docUUID's, set by setNew).
	doc   func(v *E) map[string]any
	check func(doc map[string]any, v *E, w writeCtx) error
	// prepare, when set, rewrites a create's document before check, with
	// the store at hand: a port's node_ident (1.94) becomes its node_uuid.
	prepare func(rq *request, s *server, doc map[string]any) error
	uuid    func(v *E) string
	// setNew gives a new v its UUID and creation time.
	setNew func(v *E, id string, now time.Time)
	// node is the node v belongs to, nil for resources that belong to
	// none: a node's resources change under its lock, only while it is
	// powered off (unless anyPower).
	node     func(v *E) string
	anyPower bool
	// precheck runs before a create or update is written, in its
	// transaction, with the node (locked) and the item before (nil on
	// create): duplicates found here get precise messages.
	precheck func(ctx context.Context, tx store.Store, n *baremetal.Node, v, old *E, w writeCtx) error
	// patchGate refuses a PATCH before the item is read (fields the
	// microversion does not have).
	patchGate func(rq *request, ops []patchOp) error
	// itemCheck, when set, runs on the item a GET, PATCH (ops) or DELETE
	// has read, before anything else is done with it: the route's rule
	// against the item's own owner (check_runbook_policy_and_retrieve).
	itemCheck func(rq *request, v *E, ops []patchOp) error
	// reread: a create or PATCH answers with the item as stored, not as
	// written (the store fills in defaults and timestamps).
	reread bool
	// conflict words a store conflict other than a taken UUID, inUse a
	// refused delete; nil when the store cannot answer either.
	conflict func(ctx context.Context, tx store.Store, v *E) error
	inUse    func(id string) *apiError

	storeOps[E, F]
	// page is the page of a list filter.
	page func(f *F) *store.Page

	// Derived by describe.
	fieldMin map[string]int
	prefixes []string // `"name": ` of each field
}

// storeOps are the store's methods for a resource, receiver first so that
// method expressions (store.Store.GetPort) are them: get reads an item,
// list a page of them, delete may refuse with an API error of its own (a
// portgroup with ports).
type storeOps[E, F any] struct {
	get    func(s store.Store, ctx context.Context, id string) (*E, error)
	list   func(s store.Store, ctx context.Context, f F) ([]*E, error)
	create func(s store.Store, ctx context.Context, v *E) error
	update func(s store.Store, ctx context.Context, v *E) error
	delete func(s store.Store, ctx context.Context, id string) error
}

// pageOf is a list filter that is a page alone.
func pageOf(p *store.Page) *store.Page { return p }

// describe completes a description: the tables derived from its rows. A
// description is invalid (and the program does not start) when two of its
// fields share a name.
func describe[E, F any](r *resource[E, F]) *resource[E, F] {
	if r.key == "" {
		r.key = r.path
	}
	if r.what == "" {
		r.what = strings.ReplaceAll(r.noun, " ", "_")
	}
	if r.wildcard == "" {
		r.wildcard = r.what
	}
	r.fieldMin = make(map[string]int, len(r.fields))
	r.prefixes = make([]string, len(r.fields))
	for i, f := range r.fields {
		if _, dup := r.fieldMin[f.name]; dup {
			panic(fmt.Sprintf("resource %s: field %s twice", r.path, f.name))
		}
		r.fieldMin[f.name] = f.min
		r.prefixes[i] = `"` + f.name + `": `
	}
	if r.listChecks == nil {
		r.listChecks = defaultListChecks
	}
	return r
}

// viewField is one field of a resource's view: its name, the version it
// appeared in and how its value is written.
type viewField[T any] struct {
	name  string
	min   int
	write func(b []byte, v T, rc *renderCtx) []byte
}

// subLink is a sub-resource a full view links to, from a version.
type subLink struct {
	name string
	min  int
}

// parentList is another collection that lists the resource, below /v1
// ("nodes/{node}"), from a version.
type parentList struct {
	path string
	min  int
}

// listCheck is one of the checks of a list's sort key and fields.
type listCheck int

const (
	checkSortField  listCheck = iota // a sort key on a field newer than the request: 406
	checkFields                      // ?fields= and ?detail= (a /detail list has every field)
	checkSortColumn                  // a sort key that is no column of the model: 400
)

var defaultListChecks = []listCheck{checkSortField, checkFields, checkSortColumn}

// listParam is one filter of a list: a query parameter, the version it
// appeared in and what it does to the query. Below min a request that
// gives it is refused with 406.
type listParam[E, F any] struct {
	name string
	min  int
	// plain406: the 406 does not name the minimal version (most filters'
	// does, as Ironic's check_allow_filter_by_* words it).
	plain406 bool
	// ifSet: the version is checked only when the value is not empty.
	ifSet bool
	// valueFirst: read runs (and may refuse the value) before the version
	// is checked.
	valueFirst bool
	// always: read runs without the parameter too (given false): for a
	// parent in the path and for the policy's scope. A row without a name
	// is always and names no parameter.
	always bool
	// read applies the value; nil when resolve does (the parameter is
	// only accepted here).
	read func(q *listQuery[E, F], v string, given bool) error
}

// listQuery is a list request as its parameters are read.
type listQuery[E, F any] struct {
	rq   *request
	s    *server
	rc   *renderCtx
	args args
	f    F // what the store is asked
	// keep are the tests the store cannot run: the whole list is read and
	// cut to the page after them.
	keep []func(*E) bool
	path string // the collection's path below /v1, for the next link
}

// where adds a test the store cannot run.
func (q *listQuery[E, F]) where(keep func(*E) bool) { q.keep = append(q.keep, keep) }

// setString is a read that stores the value in a field of the store's
// filter.
func setString[E, F any](field func(f *F) *string) func(q *listQuery[E, F], v string, given bool) error {
	return func(q *listQuery[E, F], v string, _ bool) error {
		*field(&q.f) = v
		return nil
	}
}

// setBool is a read that stores a boolean value (oslo's strict
// bool_from_string) in a field of the store's filter.
func setBool[E, F any](name string, field func(f *F) **bool) func(q *listQuery[E, F], v string, given bool) error {
	return func(q *listQuery[E, F], v string, _ bool) (err error) {
		*field(&q.f), err = boolArg(name, v)
		return err
	}
}

// apply checks and reads one parameter.
func (p *listParam[E, F]) apply(q *listQuery[E, F]) error {
	var v string
	var given bool
	if p.name != "" {
		v, given = q.args.optStr(p.name)
	}
	if !given {
		if (p.always || p.name == "") && p.read != nil {
			return p.read(q, v, false)
		}
		return nil
	}
	if p.valueFirst && p.read != nil {
		if err := p.read(q, v, true); err != nil {
			return err
		}
	}
	if q.rq.minor < p.min && (!p.ifSet || v != "") {
		if p.plain406 {
			return notAcceptable()
		}
		return notAcceptableMin(p.min)
	}
	if p.valueFirst || p.read == nil {
		return nil
	}
	return p.read(q, v, true)
}

// writeCtx is what a document is checked with: the request's
// microversion, and whether it creates an item (or patches one).
type writeCtx struct {
	minor  int
	create bool
	creds  *auth.Credentials // the caller, nil without an auth layer
	doc    map[string]any    // a create's document
	ops    []patchOp         // a PATCH's operations
}

// gatedWrites are the fields of a table a client may write (in schema)
// that appeared after the first version: a version below theirs may not
// set them.
func gatedWrites[T any](fields []viewField[T], schema map[string]fieldKind) map[string]int {
	m := map[string]int{}
	for _, f := range fields {
		if _, writable := schema[f.name]; writable && f.min > 0 {
			m[f.name] = f.min
		}
	}
	return m
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

func (r *resource[E, F]) notFound(id string) *apiError {
	return notFound("%s%s %s could not be found.", strings.ToUpper(r.noun[:1]), r.noun[1:], id)
}

func (r *resource[E, F]) uuidConflict(v *E) *apiError {
	return conflict("A %s with UUID %s already exists.", r.noun, r.uuid(v))
}

// storeConflict words a store conflict on v.
func (r *resource[E, F]) storeConflict(ctx context.Context, tx store.Store, v *E) error {
	if r.conflict == nil {
		return r.uuidConflict(v)
	}
	return r.conflict(ctx, tx, v)
}

// appendOne appends v's view: the fields fs selects (nil: all, and the
// sub-resource links) that the version has, and the links.
func (r *resource[E, F]) appendOne(b []byte, v *E, rc *renderCtx, fs fieldSet) []byte {
	if r.memo != nil && fs == nil && !rc.fieldChecks {
		if m := r.memo(v); m != nil {
			return r.appendMemo(b, m, v, rc)
		}
	}
	b, _, _ = r.appendView(b, v, rc, fs)
	return b
}

// appendView is appendOne without the memo; [live, liveEnd) is where the
// value of the field r.live is in the bytes appended (0, 0: nowhere).
func (r *resource[E, F]) appendView(b []byte, v *E, rc *renderCtx, fs fieldSet) (out []byte, live, liveEnd int) {
	start := len(b)
	o := newObj(b)
	for i := range r.fields {
		f := &r.fields[i]
		if (rc.minor < f.min && !slices.Contains(r.showBelow, f.name)) || !fs.want(f.name) {
			continue
		}
		o.keyed(r.prefixes[i])
		at := len(o.b)
		o.b = f.write(o.b, v, rc)
		if f.name == r.live && r.live != "" {
			live, liveEnd = at-start, len(o.b)-start
		}
	}
	// Up to ten hrefs share two prefixes: escape base and UUID once.
	var buf [192]byte
	id := r.uuid(v)
	self := append(append(appendURLPart(buf[:0], rc.base), "/v1/"...), r.path...)
	self = appendURLPart(append(self, '/'), id)
	mark := append(append(appendURLPart(self, rc.base), '/'), r.path...)
	mark = appendURLPart(append(mark, '/'), id)
	self, mark = self[:len(self):len(self)], mark[len(self):]
	o.key("links")
	o.b = appendLinkPair(o.b, self, mark, "")
	if fs == nil {
		for _, sub := range r.subLinks {
			if rc.minor >= sub.min {
				o.key(sub.name)
				o.b = appendLinkPair(o.b, self, mark, "/"+sub.name)
			}
		}
	}
	return o.end(), live, liveEnd
}

// versionCheck refuses a request below the resource's version.
func (r *resource[E, F]) versionCheck(rq *request) error {
	if rq.minor >= r.minVersion {
		return nil
	}
	if r.tooOld != nil {
		return r.tooOld(rq)
	}
	return resourceNotFound()
}

// checkFields validates a fields parameter against the table: an unknown
// field is a 400, a field above the request's version a 406.
func (r *resource[E, F]) checkFields(fields []string, minor int) error {
	for _, f := range fields {
		if m, ok := r.fieldMin[f]; !ok || (r.unknownBelow && minor < m) {
			if r.fieldError != nil {
				return r.fieldError(f)
			}
			return badRequest("Field(s) \"%s\" are not valid", f)
		}
	}
	for _, f := range fields {
		if minor < r.fieldMin[f] {
			return notAcceptable()
		}
	}
	return nil
}

// itemFields is the fields argument of a GET of one item (1.8), checked
// against the table; nil when absent.
func (r *resource[E, F]) itemFields(rq *request, a args) ([]string, error) {
	fields, err := rq.fieldsArg(a)
	if err != nil || fields == nil {
		return nil, err
	}
	return fields, r.checkFields(fields, rq.minor)
}

// listFields runs the list's checks of its sort key and fields, in the
// resource's order.
func (r *resource[E, F]) listFields(rq *request, a args, p *listParams, detailPath bool) error {
	for _, c := range r.listChecks {
		switch c {
		case checkSortField:
			if m, ok := r.fieldMin[p.sortKey]; ok && rq.minor < m {
				return notAcceptable()
			}
		case checkFields:
			if detailPath {
				p.fields = nil
				continue
			}
			if err := rq.returnFieldsOf(a, p, r.defaults, r.volumeDetail); err != nil {
				return err
			}
			if p.fieldsGiven {
				if err := r.checkFields(p.fields, rq.minor); err != nil {
					return err
				}
			}
		case checkSortColumn:
			if err := rq.checkSortColumn(p.sortKey, r.sortColumns); err != nil {
				return err
			}
		}
	}
	return nil
}

// ident checks the identifier path segment.
func (r *resource[E, F]) ident(rq *request) (string, error) {
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
func (r *resource[E, F]) target(rq *request, allowed ...string) (string, args, error) {
	if err := r.versionCheck(rq); err != nil {
		return "", args{}, err
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

// lookup reads the item id names, as the request's version identifies
// items.
func (r *resource[E, F]) lookup(ctx context.Context, tx store.Store, id string, minor int) (*E, error) {
	if r.jsonSuffix {
		return withJSONSuffix(ctx, id, func(id string) (*E, error) { return r.lookupOne(ctx, tx, id, minor) })
	}
	return r.lookupOne(ctx, tx, id, minor)
}

// lookupOne is lookup of one identifier, as written.
func (r *resource[E, F]) lookupOne(ctx context.Context, tx store.Store, id string, minor int) (*E, error) {
	if r.find != nil {
		return r.find(ctx, tx, id, minor)
	}
	key := id
	switch {
	case isUUIDLike(id) && !r.exactKey:
		key = canonicalUUID(id)
	case r.badName != nil:
		// a name, or a UUID taken as written (which passes as a name)
		if err := r.badName(id); err != nil {
			var zero *E
			return zero, err
		}
	}
	v, err := r.get(tx, ctx, key)
	if err != nil {
		var zero *E
		if errors.Is(err, store.ErrNotFound) {
			return zero, r.notFound(id)
		}
		return zero, err
	}
	return v, nil
}

// within runs fn where changes to v are made: under the lock of v's node,
// which it is given, or in a transaction (node nil).
func (r *resource[E, F]) within(ctx context.Context, s *server, v *E, fn func(ctx context.Context, tx store.Store, n *baremetal.Node) error) error {
	if r.node != nil {
		return s.cond.WithNodeLock(ctx, r.node(v), fn)
	}
	return s.store.InTx(ctx, func(tx store.Store) error { return fn(ctx, tx, nil) })
}

// listHandler serves GET /v1/<path>[/detail] and the same below a parent
// collection (from parentMin).
func (r *resource[E, F]) listHandler(s *server, detailPath bool, parentMin int) func(*request) error {
	allowed := []string{"marker", "limit", "sort_key", "sort_dir"}
	if !detailPath {
		allowed = append(allowed, "fields")
		if !r.noDetail {
			allowed = append(allowed, "detail")
		}
	}
	for _, p := range r.params {
		if p.name != "" {
			allowed = append(allowed, p.name)
		}
	}
	return func(rq *request) error {
		if err := r.versionCheck(rq); err != nil {
			return err
		}
		if rq.minor < parentMin {
			return resourceNotFound()
		}
		a, err := rq.queryArgs(allowed...)
		if err != nil {
			return err
		}
		p, err := s.paging(a, r.invalidSort, false)
		if err != nil {
			return err
		}
		if err := r.listFields(rq, a, &p, detailPath); err != nil {
			return err
		}
		q := &listQuery[E, F]{rq: rq, s: s, rc: rq.render(s), args: a, path: r.path}
		for i := range r.params {
			if err := r.params[i].apply(q); err != nil {
				return err
			}
		}
		if r.resolve != nil {
			if err := r.resolve(q); err != nil {
				return err
			}
		}
		page := r.page(&q.f)
		*page = p.page
		if err := checkMarker(rq.ctx(), p.page.Marker, func(ctx context.Context, id string) (*E, error) {
			return r.get(s.store, ctx, id)
		}, r.notFound); err != nil {
			return err
		}
		if r.own != nil {
			keep, err := r.own(rq, s)
			if err != nil {
				return err
			}
			if keep != nil {
				q.where(keep)
			}
		}
		if len(q.keep) > 0 {
			page.Limit = 0
		}
		items, err := r.list(s.store, rq.ctx(), q.f)
		if err != nil {
			return err
		}
		if len(q.keep) > 0 {
			items = slices.DeleteFunc(items, func(v *E) bool {
				for _, keep := range q.keep {
					if !keep(v) {
						return true
					}
				}
				return false
			})
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
		renderList(js, items, func(b []byte, v *E) []byte { return r.appendOne(b, v, q.rc, fs) })
		js.b = append(js.b, ']')
		var last string
		if len(items) > 0 {
			last = r.uuid(items[len(items)-1])
		}
		path := q.path
		if detailPath {
			path += "/detail"
		}
		// Unlike Ironic, which keeps only a few, the next link carries every
		// filter, so that following it pages through the same selection.
		extra := a.filters("limit", "marker", "sort_key", "sort_dir", "fields", "detail")
		js.b = appendListEnd(js.b, rq.nextLink(path, p, len(items), last, extra...))
		return js.end()
	}
}

// nodeScope is a list's filter on the node of ?node= or of the path, and
// the collection's path (below /v1). Both given is a 403, unless
// parentWins (then the path's node is used).
func nodeScope(rq *request, s *server, a args, path string, parentWins bool) (nodeUUID, listPath string, err error) {
	nodeIdent := a.str("node")
	if parent := rq.r.PathValue("node"); parent != "" {
		if nodeIdent != "" && !parentWins {
			return "", "", newError(http.StatusForbidden, "Operation not permitted.")
		}
		nodeIdent = parent
		path = "nodes/" + parent + "/" + path
	}
	if nodeIdent != "" {
		n, err := lookupNode(rq.ctx(), s.store, nodeIdent, rq.minor)
		if err != nil {
			return "", "", err
		}
		nodeUUID = n.UUID
	}
	return nodeUUID, path, nil
}

// getHandler serves GET /v1/<path>/{id}.
func (r *resource[E, F]) getHandler(s *server) func(*request) error {
	return func(rq *request) error {
		id, a, err := r.target(rq, "fields")
		if err != nil {
			return err
		}
		var fields []string
		if r.fieldsBeforeLookup {
			if fields, err = r.itemFields(rq, a); err != nil {
				return err
			}
		}
		v, err := r.lookup(rq.ctx(), s.store, id, rq.minor)
		if err != nil {
			return err
		}
		if r.itemCheck != nil {
			if err := r.itemCheck(rq, v, nil); err != nil {
				return err
			}
		}
		if !r.fieldsBeforeLookup {
			if fields, err = r.itemFields(rq, a); err != nil {
				return err
			}
		}
		return r.writeOne(rq, s, http.StatusOK, v, newFieldSet(fields))
	}
}

// writeOne answers with v's view.
func (r *resource[E, F]) writeOne(rq *request, s *server, status int, v *E, fs fieldSet) error {
	bp := getBuf()
	b := r.appendOne(*bp, v, rq.render(s), fs)
	err := rq.writeJSON(status, b)
	putBuf(bp, b)
	return err
}

// createHandler serves POST /v1/<path>.
func (r *resource[E, F]) createHandler(s *server) func(*request) error {
	return func(rq *request) error {
		if err := r.versionCheck(rq); err != nil {
			return err
		}
		doc, err := rq.createBody(r.what)
		if err != nil {
			return err
		}
		if r.prepare != nil {
			if err := r.prepare(rq, s, doc); err != nil {
				return err
			}
		}
		v := new(E)
		w := writeCtx{minor: rq.minor, create: true, doc: doc, creds: rq.creds}
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
			if err := s.authorizeRefs(rq, "", r.node(v), nil, v); err != nil {
				return err
			}
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
				var none *E
				if err := r.precheck(ctx, tx, n, v, none, w); err != nil {
					return err
				}
			}
			if _, err := r.get(tx, ctx, id); err == nil {
				return r.uuidConflict(v)
			}
			if err := r.create(tx, ctx, v); err != nil {
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
		return r.writeOne(rq, s, http.StatusCreated, v, nil)
	}
}

// stored is v as the store has it after a write, when the description
// asks for that (reread), else v.
func (r *resource[E, F]) stored(ctx context.Context, s *server, v *E) (*E, error) {
	if !r.reread {
		return v, nil
	}
	return r.get(s.store, ctx, r.uuid(v))
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
func (r *resource[E, F]) patchHandler(s *server) func(*request) error {
	return func(rq *request) error {
		id, _, err := r.target(rq)
		if err != nil {
			return err
		}
		ops, err := rq.readPatchOf(func(op patchOp) error {
			if slices.Contains(r.internal, op.top()) {
				return badRequest("'%s' is an internal attribute and can not be updated", op.Path)
			}
			if op.Op == "remove" && slices.Contains(r.mandatory, op.top()) && op.Path == "/"+op.top() {
				return badRequest("'%s' is a mandatory attribute and can not be removed", op.Path)
			}
			return nil
		})
		if err != nil {
			return err
		}
		if r.patchGate != nil {
			if err := r.patchGate(rq, ops); err != nil {
				return err
			}
		}
		// The UUID is internal: the patched document keeps the old one.
		compute := func(old *E) (*E, error) {
			var zero *E
			doc, err := applyPatch(r.doc(old), ops)
			if err != nil {
				return zero, err
			}
			delete(doc, "uuid")
			nv := new(E)
			*nv = *old // a shallow copy: check replaces what changes
			if err := r.check(doc, nv, writeCtx{minor: rq.minor, ops: ops, creds: rq.creds}); err != nil {
				return zero, err
			}
			return nv, nil
		}
		// Checked before the lock is taken, so a bad patch waits for none.
		cur, err := r.lookup(rq.ctx(), s.store, id, rq.minor)
		if err != nil {
			return err
		}
		if r.itemCheck != nil {
			if err := r.itemCheck(rq, cur, ops); err != nil {
				return err
			}
		}
		if nv, err := compute(cur); err != nil {
			return err
		} else if r.node != nil {
			if err := s.authorizeRefs(rq, r.node(cur), r.node(nv), cur, nv); err != nil {
				return err
			}
		}
		var out *E
		err = r.within(rq.ctx(), s, cur, func(ctx context.Context, tx store.Store, n *baremetal.Node) error {
			old, err := r.lookup(ctx, tx, id, rq.minor)
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
			if err := r.update(tx, ctx, nv); err != nil {
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
		return r.writeOne(rq, s, http.StatusOK, out, nil)
	}
}

// deleteHandler serves DELETE /v1/<path>/{id}.
func (r *resource[E, F]) deleteHandler(s *server) func(*request) error {
	return func(rq *request) error {
		id, _, err := r.target(rq)
		if err != nil {
			return err
		}
		cur, err := r.lookup(rq.ctx(), s.store, id, rq.minor)
		if err != nil {
			return err
		}
		if r.itemCheck != nil {
			if err := r.itemCheck(rq, cur, nil); err != nil {
				return err
			}
		}
		err = r.within(rq.ctx(), s, cur, func(ctx context.Context, tx store.Store, n *baremetal.Node) error {
			if r.node != nil && !r.anyPower {
				if err := mustBePoweredOff(n, r.noun+" deletion"); err != nil {
					return err
				}
			}
			if err := r.delete(tx, ctx, r.uuid(cur)); err != nil {
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

// routes registers the resource's endpoints (but the writes of one with
// ownWrites).
func (r *resource[E, F]) routes(s *server) {
	base := "/v1/" + r.path
	item := base + "/{" + r.wildcard + "}"
	s.handle("GET "+base, r.listHandler(s, false, 0))
	s.handle("GET "+base+"/{$}", r.listHandler(s, false, 0))
	if !r.noDetail {
		s.handle("GET "+base+"/detail", r.listHandler(s, true, 0))
	}
	s.handle("GET "+item, r.getHandler(s))
	if !r.ownWrites {
		s.handle("POST "+base, r.createHandler(s))
		s.handle("PATCH "+item, r.patchHandler(s))
		s.handle("DELETE "+item, r.deleteHandler(s))
	}
	for _, p := range r.parents {
		s.handle("GET /v1/"+p.path+"/"+r.path, r.listHandler(s, false, p.min))
		s.handle("GET /v1/"+p.path+"/"+r.path+"/detail", r.listHandler(s, true, p.min))
	}
}
