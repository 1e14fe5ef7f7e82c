package sql

import (
	"context"
	stdsql "database/sql"
	"errors"
	"fmt"

	"github.com/google/uuid"

	"github.com/ferrometal/ferro/internal/store"
)

const ruleColumns = "uuid, description, scope, created_at, body"

func scanRule(row scanner) (*store.Rule, error) {
	r := new(store.Rule)
	if err := row.Scan(&r.UUID, &r.Description, &r.Scope, timeScanner{&r.CreatedAt}, &r.Body); err != nil {
		return nil, err
	}
	return r, nil
}

// CreateRule stores r, giving it a UUID and CreatedAt if it has none. The
// body is kept byte for byte.
func (db *DB) CreateRule(ctx context.Context, r *store.Rule) error {
	if r.UUID == "" {
		r.UUID = uuid.NewString()
	}
	if r.CreatedAt.IsZero() {
		r.CreatedAt = db.stamp()
	}
	r.CreatedAt = normTime(r.CreatedAt)
	_, err := db.exec(ctx, "INSERT INTO rules (uuid, description, scope, created_at, body) VALUES ($1, $2, $3, $4, $5)",
		r.UUID, r.Description, r.Scope, db.d.timeArg(r.CreatedAt), string(r.Body))
	if err != nil {
		return db.writeError(err, "rule", map[string]string{"uuid": r.UUID}, "")
	}
	return nil
}

// GetRule returns the rule with this UUID.
func (db *DB) GetRule(ctx context.Context, uuid string) (*store.Rule, error) {
	r, err := scanRule(db.queryRow(ctx, "SELECT "+ruleColumns+" FROM rules WHERE uuid = $1", uuid))
	if errors.Is(err, stdsql.ErrNoRows) {
		return nil, notFound("rule %s could not be found", uuid)
	}
	if err != nil {
		return nil, fmt.Errorf("get rule %s: %w", uuid, err)
	}
	return r, nil
}

// ListRules returns every rule, oldest first: the order they apply in.
func (db *DB) ListRules(ctx context.Context) ([]*store.Rule, error) {
	rows, err := db.query(ctx, "SELECT "+ruleColumns+" FROM rules ORDER BY created_at, id")
	if err != nil {
		return nil, fmt.Errorf("list rules: %w", err)
	}
	rules, err := scanAll(rows, func(rows *stdsql.Rows) (*store.Rule, error) { return scanRule(rows) })
	if err != nil {
		return nil, fmt.Errorf("list rules: %w", err)
	}
	return rules, nil
}

// DeleteRule deletes the rule with this UUID.
func (db *DB) DeleteRule(ctx context.Context, uuid string) error {
	res, err := db.exec(ctx, "DELETE FROM rules WHERE uuid = $1", uuid)
	if err != nil {
		return fmt.Errorf("delete rule %s: %w", uuid, err)
	}
	return mustAffect(res, notFound("rule %s could not be found", uuid))
}

// DeleteAllRules deletes every rule.
func (db *DB) DeleteAllRules(ctx context.Context) error {
	if _, err := db.exec(ctx, "DELETE FROM rules"); err != nil {
		return fmt.Errorf("delete all rules: %w", err)
	}
	return nil
}
