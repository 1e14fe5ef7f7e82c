// Package pgtest runs throwaway PostgreSQL servers for tests, so that the
// PostgreSQL lane needs nothing but the server binaries.
//
// The binaries (initdb and postgres) are looked for next to postgres on
// PATH, then under /usr/lib/postgresql/*/bin (Debian's packages, newest
// version first) and /usr/local/pgsql/bin. When they are missing, Start skips
// the test; with CI=true it fails it instead, since no lane may skip in CI.
//
// A cluster is created with initdb in a temporary directory and the server
// is started directly (not through pg_ctl) as a child of the test binary,
// listening on 127.0.0.1 on a free port, with durability turned off (fsync,
// full_page_writes, synchronous_commit) because its data is thrown away. The
// kernel sends the server SIGQUIT (immediate shutdown) if the test binary
// dies, so a panic or a `go test -timeout` leaves no server behind. PostgreSQL
// refuses to run as root: when the tests run as root, the cluster belongs to
// and runs as the "postgres" user, or "nobody" if there is none.
//
// Each Start gives the test a new, empty database, dropped once the test
// ends. To share one cluster between all the tests of a package (a cluster
// takes about a second to create), call Main from TestMain:
//
//	func TestMain(m *testing.M) { os.Exit(pgtest.Main(m)) }
//
// Without it, each Start runs a cluster of its own for the test.
package pgtest

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/ferrometal/ferro/internal/testing/ferrotest"
	"github.com/ferrometal/ferro/internal/testing/freeport"
)

// Available reports whether the PostgreSQL server binaries were found.
func Available() bool {
	_, err := binDir()
	return err == nil
}

// Start returns the URL of a new, empty database (postgres://…) that is
// dropped when t ends. It skips t when PostgreSQL is not installed, or fails
// it when CI=true.
func Start(t testing.TB) string {
	t.Helper()
	if _, err := binDir(); err != nil {
		ferrotest.SkipOrFail(t, "PostgreSQL lane: %v", err)
	}
	if c := sharedCluster(t); c != nil {
		dsn, drop, err := c.CreateDatabase(context.Background())
		if err != nil {
			t.Fatalf("create PostgreSQL database: %v", err)
		}
		// Dropping takes a while and nothing waits for it but Main.
		t.Cleanup(func() {
			shared.drops.Go(func() {
				if err := drop(); err != nil {
					fmt.Fprintf(os.Stderr, "pgtest: drop the database of %s: %v\n", t.Name(), err)
				}
			})
		})
		return dsn
	}
	c, err := StartCluster()
	if err != nil {
		t.Fatalf("start PostgreSQL: %v", err)
	}
	t.Cleanup(func() {
		if err := c.Stop(); err != nil {
			t.Errorf("stop PostgreSQL: %v", err)
		}
	})
	dsn, _, err := c.CreateDatabase(context.Background())
	if err != nil {
		t.Fatalf("create PostgreSQL database: %v", err)
	}
	return dsn // Stop removes it with the cluster
}

// shared is the per-binary cluster that Main sets up.
var shared struct {
	enabled bool
	once    sync.Once
	c       *Cluster
	err     error
	drops   sync.WaitGroup // databases being dropped
}

// Main runs the tests of m with one PostgreSQL cluster for all of them,
// started when a test first asks for a database and stopped at the end. It
// returns m.Run's exit code.
func Main(m *testing.M) int {
	shared.enabled = true
	code := m.Run()
	shared.drops.Wait()
	if shared.c != nil {
		if err := shared.c.Stop(); err != nil {
			fmt.Fprintf(os.Stderr, "pgtest: stop PostgreSQL: %v\n", err)
			if code == 0 {
				code = 1
			}
		}
	}
	return code
}

func sharedCluster(t testing.TB) *Cluster {
	if !shared.enabled {
		return nil
	}
	shared.once.Do(func() { shared.c, shared.err = StartCluster() })
	if shared.err != nil {
		t.Fatalf("start PostgreSQL: %v", shared.err)
	}
	return shared.c
}

// Cluster is a running throwaway PostgreSQL server.
type Cluster struct {
	dir     string // holds data/, the socket and postgres.log
	version int    // major version of the server
	port    int
	cmd     *exec.Cmd
	exited  chan struct{} // closed when the server process has exited
	dbs     atomic.Int64  // databases created, for their names
	// settings are the caller's server settings, after the defaults.
	settings []string
}

