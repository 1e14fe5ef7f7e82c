package sql

import (
	"context"
	stdsql "database/sql"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/ferrometal/ferro/internal/store"
)

var introspectionsTable = &table{
	name:   "introspections",
	kind:   "introspection",
	marker: "node_uuid",
	sorts: map[string]sortColumn{
		"id":          {col: "id"},
		"uuid":        {col: "node_uuid"},
		"node_uuid":   {col: "node_uuid"},
		"state":       {col: "state"},
		"started_at":  {col: "started_at"},
		"finished_at": {col: "finished_at", nullable: true, time: true},
		"updated_at":  {col: "updated_at"},
	},
	defaultSort: "started_at",
	defaultDir:  "desc",
}

// introspectionBody is the stored JSON of a store.Introspection. It has
// its own field names so that renaming a Go field does not orphan stored data.
type introspectionBody struct {
	NodeUUID   string     `json:"node_uuid"`
	State      string     `json:"state"`
	Error      string     `json:"error,omitempty"`
	ManageBoot bool       `json:"manage_boot"`
	TokenHash  []byte     `json:"token_hash,omitempty"`
	StartedAt  time.Time  `json:"started_at"`
	FinishedAt *time.Time `json:"finished_at,omitempty"`
	UpdatedAt  time.Time  `json:"updated_at"`
	LookupMACs []string   `json:"lookup_macs,omitempty"`
	LookupBMC  []string   `json:"lookup_bmc,omitempty"`
}

var introspectionType = objectType[*store.Introspection]{
	columns: "started_at, body",
	scan:    scanCreatedBody,
	decode: func(r *bodyRow, _ interner) (*store.Introspection, error) {
		var b introspectionBody
		if err := decodeBody(r.body, &b); err != nil {
			return nil, err
		}
		in := store.Introspection(b)
		return &in, nil
	},
}

// SaveIntrospection creates or replaces the introspection of in.NodeUUID
// and sets in.UpdatedAt (and in.StartedAt, when zero).
func (db *DB) SaveIntrospection(ctx context.Context, in *store.Introspection, reports ...store.IntrospectionData) error {
	return db.saveIntrospection(ctx, in, nil, reports)
}

// SaveIntrospectionFrom implements store.Store.
func (db *DB) SaveIntrospectionFrom(ctx context.Context, in *store.Introspection, from []string, reports ...store.IntrospectionData) error {
	if len(from) == 0 {
		return invalid("save introspection of node %s: no state to move from", in.NodeUUID)
	}
	return db.saveIntrospection(ctx, in, from, reports)
}

