package sql

import (
	"context"
	stdsql "database/sql"
	"encoding/json"
	"fmt"
	"time"

	"github.com/ferrometal/ferro/internal/store"
)

// RegisterConductor records c as online with a fresh heartbeat. A conductor
// that registers again (a restart) keeps its CreatedAt. On return c holds
// what was stored.
func (db *DB) RegisterConductor(ctx context.Context, c *store.Conductor) error {
	now := db.stamp()
	if c.CreatedAt.IsZero() {
		c.CreatedAt = now
	}
	if c.Drivers == nil {
		c.Drivers = []string{}
	}
	drivers, err := json.Marshal(c.Drivers)
	if err != nil {
		return fmt.Errorf("register conductor %s: %w", c.Hostname, err)
	}
	err = db.writeRow(ctx, `INSERT INTO conductors (hostname, conductor_group, online, drivers, created_at, last_heartbeat, api_only)
VALUES ($1, $2, TRUE, $3, $4, $5, $6)
ON CONFLICT (hostname) DO UPDATE SET conductor_group = excluded.conductor_group, online = TRUE,
	drivers = excluded.drivers, last_heartbeat = excluded.last_heartbeat, api_only = excluded.api_only
RETURNING created_at`,
		c.Hostname, c.Group, string(drivers), db.d.timeArg(normTime(c.CreatedAt)), db.d.timeArg(now), c.APIOnly,
	).Scan(timeScanner{&c.CreatedAt})
	if err != nil {
		return fmt.Errorf("register conductor %s: %w", c.Hostname, err)
	}
	c.Online = true
	c.LastHeartbeat = now
	return nil
}

// HeartbeatConductor refreshes a registered conductor's heartbeat and marks
// it online.
func (db *DB) HeartbeatConductor(ctx context.Context, hostname string) error {
	res, err := db.exec(ctx, "UPDATE conductors SET last_heartbeat = $2, online = TRUE WHERE hostname = $1",
		hostname, db.d.timeArg(db.stamp()))
	if err != nil {
		return fmt.Errorf("heartbeat conductor %s: %w", hostname, err)
	}
	return mustAffect(res, notFound("conductor %s could not be found", hostname))
}

// UnregisterConductor marks a conductor offline, as one that stops cleanly does.
func (db *DB) UnregisterConductor(ctx context.Context, hostname string) error {
	res, err := db.exec(ctx, "UPDATE conductors SET online = FALSE WHERE hostname = $1", hostname)
	if err != nil {
		return fmt.Errorf("unregister conductor %s: %w", hostname, err)
	}
	return mustAffect(res, notFound("conductor %s could not be found", hostname))
}

// ListConductors returns the online conductors whose last heartbeat is at
// or after aliveSince, by hostname.
func (db *DB) ListConductors(ctx context.Context, aliveSince time.Time) ([]*store.Conductor, error) {
	rows, err := db.query(ctx, `SELECT hostname, conductor_group, online, drivers, created_at, last_heartbeat, api_only
FROM conductors WHERE online = TRUE AND last_heartbeat >= $1 ORDER BY hostname`,
		db.d.timeArg(normTime(aliveSince)))
	if err != nil {
		return nil, fmt.Errorf("list conductors: %w", err)
	}
	cs, err := scanAll(rows, func(rows *stdsql.Rows) (*store.Conductor, error) {
		c := new(store.Conductor)
		var drivers []byte
		if err := rows.Scan(&c.Hostname, &c.Group, &c.Online, &drivers,
			timeScanner{&c.CreatedAt}, timeScanner{&c.LastHeartbeat}, &c.APIOnly); err != nil {
			return nil, err
		}
		return c, json.Unmarshal(drivers, &c.Drivers)
	})
	if err != nil {
		return nil, fmt.Errorf("list conductors: %w", err)
	}
	return cs, nil
}
