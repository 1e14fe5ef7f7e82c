package sql_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ferrometal/ferro/internal/baremetal"
	"github.com/ferrometal/ferro/internal/store"
	sqlstore "github.com/ferrometal/ferro/internal/store/sql"
	"github.com/ferrometal/ferro/internal/store/storetest"
	"github.com/ferrometal/ferro/internal/testing/pgtest"
)

func TestMain(m *testing.M) { os.Exit(pgtest.Main(m)) }

// openSQLite opens a new database file in t's temporary directory.
func openSQLite(t testing.TB) *sqlstore.DB {
	t.Helper()
	return open(t, "sqlite://"+filepath.Join(t.TempDir(), "ferro.db"))
}

// openPostgres opens a new database on the test PostgreSQL cluster.
func openPostgres(t testing.TB) *sqlstore.DB {
	t.Helper()
	return open(t, pgtest.Start(t))
}

func open(t testing.TB, conn string) *sqlstore.DB {
	t.Helper()
	db, err := sqlstore.Open(context.Background(), conn)
	if err != nil {
		t.Fatalf("Open(%s): %v", conn, err)
	}
	t.Cleanup(func() {
		if err := db.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	return db
}

func TestConformance_SQLite(t *testing.T) {
	storetest.Run(t, func(t *testing.T) store.Store { return openSQLite(t) })
}

func TestConformance_PostgreSQL(t *testing.T) {
	storetest.Run(t, func(t *testing.T) store.Store { return openPostgres(t) })
}

func TestOpen_ReopensExistingSQLiteDatabase(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "ferro.db")
	for _, conn := range []string{"sqlite://" + path, "sqlite:///" + path} { // sqlite:/// and SQLAlchemy's sqlite:////
		db, err := sqlstore.Open(ctx, conn)
		if err != nil {
			t.Fatalf("Open(%s): %v", conn, err)
		}
		if err := db.CreateNode(ctx, &baremetal.Node{Driver: "fake-hardware"}); err != nil {
			t.Fatal(err)
		}
		if err := db.Close(); err != nil {
			t.Fatal(err)
		}
	}
	db := open(t, "sqlite://"+path)
	nodes, err := db.ListNodes(ctx, store.NodeFilter{})
	if err != nil || len(nodes) != 2 {
		t.Errorf("after two opens of the same file: %d nodes, %v; want 2", len(nodes), err)
	}
}

func TestOpen_RejectsBadConnections(t *testing.T) {
	for _, conn := range []string{
		"",
		"/var/lib/ferro.db",
		"sqlite://relative/ferro.db",
		"sqlite:///tmp/ferro.db?mode=ro",
		"mysql+pymysql://ironic:pw@db/ironic",
	} {
		if db, err := sqlstore.Open(context.Background(), conn); err == nil {
			db.Close()
			t.Errorf("Open(%q) succeeded, want an error", conn)
		}
	}
}

func TestOpen_RedactsPasswordInErrors(t *testing.T) {
	_, err := sqlstore.Open(context.Background(), "oracle://ironic:hunter2@db/ironic")
	if err == nil || strings.Contains(err.Error(), "hunter2") {
		t.Errorf("Open error %q shows the password", err)
	}
}

// Several ferro processes starting at once against one PostgreSQL database
// must migrate it once, not fail.
func TestOpen_ConcurrentMigrationsOnPostgreSQL(t *testing.T) {
	dsn := pgtest.Start(t)
	testConcurrentOpens(t, dsn)
}

func TestOpen_ConcurrentMigrationsOnSQLite(t *testing.T) {
	testConcurrentOpens(t, "sqlite://"+filepath.Join(t.TempDir(), "ferro.db"))
}

func testConcurrentOpens(t *testing.T, conn string) {
	const procs = 4
	var wg sync.WaitGroup
	dbs := make([]*sqlstore.DB, procs)
	errs := make([]error, procs)
	for i := range procs {
		wg.Go(func() { dbs[i], errs[i] = sqlstore.Open(context.Background(), conn) })
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Errorf("Open %d: %v", i, err)
			continue
		}
		defer dbs[i].Close()
	}
	if t.Failed() {
		return
	}
	// Every handle sees one schema: what one writes, another reads.
	ctx := context.Background()
	for i, db := range dbs {
		if err := db.CreateNode(ctx, &baremetal.Node{Name: fmt.Sprintf("n%d", i)}); err != nil {
			t.Fatal(err)
		}
	}
	nodes, err := dbs[0].ListNodes(ctx, store.NodeFilter{})
	if err != nil || len(nodes) != procs {
		t.Errorf("%d nodes, %v; want %d", len(nodes), err, procs)
	}
}

// Two handles on one SQLite file behave like two processes: their writers
// wait for each other (busy timeout, BEGIN IMMEDIATE) instead of failing.
func TestSQLite_TwoHandlesWriteConcurrently(t *testing.T) {
	conn := "sqlite://" + filepath.Join(t.TempDir(), "ferro.db")
	a, b := open(t, conn), open(t, conn)
	ctx := context.Background()
	var wg sync.WaitGroup
	errs := make(chan error, 40)
	for i := range 40 {
		db := a
		if i%2 == 1 {
			db = b
		}
		wg.Go(func() {
			err := db.InTx(ctx, func(tx store.Store) error {
				n := &baremetal.Node{Name: fmt.Sprintf("n%d", i)}
				if err := tx.CreateNode(ctx, n); err != nil {
					return err
				}
				return tx.CreatePort(ctx, &baremetal.Port{NodeUUID: n.UUID, Address: fmt.Sprintf("52:54:00:00:00:%02x", i)})
			})
			if err != nil {
				errs <- err
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	ports, err := a.ListPorts(ctx, store.PortFilter{})
	if err != nil || len(ports) != 40 {
		t.Errorf("%d ports, %v; want 40", len(ports), err)
	}
}

func TestOpen_WithClockStampsEveryWrite(t *testing.T) {
	ctx := context.Background()
	now := time.Date(2030, 1, 2, 3, 4, 5, 678901234, time.UTC)
	db, err := sqlstore.Open(ctx, "sqlite://"+filepath.Join(t.TempDir(), "ferro.db"),
		sqlstore.WithClock(func() time.Time { return now }))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	want := now.Truncate(time.Microsecond) // the stores' resolution

	n := &baremetal.Node{Name: "n"}
	if err := db.CreateNode(ctx, n); err != nil {
		t.Fatal(err)
	}
	now = now.Add(time.Hour)
	if err := db.UpdateNode(ctx, n); err != nil {
		t.Fatal(err)
	}
	got, err := db.GetNode(ctx, "n")
	if err != nil {
		t.Fatal(err)
	}
	if !got.CreatedAt.Equal(want) || got.UpdatedAt == nil || !got.UpdatedAt.Equal(want.Add(time.Hour)) {
		t.Errorf("created %v, updated %v; want %v and an hour later", got.CreatedAt, got.UpdatedAt, want)
	}
	if err := db.RegisterConductor(ctx, &store.Conductor{Hostname: "c"}); err != nil {
		t.Fatal(err)
	}
	for since, alive := range map[time.Time]bool{now.Add(-time.Second): true, now.Add(time.Second): false} {
		cs, err := db.ListConductors(ctx, since)
		if err != nil || (len(cs) == 1) != alive {
			t.Errorf("ListConductors(%v) = %v, %v; want alive %v", since, cs, err, alive)
		}
	}
}
