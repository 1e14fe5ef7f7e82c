package sql

import (
	"context"
	"fmt"
	"time"

	"github.com/ferrometal/ferro/internal/baremetal"
	"github.com/ferrometal/ferro/internal/store"
)

var portgroupsTable = newBodyTable(&bodyTable[*baremetal.Portgroup]{
	table: &table{
		name:   "portgroups",
		kind:   "portgroup",
		marker: "uuid",
		sorts: standardSorts(map[string]sortColumn{
			"name":                       {col: "name", nullable: true},
			"address":                    {col: "address", nullable: true},
			"node_id":                    idSort("nodes", "node_uuid"),
			"mode":                       bodySort("mode"),
			"standalone_ports_supported": bodySort("standalone_ports_supported"),
			"physical_network":           bodySort("physical_network"),
			"category":                   bodySort("category"),
			"dynamic_portgroup":          bodySort("dynamic_portgroup"),
		}),
		defaultSort: "created_at",
		defaultDir:  "asc",
	},
	typ: bodyType(func(pg *baremetal.Portgroup) *time.Time { return &pg.CreatedAt },
		func(pg *baremetal.Portgroup) {
			emptyJSON(&pg.Properties)
			emptyJSON(&pg.Extra)
			emptyJSON(&pg.InternalInfo)
		}),
	cols: []string{"name", "address", "node_uuid"},
	vals: func(pg *baremetal.Portgroup) []any {
		return []any{nullString(pg.Name), nullString(pg.Address), pg.NodeUUID}
	},
	meta: func(pg *baremetal.Portgroup) (*string, *time.Time, **time.Time) {
		return &pg.UUID, &pg.CreatedAt, &pg.UpdatedAt
	},
	prepare: func(pg *baremetal.Portgroup) { pg.Address = normalizeMAC(pg.Address) },
	byName:  true,
	writeError: func(db *DB, err error, pg *baremetal.Portgroup) error {
		return db.writeError(err, "portgroup", map[string]string{"uuid": pg.UUID, "name": pg.Name, "address": pg.Address},
			fmt.Sprintf("node %s could not be found", pg.NodeUUID))
	},
	inUse: func(*dialect) string { return "EXISTS (SELECT 1 FROM ports WHERE portgroup_uuid = $1)" },
	busy:  "portgroup %s is not empty: it still has ports",
})

// CreatePortgroup inserts pg, giving it a UUID and CreatedAt if it has
// none. The address is stored in lower case.
func (db *DB) CreatePortgroup(ctx context.Context, pg *baremetal.Portgroup) error {
	return portgroupsTable.create(ctx, db, pg)
}

// GetPortgroup returns the portgroup whose UUID or name is ident.
func (db *DB) GetPortgroup(ctx context.Context, ident string) (*baremetal.Portgroup, error) {
	return portgroupsTable.get(ctx, db, ident)
}

// ListPortgroups returns the portgroups f selects, one page of them.
func (db *DB) ListPortgroups(ctx context.Context, f store.PortgroupFilter) ([]*baremetal.Portgroup, error) {
	q := portgroupsTable.query(db)
	q.eq("node_uuid", f.NodeUUID)
	q.eq("address", normalizeMAC(f.Address))
	return list(ctx, q, f.Page, portgroupsTable.typ)
}

// UpdatePortgroup writes every field of pg but CreatedAt, and sets pg.UpdatedAt.
func (db *DB) UpdatePortgroup(ctx context.Context, pg *baremetal.Portgroup) error {
	return portgroupsTable.update(ctx, db, pg)
}

// DeletePortgroup deletes the portgroup with this UUID. A portgroup that
// still has ports is not deleted: ErrConflict.
func (db *DB) DeletePortgroup(ctx context.Context, uuid string) error {
	return portgroupsTable.delete(ctx, db, uuid)
}
