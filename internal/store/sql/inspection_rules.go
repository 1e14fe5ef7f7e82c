package sql

import (
	"context"
	"time"

	"github.com/ferrometal/ferro/internal/baremetal"
	"github.com/ferrometal/ferro/internal/store"
)

var inspectionRulesTable = newBodyTable(&bodyTable[*baremetal.InspectionRule]{
	table: &table{
		name:   "inspection_rules",
		kind:   "inspection rule",
		marker: "uuid",
		sorts: standardSorts(map[string]sortColumn{
			"priority": {col: "priority"}, "phase": {col: "phase"}, "sensitive": {col: "sensitive"},
			"description": bodySort("description"),
		}),
		defaultSort: "id",
		defaultDir:  "asc",
	},
	typ: bodyType(func(r *baremetal.InspectionRule) *time.Time { return &r.CreatedAt },
		func(r *baremetal.InspectionRule) {
			if r.Conditions == nil {
				r.Conditions = []map[string]any{}
			}
			if r.Actions == nil {
				r.Actions = []map[string]any{}
			}
		}),
	cols: []string{"priority", "phase", "sensitive"},
	vals: func(r *baremetal.InspectionRule) []any { return []any{r.Priority, r.Phase, r.Sensitive} },
	meta: func(r *baremetal.InspectionRule) (*string, *time.Time, **time.Time) {
		return &r.UUID, &r.CreatedAt, &r.UpdatedAt
	},
	prepare: func(r *baremetal.InspectionRule) {
		if r.Phase == "" {
			r.Phase = "main"
		}
	},
	writeError: func(db *DB, err error, r *baremetal.InspectionRule) error {
		return db.writeError(err, "inspection rule", map[string]string{"uuid": r.UUID}, "")
	},
})

// CreateInspectionRule inserts r, giving it a UUID and CreatedAt if it has none.
func (db *DB) CreateInspectionRule(ctx context.Context, r *baremetal.InspectionRule) error {
	return inspectionRulesTable.create(ctx, db, r)
}

// GetInspectionRule returns the inspection rule with this UUID.
func (db *DB) GetInspectionRule(ctx context.Context, uuid string) (*baremetal.InspectionRule, error) {
	return inspectionRulesTable.get(ctx, db, uuid)
}

// ListInspectionRules returns one page of inspection rules, by id (the
// order they were created in) unless the page says otherwise.
func (db *DB) ListInspectionRules(ctx context.Context, f store.InspectionRuleFilter) ([]*baremetal.InspectionRule, error) {
	q := inspectionRulesTable.query(db)
	q.eq("t.phase", f.Phase)
	return list(ctx, q, f.Page, inspectionRulesTable.typ)
}

// UpdateInspectionRule writes every field of r but CreatedAt, and sets r.UpdatedAt.
func (db *DB) UpdateInspectionRule(ctx context.Context, r *baremetal.InspectionRule) error {
	return inspectionRulesTable.update(ctx, db, r)
}

// DeleteInspectionRule deletes the inspection rule with this UUID.
func (db *DB) DeleteInspectionRule(ctx context.Context, uuid string) error {
	return inspectionRulesTable.delete(ctx, db, uuid)
}
