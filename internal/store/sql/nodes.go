package sql

import (
	"bytes"
	"context"
	stdsql "database/sql"
	"errors"
	"fmt"
	"strings"
	"unsafe"

	"github.com/google/uuid"

	"github.com/ferrometal/ferro/internal/baremetal"
	"github.com/ferrometal/ferro/internal/store"
)

var nodesTable = &table{
	name:   "nodes",
	kind:   "node",
	marker: "uuid",
	sorts: standardSorts(map[string]sortColumn{
		"name":            {col: "name", nullable: true},
		"provision_state": {col: "provision_state"},
		"driver":          {col: "driver"},
	}),
	defaultSort: "created_at",
	defaultDir:  "asc",
}

// nodeType reads nodes. CreatedAt comes from its column, which UpdateNode
// never writes, and Reservation, which the body does not hold, too.
var nodeType = objectType[*baremetal.Node]{
	columns: "reservation, created_at, body",
	scan: func(row scanner, r *bodyRow) error {
		return row.Scan(&r.reservation, timeScanner{&r.createdAt}, textBytes{&r.body})
	},
	decode: func(r *bodyRow, in interner) (*baremetal.Node, error) { return decodeNodeRow(r, in, decodeNode) },
}

// nodeKeptType reads nodes for ListNodes with KeepJSON: the free-form
// fields stay their stored text (Node.Stored).
var nodeKeptType = objectType[*baremetal.Node]{
	columns: nodeType.columns,
	scan:    nodeType.scan,
	decode: func(r *bodyRow, in interner) (*baremetal.Node, error) {
		n, err := decodeNodeRow(r, in, decodeNodeKept)
		if err == nil {
			n.Memo = &baremetal.Memo{}
		}
		return n, err
	},
}

// decodeNodeRow decodes a node's row with decode (decodeNode or
// decodeNodeKept).
func decodeNodeRow(r *bodyRow, in interner, decode func([]byte, *baremetal.Node, interner) error) (*baremetal.Node, error) {
	// A node has an interface per kind, a dozen or so: a map made for
	// nodeInterfaceKinds holds them without growing (and rehashing)
	// while it is decoded.
	n := &baremetal.Node{Interfaces: make(map[string]string, nodeInterfaceKinds)}
	if err := decode(r.body, n, in); err != nil {
		return nil, err
	}

	n.CreatedAt = r.createdAt
	n.Reservation = r.reservation.String
	for i, m := range [...]*baremetal.JSON{
		baremetal.StoredDriverInfo: &n.DriverInfo, baremetal.StoredDriverInternalInfo: &n.DriverInternalInfo,
		baremetal.StoredProperties: &n.Properties, baremetal.StoredExtra: &n.Extra,
		baremetal.StoredInstanceInfo: &n.InstanceInfo, baremetal.StoredNetworkData: &n.NetworkData,
		baremetal.StoredTargetRAIDConfig: &n.TargetRAIDConfig, baremetal.StoredRAIDConfig: &n.RAIDConfig,
		baremetal.StoredCleanStep: &n.CleanStep, baremetal.StoredDeployStep: &n.DeployStep,
		baremetal.StoredServiceStep: &n.ServiceStep,
	} {
		if n.Stored.Text(i) == nil {
			emptyJSON(m) // a kept field's map stays nil
		}
	}
	if n.Interfaces == nil {
		n.Interfaces = map[string]string{}
	}
	emptySlice(&n.Traits)
	return n, nil
}

// errKeptNode refuses to write a node whose free-form fields were left
// undecoded: it would store them empty.
func errKeptNode(n *baremetal.Node) error {
	return fmt.Errorf("node %s was read for rendering only (KeepJSON) and cannot be written", n.UUID)
}

// textBytes scans a node body without copying it once more: SQLite's
// driver returns a TEXT column as a string allocated for that value alone,
// which database/sql would copy into a new []byte, and a detailed list
// reads hundreds of bodies of a kilobyte or more. The bytes share the
// string's memory, so nothing may write to them: the decoders only read.
// A []byte from a driver (pgx) belongs to the driver and is copied.
type textBytes struct{ b *[]byte }

func (t textBytes) Scan(src any) error {
	switch v := src.(type) {
	case string:
		*t.b = unsafe.Slice(unsafe.StringData(v), len(v))
	case []byte:
		*t.b = bytes.Clone(v)
	case nil:
		*t.b = nil
	default:
		return fmt.Errorf("cannot scan %T into a node body", src)
	}
	return nil
}

