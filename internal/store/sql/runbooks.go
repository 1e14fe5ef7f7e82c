package sql

import (
	"context"
	"time"

	"github.com/ferrometal/ferro/internal/baremetal"
	"github.com/ferrometal/ferro/internal/store"
)

var runbooksTable = newBodyTable(&bodyTable[*baremetal.Runbook]{
	table: &table{
		name:   "runbooks",
		kind:   "runbook",
		marker: "uuid",
		sorts: standardSorts(map[string]sortColumn{
			"name": {col: "name"}, "owner": {col: "owner", nullable: true}, "public": {col: "public"},
			"description": bodySort("description"), "disable_ramdisk": bodySort("disable_ramdisk"),
		}),
		defaultSort: "id",
		defaultDir:  "asc",
	},
	typ: bodyType(func(rb *baremetal.Runbook) *time.Time { return &rb.CreatedAt },
		func(rb *baremetal.Runbook) {
			emptyJSON(&rb.Extra)
			emptySlice(&rb.Traits)
			for i := range rb.Steps {
				emptyJSON(&rb.Steps[i].Args)
			}
		}),
	cols: []string{"name", "owner", "public"},
	vals: func(rb *baremetal.Runbook) []any { return []any{rb.Name, rb.Owner, rb.Public} },
	meta: func(rb *baremetal.Runbook) (*string, *time.Time, **time.Time) {
		return &rb.UUID, &rb.CreatedAt, &rb.UpdatedAt
	},
	byName: true,
	writeError: func(db *DB, err error, rb *baremetal.Runbook) error {
		return db.writeError(err, "runbook", map[string]string{"uuid": rb.UUID, "name": rb.Name}, "")
	},
})

// CreateRunbook inserts rb, giving it a UUID and CreatedAt if it has none.
func (db *DB) CreateRunbook(ctx context.Context, rb *baremetal.Runbook) error {
	return runbooksTable.create(ctx, db, rb)
}

// GetRunbook returns the runbook whose UUID or name is ident.
func (db *DB) GetRunbook(ctx context.Context, ident string) (*baremetal.Runbook, error) {
	return runbooksTable.get(ctx, db, ident)
}

// ListRunbooks returns one page of runbooks, by id unless the page says
// otherwise.
func (db *DB) ListRunbooks(ctx context.Context, f store.RunbookFilter) ([]*baremetal.Runbook, error) {
	q := runbooksTable.query(db)
	if f.Project != "" {
		q.cond("(t.owner = " + q.arg(f.Project) + " OR t.public)")
	}
	return list(ctx, q, f.Page, runbooksTable.typ)
}

// UpdateRunbook writes every field of rb but CreatedAt, and sets rb.UpdatedAt.
func (db *DB) UpdateRunbook(ctx context.Context, rb *baremetal.Runbook) error {
	return runbooksTable.update(ctx, db, rb)
}

// DeleteRunbook deletes the runbook with this UUID.
func (db *DB) DeleteRunbook(ctx context.Context, id string) error {
	return runbooksTable.delete(ctx, db, id)
}
