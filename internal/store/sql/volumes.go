package sql

import (
	"context"
	stdsql "database/sql"
	"errors"
	"fmt"
	"strconv"

	"github.com/google/uuid"

	"github.com/ferrometal/ferro/internal/baremetal"
	"github.com/ferrometal/ferro/internal/store"
)

var volumeConnectorsTable = &table{
	name:        "volume_connectors",
	kind:        "volume connector",
	marker:      "uuid",
	sorts:       standardSorts(map[string]sortColumn{"type": {col: "type"}, "connector_id": {col: "connector_id"}, "node_uuid": {col: "node_uuid"}}),
	defaultSort: "created_at",
	defaultDir:  "asc",
}

var volumeTargetsTable = &table{
	name:        "volume_targets",
	kind:        "volume target",
	marker:      "uuid",
	sorts:       standardSorts(map[string]sortColumn{"boot_index": {col: "boot_index"}, "node_uuid": {col: "node_uuid"}}),
	defaultSort: "created_at",
	defaultDir:  "asc",
}

var volumeConnectorType = objectType[*baremetal.VolumeConnector]{
	columns: "created_at, body",
	scan:    scanCreatedBody,
	decode: func(r *bodyRow, _ interner) (*baremetal.VolumeConnector, error) {
		c := new(baremetal.VolumeConnector)
		if err := decodeBody(r.body, c); err != nil {
			return nil, err
		}
		c.CreatedAt = r.createdAt
		emptyJSON(&c.Extra)
		return c, nil
	},
}

var volumeTargetType = objectType[*baremetal.VolumeTarget]{
	columns: "created_at, body",
	scan:    scanCreatedBody,
	decode: func(r *bodyRow, _ interner) (*baremetal.VolumeTarget, error) {
		vt := new(baremetal.VolumeTarget)
		if err := decodeBody(r.body, vt); err != nil {
			return nil, err
		}
		vt.CreatedAt = r.createdAt
		emptyJSON(&vt.Extra)
		emptyJSON(&vt.Properties)
		return vt, nil
	},
}

func (db *DB) volumeConnectorError(err error, c *baremetal.VolumeConnector) error {
	return db.writeError(err, "volume connector", map[string]string{
		"uuid": c.UUID, "type": c.Type + "/" + c.ConnectorID, "connector_id": c.Type + "/" + c.ConnectorID,
	}, fmt.Sprintf("node %s could not be found", c.NodeUUID))
}

func (db *DB) volumeTargetError(err error, vt *baremetal.VolumeTarget) error {
	bi := strconv.Itoa(vt.BootIndex)
	return db.writeError(err, "volume target", map[string]string{
		"uuid": vt.UUID, "node_uuid": vt.NodeUUID + "/" + bi, "boot_index": vt.NodeUUID + "/" + bi,
	}, fmt.Sprintf("node %s could not be found", vt.NodeUUID))
}

// CreateVolumeConnector inserts c, giving it a UUID and CreatedAt if it has none.
func (db *DB) CreateVolumeConnector(ctx context.Context, c *baremetal.VolumeConnector) error {
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
		return fmt.Errorf("create volume connector %s: %w", c.UUID, err)
	}
	_, err = db.exec(ctx, `INSERT INTO volume_connectors (uuid, node_uuid, type, connector_id, created_at, updated_at, body)
VALUES ($1, $2, $3, $4, $5, $6, $7)`,
		c.UUID, c.NodeUUID, c.Type, c.ConnectorID, db.d.timeArg(c.CreatedAt), db.d.nullTimeArg(c.UpdatedAt), body)
	if err != nil {
		return db.volumeConnectorError(err, c)
	}
	return nil
}

// GetVolumeConnector returns the volume connector with this UUID.
func (db *DB) GetVolumeConnector(ctx context.Context, id string) (*baremetal.VolumeConnector, error) {
	c, err := volumeConnectorType.one(db.queryRow(ctx, "SELECT "+volumeConnectorType.columns+" FROM volume_connectors WHERE uuid = $1", id))
	if errors.Is(err, stdsql.ErrNoRows) {
		return nil, notFound("volume connector %s could not be found", id)
	}
	if err != nil {
		return nil, fmt.Errorf("get volume connector %s: %w", id, err)
	}
	return c, nil
}

// ListVolumeConnectors returns the connectors f selects, one page of them.
func (db *DB) ListVolumeConnectors(ctx context.Context, f store.VolumeFilter) ([]*baremetal.VolumeConnector, error) {
	q := db.newList(volumeConnectorsTable, volumeConnectorType.columns)
	q.eq("node_uuid", f.NodeUUID)
	return list(ctx, q, f.Page, volumeConnectorType)
}

