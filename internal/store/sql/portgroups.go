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

var portgroupsTable = &table{
	name:   "portgroups",
	kind:   "portgroup",
	marker: "uuid",
	sorts: standardSorts(map[string]sortColumn{
		"name":    {col: "name", nullable: true},
		"address": {col: "address", nullable: true},
	}),
	defaultSort: "created_at",
	defaultDir:  "asc",
}

var portgroupType = bodyType(func(pg *baremetal.Portgroup) *time.Time { return &pg.CreatedAt },
	func(pg *baremetal.Portgroup) {
		emptyJSON(&pg.Properties)
		emptyJSON(&pg.Extra)
		emptyJSON(&pg.InternalInfo)
	})

func (db *DB) portgroupError(err error, pg *baremetal.Portgroup) error {
	return db.writeError(err, "portgroup", map[string]string{"uuid": pg.UUID, "name": pg.Name, "address": pg.Address},
		fmt.Sprintf("node %s could not be found", pg.NodeUUID))
}

// CreatePortgroup inserts pg, giving it a UUID and CreatedAt if it has
// none. The address is stored in lower case.
func (db *DB) CreatePortgroup(ctx context.Context, pg *baremetal.Portgroup) error {
	if pg.UUID == "" {
		pg.UUID = uuid.NewString()
	}
	if pg.CreatedAt.IsZero() {
		pg.CreatedAt = db.stamp()
	}
	pg.CreatedAt = normTime(pg.CreatedAt)
	pg.UpdatedAt = normTimePtr(pg.UpdatedAt)
	pg.Address = normalizeMAC(pg.Address)
	body, err := encodeBody(pg)
	if err != nil {
		return fmt.Errorf("create portgroup %s: %w", pg.UUID, err)
	}
	_, err = db.exec(ctx, `INSERT INTO portgroups (uuid, name, address, node_uuid, created_at, updated_at, body)
VALUES ($1, $2, $3, $4, $5, $6, $7)`,
		pg.UUID, nullString(pg.Name), nullString(pg.Address), pg.NodeUUID,
		db.d.timeArg(pg.CreatedAt), db.d.nullTimeArg(pg.UpdatedAt), body)
	if err != nil {
		return db.portgroupError(err, pg)
	}
	return nil
}

// GetPortgroup returns the portgroup whose UUID or name is ident.
func (db *DB) GetPortgroup(ctx context.Context, ident string) (*baremetal.Portgroup, error) {
	pg, err := portgroupType.one(db.queryRow(ctx, "SELECT "+portgroupType.columns+" FROM portgroups WHERE "+byUUIDOrName, ident))
	if errors.Is(err, stdsql.ErrNoRows) {
		return nil, notFound("portgroup %s could not be found", ident)
	}
	if err != nil {
		return nil, fmt.Errorf("get portgroup %s: %w", ident, err)
	}
	return pg, nil
}

// ListPortgroups returns the portgroups f selects, one page of them.
func (db *DB) ListPortgroups(ctx context.Context, f store.PortgroupFilter) ([]*baremetal.Portgroup, error) {
	q := db.newList(portgroupsTable, portgroupType.columns)
	q.eq("node_uuid", f.NodeUUID)
	q.eq("address", normalizeMAC(f.Address))
	return list(ctx, q, f.Page, portgroupType)
}

// UpdatePortgroup writes every field of pg but CreatedAt, and sets pg.UpdatedAt.
func (db *DB) UpdatePortgroup(ctx context.Context, pg *baremetal.Portgroup) error {
	now := db.stamp()
	pg.UpdatedAt = &now
	pg.Address = normalizeMAC(pg.Address)
	body, err := encodeBody(pg)
	if err != nil {
		return fmt.Errorf("update portgroup %s: %w", pg.UUID, err)
	}
	err = db.writeRow(ctx, `UPDATE portgroups SET name = $2, address = $3, node_uuid = $4, updated_at = $5, body = $6
WHERE uuid = $1
RETURNING created_at`,
		pg.UUID, nullString(pg.Name), nullString(pg.Address), pg.NodeUUID, db.d.timeArg(now), body,
	).Scan(timeScanner{&pg.CreatedAt})
	if errors.Is(err, stdsql.ErrNoRows) {
		return notFound("portgroup %s could not be found", pg.UUID)
	}
	if err != nil {
		return db.portgroupError(err, pg)
	}
	return nil
}

// DeletePortgroup deletes the portgroup with this UUID. A portgroup that
// still has ports is not deleted: ErrConflict.
func (db *DB) DeletePortgroup(ctx context.Context, uuid string) error {
	res, err := db.exec(ctx, `DELETE FROM portgroups
WHERE uuid = $1 AND NOT EXISTS (SELECT 1 FROM ports WHERE portgroup_uuid = $1)`, uuid)
	if err != nil {
		return fmt.Errorf("delete portgroup %s: %w", uuid, err)
	}
	if n, err := res.RowsAffected(); err != nil || n > 0 {
		return err
	}
	var one int
	err = db.queryRow(ctx, "SELECT 1 FROM portgroups WHERE uuid = $1", uuid).Scan(&one)
	switch {
	case errors.Is(err, stdsql.ErrNoRows):
		return notFound("portgroup %s could not be found", uuid)
	case err != nil:
		return fmt.Errorf("delete portgroup %s: %w", uuid, err)
	}
	return conflict("portgroup %s is not empty: it still has ports", uuid)
}