// nodeByIdent is the WHERE clause for the node whose UUID or name is $1,
// the UUID winning should a name equal another node's UUID, as with
// byUUIDOrName. UUIDs and names are unique, so this is an index probe or
// two and a row lookup, where byUUIDOrName merges two index searches and
// sorts the result: that was a seventh of GetNode's CPU.
const nodeByIdent = "id = COALESCE((SELECT id FROM nodes WHERE uuid = $1), (SELECT id FROM nodes WHERE name = $1))"

// selectNodeByIdent reads the node whose UUID or name is $1.
var selectNodeByIdent = "SELECT " + nodeType.columns + " FROM nodes WHERE " + nodeByIdent

// nodeInterfaceKinds is how many interfaces a node body may hold without
// its map growing: driver.Kinds has 13 (the store does not import
// driver). 14 is the most a map's first 16 slots take; a larger hint
// doubles them.
const nodeInterfaceKinds = 14

// normalizeNode puts n's timestamps in the form the store keeps, so that
// the caller's copy equals what a later read returns.
func normalizeNode(n *baremetal.Node) {
	n.CreatedAt = normTime(n.CreatedAt)
	n.UpdatedAt = normTimePtr(n.UpdatedAt)
	n.InspectionStartedAt = normTimePtr(n.InspectionStartedAt)
	n.InspectionFinishedAt = normTimePtr(n.InspectionFinishedAt)
	n.ProvisionUpdatedAt = normTimePtr(n.ProvisionUpdatedAt)
}

func nodeValues(n *baremetal.Node) map[string]string {
	return map[string]string{"uuid": n.UUID, "name": n.Name, "instance_uuid": n.InstanceUUID}
}

// CreateNode inserts n, giving it a UUID and CreatedAt if it has none.
func (db *DB) CreateNode(ctx context.Context, n *baremetal.Node) error {
	if n.Stored != nil {
		return errKeptNode(n)
	}
	if n.UUID == "" {
		n.UUID = uuid.NewString()
	}
	if n.CreatedAt.IsZero() {
		n.CreatedAt = db.stamp()
	}
	normalizeNode(n)
	body, err := encodeBody(n)
	if err != nil {
		return fmt.Errorf("create node %s: %w", n.UUID, err)
	}
	_, err = db.exec(ctx, `INSERT INTO nodes (uuid, name, provision_state, driver, maintenance,
	instance_uuid, resource_class, conductor_group, fault, owner, lessee, retired, shard,
	reservation, created_at, updated_at, body, power_state, parent_node)
VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $19)`,
		n.UUID, nullString(n.Name), n.ProvisionState, n.Driver, n.Maintenance,
		nullString(n.InstanceUUID), n.ResourceClass, n.ConductorGroup, n.Fault, n.Owner, n.Lessee, n.Retired, n.Shard,
		nullString(n.Reservation), db.d.timeArg(n.CreatedAt), db.d.nullTimeArg(n.UpdatedAt), body, n.PowerState, n.ParentNode)
	if err != nil {
		return db.writeError(err, "node", nodeValues(n), "")
	}
	return nil
}

// GetNode returns the node whose UUID or name is ident.
func (db *DB) GetNode(ctx context.Context, ident string) (*baremetal.Node, error) {
	n, err := nodeType.one(db.queryRow(ctx, selectNodeByIdent, ident))
	if errors.Is(err, stdsql.ErrNoRows) {
		return nil, notFound("node %s could not be found", ident)
	}
	if err != nil {
		return nil, fmt.Errorf("get node %s: %w", ident, err)
	}
	return n, nil
}

// ListNodes returns the nodes f selects, one page of them.
func (db *DB) ListNodes(ctx context.Context, f store.NodeFilter) ([]*baremetal.Node, error) {
	if f.KeepJSON {
		if c := db.keptNodes; c != nil {
			return list(ctx, db.nodeList(f), f.Page, objectType[*baremetal.Node]{
				columns: nodeKeptType.columns,
				scan:    nodeKeptType.scan,
				decode: func(r *bodyRow, in interner) (*baremetal.Node, error) {
					if n := c.get(r); n != nil {
						return n, nil
					}
					n, err := nodeKeptType.decode(r, in)
					if err == nil {
						c.put(r, n)
					}
					return n, err
				},
			})
		}
		return list(ctx, db.nodeList(f), f.Page, nodeKeptType)
	}
	return list(ctx, db.nodeList(f), f.Page, nodeType)
}

// nodeList is the query of ListNodes, without its page.
func (db *DB) nodeList(f store.NodeFilter) *listQuery {
	q := db.newList(nodesTable, nodeType.columns)
	filterNodes(q, f)
	return q
}

