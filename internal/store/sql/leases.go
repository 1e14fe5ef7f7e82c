package sql

import (
	"context"
	stdsql "database/sql"
	"errors"
	"fmt"
	"strings"

	"github.com/ferrometal/ferro/internal/store"
)

const leaseColumns = "mac, ip, node_uuid, expires_at, updated_at"

func scanLease(row scanner) (*store.Lease, error) {
	l := new(store.Lease)
	if err := row.Scan(&l.MAC, &l.IP, &l.NodeUUID, timeScanner{&l.ExpiresAt}, timeScanner{&l.UpdatedAt}); err != nil {
		return nil, err
	}
	return l, nil
}

// SaveLease inserts or replaces the lease of l.MAC and sets UpdatedAt.
func (db *DB) SaveLease(ctx context.Context, l *store.Lease) error {
	l.MAC = strings.ToLower(l.MAC)
	l.UpdatedAt = db.stamp()
	l.ExpiresAt = normTime(l.ExpiresAt)
	_, err := db.exec(ctx, `INSERT INTO dhcp_leases (mac, ip, node_uuid, expires_at, updated_at) VALUES ($1, $2, $3, $4, $5)
ON CONFLICT (mac) DO UPDATE SET ip = excluded.ip, node_uuid = excluded.node_uuid,
	expires_at = excluded.expires_at, updated_at = excluded.updated_at`,
		l.MAC, l.IP, l.NodeUUID, db.d.timeArg(l.ExpiresAt), db.d.timeArg(l.UpdatedAt))
	if err != nil {
		return db.writeError(err, "lease", map[string]string{"ip": l.IP, "mac": l.MAC},
			fmt.Sprintf("node %s could not be found", l.NodeUUID))
	}
	return nil
}

// GetLease returns the lease of a MAC.
func (db *DB) GetLease(ctx context.Context, mac string) (*store.Lease, error) {
	mac = strings.ToLower(mac)
	l, err := scanLease(db.queryRow(ctx, "SELECT "+leaseColumns+" FROM dhcp_leases WHERE mac = $1", mac))
	if errors.Is(err, stdsql.ErrNoRows) {
		return nil, notFound("lease for %s could not be found", mac)
	}
	if err != nil {
		return nil, fmt.Errorf("get lease %s: %w", mac, err)
	}
	return l, nil
}

// ListLeases returns every lease, by address.
func (db *DB) ListLeases(ctx context.Context) ([]*store.Lease, error) {
	rows, err := db.query(ctx, "SELECT "+leaseColumns+" FROM dhcp_leases ORDER BY ip")
	if err != nil {
		return nil, fmt.Errorf("list leases: %w", err)
	}
	ls, err := scanAll(rows, func(rows *stdsql.Rows) (*store.Lease, error) { return scanLease(rows) })
	if err != nil {
		return nil, fmt.Errorf("list leases: %w", err)
	}
	return ls, nil
}

// DeleteLease deletes the lease of a MAC.
func (db *DB) DeleteLease(ctx context.Context, mac string) error {
	mac = strings.ToLower(mac)
	res, err := db.exec(ctx, "DELETE FROM dhcp_leases WHERE mac = $1", mac)
	if err != nil {
		return fmt.Errorf("delete lease %s: %w", mac, err)
	}
	return mustAffect(res, notFound("lease for %s could not be found", mac))
}