// UpdateVolumeConnector writes every field of c but CreatedAt, and sets c.UpdatedAt.
func (db *DB) UpdateVolumeConnector(ctx context.Context, c *baremetal.VolumeConnector) error {
	now := db.stamp()
	c.UpdatedAt = &now
	body, err := encodeBody(c)
	if err != nil {
		return fmt.Errorf("update volume connector %s: %w", c.UUID, err)
	}
	err = db.writeRow(ctx, `UPDATE volume_connectors SET node_uuid = $2, type = $3, connector_id = $4, updated_at = $5, body = $6
WHERE uuid = $1
RETURNING created_at`,
		c.UUID, c.NodeUUID, c.Type, c.ConnectorID, db.d.timeArg(now), body).Scan(timeScanner{&c.CreatedAt})
	if errors.Is(err, stdsql.ErrNoRows) {
		return notFound("volume connector %s could not be found", c.UUID)
	}
	if err != nil {
		return db.volumeConnectorError(err, c)
	}
	return nil
}

// DeleteVolumeConnector deletes the volume connector with this UUID.
func (db *DB) DeleteVolumeConnector(ctx context.Context, id string) error {
	res, err := db.exec(ctx, "DELETE FROM volume_connectors WHERE uuid = $1", id)
	if err != nil {
		return fmt.Errorf("delete volume connector %s: %w", id, err)
	}
	return mustAffect(res, notFound("volume connector %s could not be found", id))
}

// CreateVolumeTarget inserts vt, giving it a UUID and CreatedAt if it has none.
func (db *DB) CreateVolumeTarget(ctx context.Context, vt *baremetal.VolumeTarget) error {
	if vt.UUID == "" {
		vt.UUID = uuid.NewString()
	}
	if vt.CreatedAt.IsZero() {
		vt.CreatedAt = db.stamp()
	}
	vt.CreatedAt = normTime(vt.CreatedAt)
	vt.UpdatedAt = normTimePtr(vt.UpdatedAt)
	body, err := encodeBody(vt)
	if err != nil {
		return fmt.Errorf("create volume target %s: %w", vt.UUID, err)
	}
	_, err = db.exec(ctx, `INSERT INTO volume_targets (uuid, node_uuid, boot_index, created_at, updated_at, body)
VALUES ($1, $2, $3, $4, $5, $6)`,
		vt.UUID, vt.NodeUUID, vt.BootIndex, db.d.timeArg(vt.CreatedAt), db.d.nullTimeArg(vt.UpdatedAt), body)
	if err != nil {
		return db.volumeTargetError(err, vt)
	}
	return nil
}

// GetVolumeTarget returns the volume target with this UUID.
func (db *DB) GetVolumeTarget(ctx context.Context, id string) (*baremetal.VolumeTarget, error) {
	vt, err := volumeTargetType.one(db.queryRow(ctx, "SELECT "+volumeTargetType.columns+" FROM volume_targets WHERE uuid = $1", id))
	if errors.Is(err, stdsql.ErrNoRows) {
		return nil, notFound("volume target %s could not be found", id)
	}
	if err != nil {
		return nil, fmt.Errorf("get volume target %s: %w", id, err)
	}
	return vt, nil
}

// ListVolumeTargets returns the targets f selects, one page of them.
func (db *DB) ListVolumeTargets(ctx context.Context, f store.VolumeFilter) ([]*baremetal.VolumeTarget, error) {
	q := db.newList(volumeTargetsTable, volumeTargetType.columns)
	q.eq("node_uuid", f.NodeUUID)
	return list(ctx, q, f.Page, volumeTargetType)
}

// UpdateVolumeTarget writes every field of vt but CreatedAt, and sets vt.UpdatedAt.
func (db *DB) UpdateVolumeTarget(ctx context.Context, vt *baremetal.VolumeTarget) error {
	now := db.stamp()
	vt.UpdatedAt = &now
	body, err := encodeBody(vt)
	if err != nil {
		return fmt.Errorf("update volume target %s: %w", vt.UUID, err)
	}
	err = db.writeRow(ctx, `UPDATE volume_targets SET node_uuid = $2, boot_index = $3, updated_at = $4, body = $5
WHERE uuid = $1
RETURNING created_at`,
		vt.UUID, vt.NodeUUID, vt.BootIndex, db.d.timeArg(now), body).Scan(timeScanner{&vt.CreatedAt})
	if errors.Is(err, stdsql.ErrNoRows) {
		return notFound("volume target %s could not be found", vt.UUID)
	}
	if err != nil {
		return db.volumeTargetError(err, vt)
	}
	return nil
}

// DeleteVolumeTarget deletes the volume target with this UUID.
func (db *DB) DeleteVolumeTarget(ctx context.Context, id string) error {
	res, err := db.exec(ctx, "DELETE FROM volume_targets WHERE uuid = $1", id)
	if err != nil {
		return fmt.Errorf("delete volume target %s: %w", id, err)
	}
	return mustAffect(res, notFound("volume target %s could not be found", id))
}