// ListNodeRefs returns the UUID and conductor group of every node f
// selects, in no order; f's page is ignored. Only these two columns are
// read, so an index that holds them answers the query alone.
func (db *DB) ListNodeRefs(ctx context.Context, f store.NodeFilter) ([]store.NodeRef, error) {
	q := db.newList(nodesTable, "uuid, conductor_group")
	filterNodes(q, f)
	sqlText := "SELECT " + q.cols + " FROM " + q.t.name + " t"
	if len(q.where) > 0 {
		sqlText += " WHERE " + strings.Join(q.where, " AND ")
	}
	rows, err := db.query(ctx, sqlText, q.args...)
	if err != nil {
		return nil, fmt.Errorf("list node references: %w", err)
	}
	out, err := scanAll(rows, func(rows *stdsql.Rows) (store.NodeRef, error) {
		var r store.NodeRef
		return r, rows.Scan(&r.UUID, &r.ConductorGroup)
	})
	if err != nil {
		return nil, fmt.Errorf("list node references: %w", err)
	}
	return out, nil
}

// filterNodes adds f's conditions to a query of the nodes table.
func filterNodes(q *listQuery, f store.NodeFilter) {
	q.in("uuid", f.UUIDs)
	q.in("provision_state", f.ProvisionState)
	q.eq("driver", f.Driver)
	q.boolean("maintenance", f.Maintenance)
	if f.Associated != nil {
		if *f.Associated {
			q.cond("instance_uuid IS NOT NULL")
		} else {
			q.cond("instance_uuid IS NULL")
		}
	}
	q.eq("resource_class", f.ResourceClass)
	if f.ConductorGroup != nil {
		// "" is a real group: the default one.
		q.cond("conductor_group = " + q.arg(*f.ConductorGroup))
	}
	q.eq("fault", f.Fault)
	q.eq("owner", f.Owner)
	q.eq("lessee", f.Lessee)
	q.eq("instance_uuid", f.InstanceUUID)
	if f.Reserved != nil {
		if *f.Reserved {
			q.cond("reservation IS NOT NULL")
		} else {
			q.cond("reservation IS NULL")
		}
	}
	q.boolean("retired", f.Retired)
	q.in("shard", f.Shard)
	if f.ParentNode != nil {
		q.cond("parent_node = " + q.arg(*f.ParentNode))
	}
	q.eq("reservation", f.ReservedBy)
	if f.Search != "" {
		pat := "%" + likeEscaper.Replace(strings.ToLower(f.Search)) + "%"
		q.cond("(LOWER(COALESCE(name, '')) LIKE " + q.arg(pat) + " ESCAPE '\\' OR uuid LIKE " + q.arg(pat) + " ESCAPE '\\')")
	}
	if f.Project != "" {
		q.cond("(owner = " + q.arg(f.Project) + " OR lessee = " + q.arg(f.Project) + ")")
	}
}

