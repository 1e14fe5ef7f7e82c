package sql

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/ferrometal/ferro/internal/baremetal"
	"github.com/ferrometal/ferro/internal/store"
)

// The API's node lists (no children: an empty parent_node) read a page's rows
// in index order on SQLite: a plan that sorts in a temporary B-tree reads
// and sorts every node for each page, so that page 1 of 10,000 nodes cost
// twenty times a page of 500.
func TestListNodes_SQLitePlanNeedsNoSort(t *testing.T) {
	db := openTestSQLite(t)
	defer db.Close()
	ctx := context.Background()
	var marker string
	for i := range 3 {
		n := &baremetal.Node{Name: fmt.Sprintf("plan-%d", i)}
		if err := db.CreateNode(ctx, n); err != nil {
			t.Fatal(err)
		}
		marker = n.UUID
	}
	top := ""
	for _, c := range []struct {
		name string
		f    store.NodeFilter
	}{
		{"default", store.NodeFilter{ParentNode: &top, Page: store.Page{Limit: 1000}}},
		{"marker", store.NodeFilter{ParentNode: &top, Page: store.Page{Limit: 1000, Marker: marker}}},
		{"desc", store.NodeFilter{ParentNode: &top, Page: store.Page{Limit: 1000, SortDir: "desc"}}},
		{"state", store.NodeFilter{ParentNode: &top, ProvisionState: []string{"enroll"}, Page: store.Page{Limit: 1000}}},
		{"children too", store.NodeFilter{Page: store.Page{Limit: 1000}}},
	} {
		q := db.nodeList(c.f)
		text, err := q.build(c.f.Page)
		if err != nil {
			t.Fatal(err)
		}
		rows, err := db.read.QueryContext(ctx, "EXPLAIN QUERY PLAN "+text, q.args...)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		var plan []string
		for rows.Next() {
			var id, parent, unused int
			var detail string
			if err := rows.Scan(&id, &parent, &unused, &detail); err != nil {
				t.Fatal(err)
			}
			plan = append(plan, detail)
		}
		rows.Close()
		if p := strings.Join(plan, "; "); strings.Contains(p, "TEMP B-TREE") {
			t.Errorf("%s: %s\nis planned as %s", c.name, text, p)
		}
	}
}
