// Command loadprobe measures `ferro serve` over real HTTP, the way an
// operator's tools use it, and prints the figures next to the targets of
// the foundation issue and Debian Ironic 21.4's figures on the same machine:
//
//   - create -nodes fake-hardware nodes from -workers clients (nodes/s);
//   - GET /v1/nodes?detail=true with all of them, -list times (median, p90);
//   - GET /v1/nodes/{uuid}, -get times (median, p90);
//   - manage then inspect (fake) -cycle nodes until all are back in
//     manageable, from the first request to the last node seen manageable;
//   - the server's resident memory when idle after start, after the load,
//     and with -settle, once idle again after the load.
//
// It starts its own server: $FERRO_BIN, or cmd/ferro built from this
// module, with a temporary data directory (SQLite) or, with -db postgres, a
// throwaway PostgreSQL cluster (internal/testing/pgtest). It reports and
// exits 0; it asserts nothing about time, which depends on the machine.
//
//   - GET /v1/nodes/{uuid} from -workers clients at once (requests/s), the
//     figure that shows what -auth costs per request.
//
// -auth http_basic serves with auth_strategy http_basic (a bcrypt user file
// at the default cost; ferro caches verified credentials) and sends basic
// credentials; -auth keystone validates tokens against the Keystone at
// -keystone-url (its admin user, who is system admin after
// `keystone-manage bootstrap`, with -keystone-password) and sends a
// system-scoped token of that user.
//
//	go run ./bench/loadprobe [-nodes 500] [-workers 8] [-db sqlite|postgres] [-auth noauth|http_basic|keystone]
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/ferrometal/ferro/internal/testing/pgtest"
)

// probeConfig is what the flags ask for.
type probeConfig struct {
	nodes, workers int
	lists, gets    int
	cycle          int
	idle, settle   time.Duration
	poll           time.Duration
	db             string
	keep           bool
	auth           string
	keystone       keystoneFlags
}

// keystoneFlags locate a running Keystone for -auth keystone.
type keystoneFlags struct {
	url, user, password, project string
}

func main() {
	var c probeConfig
	flag.IntVar(&c.nodes, "nodes", 500, "nodes to create")
	flag.IntVar(&c.workers, "workers", 8, "concurrent clients for creates and provision requests")
	flag.IntVar(&c.lists, "list", 20, "GET /v1/nodes?detail=true requests")
	flag.IntVar(&c.gets, "get", 200, "GET /v1/nodes/{uuid} requests")
	flag.IntVar(&c.cycle, "cycle", 100, "nodes to manage then inspect")
	flag.DurationVar(&c.idle, "idle", 2*time.Second, "idle time after start before reading the idle RSS")
	flag.DurationVar(&c.settle, "settle", 0, "idle time after the load before reading the RSS again (0: do not)")
	flag.DurationVar(&c.poll, "poll", 2*time.Millisecond, "pause between state polls during manage+inspect")
	flag.StringVar(&c.db, "db", "sqlite", "database: sqlite or postgres")
	flag.BoolVar(&c.keep, "keep", false, "keep the data directory and server log")
	flag.StringVar(&c.auth, "auth", "noauth", "auth strategy: noauth, http_basic or keystone")
	flag.StringVar(&c.keystone.url, "keystone-url", "", "-auth keystone: the identity v3 URL (http://host:5000/v3)")
	flag.StringVar(&c.keystone.user, "keystone-user", "admin", "-auth keystone: a user with admin on the system and on -keystone-project")
	flag.StringVar(&c.keystone.password, "keystone-password", "", "-auth keystone: its password")
	flag.StringVar(&c.keystone.project, "keystone-project", "admin", "-auth keystone: the project of ferro's service credentials")
	flag.Parse()
	if c.cycle > c.nodes {
		c.cycle = c.nodes
	}
	if err := run(c); err != nil {
		fmt.Fprintln(os.Stderr, "loadprobe:", err)
		os.Exit(1)
	}
}

func run(c probeConfig) error {
	dir, err := os.MkdirTemp("", "ferro-loadprobe-")
	if err != nil {
		return err
	}
	if c.keep {
		fmt.Fprintln(os.Stderr, "loadprobe: data directory and server log kept in", dir)
	} else {
		defer os.RemoveAll(dir)
	}
	bin, err := ferroBinary(dir)
	if err != nil {
		return err
	}

	var env []string
	switch c.db {
	case "sqlite":
	case "postgres", "postgresql":
		pg, err := pgtest.StartCluster()
		if err != nil {
			return fmt.Errorf("start PostgreSQL: %w", err)
		}
		defer pg.Stop()
		dsn, _, err := pg.CreateDatabase(context.Background())
		if err != nil {
			return fmt.Errorf("create PostgreSQL database: %w", err)
		}
		env = append(env, "FERRO_DATABASE_CONNECTION="+dsn)
		c.db = "postgres"
	default:
		return fmt.Errorf("-db %q: want sqlite or postgres", c.db)
	}

	authEnv, cred, err := setupAuth(c, dir)
	if err != nil {
		return err
	}
	env = append(env, authEnv...)
	srv, err := startServer(bin, dir, env)
	if err != nil {
		return err
	}
	r, err := measure(c, srv, cred)
	if serr := srv.stop(); serr != nil && err == nil {
		err = fmt.Errorf("stop ferro serve: %w\n%s", serr, srv.logTail())
	}
	if err != nil {
		return err
	}
	report(os.Stdout, c, r)
	return nil
}

