package sql

import (
	"context"
	stdsql "database/sql"
	"errors"
	"fmt"

	"github.com/google/uuid"

	"github.com/ferrometal/ferro/internal/baremetal"
	"github.com/ferrometal/ferro/internal/store"
)

var chassisTable = &table{
	name:        "chassis",
	kind:        "chassis",
	marker:      "uuid",
	sorts:       standardSorts(nil),
	defaultSort: "created_at",
	defaultDir:  "asc",
}

var chassisType = objectType[*baremetal.Chassis]{
	columns: "created_at, body",
	scan:    scanCreatedBody,
	decode: func(r *bodyRow, _ interner) (*baremetal.Chassis, error) {
		c := new(baremetal.Chassis)
		if err := decodeBody(r.body, c); err != nil {
			return nil, err
		}
		c.CreatedAt = r.createdAt
		emptyJSON(&c.Extra)
		return c, nil
	},
}

// CreateChassis inserts c, giving it a UUID and CreatedAt if it has none.
func (db *DB) CreateChassis(ctx context.Context, c *baremetal.Chassis) error {
	if c.UUID == "" {
		c.UUID = uuid.NewString()
	}
	if c.CreatedAt.IsZero() {
		c.CreatedAt = db.stamp()
	}
	c.CreatedAt = normTime(c.CreatedAt)
	c.UpdatedAt = normTimePtr(c.UpdatedAt)
	body, err := encodeBody(c)
	if err != nil {
		return fmt.Errorf("create chassis %s: %w", c.UUID, err)
	}
	_, err = db.exec(ctx, `INSERT INTO chassis (uuid, created_at, updated_at, body) VALUES ($1, $2, $3, $4)`,
		c.UUID, db.d.timeArg(c.CreatedAt), db.d.nullTimeArg(c.UpdatedAt), body)
	if err != nil {
		return db.writeError(err, "chassis", map[string]string{"uuid": c.UUID}, "")
	}
	return nil
}

// GetChassis returns the chassis with this UUID.
func (db *DB) GetChassis(ctx context.Context, id string) (*baremetal.Chassis, error) {
	c, err := chassisType.one(db.queryRow(ctx, "SELECT "+chassisType.columns+" FROM chassis WHERE uuid = $1", id))
	if errors.Is(err, stdsql.ErrNoRows) {
		return nil, notFound("chassis %s could not be found", id)
	}
	if err != nil {
		return nil, fmt.Errorf("get chassis %s: %w", id, err)
	}
	return c, nil
}

// ListChassis returns one page of chassis.
func (db *DB) ListChassis(ctx context.Context, p store.Page) ([]*baremetal.Chassis, error) {
	return list(ctx, db.newList(chassisTable, chassisType.columns), p, chassisType)
}

// UpdateChassis writes every field of c but CreatedAt, and sets c.UpdatedAt.
func (db *DB) UpdateChassis(ctx context.Context, c *baremetal.Chassis) error {
	now := db.stamp()
	c.UpdatedAt = &now
	body, err := encodeBody(c)
	if err != nil {
		return fmt.Errorf("update chassis %s: %w", c.UUID, err)
	}
	err = db.writeRow(ctx, `UPDATE chassis SET updated_at = $2, body = $3 WHERE uuid = $1 RETURNING created_at`,
		c.UUID, db.d.timeArg(now), body).Scan(timeScanner{&c.CreatedAt})
	if errors.Is(err, stdsql.ErrNoRows) {
		return notFound("chassis %s could not be found", c.UUID)
	}
	if err != nil {
		return fmt.Errorf("update chassis %s: %w", c.UUID, err)
	}
	return nil
}

// DeleteChassis deletes the chassis with this UUID, unless a node names
// it: ErrConflict then.
func (db *DB) DeleteChassis(ctx context.Context, id string) error {
	res, err := db.exec(ctx, `DELETE FROM chassis
WHERE uuid = $1 AND NOT EXISTS (SELECT 1 FROM nodes WHERE `+db.d.nodeChassis+` = $1)`, id)
	if err != nil {
		return fmt.Errorf("delete chassis %s: %w", id, err)
	}
	if n, err := res.RowsAffected(); err != nil || n > 0 {
		return err
	}
	var one int
	err = db.queryRow(ctx, "SELECT 1 FROM chassis WHERE uuid = $1", id).Scan(&one)
	switch {
	case errors.Is(err, stdsql.ErrNoRows):
		return notFound("chassis %s could not be found", id)
	case err != nil:
		return fmt.Errorf("delete chassis %s: %w", id, err)
	}
	return conflict("chassis %s contains nodes", id)
}
