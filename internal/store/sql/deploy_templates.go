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

var deployTemplatesTable = &table{
	name:        "deploy_templates",
	kind:        "deploy template",
	marker:      "uuid",
	sorts:       standardSorts(map[string]sortColumn{"name": {col: "name"}}),
	defaultSort: "created_at",
	defaultDir:  "asc",
}

var deployTemplateType = objectType[*baremetal.DeployTemplate]{
	columns: "created_at, body",
	scan:    scanCreatedBody,
	decode: func(r *bodyRow, _ interner) (*baremetal.DeployTemplate, error) {
		dt := new(baremetal.DeployTemplate)
		if err := decodeBody(r.body, dt); err != nil {
			return nil, err
		}
		dt.CreatedAt = r.createdAt
		emptyJSON(&dt.Extra)
		for i := range dt.Steps {
			emptyJSON(&dt.Steps[i].Args)
		}
		return dt, nil
	},
}

func (db *DB) deployTemplateError(err error, dt *baremetal.DeployTemplate) error {
	return db.writeError(err, "deploy template", map[string]string{"uuid": dt.UUID, "name": dt.Name}, "")
}

// CreateDeployTemplate inserts dt, giving it a UUID and CreatedAt if it has none.
func (db *DB) CreateDeployTemplate(ctx context.Context, dt *baremetal.DeployTemplate) error {
	if dt.UUID == "" {
		dt.UUID = uuid.NewString()
	}
	if dt.CreatedAt.IsZero() {
		dt.CreatedAt = db.stamp()
	}
	dt.CreatedAt = normTime(dt.CreatedAt)
	dt.UpdatedAt = normTimePtr(dt.UpdatedAt)
	body, err := encodeBody(dt)
	if err != nil {
		return fmt.Errorf("create deploy template %s: %w", dt.UUID, err)
	}
	_, err = db.exec(ctx, `INSERT INTO deploy_templates (uuid, name, created_at, updated_at, body) VALUES ($1, $2, $3, $4, $5)`,
		dt.UUID, dt.Name, db.d.timeArg(dt.CreatedAt), db.d.nullTimeArg(dt.UpdatedAt), body)
	if err != nil {
		return db.deployTemplateError(err, dt)
	}
	return nil
}

// GetDeployTemplate returns the deploy template whose UUID or name is ident.
func (db *DB) GetDeployTemplate(ctx context.Context, ident string) (*baremetal.DeployTemplate, error) {
	dt, err := deployTemplateType.one(db.queryRow(ctx, "SELECT "+deployTemplateType.columns+" FROM deploy_templates WHERE "+byUUIDOrName, ident))
	if errors.Is(err, stdsql.ErrNoRows) {
		return nil, notFound("deploy template %s could not be found", ident)
	}
	if err != nil {
		return nil, fmt.Errorf("get deploy template %s: %w", ident, err)
	}
	return dt, nil
}

// ListDeployTemplates returns one page of deploy templates.
func (db *DB) ListDeployTemplates(ctx context.Context, p store.Page) ([]*baremetal.DeployTemplate, error) {
	return list(ctx, db.newList(deployTemplatesTable, deployTemplateType.columns), p, deployTemplateType)
}

// UpdateDeployTemplate writes every field of dt but CreatedAt, and sets dt.UpdatedAt.
func (db *DB) UpdateDeployTemplate(ctx context.Context, dt *baremetal.DeployTemplate) error {
	now := db.stamp()
	dt.UpdatedAt = &now
	body, err := encodeBody(dt)
	if err != nil {
		return fmt.Errorf("update deploy template %s: %w", dt.UUID, err)
	}
	err = db.writeRow(ctx, `UPDATE deploy_templates SET name = $2, updated_at = $3, body = $4 WHERE uuid = $1 RETURNING created_at`,
		dt.UUID, dt.Name, db.d.timeArg(now), body).Scan(timeScanner{&dt.CreatedAt})
	if errors.Is(err, stdsql.ErrNoRows) {
		return notFound("deploy template %s could not be found", dt.UUID)
	}
	if err != nil {
		return db.deployTemplateError(err, dt)
	}
	return nil
}

// DeleteDeployTemplate deletes the deploy template with this UUID.
func (db *DB) DeleteDeployTemplate(ctx context.Context, id string) error {
	res, err := db.exec(ctx, "DELETE FROM deploy_templates WHERE uuid = $1", id)
	if err != nil {
		return fmt.Errorf("delete deploy template %s: %w", id, err)
	}
	return mustAffect(res, notFound("deploy template %s could not be found", id))
}