// results are the probe's figures.
type results struct {
	idleRSS, loadRSS      int64
	settledRSS            int64 // after -settle idle, 0 when not read
	createWall            time.Duration
	createLat             []time.Duration
	listLat, getLat       []time.Duration
	listBytes             int
	getRate               float64 // concurrent GET one node, requests/s
	manageWall, cycleWall time.Duration
	retries               int
	polls                 int
	phases                []phase
}

// phase is the CPU the server and the probe used during one measurement.
type phase struct {
	name           string
	wall           time.Duration
	server, client time.Duration
}

func measure(c probeConfig, srv *server, cred credential) (*results, error) {
	r := &results{}
	cl := newClient(srv.url, c.workers)
	cl.cred = cred
	time.Sleep(c.idle)
	var err error
	if r.idleRSS, err = srv.rss(); err != nil {
		return nil, err
	}

	track := func(name string, fn func() error) error {
		s0, _ := srv.cpu()
		c0 := selfCPU()
		t0 := time.Now()
		err := fn()
		wall := time.Since(t0)
		s1, _ := srv.cpu()
		r.phases = append(r.phases, phase{name: name, wall: wall, server: s1 - s0, client: selfCPU() - c0})
		return err
	}

	var uuids []string
	if err := track("create", func() error {
		var err error
		t0 := time.Now()
		uuids, r.createLat, err = cl.createNodes(c.nodes, c.workers)
		r.createWall = time.Since(t0)
		return err
	}); err != nil {
		return nil, err
	}

	// One untimed request each first, so the figures are of a warm server.
	// The timed lists read the body without decoding it (decoding 1.3 MB
	// costs the probe more CPU than the server spends answering, on the
	// same CPUs); the lists before and after them check the content.
	if _, err := cl.listDetail(c.nodes); err != nil {
		return nil, err
	}
	if err := track("list detail", func() error {
		for range c.lists {
			t0 := time.Now()
			n, err := cl.listDetailTimed()
			if err != nil {
				return err
			}
			r.listLat = append(r.listLat, time.Since(t0))
			r.listBytes = n
		}
		return nil
	}); err != nil {
		return nil, err
	}
	if _, err := cl.listDetail(c.nodes); err != nil {
		return nil, err
	}

	one := uuids[len(uuids)/2]
	if err := cl.getNode(one); err != nil {
		return nil, err
	}
	if err := track("get one", func() error {
		for range c.gets {
			t0 := time.Now()
			if err := cl.getNode(one); err != nil {
				return err
			}
			r.getLat = append(r.getLat, time.Since(t0))
		}
		return nil
	}); err != nil {
		return nil, err
	}
	if err := track("get one, concurrent", func() error {
		n := 10 * c.gets
		t0 := time.Now()
		err := parallel(n, c.workers, func(int) error { return cl.getNode(one) })
		r.getRate = float64(n) / time.Since(t0).Seconds()
		return err
	}); err != nil {
		return nil, err
	}

	if err := track("manage+inspect", func() error {
		nodes := uuids[:c.cycle]
		t0 := time.Now()
		n, err := cl.provisionAll(nodes, "manage", c.workers)
		r.retries += n
		if err != nil {
			return err
		}
		polls, err := cl.waitManageable(nodes, false, c.poll)
		r.polls += polls
		if err != nil {
			return err
		}
		r.manageWall = time.Since(t0)
		n, err = cl.provisionAll(nodes, "inspect", c.workers)
		r.retries += n
		if err != nil {
			return err
		}
		polls, err = cl.waitManageable(nodes, true, c.poll)
		r.polls += polls
		r.cycleWall = time.Since(t0)
		return err
	}); err != nil {
		return nil, err
	}

	if r.loadRSS, err = srv.rss(); err != nil {
		return nil, err
	}
	if c.settle > 0 {
		time.Sleep(c.settle)
		if r.settledRSS, err = srv.rss(); err != nil {
			return nil, err
		}
	}
	return r, nil
}

func loadAverage() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "?"
	}
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return "?"
	}
	return strings.Join(f[:3], " ")
}
