package sql

import (
	"context"
	stdsql "database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"

	"github.com/ferrometal/ferro/internal/baremetal"
	"github.com/ferrometal/ferro/internal/store"
)

var allocationsTable = &table{
	name:   "allocations",
	kind:   "allocation",
	marker: "uuid",
	sorts: standardSorts(map[string]sortColumn{
		"name":  {col: "name", nullable: true},
		"state": {col: "state"},
	}),
	defaultSort: "created_at",
	defaultDir:  "asc",
}

var allocationType = bodyType(func(a *baremetal.Allocation) *time.Time { return &a.CreatedAt },
	func(a *baremetal.Allocation) {
		emptyJSON(&a.Extra)
		emptySlice(&a.Traits)
		emptySlice(&a.CandidateNodes)
	})

func (db *DB) allocationError(err error, a *baremetal.Allocation) error {
	return db.writeError(err, "allocation", map[string]string{"uuid": a.UUID, "name": a.Name},
		fmt.Sprintf("node %s could not be found", a.NodeUUID))
}

// CreateAllocation inserts a, giving it a UUID and CreatedAt if it has none.
func (db *DB) CreateAllocation(ctx context.Context, a *baremetal.Allocation) error {
	if a.UUID == "" {
		a.UUID = uuid.NewString()
	}
	if a.CreatedAt.IsZero() {
		a.CreatedAt = db.stamp()
	}
	a.CreatedAt = normTime(a.CreatedAt)
	a.UpdatedAt = normTimePtr(a.UpdatedAt)
	body, err := encodeBody(a)
	if err != nil {
		return fmt.Errorf("create allocation %s: %w", a.UUID, err)
	}
	_, err = db.exec(ctx, `INSERT INTO allocations (uuid, name, node_uuid, resource_class, state, owner, created_at, updated_at, body)
VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)`,
		a.UUID, nullString(a.Name), nullString(a.NodeUUID), a.ResourceClass, a.State, a.Owner,
		db.d.timeArg(a.CreatedAt), db.d.nullTimeArg(a.UpdatedAt), body)
	if err != nil {
		return db.allocationError(err, a)
	}
	return nil
}

// GetAllocation returns the allocation whose UUID or name is ident.
func (db *DB) GetAllocation(ctx context.Context, ident string) (*baremetal.Allocation, error) {
	a, err := allocationType.one(db.queryRow(ctx, "SELECT "+allocationType.columns+" FROM allocations WHERE "+byUUIDOrName, ident))
	if errors.Is(err, stdsql.ErrNoRows) {
		return nil, notFound("allocation %s could not be found", ident)
	}
	if err != nil {
		return nil, fmt.Errorf("get allocation %s: %w", ident, err)
	}
	return a, nil
}

// ListAllocations returns the allocations f selects, one page of them.
func (db *DB) ListAllocations(ctx context.Context, f store.AllocationFilter) ([]*baremetal.Allocation, error) {
	q := db.newList(allocationsTable, allocationType.columns)
	q.eq("node_uuid", f.NodeUUID)
	q.eq("resource_class", f.ResourceClass)
	q.eq("state", f.State)
	q.eq("owner", f.Owner)
	return list(ctx, q, f.Page, allocationType)
}

// UpdateAllocation writes every field of a but CreatedAt, and sets a.UpdatedAt.
func (db *DB) UpdateAllocation(ctx context.Context, a *baremetal.Allocation) error {
	now := db.stamp()
	a.UpdatedAt = &now
	body, err := encodeBody(a)
	if err != nil {
		return fmt.Errorf("update allocation %s: %w", a.UUID, err)
	}
	err = db.writeRow(ctx, `UPDATE allocations SET name = $2, node_uuid = $3, resource_class = $4, state = $5,
	owner = $6, updated_at = $7, body = $8
WHERE uuid = $1
RETURNING created_at`,
		a.UUID, nullString(a.Name), nullString(a.NodeUUID), a.ResourceClass, a.State,
		a.Owner, db.d.timeArg(now), body,
	).Scan(timeScanner{&a.CreatedAt})
	if errors.Is(err, stdsql.ErrNoRows) {
		return notFound("allocation %s could not be found", a.UUID)
	}
	if err != nil {
		return db.allocationError(err, a)
	}
	return nil
}

// DeleteAllocation deletes the allocation with this UUID.
func (db *DB) DeleteAllocation(ctx context.Context, uuid string) error {
	res, err := db.exec(ctx, "DELETE FROM allocations WHERE uuid = $1", uuid)
	if err != nil {
		return fmt.Errorf("delete allocation %s: %w", uuid, err)
	}
	return mustAffect(res, notFound("allocation %s could not be found", uuid))
}
