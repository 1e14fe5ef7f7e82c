package sql_test

import (
	"context"
	"errors"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/ferrometal/ferro/internal/baremetal"
	"github.com/ferrometal/ferro/internal/store"
	sqlstore "github.com/ferrometal/ferro/internal/store/sql"
	"github.com/ferrometal/ferro/internal/testing/pgtest"
)

func TestCountNodes_ByProvisionAndPowerState(t *testing.T) {
	for name, db := range map[string]*sqlstore.DB{"sqlite": openSQLite(t), "postgres": openPostgres(t)} {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			nodes := []*baremetal.Node{
				{ProvisionState: "manageable", PowerState: "power off"},
				{ProvisionState: "manageable", PowerState: "power off"},
				{ProvisionState: "manageable", PowerState: "power off"},
				{ProvisionState: "enroll"},
			}
			for _, n := range nodes {
				if err := db.CreateNode(ctx, n); err != nil {
					t.Fatal(err)
				}
			}
			nodes[2].PowerState = "power on" // an update moves the count
			if err := db.UpdateNode(ctx, nodes[2]); err != nil {
				t.Fatal(err)
			}
			got, err := db.CountNodes(ctx)
			if err != nil {
				t.Fatal(err)
			}
			slices.SortFunc(got, func(a, b store.NodeCount) int {
				return strings.Compare(a.ProvisionState+a.PowerState, b.ProvisionState+b.PowerState)
			})
			want := []store.NodeCount{
				{ProvisionState: "enroll", Count: 1},
				{ProvisionState: "manageable", PowerState: "power off", Count: 2},
				{ProvisionState: "manageable", PowerState: "power on", Count: 1},
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("CountNodes (-want +got):\n%s", diff)
			}
		})
	}
}

func TestWithObserver_TimesStatementsAndTransactions(t *testing.T) {
	for name, conn := range map[string]func() string{
		"sqlite":   func() string { return "sqlite://" + filepath.Join(t.TempDir(), "ferro.db") },
		"postgres": func() string { return pgtest.Start(t) },
	} {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			var mu sync.Mutex
			seen := map[string]int{}
			errs := map[string]int{}
			db, err := sqlstore.Open(ctx, conn(), sqlstore.WithObserver(func(op string, d time.Duration, err error) {
				mu.Lock()
				defer mu.Unlock()
				if d < 0 {
					t.Errorf("%s took %v", op, d)
				}
				seen[op]++
				if err != nil {
					errs[op]++
				}
			}))
			if err != nil {
				t.Fatal(err)
			}
			defer db.Close()
			n := &baremetal.Node{Name: "n"}
			if err := db.CreateNode(ctx, n); err != nil {
				t.Fatal(err)
			}
			if _, err := db.GetNode(ctx, "n"); err != nil {
				t.Fatal(err)
			}
			if _, err := db.GetNode(ctx, "missing"); !errors.Is(err, store.ErrNotFound) {
				t.Fatal(err)
			}
			if _, err := db.ListNodes(ctx, store.NodeFilter{}); err != nil {
				t.Fatal(err)
			}
			if err := db.SaveInventory(ctx, &baremetal.Inventory{NodeUUID: n.UUID}); err != nil {
				t.Fatal(err)
			}
			mu.Lock()
			defer mu.Unlock()
			for _, op := range []string{"exec", "query", "query_row", "transaction"} {
				if seen[op] == 0 {
					t.Errorf("no %s observed (seen %v)", op, seen)
				}
			}
			if len(errs) != 0 {
				t.Errorf("errors observed: %v; a missing row is not an error", errs)
			}
		})
	}
}
