package sql

import (
	"context"
	"fmt"
	"time"

	"github.com/ferrometal/ferro/internal/baremetal"
	"github.com/ferrometal/ferro/internal/store"
)

var allocationsTable = newBodyTable(&bodyTable[*baremetal.Allocation]{
	table: &table{
		name:   "allocations",
		kind:   "allocation",
		marker: "uuid",
		sorts: standardSorts(map[string]sortColumn{
			"name":           {col: "name", nullable: true},
			"state":          {col: "state"},
			"node_id":        idSort("nodes", "node_uuid"),
			"owner":          {col: "owner"},
			"resource_class": {col: "resource_class"},
			"last_error":     bodySort("last_error"),
			// Ironic's conductor_affinity; ferro keeps none, so all rows tie.
			"conductor_affinity": {col: "id"},
		}),
		defaultSort: "created_at",
		defaultDir:  "asc",
	},
	typ: bodyType(func(a *baremetal.Allocation) *time.Time { return &a.CreatedAt },
		func(a *baremetal.Allocation) {
			emptyJSON(&a.Extra)
			emptySlice(&a.Traits)
			emptySlice(&a.CandidateNodes)
		}),
	cols: []string{"name", "node_uuid", "resource_class", "state", "owner"},
	vals: func(a *baremetal.Allocation) []any {
		return []any{nullString(a.Name), nullString(a.NodeUUID), a.ResourceClass, a.State, a.Owner}
	},
	meta: func(a *baremetal.Allocation) (*string, *time.Time, **time.Time) {
		return &a.UUID, &a.CreatedAt, &a.UpdatedAt
	},
	byName: true,
	writeError: func(db *DB, err error, a *baremetal.Allocation) error {
		return db.writeError(err, "allocation", map[string]string{"uuid": a.UUID, "name": a.Name},
			fmt.Sprintf("node %s could not be found", a.NodeUUID))
	},
})

// CreateAllocation inserts a, giving it a UUID and CreatedAt if it has none.
func (db *DB) CreateAllocation(ctx context.Context, a *baremetal.Allocation) error {
	return allocationsTable.create(ctx, db, a)
}

// GetAllocation returns the allocation whose UUID or name is ident.
func (db *DB) GetAllocation(ctx context.Context, ident string) (*baremetal.Allocation, error) {
	return allocationsTable.get(ctx, db, ident)
}

// ListAllocations returns the allocations f selects, one page of them.
func (db *DB) ListAllocations(ctx context.Context, f store.AllocationFilter) ([]*baremetal.Allocation, error) {
	q := allocationsTable.query(db)
	q.eq("node_uuid", f.NodeUUID)
	q.eq("resource_class", f.ResourceClass)
	q.eq("state", f.State)
	q.eq("owner", f.Owner)
	return list(ctx, q, f.Page, allocationsTable.typ)
}

// UpdateAllocation writes every field of a but CreatedAt, and sets a.UpdatedAt.
func (db *DB) UpdateAllocation(ctx context.Context, a *baremetal.Allocation) error {
	return allocationsTable.update(ctx, db, a)
}

// DeleteAllocation deletes the allocation with this UUID.
func (db *DB) DeleteAllocation(ctx context.Context, uuid string) error {
	return allocationsTable.delete(ctx, db, uuid)
}