// StartCluster creates a cluster in a temporary directory and starts its
// server. Stop stops it and removes the directory.
func StartCluster() (*Cluster, error) { return startCluster(0, nil) }

// StartClusterWith is StartCluster with more server settings, each
// "name=value" as postgres -c takes them (shared_preload_libraries=…).
func StartClusterWith(settings ...string) (*Cluster, error) { return startCluster(0, settings) }

// StartClusterOn is StartCluster on the given port of 127.0.0.1, e.g. one a
// client was told before the server existed; URL(port, "postgres") reaches
// it. A port taken meanwhile is an error.
func StartClusterOn(port int) (*Cluster, error) { return startCluster(port, nil) }

// URL is the URL of database db on a cluster listening on port.
func URL(port int, db string) string {
	return fmt.Sprintf("postgres://postgres@127.0.0.1:%d/%s?sslmode=disable", port, db)
}

func startCluster(port int, settings []string) (*Cluster, error) {
	bin, err := binDir()
	if err != nil {
		return nil, err
	}
	cred, err := credential()
	if err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp("", "pgtest-")
	if err != nil {
		return nil, err
	}
	c := &Cluster{dir: dir, settings: settings}
	if err := c.initdb(bin, cred); err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	if c.version, err = dataVersion(filepath.Join(dir, "data")); err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	// The port is free when chosen but may be taken before the server binds
	// it; try another then.
	for attempt := 0; ; attempt++ {
		err = c.start(bin, cred, port)
		if err == nil {
			return c, nil
		}
		if port != 0 || attempt == 4 || !strings.Contains(err.Error(), "could not bind") {
			os.RemoveAll(dir)
			return nil, err
		}
	}
}

// credential is who the server runs as: the current user, or an
// unprivileged one when that is root.
func credential() (*syscall.Credential, error) {
	if os.Geteuid() != 0 {
		return nil, nil
	}
	for _, name := range []string{"postgres", "nobody"} {
		u, err := user.Lookup(name)
		if err != nil {
			continue
		}
		uid, err1 := strconv.ParseUint(u.Uid, 10, 32)
		gid, err2 := strconv.ParseUint(u.Gid, 10, 32)
		if err1 != nil || err2 != nil {
			continue
		}
		return &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}, nil
	}
	return nil, errors.New("running as root and found neither a postgres nor a nobody user to run PostgreSQL as")
}

func (c *Cluster) command(bin string, cred *syscall.Credential, name string, args ...string) (*exec.Cmd, error) {
	cmd := exec.Command(filepath.Join(bin, name), args...)
	cmd.Dir = c.dir
	cmd.Env = append(os.Environ(), "LC_ALL=C")
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: cred, Pdeathsig: syscall.SIGQUIT}
	log, err := os.OpenFile(filepath.Join(c.dir, name+".log"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return nil, err
	}
	cmd.Stdout, cmd.Stderr = log, log
	return cmd, nil
}

func (c *Cluster) logTail(name string) string {
	b, _ := os.ReadFile(filepath.Join(c.dir, name+".log"))
	s := strings.TrimSpace(string(b))
	if len(s) > 2000 {
		s = "…" + s[len(s)-2000:]
	}
	return s
}

func (c *Cluster) initdb(bin string, cred *syscall.Credential) error {
	if cred != nil {
		if err := os.Chown(c.dir, int(cred.Uid), int(cred.Gid)); err != nil {
			return err
		}
	}
	cmd, err := c.command(bin, cred, "initdb",
		"-D", filepath.Join(c.dir, "data"), "-U", "postgres", "--auth=trust",
		"-E", "UTF8", "--no-locale", "--no-sync")
	if err != nil {
		return err
	}
	defer closeLog(cmd)
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("initdb: %w\n%s", err, c.logTail("initdb"))
	}
	return nil
}

