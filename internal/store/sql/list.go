package sql

import (
	"context"
	stdsql "database/sql"
	"errors"
	"fmt"
	"maps"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/ferrometal/ferro/internal/store"
)

// table describes how a table is listed: the column a marker names, and
// the sort keys the API may ask for.
type table struct {
	name   string
	kind   string // "node", for messages
	marker string // column holding the marker value (a UUID)
	sorts  map[string]sortColumn
	// defaultSort and defaultDir apply when the Page does not say.
	defaultSort, defaultDir string
}

// sortColumn is a column lists sort on. Nullable columns sort as if NULL
// were the smallest value, on both engines, so markers work on them too.
type sortColumn struct {
	col      string
	nullable bool
	time     bool
	// sql, when set, computes the key of the row aliased alias (a field of
	// its JSON body, another table's id) instead of reading col.
	sql func(d *dialect, alias string) string
	// zero stands in for NULL instead of '' (for numbers).
	zero string
}

func (c sortColumn) expr(d *dialect, alias string) string {
	e := alias + "." + c.col
	if c.sql != nil {
		e = c.sql(d, alias)
	}
	switch {
	case !c.nullable:
		return e
	case c.time:
		return "COALESCE(" + e + ", " + d.minTime + ")"
	case c.zero != "":
		return "COALESCE(" + e + ", " + c.zero + ")"
	default:
		return "COALESCE(" + e + ", '')"
	}
}

// bodySort sorts on a top-level field of the JSON body, as Ironic sorts on
// the column of that name. A field the body omits sorts as ”. Booleans are
// 0 and 1 on SQLite, 'false' and 'true' on PostgreSQL: false first on both.
func bodySort(field string) sortColumn {
	return sortColumn{nullable: true, sql: func(d *dialect, alias string) string {
		if d == sqliteDialect {
			return "json_extract(" + alias + ".body, '$." + field + "')"
		}
		return "(" + alias + ".body->>'" + field + "')"
	}}
}

// idSort sorts on the integer id of the table row whose uuid is col, as
// Ironic sorts on its node_id and portgroup_id foreign keys. None sorts as 0.
func idSort(table, col string) sortColumn {
	return sortColumn{nullable: true, zero: "0", sql: func(_ *dialect, alias string) string {
		return "(SELECT r.id FROM " + table + " r WHERE r.uuid = " + alias + "." + col + ")"
	}}
}

// byUUIDOrName is the WHERE clause that finds the one row whose UUID or name
// is $1, preferring a UUID match should a name equal another row's UUID.
const byUUIDOrName = "(uuid = $1 OR name = $1) ORDER BY CASE WHEN uuid = $1 THEN 0 ELSE 1 END LIMIT 1"

// listQuery builds SELECT … WHERE … ORDER BY … LIMIT for one table. Filters
// add conditions with their arguments as $N placeholders.
type listQuery struct {
	argList
	db    *DB
	t     *table
	cols  string
	where []string
}

// argList collects a query's arguments and hands out their placeholders.
type argList struct{ args []any }

// arg adds an argument and returns its placeholder.
func (a *argList) arg(v any) string {
	a.args = append(a.args, v)
	return "$" + strconv.Itoa(len(a.args))
}

// list adds vs and returns their placeholders, comma-separated.
func (a *argList) list(vs []string) string {
	ph := make([]string, len(vs))
	for i, v := range vs {
		ph[i] = a.arg(v)
	}
	return strings.Join(ph, ", ")
}

func (db *DB) newList(t *table, cols string) *listQuery {
	return &listQuery{db: db, t: t, cols: cols}
}

// cond adds a condition without arguments.
func (q *listQuery) cond(c string) { q.where = append(q.where, c) }

// eq filters col = v unless v is empty.
func (q *listQuery) eq(col, v string) {
	if v != "" {
		q.where = append(q.where, col+" = "+q.arg(v))
	}
}

// in filters col IN (vs…) unless vs is empty.
func (q *listQuery) in(col string, vs []string) {
	if len(vs) == 0 {
		return
	}
	q.where = append(q.where, col+" IN ("+q.list(vs)+")")
}

// boolean filters col on *v unless v is nil. The value is a literal, not
// an argument, so that a plan made once for the statement can still use
// an index whose predicate names it (nodes_power_sync).
func (q *listQuery) boolean(col string, v *bool) {
	if v != nil {
		q.where = append(q.where, col+" = "+strings.ToUpper(strconv.FormatBool(*v)))
	}
}

// build returns the query for one page: rows strictly after the marker in
// the sort order, ties broken by id in the same direction.
func (q *listQuery) build(p store.Page) (string, error) {
	key := p.SortKey
	if key == "" {
		key = q.t.defaultSort
	}
	sc, ok := q.t.sorts[key]
	if !ok {
		return "", invalid("cannot sort the %s list by %q: the sort key must be one of %s",
			q.t.kind, key, strings.Join(slices.Sorted(maps.Keys(q.t.sorts)), ", "))
	}
	dir := strings.ToLower(p.SortDir)
	if dir == "" {
		dir = q.t.defaultDir
	}
	if dir != "asc" && dir != "desc" {
		return "", invalid("invalid sort direction %q: must be asc or desc", p.SortDir)
	}
	if p.Limit < 0 {
		return "", invalid("invalid limit %d: must not be negative", p.Limit)
	}
	d := q.db.d
	outer, inner := sc.expr(d, "t")+", t.id", sc.expr(d, "m")+", m.id"
	order := sc.expr(d, "t") + " " + dir + ", t.id " + dir
	if sc.col == "id" {
		outer, inner, order = "t.id", "m.id", "t.id "+dir
	}
	if p.Marker != "" {
		op := ">"
		if dir == "desc" {
			op = "<"
		}
		q.where = append(q.where, fmt.Sprintf("(%s) %s (SELECT %s FROM %s m WHERE m.%s = %s)",
			outer, op, inner, q.t.name, q.t.marker, q.arg(p.Marker)))
	}
	var b strings.Builder
	b.WriteString("SELECT " + q.cols + " FROM " + q.t.name + " t")
	if len(q.where) > 0 {
		b.WriteString(" WHERE " + strings.Join(q.where, " AND "))
	}
	b.WriteString(" ORDER BY " + order)
	if p.Limit > 0 {
		b.WriteString(" LIMIT " + q.arg(p.Limit))
	}
	return b.String(), nil
}

