package sql

import (
	"context"
	stdsql "database/sql"
	"errors"
	"fmt"
	"strings"

	"github.com/google/uuid"

	"github.com/ferrometal/ferro/internal/baremetal"
	"github.com/ferrometal/ferro/internal/store"
)

var portsTable = &table{
	name:   "ports",
	kind:   "port",
	marker: "uuid",
	sorts: standardSorts(map[string]sortColumn{
		"address":          {col: "address", nullable: true},
		"node_id":          idSort("nodes", "node_uuid"),
		"portgroup_id":     idSort("portgroups", "portgroup_uuid"),
		"pxe_enabled":      bodySort("pxe_enabled"),
		"physical_network": bodySort("physical_network"),
		"is_smartnic":      bodySort("is_smartnic"),
		"name":             bodySort("name"),
		"description":      bodySort("description"),
		"vendor":           bodySort("vendor"),
		"category":         bodySort("category"),
		// Ironic's column of dynamic portgroups (1.111).
		"available_for_dynamic_portgroup": bodySort("available_for_dynamic_portgroup"),
	}),
	defaultSort: "created_at",
	defaultDir:  "asc",
}

var portType = objectType[*baremetal.Port]{
	columns: "created_at, body",
	scan:    scanCreatedBody,
	decode: func(r *bodyRow, in interner) (*baremetal.Port, error) {
		p := new(baremetal.Port)
		if err := decodePort(r.body, p, in); err != nil {
			return nil, err
		}
		p.CreatedAt = r.createdAt
		emptyJSON(&p.LocalLinkConnection)
		emptyJSON(&p.Extra)
		emptyJSON(&p.InternalInfo)
		return p, nil
	},
}

// normalizeMAC is the form port and portgroup addresses are stored and
// matched in.
func normalizeMAC(a string) string { return strings.ToLower(a) }

func (db *DB) portError(err error, p *baremetal.Port) error {
	return db.writeError(err, "port", map[string]string{"uuid": p.UUID, "address": p.Address},
		fmt.Sprintf("node %s could not be found", p.NodeUUID))
}

// CreatePort inserts p, giving it a UUID and CreatedAt if it has none. The
// address is stored in lower case.
func (db *DB) CreatePort(ctx context.Context, p *baremetal.Port) error {
	if p.UUID == "" {
		p.UUID = uuid.NewString()
	}
	if p.CreatedAt.IsZero() {
		p.CreatedAt = db.stamp()
	}
	p.CreatedAt = normTime(p.CreatedAt)
	p.UpdatedAt = normTimePtr(p.UpdatedAt)
	p.Address = normalizeMAC(p.Address)
	body, err := encodeBody(p)
	if err != nil {
		return fmt.Errorf("create port %s: %w", p.UUID, err)
	}
	_, err = db.exec(ctx, `INSERT INTO ports (uuid, address, node_uuid, portgroup_uuid, created_at, updated_at, body)
VALUES ($1, $2, $3, $4, $5, $6, $7)`,
		p.UUID, nullString(p.Address), p.NodeUUID, nullString(p.PortgroupUUID),
		db.d.timeArg(p.CreatedAt), db.d.nullTimeArg(p.UpdatedAt), body)
	if err != nil {
		return db.portError(err, p)
	}
	return nil
}

// GetPort returns the port with this UUID.
func (db *DB) GetPort(ctx context.Context, uuid string) (*baremetal.Port, error) {
	p, err := portType.one(db.queryRow(ctx, "SELECT "+portType.columns+" FROM ports WHERE uuid = $1", uuid))
	if errors.Is(err, stdsql.ErrNoRows) {
		return nil, notFound("port %s could not be found", uuid)
	}
	if err != nil {
		return nil, fmt.Errorf("get port %s: %w", uuid, err)
	}
	return p, nil
}

// GetPortByAddress returns the port with this MAC address, in any case.
func (db *DB) GetPortByAddress(ctx context.Context, address string) (*baremetal.Port, error) {
	p, err := portType.one(db.queryRow(ctx, "SELECT "+portType.columns+" FROM ports WHERE address = $1", normalizeMAC(address)))
	if errors.Is(err, stdsql.ErrNoRows) {
		return nil, notFound("port with address %s could not be found", address)
	}
	if err != nil {
		return nil, fmt.Errorf("get port with address %s: %w", address, err)
	}
	return p, nil
}

// ListPorts returns the ports f selects, one page of them.
func (db *DB) ListPorts(ctx context.Context, f store.PortFilter) ([]*baremetal.Port, error) {
	q := db.newList(portsTable, portType.columns)
	q.eq("node_uuid", f.NodeUUID)
	q.eq("address", normalizeMAC(f.Address))
	q.eq("portgroup_uuid", f.PortgroupUUID)
	if len(f.Addresses) > 0 {
		addrs := make([]string, len(f.Addresses))
		for i, a := range f.Addresses {
			addrs[i] = normalizeMAC(a)
		}
		q.in("address", addrs)
	}
	return list(ctx, q, f.Page, portType)
}

// UpdatePort writes every field of p but CreatedAt, and sets p.UpdatedAt.
func (db *DB) UpdatePort(ctx context.Context, p *baremetal.Port) error {
	now := db.stamp()
	p.UpdatedAt = &now
	p.Address = normalizeMAC(p.Address)
	body, err := encodeBody(p)
	if err != nil {
		return fmt.Errorf("update port %s: %w", p.UUID, err)
	}
	err = db.writeRow(ctx, `UPDATE ports SET address = $2, node_uuid = $3, portgroup_uuid = $4, updated_at = $5, body = $6
WHERE uuid = $1
RETURNING created_at`,
		p.UUID, nullString(p.Address), p.NodeUUID, nullString(p.PortgroupUUID), db.d.timeArg(now), body,
	).Scan(timeScanner{&p.CreatedAt})
	if errors.Is(err, stdsql.ErrNoRows) {
		return notFound("port %s could not be found", p.UUID)
	}
	if err != nil {
		return db.portError(err, p)
	}
	return nil
}

// DeletePort deletes the port with this UUID.
func (db *DB) DeletePort(ctx context.Context, uuid string) error {
	res, err := db.exec(ctx, "DELETE FROM ports WHERE uuid = $1", uuid)
	if err != nil {
		return fmt.Errorf("delete port %s: %w", uuid, err)
	}
	return mustAffect(res, notFound("port %s could not be found", uuid))
}