// likeEscaper escapes LIKE's wildcards (and its escape character) in a
// search string.
var likeEscaper = strings.NewReplacer(`\`, `\\`, "%", `\%`, "_", `\_`)

// UpdateNode writes every field of n but Reservation and CreatedAt, and
// sets n.UpdatedAt, if the node's reservation is n.Reservation: the lock
// is the fencing token of every write. On return n.Reservation and
// n.CreatedAt are the stored ones.
func (db *DB) UpdateNode(ctx context.Context, n *baremetal.Node) error {
	if n.Stored != nil {
		return errKeptNode(n)
	}
	now := db.stamp()
	n.UpdatedAt = &now
	normalizeNode(n)
	body, err := encodeBody(n)
	if err != nil {
		return fmt.Errorf("update node %s: %w", n.UUID, err)
	}
	var reservation stdsql.NullString
	err = db.writeRow(ctx, `UPDATE nodes SET name = $2, provision_state = $3, driver = $4,
	maintenance = $5, instance_uuid = $6, resource_class = $7, conductor_group = $8, fault = $9,
	owner = $10, lessee = $11, retired = $12, shard = $13, updated_at = $14, body = $15, power_state = $17,
	parent_node = $18
WHERE uuid = $1 AND reservation IS NOT DISTINCT FROM $16
RETURNING reservation, created_at`,
		n.UUID, nullString(n.Name), n.ProvisionState, n.Driver,
		n.Maintenance, nullString(n.InstanceUUID), n.ResourceClass, n.ConductorGroup, n.Fault,
		n.Owner, n.Lessee, n.Retired, n.Shard, db.d.timeArg(now), body, nullString(n.Reservation), n.PowerState, n.ParentNode,
	).Scan(&reservation, timeScanner{&n.CreatedAt})
	if errors.Is(err, stdsql.ErrNoRows) {
		var current stdsql.NullString
		switch err := db.queryRow(ctx, "SELECT reservation FROM nodes WHERE uuid = $1", n.UUID).Scan(&current); {
		case errors.Is(err, stdsql.ErrNoRows):
			return notFound("node %s could not be found", n.UUID)
		case err != nil:
			return fmt.Errorf("update node %s: %w", n.UUID, err)
		case current.Valid:
			return locked(n.UUID, current.String)
		default:
			return fmt.Errorf("update node %s: %w: its lock held by %s was released meanwhile", n.UUID, store.ErrNodeLocked, n.Reservation)
		}
	}
	if err != nil {
		return db.writeError(err, "node", nodeValues(n), "")
	}
	n.Reservation = reservation.String
	return nil
}

// DeleteNode deletes the node; foreign keys delete its ports, portgroups,
// allocations, history and inventory with it.
func (db *DB) DeleteNode(ctx context.Context, uuid string) error {
	res, err := db.exec(ctx, "DELETE FROM nodes WHERE uuid = $1", uuid)
	if err != nil {
		return fmt.Errorf("delete node %s: %w", uuid, err)
	}
	return mustAffect(res, notFound("node %s could not be found", uuid))
}

// ReserveNode takes the node's lock for holder in one conditional UPDATE,
// so that of many concurrent callers exactly one wins.
func (db *DB) ReserveNode(ctx context.Context, ident, holder string) (*baremetal.Node, error) {
	if holder == "" {
		return nil, invalid("reserve node %s: empty holder", ident)
	}
	// A retry is needed only if the holder released the node between the
	// failed UPDATE and the SELECT that looks for who holds it.
	for range 3 {
		n, err := nodeType.one(db.writeRow(ctx, `UPDATE nodes SET reservation = $2
WHERE `+nodeByIdent+`
	AND (reservation IS NULL OR reservation = $2)
RETURNING `+nodeType.columns, ident, holder))
		if err == nil {
			return n, nil
		}
		if !errors.Is(err, stdsql.ErrNoRows) {
			return nil, fmt.Errorf("reserve node %s: %w", ident, err)
		}
		var nodeUUID string
		var current stdsql.NullString
		err = db.queryRow(ctx, "SELECT uuid, reservation FROM nodes WHERE "+nodeByIdent, ident).Scan(&nodeUUID, &current)
		if errors.Is(err, stdsql.ErrNoRows) {
			return nil, notFound("node %s could not be found", ident)
		}
		if err != nil {
			return nil, fmt.Errorf("reserve node %s: %w", ident, err)
		}
		if current.Valid && current.String != holder {
			return nil, locked(nodeUUID, current.String)
		}
	}
	return nil, fmt.Errorf("reserve node %s: the reservation keeps changing: %w", ident, store.ErrNodeLocked)
}

// ReleaseNode clears the node's reservation if holder has it. Releasing a
// node nobody holds is not an error; one another holder has is ErrNodeLocked.
func (db *DB) ReleaseNode(ctx context.Context, uuid, holder string) error {
	res, err := db.exec(ctx, "UPDATE nodes SET reservation = NULL WHERE uuid = $1 AND reservation = $2", uuid, holder)
	if err != nil {
		return fmt.Errorf("release node %s: %w", uuid, err)
	}
	if n, err := res.RowsAffected(); err != nil || n > 0 {
		return err
	}
	var current stdsql.NullString
	err = db.queryRow(ctx, "SELECT reservation FROM nodes WHERE uuid = $1", uuid).Scan(&current)
	switch {
	case errors.Is(err, stdsql.ErrNoRows):
		return notFound("node %s could not be found", uuid)
	case err != nil:
		return fmt.Errorf("release node %s: %w", uuid, err)
	case current.Valid && current.String != holder:
		return locked(uuid, current.String)
	}
	return nil
}

// ReleaseAllReservations clears every reservation holder has, as a
// conductor does when it starts or stops.
func (db *DB) ReleaseAllReservations(ctx context.Context, holder string) (int, error) {
	res, err := db.exec(ctx, "UPDATE nodes SET reservation = NULL WHERE reservation = $1", holder)
	if err != nil {
		return 0, fmt.Errorf("release reservations of %s: %w", holder, err)
	}
	n, err := res.RowsAffected()
	return int(n), err
}

// mustAffect returns notFound unless res changed a row.
func mustAffect(res stdsql.Result, notFound error) error {
	n, err := res.RowsAffected()
	if err != nil {
		return err
	}
	if n == 0 {
		return notFound
	}
	return nil
}