func (c *Cluster) start(bin string, cred *syscall.Credential, port int) error {
	if port == 0 {
		var err error
		if port, err = freeport.Next(); err != nil {
			return err
		}
	}
	args := []string{
		"-D", filepath.Join(c.dir, "data"),
		"-p", strconv.Itoa(port),
		"-k", c.dir,
		"-c", "listen_addresses=127.0.0.1",
		"-c", "fsync=off",
		"-c", "full_page_writes=off",
		"-c", "synchronous_commit=off",
		"-c", "max_connections=300",
	}
	for _, kv := range c.settings {
		args = append(args, "-c", kv)
	}
	cmd, err := c.command(bin, cred, "postgres", args...)
	if err != nil {
		return err
	}
	if err := cmd.Start(); err != nil {
		closeLog(cmd)
		return fmt.Errorf("start postgres: %w", err)
	}
	exited := make(chan struct{})
	go func() {
		cmd.Wait()
		closeLog(cmd)
		close(exited)
	}()
	c.port, c.cmd, c.exited = port, cmd, exited

	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	for {
		conn, err := pgconn.Connect(ctx, c.dsn("postgres"))
		if err == nil {
			conn.Close(ctx)
			return nil
		}
		select {
		case <-exited:
			return fmt.Errorf("postgres exited while starting:\n%s", c.logTail("postgres"))
		case <-ctx.Done():
			c.Stop()
			return fmt.Errorf("postgres did not accept connections within a minute: %v\n%s", err, c.logTail("postgres"))
		case <-time.After(50 * time.Millisecond):
		}
	}
}

func closeLog(cmd *exec.Cmd) {
	if f, ok := cmd.Stdout.(*os.File); ok {
		f.Close()
	}
}

func (c *Cluster) dsn(db string) string { return URL(c.port, db) }

// CreateDatabase creates a new, empty database and returns its URL and a
// function that drops it.
func (c *Cluster) CreateDatabase(ctx context.Context) (dsn string, drop func() error, err error) {
	name := fmt.Sprintf("test_%d", c.dbs.Add(1))
	// Copying template1's files is faster than writing it all to the WAL,
	// the default strategy since PostgreSQL 15.
	strategy := ""
	if c.version >= 15 {
		strategy = " STRATEGY FILE_COPY"
	}
	if err := c.admin(ctx, "CREATE DATABASE "+name+strategy); err != nil {
		return "", nil, err
	}
	drop = func() error {
		return c.admin(context.Background(), "DROP DATABASE IF EXISTS "+name+" WITH (FORCE)")
	}
	return c.dsn(name), drop, nil
}

// admin runs one statement on the postgres database.
func (c *Cluster) admin(ctx context.Context, sql string) error {
	conn, err := pgconn.Connect(ctx, c.dsn("postgres"))
	if err != nil {
		return err
	}
	defer conn.Close(context.Background())
	_, err = conn.Exec(ctx, sql).ReadAll()
	return err
}

// Stop shuts the server down (fast shutdown, then kill) and removes the
// cluster's directory.
func (c *Cluster) Stop() error {
	if c.cmd != nil && c.cmd.Process != nil {
		c.cmd.Process.Signal(syscall.SIGINT)
		select {
		case <-c.exited:
		case <-time.After(30 * time.Second):
			c.cmd.Process.Kill()
			<-c.exited
		}
	}
	return os.RemoveAll(c.dir)
}

var binDirOnce = sync.OnceValues(findBinDir)

func binDir() (string, error) { return binDirOnce() }

// findBinDir returns the directory holding both initdb and postgres.
func findBinDir() (string, error) {
	var dirs []string
	if p, err := exec.LookPath("postgres"); err == nil {
		if real, err := filepath.EvalSymlinks(p); err == nil {
			p = real
		}
		if abs, err := filepath.Abs(p); err == nil {
			dirs = append(dirs, filepath.Dir(abs))
		}
	}
	debian, _ := filepath.Glob("/usr/lib/postgresql/*/bin")
	slices.SortFunc(debian, func(a, b string) int { return versionOf(b) - versionOf(a) })
	dirs = append(dirs, debian...)
	dirs = append(dirs, "/usr/local/pgsql/bin")
	for _, d := range dirs {
		if isExecutable(filepath.Join(d, "postgres")) && isExecutable(filepath.Join(d, "initdb")) {
			return d, nil
		}
	}
	return "", errors.New("initdb and postgres not found on PATH, under /usr/lib/postgresql/*/bin or in /usr/local/pgsql/bin (Debian package postgresql)")
}

// dataVersion reads the major version of a data directory from its PG_VERSION.
func dataVersion(data string) (int, error) {
	b, err := os.ReadFile(filepath.Join(data, "PG_VERSION"))
	if err != nil {
		return 0, err
	}
	return strconv.Atoi(strings.TrimSpace(string(b)))
}

// versionOf is the major version in /usr/lib/postgresql/15/bin.
func versionOf(dir string) int {
	v, _ := strconv.Atoi(filepath.Base(filepath.Dir(dir)))
	return v
}

func isExecutable(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && fi.Mode().IsRegular() && fi.Mode()&0o111 != 0
}
