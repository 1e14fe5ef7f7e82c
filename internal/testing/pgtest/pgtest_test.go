package pgtest

import (
	"context"
	"os"
	"syscall"
	"testing"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/ferrometal/ferro/internal/testing/ferrotest"
)

func TestMain(m *testing.M) { os.Exit(Main(m)) }

func TestStart_GivesEachTestItsOwnEmptyDatabase(t *testing.T) {
	ctx := context.Background()
	a, b := Start(t), Start(t)
	if a == b {
		t.Fatalf("Start returned the same database twice: %s", a)
	}
	ca, err := pgconn.Connect(ctx, a)
	if err != nil {
		t.Fatal(err)
	}
	defer ca.Close(ctx)
	if _, err := ca.Exec(ctx, "CREATE TABLE t (x int)").ReadAll(); err != nil {
		t.Fatal(err)
	}
	cb, err := pgconn.Connect(ctx, b)
	if err != nil {
		t.Fatal(err)
	}
	defer cb.Close(ctx)
	if _, err := cb.Exec(ctx, "CREATE TABLE t (x int)").ReadAll(); err != nil {
		t.Fatalf("second database is not empty: %v", err)
	}
}

func TestCluster_StopLeavesNothingBehind(t *testing.T) {
	if !Available() {
		ferrotest.SkipOrFail(t, "PostgreSQL not installed")
	}
	c, err := StartCluster()
	if err != nil {
		t.Fatal(err)
	}
	pid := c.cmd.Process.Pid
	if err := c.Stop(); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Kill(pid, 0); err == nil {
		t.Errorf("postgres (pid %d) still running after Stop", pid)
	}
	if _, err := os.Stat(c.dir); !os.IsNotExist(err) {
		t.Errorf("cluster directory %s still exists (stat: %v)", c.dir, err)
	}
}
