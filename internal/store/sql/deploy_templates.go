package sql

import (
	"context"
	"time"

	"github.com/ferrometal/ferro/internal/baremetal"
	"github.com/ferrometal/ferro/internal/store"
)

var deployTemplatesTable = newBodyTable(&bodyTable[*baremetal.DeployTemplate]{
	table: &table{
		name:        "deploy_templates",
		kind:        "deploy template",
		marker:      "uuid",
		sorts:       standardSorts(map[string]sortColumn{"name": {col: "name"}}),
		defaultSort: "created_at",
		defaultDir:  "asc",
	},
	typ: bodyType(func(dt *baremetal.DeployTemplate) *time.Time { return &dt.CreatedAt },
		func(dt *baremetal.DeployTemplate) {
			emptyJSON(&dt.Extra)
			for i := range dt.Steps {
				emptyJSON(&dt.Steps[i].Args)
			}
		}),
	cols: []string{"name"},
	vals: func(dt *baremetal.DeployTemplate) []any { return []any{dt.Name} },
	meta: func(dt *baremetal.DeployTemplate) (*string, *time.Time, **time.Time) {
		return &dt.UUID, &dt.CreatedAt, &dt.UpdatedAt
	},
	byName: true,
	writeError: func(db *DB, err error, dt *baremetal.DeployTemplate) error {
		return db.writeError(err, "deploy template", map[string]string{"uuid": dt.UUID, "name": dt.Name}, "")
	},
})

// CreateDeployTemplate inserts dt, giving it a UUID and CreatedAt if it has none.
func (db *DB) CreateDeployTemplate(ctx context.Context, dt *baremetal.DeployTemplate) error {
	return deployTemplatesTable.create(ctx, db, dt)
}

// GetDeployTemplate returns the deploy template whose UUID or name is ident.
func (db *DB) GetDeployTemplate(ctx context.Context, ident string) (*baremetal.DeployTemplate, error) {
	return deployTemplatesTable.get(ctx, db, ident)
}

// ListDeployTemplates returns one page of deploy templates.
func (db *DB) ListDeployTemplates(ctx context.Context, p store.Page) ([]*baremetal.DeployTemplate, error) {
	return list(ctx, deployTemplatesTable.query(db), p, deployTemplatesTable.typ)
}

// UpdateDeployTemplate writes every field of dt but CreatedAt, and sets dt.UpdatedAt.
func (db *DB) UpdateDeployTemplate(ctx context.Context, dt *baremetal.DeployTemplate) error {
	return deployTemplatesTable.update(ctx, db, dt)
}

// DeleteDeployTemplate deletes the deploy template with this UUID.
func (db *DB) DeleteDeployTemplate(ctx context.Context, id string) error {
	return deployTemplatesTable.delete(ctx, db, id)
}
