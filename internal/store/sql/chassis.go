package sql

import (
	"context"
	"time"

	"github.com/ferrometal/ferro/internal/baremetal"
	"github.com/ferrometal/ferro/internal/store"
)

var chassisTable = newBodyTable(&bodyTable[*baremetal.Chassis]{
	table: &table{
		name:        "chassis",
		kind:        "chassis",
		marker:      "uuid",
		sorts:       standardSorts(map[string]sortColumn{"description": bodySort("description")}),
		defaultSort: "created_at",
		defaultDir:  "asc",
	},
	typ: bodyType(func(c *baremetal.Chassis) *time.Time { return &c.CreatedAt },
		func(c *baremetal.Chassis) { emptyJSON(&c.Extra) }),
	vals: func(*baremetal.Chassis) []any { return nil },
	meta: func(c *baremetal.Chassis) (*string, *time.Time, **time.Time) {
		return &c.UUID, &c.CreatedAt, &c.UpdatedAt
	},
	writeError: func(db *DB, err error, c *baremetal.Chassis) error {
		return db.writeError(err, "chassis", map[string]string{"uuid": c.UUID}, "")
	},
	inUse: func(d *dialect) string { return "EXISTS (SELECT 1 FROM nodes WHERE " + d.nodeChassis + " = $1)" },
	busy:  "chassis %s contains nodes",
})

// CreateChassis inserts c, giving it a UUID and CreatedAt if it has none.
func (db *DB) CreateChassis(ctx context.Context, c *baremetal.Chassis) error {
	return chassisTable.create(ctx, db, c)
}

// GetChassis returns the chassis with this UUID.
func (db *DB) GetChassis(ctx context.Context, id string) (*baremetal.Chassis, error) {
	return chassisTable.get(ctx, db, id)
}

// ListChassis returns one page of chassis.
func (db *DB) ListChassis(ctx context.Context, p store.Page) ([]*baremetal.Chassis, error) {
	return list(ctx, chassisTable.query(db), p, chassisTable.typ)
}

// UpdateChassis writes every field of c but CreatedAt, and sets c.UpdatedAt.
func (db *DB) UpdateChassis(ctx context.Context, c *baremetal.Chassis) error {
	return chassisTable.update(ctx, db, c)
}

// DeleteChassis deletes the chassis with this UUID, unless a node names
// it: ErrConflict then.
func (db *DB) DeleteChassis(ctx context.Context, id string) error {
	return chassisTable.delete(ctx, db, id)
}