// list runs the query for p and reads each row as an o. An unknown marker
// is ErrNotFound.
func list[T any](ctx context.Context, q *listQuery, p store.Page, o objectType[T]) ([]T, error) {
	sqlText, err := q.build(p)
	if err != nil {
		return nil, err
	}
	rows, err := q.db.query(ctx, sqlText, q.args...)
	if err != nil {
		return nil, fmt.Errorf("list %ss: %w", q.t.kind, err)
	}
	raw, err := scanAll(rows, func(rows *stdsql.Rows) (bodyRow, error) {
		var r bodyRow
		return r, o.scan(rows, &r)
	})
	if err != nil {
		return nil, fmt.Errorf("list %ss: %w", q.t.kind, err)
	}
	if len(raw) == 0 && p.Marker != "" {
		// Only an empty page can hide a bad marker.
		var one int
		err := q.db.queryRow(ctx, "SELECT 1 FROM "+q.t.name+" WHERE "+q.t.marker+" = $1", p.Marker).Scan(&one)
		if errors.Is(err, stdsql.ErrNoRows) {
			return nil, notFound("marker %s could not be found: no %s has this UUID", p.Marker, q.t.kind)
		}
		if err != nil {
			return nil, fmt.Errorf("list %ss: check marker: %w", q.t.kind, err)
		}
	}
	out, err := o.decodeAll(raw)
	if err != nil {
		return nil, fmt.Errorf("list %ss: %w", q.t.kind, err)
	}
	return out, nil
}

// scanAll scans every row and closes rows.
func scanAll[T any](rows *stdsql.Rows, scan func(*stdsql.Rows) (T, error)) ([]T, error) {
	defer rows.Close()
	var out []T
	for rows.Next() {
		v, err := scan(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, v)
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	if out == nil {
		out = []T{}
	}
	return out, rows.Close()
}

// bodyRow is a row of a main table, scanned but not yet decoded.
type bodyRow struct {
	reservation stdsql.NullString // nodes only
	createdAt   time.Time
	body        []byte
}

// objectType says how to read one kind of object from its table.
type objectType[T any] struct {
	columns string // what to SELECT for scan
	scan    func(scanner, *bodyRow) error
	// decode decodes a row; in, when not nil, shares equal strings between
	// the rows of a list.
	decode func(r *bodyRow, in interner) (T, error)
}

type scanner interface{ Scan(dest ...any) error }

// scanCreatedBody scans the columns "created_at, body".
func scanCreatedBody(row scanner, r *bodyRow) error {
	return row.Scan(timeScanner{&r.createdAt}, &r.body)
}

// one reads the object in row.
func (o objectType[T]) one(row scanner) (T, error) {
	var r bodyRow
	if err := o.scan(row, &r); err != nil {
		var zero T
		return zero, err
	}
	return o.decode(&r, nil)
}

// internerPool recycles decodeAll's interners. An interner grows to a
// thousand strings and more over a long list, and growing its map anew
// for every list allocated more than the nodes' own maps.
var internerPool = sync.Pool{New: func() any { return interner{} }}

func getInterner() interner { return internerPool.Get().(interner) }

// putInterner empties in, keeping its table, and pools it. The strings of
// one list are not kept for the next.
func putInterner(in interner) {
	clear(in)
	internerPool.Put(in)
}

// parallelDecodeMin is the length of list from which bodies are decoded on
// every CPU: decoding JSON is most of the cost of a long list.
const parallelDecodeMin = 64

// decodeAll decodes rows in order.
func (o objectType[T]) decodeAll(rows []bodyRow) ([]T, error) {
	out := make([]T, len(rows))
	workers := min(runtime.GOMAXPROCS(0), len(rows)/(parallelDecodeMin/2))
	if workers < 2 {
		in := getInterner()
		defer putInterner(in)
		for i := range rows {
			var err error
			if out[i], err = o.decode(&rows[i], in); err != nil {
				return nil, err
			}
		}
		return out, nil
	}
	var (
		wg   sync.WaitGroup
		errs = make([]error, workers)
		size = (len(rows) + workers - 1) / workers
	)
	for w := range workers {
		lo, hi := w*size, min((w+1)*size, len(rows))
		wg.Go(func() {
			in := getInterner()
			defer putInterner(in)
			for i := lo; i < hi; i++ {
				var err error
				if out[i], err = o.decode(&rows[i], in); err != nil {
					errs[w] = err
					return
				}
			}
		})
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	return out, nil
}

// standardSorts are the sort keys every main table has.
func standardSorts(extra map[string]sortColumn) map[string]sortColumn {
	m := map[string]sortColumn{
		"id":         {col: "id"},
		"uuid":       {col: "uuid"},
		"created_at": {col: "created_at"},
		"updated_at": {col: "updated_at", nullable: true, time: true},
		// Ironic's version column is the object version every row shares:
		// its order is the id order.
		"version": {col: "id"},
	}
	maps.Copy(m, extra)
	return m
}