// saveIntrospection writes in and its reports in one transaction: an
// upsert, or with from an update of the row only if its state is in from.
func (db *DB) saveIntrospection(ctx context.Context, in *store.Introspection, from []string, reports []store.IntrospectionData) error {
	// Compress before the transaction: on SQLite it holds the only write
	// connection.
	stored := make([][]byte, len(reports))
	for i, r := range reports {
		if r.Data != nil {
			stored[i] = compressData(r.Data)
		}
	}
	was := *in
	now := db.stamp()
	if in.StartedAt.IsZero() {
		in.StartedAt = now
	}
	in.StartedAt = normTime(in.StartedAt)
	in.FinishedAt = normTimePtr(in.FinishedAt)
	in.UpdatedAt = now
	body, err := encodeBody(introspectionBody(*in))
	if err != nil {
		*in = was
		return fmt.Errorf("save introspection of node %s: %w", in.NodeUUID, err)
	}
	err = db.InTx(ctx, func(s store.Store) error {
		tx := s.(*DB)
		var a argList
		values := []any{in.NodeUUID, in.State, db.d.timeArg(in.StartedAt), db.d.nullTimeArg(in.FinishedAt), db.d.timeArg(now), body}
		for _, v := range values {
			a.arg(v)
		}
		q := `INSERT INTO introspections (node_uuid, state, started_at, finished_at, updated_at, body)
VALUES ($1, $2, $3, $4, $5, $6)
ON CONFLICT (node_uuid) DO UPDATE SET state = excluded.state, started_at = excluded.started_at,
	finished_at = excluded.finished_at, updated_at = excluded.updated_at, body = excluded.body`
		if from != nil {
			q = `UPDATE introspections SET state = $2, started_at = $3, finished_at = $4, updated_at = $5, body = $6
WHERE node_uuid = $1 AND state IN (` + a.list(from) + `)`
		}
		res, err := tx.exec(ctx, q, a.args...)
		if err != nil {
			return err
		}
		if from != nil {
			if n, err := res.RowsAffected(); err != nil {
				return err
			} else if n == 0 {
				return conflict("the introspection of node %s is no longer in state %s", in.NodeUUID, strings.Join(from, " or "))
			}
		}
		if err := tx.syncIntrospectionLookup(ctx, in); err != nil {
			return err
		}
		for i, r := range reports {
			if r.Data == nil {
				if _, err := tx.exec(ctx, "DELETE FROM introspection_data WHERE node_uuid = $1 AND kind = $2", in.NodeUUID, r.Kind); err != nil {
					return fmt.Errorf("delete %s introspection data of node %s: %w", r.Kind, in.NodeUUID, err)
				}
				continue
			}
			if err := tx.saveIntrospectionData(ctx, in.NodeUUID, r.Kind, stored[i]); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		*in = was
		return fmt.Errorf("save introspection of node %s: %w", in.NodeUUID, err)
	}
	return nil
}

// lookupKey is a row of introspection_lookup without its node.
type lookupKey struct{ kind, value string }

// syncIntrospectionLookup makes the introspection_lookup rows of
// in.NodeUUID the lookup attributes of in. Only starting an introspection
// changes them; the saves that move it through its states find the rows
// equal and write nothing, which is one read instead of a delete and an
// insert per attribute. It runs inside SaveIntrospection's transaction,
// after the introspection's row is written (and, on PostgreSQL, locked).
func (db *DB) syncIntrospectionLookup(ctx context.Context, in *store.Introspection) error {
	want := make(map[lookupKey]bool, len(in.LookupMACs)+len(in.LookupBMC))
	for _, v := range in.LookupMACs {
		want[lookupKey{"mac", strings.ToLower(v)}] = true
	}
	for _, v := range in.LookupBMC {
		want[lookupKey{"bmc", strings.ToLower(v)}] = true
	}
	rows, err := db.query(ctx, "SELECT kind, value FROM introspection_lookup WHERE node_uuid = $1", in.NodeUUID)
	if err != nil {
		return err
	}
	have, err := scanAll(rows, func(rows *stdsql.Rows) (lookupKey, error) {
		var k lookupKey
		return k, rows.Scan(&k.kind, &k.value)
	})
	if err != nil {
		return err
	}
	if len(have) == len(want) && !slices.ContainsFunc(have, func(k lookupKey) bool { return !want[k] }) {
		return nil
	}
	if _, err := db.exec(ctx, "DELETE FROM introspection_lookup WHERE node_uuid = $1", in.NodeUUID); err != nil {
		return err
	}
	for k := range want {
		if _, err := db.exec(ctx, "INSERT INTO introspection_lookup (node_uuid, kind, value) VALUES ($1, $2, $3)",
			in.NodeUUID, k.kind, k.value); err != nil {
			return err
		}
	}
	return nil
}

// LookupIntrospections returns, for each introspection whose lookup
// attributes contain any of macs or bmcs (compared in any case), how many
// they contain, by node UUID.
func (db *DB) LookupIntrospections(ctx context.Context, macs, bmcs []string) ([]store.IntrospectionMatch, error) {
	if len(macs) == 0 && len(bmcs) == 0 {
		return []store.IntrospectionMatch{}, nil
	}
	var (
		a  argList
		or []string
	)
	for _, attr := range []struct {
		kind   string
		values []string
	}{{"mac", macs}, {"bmc", bmcs}} {
		if len(attr.values) == 0 {
			continue
		}
		lower := make([]string, len(attr.values))
		for i, v := range attr.values {
			lower[i] = strings.ToLower(v)
		}
		or = append(or, "(l.kind = "+a.arg(attr.kind)+" AND l.value IN ("+a.list(lower)+"))")
	}
	rows, err := db.query(ctx, `SELECT l.node_uuid, COUNT(*), MAX(CASE WHEN i.finished_at IS NULL THEN 0 ELSE 1 END)
FROM introspection_lookup l JOIN introspections i ON i.node_uuid = l.node_uuid
WHERE `+strings.Join(or, " OR ")+`
GROUP BY l.node_uuid ORDER BY l.node_uuid`, a.args...)
	if err != nil {
		return nil, fmt.Errorf("look up introspections: %w", err)
	}
	matches, err := scanAll(rows, func(rows *stdsql.Rows) (store.IntrospectionMatch, error) {
		var m store.IntrospectionMatch
		var finished int
		err := rows.Scan(&m.NodeUUID, &m.Matches, &finished)
		m.Finished = finished == 1
		return m, err
	})
	if err != nil {
		return nil, fmt.Errorf("look up introspections: %w", err)
	}
	return matches, nil
}

// GetIntrospection returns the introspection of a node.
func (db *DB) GetIntrospection(ctx context.Context, nodeUUID string) (*store.Introspection, error) {
	in, err := introspectionType.one(db.queryRow(ctx,
		"SELECT "+introspectionType.columns+" FROM introspections WHERE node_uuid = $1", nodeUUID))
	if errors.Is(err, stdsql.ErrNoRows) {
		return nil, notFound("introspection of node %s could not be found", nodeUUID)
	}
	if err != nil {
		return nil, fmt.Errorf("get introspection of node %s: %w", nodeUUID, err)
	}
	return in, nil
}

// ListIntrospections returns the introspections f selects, newest first
// unless f sorts otherwise. The marker is a node UUID.
func (db *DB) ListIntrospections(ctx context.Context, f store.IntrospectionFilter) ([]*store.Introspection, error) {
	q := db.newList(introspectionsTable, introspectionType.columns)
	q.in("state", f.State)
	return list(ctx, q, f.Page, introspectionType)
}

// saveIntrospectionData stores a node's report of a kind, as compressData
// made it, replacing the previous one.
func (db *DB) saveIntrospectionData(ctx context.Context, nodeUUID, kind string, stored []byte) error {
	_, err := db.exec(ctx, `INSERT INTO introspection_data (node_uuid, kind, data) VALUES ($1, $2, $3)
ON CONFLICT (node_uuid, kind) DO UPDATE SET data = excluded.data`, nodeUUID, kind, stored)
	if err != nil {
		return fmt.Errorf("save %s introspection data of node %s: %w", kind, nodeUUID, err)
	}
	return nil
}

// GetIntrospectionData returns a node's report of a kind.
func (db *DB) GetIntrospectionData(ctx context.Context, nodeUUID, kind string) ([]byte, error) {
	var data []byte
	err := db.queryRow(ctx, "SELECT data FROM introspection_data WHERE node_uuid = $1 AND kind = $2", nodeUUID, kind).Scan(&data)
	if errors.Is(err, stdsql.ErrNoRows) {
		return nil, notFound("%s introspection data of node %s could not be found", kind, nodeUUID)
	}
	if err == nil {
		data, err = decompressData(data)
	}
	if err != nil {
		return nil, fmt.Errorf("get %s introspection data of node %s: %w", kind, nodeUUID, err)
	}
	return data, nil
}
