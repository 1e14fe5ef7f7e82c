package sql

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"github.com/ferrometal/ferro/internal/baremetal"
	"github.com/ferrometal/ferro/internal/store"
)

var volumeConnectorsTable = newBodyTable(&bodyTable[*baremetal.VolumeConnector]{
	table: &table{
		name:   "volume_connectors",
		kind:   "volume connector",
		marker: "uuid",
		sorts: standardSorts(map[string]sortColumn{
			"type": {col: "type"}, "connector_id": {col: "connector_id"},
			"node_uuid": {col: "node_uuid"}, "node_id": idSort("nodes", "node_uuid"),
		}),
		defaultSort: "created_at",
		defaultDir:  "asc",
	},
	typ: bodyType(func(c *baremetal.VolumeConnector) *time.Time { return &c.CreatedAt },
		func(c *baremetal.VolumeConnector) { emptyJSON(&c.Extra) }),
	cols: []string{"node_uuid", "type", "connector_id"},
	vals: func(c *baremetal.VolumeConnector) []any { return []any{c.NodeUUID, c.Type, c.ConnectorID} },
	meta: func(c *baremetal.VolumeConnector) (*string, *time.Time, **time.Time) {
		return &c.UUID, &c.CreatedAt, &c.UpdatedAt
	},
	writeError: func(db *DB, err error, c *baremetal.VolumeConnector) error {
		return db.writeError(err, "volume connector", map[string]string{
			"uuid": c.UUID, "type": c.Type + "/" + c.ConnectorID, "connector_id": c.Type + "/" + c.ConnectorID,
		}, fmt.Sprintf("node %s could not be found", c.NodeUUID))
	},
})

var volumeTargetsTable = newBodyTable(&bodyTable[*baremetal.VolumeTarget]{
	table: &table{
		name:   "volume_targets",
		kind:   "volume target",
		marker: "uuid",
		sorts: standardSorts(map[string]sortColumn{
			"boot_index": {col: "boot_index"}, "node_uuid": {col: "node_uuid"},
			"node_id":     idSort("nodes", "node_uuid"),
			"volume_type": bodySort("volume_type"), "volume_id": bodySort("volume_id"),
		}),
		defaultSort: "created_at",
		defaultDir:  "asc",
	},
	typ: bodyType(func(vt *baremetal.VolumeTarget) *time.Time { return &vt.CreatedAt },
		func(vt *baremetal.VolumeTarget) {
			emptyJSON(&vt.Extra)
			emptyJSON(&vt.Properties)
		}),
	cols: []string{"node_uuid", "boot_index"},
	vals: func(vt *baremetal.VolumeTarget) []any { return []any{vt.NodeUUID, vt.BootIndex} },
	meta: func(vt *baremetal.VolumeTarget) (*string, *time.Time, **time.Time) {
		return &vt.UUID, &vt.CreatedAt, &vt.UpdatedAt
	},
	writeError: func(db *DB, err error, vt *baremetal.VolumeTarget) error {
		bi := strconv.Itoa(vt.BootIndex)
		return db.writeError(err, "volume target", map[string]string{
			"uuid": vt.UUID, "node_uuid": vt.NodeUUID + "/" + bi, "boot_index": vt.NodeUUID + "/" + bi,
		}, fmt.Sprintf("node %s could not be found", vt.NodeUUID))
	},
})

// CreateVolumeConnector inserts c, giving it a UUID and CreatedAt if it has none.
func (db *DB) CreateVolumeConnector(ctx context.Context, c *baremetal.VolumeConnector) error {
	return volumeConnectorsTable.create(ctx, db, c)
}

// GetVolumeConnector returns the volume connector with this UUID.
func (db *DB) GetVolumeConnector(ctx context.Context, id string) (*baremetal.VolumeConnector, error) {
	return volumeConnectorsTable.get(ctx, db, id)
}

// ListVolumeConnectors returns the connectors f selects, one page of them.
func (db *DB) ListVolumeConnectors(ctx context.Context, f store.VolumeFilter) ([]*baremetal.VolumeConnector, error) {
	q := volumeConnectorsTable.query(db)
	q.eq("node_uuid", f.NodeUUID)
	return list(ctx, q, f.Page, volumeConnectorsTable.typ)
}

// UpdateVolumeConnector writes every field of c but CreatedAt, and sets c.UpdatedAt.
func (db *DB) UpdateVolumeConnector(ctx context.Context, c *baremetal.VolumeConnector) error {
	return volumeConnectorsTable.update(ctx, db, c)
}

// DeleteVolumeConnector deletes the volume connector with this UUID.
func (db *DB) DeleteVolumeConnector(ctx context.Context, id string) error {
	return volumeConnectorsTable.delete(ctx, db, id)
}

// CreateVolumeTarget inserts vt, giving it a UUID and CreatedAt if it has none.
func (db *DB) CreateVolumeTarget(ctx context.Context, vt *baremetal.VolumeTarget) error {
	return volumeTargetsTable.create(ctx, db, vt)
}

// GetVolumeTarget returns the volume target with this UUID.
func (db *DB) GetVolumeTarget(ctx context.Context, id string) (*baremetal.VolumeTarget, error) {
	return volumeTargetsTable.get(ctx, db, id)
}

// ListVolumeTargets returns the targets f selects, one page of them.
func (db *DB) ListVolumeTargets(ctx context.Context, f store.VolumeFilter) ([]*baremetal.VolumeTarget, error) {
	q := volumeTargetsTable.query(db)
	q.eq("node_uuid", f.NodeUUID)
	return list(ctx, q, f.Page, volumeTargetsTable.typ)
}

// UpdateVolumeTarget writes every field of vt but CreatedAt, and sets vt.UpdatedAt.
func (db *DB) UpdateVolumeTarget(ctx context.Context, vt *baremetal.VolumeTarget) error {
	return volumeTargetsTable.update(ctx, db, vt)
}

// DeleteVolumeTarget deletes the volume target with this UUID.
func (db *DB) DeleteVolumeTarget(ctx context.Context, id string) error {
	return volumeTargetsTable.delete(ctx, db, id)
}
