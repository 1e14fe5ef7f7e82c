package sql

import (
	"context"
	stdsql "database/sql"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/google/uuid"
)

// bodyTable is one kind of object kept as a JSON body beside the columns
// that index it (chassis, deploy templates, volume connectors and
// targets, portgroups, allocations): its create, get, update and delete are the same statements
// over a different description.
type bodyTable[T any] struct {
	*table
	typ objectType[T]
	// cols are the indexed columns beside uuid, created_at, updated_at
	// and body; vals gives v's values for them, in that order.
	cols []string
	vals func(v T) []any
	// meta points at v's UUID and timestamps.
	meta func(v T) (id *string, created *time.Time, updated **time.Time)
	// prepare, when set, puts v in its stored form before it is written.
	prepare func(v T)
	// byName: get finds the object by UUID or name.
	byName bool
	// writeError explains a failed insert or update of v.
	writeError func(db *DB, err error, v T) error
	// inUse, when set, is the condition (on $1, the UUID) under which an
	// object may not be deleted, and busy the message then.
	inUse func(d *dialect) string
	busy  string

	insertSQL, updateSQL, getSQL string
}

// bodyType reads an object kept whole in the body column, with its
// CreatedAt from the created_at column; fix then makes its nil free-form
// fields empty, as clients expect them.
func bodyType[E any](created func(*E) *time.Time, fix func(*E)) objectType[*E] {
	return objectType[*E]{
		columns: "created_at, body",
		scan:    scanCreatedBody,
		decode: func(r *bodyRow, _ interner) (*E, error) {
			v := new(E)
			if err := decodeBody(r.body, v); err != nil {
				return nil, err
			}
			*created(v) = r.createdAt
			fix(v)
			return v, nil
		},
	}
}

// newBodyTable completes b's statements.
func newBodyTable[T any](b *bodyTable[T]) *bodyTable[T] {
	var ins, set strings.Builder
	for i, c := range b.cols {
		ins.WriteString(", " + c)
		set.WriteString(c + " = $" + strconv.Itoa(i+2) + ", ")
	}
	n := len(b.cols)
	ph := make([]string, n+4)
	for i := range ph {
		ph[i] = "$" + strconv.Itoa(i+1)
	}
	b.insertSQL = "INSERT INTO " + b.name + " (uuid" + ins.String() + ", created_at, updated_at, body) VALUES (" + strings.Join(ph, ", ") + ")"
	b.updateSQL = "UPDATE " + b.name + " SET " + set.String() + "updated_at = $" + strconv.Itoa(n+2) + ", body = $" + strconv.Itoa(n+3) +
		" WHERE uuid = $1 RETURNING created_at"
	where := "uuid = $1"
	if b.byName {
		where = byUUIDOrName
	}
	b.getSQL = "SELECT " + b.typ.columns + " FROM " + b.name + " WHERE " + where
	return b
}

// create inserts v, giving it a UUID and CreatedAt if it has none.
func (b *bodyTable[T]) create(ctx context.Context, db *DB, v T) error {
	id, created, updated := b.meta(v)
	if *id == "" {
		*id = uuid.NewString()
	}
	if created.IsZero() {
		*created = db.stamp()
	}
	*created = normTime(*created)
	*updated = normTimePtr(*updated)
	if b.prepare != nil {
		b.prepare(v)
	}
	body, err := encodeBody(v)
	if err != nil {
		return fmt.Errorf("create %s %s: %w", b.kind, *id, err)
	}
	args := append([]any{*id}, b.vals(v)...)
	args = append(args, db.d.timeArg(*created), db.d.nullTimeArg(*updated), body)
	if _, err := db.exec(ctx, b.insertSQL, args...); err != nil {
		return b.writeError(db, err, v)
	}
	return nil
}

// get returns the object with this UUID (or name, byName).
func (b *bodyTable[T]) get(ctx context.Context, db *DB, ident string) (T, error) {
	v, err := b.typ.one(db.queryRow(ctx, b.getSQL, ident))
	if errors.Is(err, stdsql.ErrNoRows) {
		return v, notFound("%s %s could not be found", b.kind, ident)
	}
	if err != nil {
		return v, fmt.Errorf("get %s %s: %w", b.kind, ident, err)
	}
	return v, nil
}

// update writes every field of v but CreatedAt, and sets its UpdatedAt.
func (b *bodyTable[T]) update(ctx context.Context, db *DB, v T) error {
	id, created, updated := b.meta(v)
	now := db.stamp()
	*updated = &now
	if b.prepare != nil {
		b.prepare(v)
	}
	body, err := encodeBody(v)
	if err != nil {
		return fmt.Errorf("update %s %s: %w", b.kind, *id, err)
	}
	args := append([]any{*id}, b.vals(v)...)
	args = append(args, db.d.timeArg(now), body)
	err = db.writeRow(ctx, b.updateSQL, args...).Scan(timeScanner{created})
	if errors.Is(err, stdsql.ErrNoRows) {
		return notFound("%s %s could not be found", b.kind, *id)
	}
	if err != nil {
		return b.writeError(db, err, v)
	}
	return nil
}

// delete deletes the object with this UUID; one still in use (inUse) is
// not deleted: ErrConflict.
func (b *bodyTable[T]) delete(ctx context.Context, db *DB, id string) error {
	q := "DELETE FROM " + b.name + " WHERE uuid = $1"
	if b.inUse != nil {
		q += " AND NOT (" + b.inUse(db.d) + ")"
	}
	res, err := db.exec(ctx, q, id)
	if err != nil {
		return fmt.Errorf("delete %s %s: %w", b.kind, id, err)
	}
	gone := notFound("%s %s could not be found", b.kind, id)
	if b.inUse == nil {
		return mustAffect(res, gone)
	}
	if n, err := res.RowsAffected(); err != nil || n > 0 {
		return err
	}
	var one int
	err = db.queryRow(ctx, "SELECT 1 FROM "+b.name+" WHERE uuid = $1", id).Scan(&one)
	switch {
	case errors.Is(err, stdsql.ErrNoRows):
		return gone
	case err != nil:
		return fmt.Errorf("delete %s %s: %w", b.kind, id, err)
	}
	return conflict(b.busy, id)
}

// query starts a list of b's objects: filters go on it before list.
func (b *bodyTable[T]) query(db *DB) *listQuery { return db.newList(b.table, b.typ.columns) }
