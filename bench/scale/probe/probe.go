// Package probe is the scale probe bench/scale runs and test/scale runs
// small: a throwaway PostgreSQL cluster, several `ferro serve` processes
// sharing it (the hash ring as in production), thousands of fake-hardware
// nodes with two ports each, and then the API under load, many
// inspections at once answered by simulated agents, the database's idle
// work, and one process killed with SIGKILL. Every loop is bounded in
// count and in time.
package probe

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/ferrometal/ferro/bench/netboot/lab"
	"github.com/ferrometal/ferro/internal/bmc/redfish"
	"github.com/ferrometal/ferro/internal/testing/freeport"
	"github.com/ferrometal/ferro/internal/testing/pgtest"
	"github.com/ferrometal/ferro/test/inspection"
)

// Config is a probe's profile.
type Config struct {
	Ferro       string // the ferro binary
	Nodes       int    // nodes enrolled, each with two ports
	Inspections int    // inspections started at once
	Processes   int    // `ferro serve` processes on the database
	// Rounds is how many rounds of API requests (a detailed list of
	// 1,000, GETs, PATCHes, a provision verb) run beside the inspections.
	Rounds int
	Kill   bool // SIGKILL one process under load and time the take-over
	// BMCLatency is the latency of every simulated BMC (each IPMI reply,
	// each Redfish request for a System or Manager): every node has one,
	// half of them IPMI, half Redfish.
	BMCLatency time.Duration
	// PowerInterval, when set, ends the probe with the power-state sync:
	// every node made manageable and the processes restarted with
	// [conductor]sync_power_state_interval at PowerInterval; then cycles
	// are timed and their database work counted, with every node active,
	// then with only the IPMI ones, then only the Redfish ones (the others
	// in maintenance).
	PowerInterval time.Duration
	// Join, with Kill, starts a new process after the kill, while
	// inspections run, and times until the ring has taken it in.
	Join bool
	// Env is more FERRO_* settings of every process, after the probe's.
	Env   []string
	Limit time.Duration // the whole probe gives up after this long
	Log   io.Writer     // progress lines; nil: none
}

// Result is what a probe measured.
type Result struct {
	Config    Config
	Enroll    time.Duration // creating the nodes and ports
	EnrollCPU float64       // CPU seconds of all processes for it
	Latency   map[string][]time.Duration
	// Inspections: from the first inspect request until all are
	// manageable; reports posted per second; failures.
	InspectAll     time.Duration
	ReportsPerSec  float64
	InspectFailed  int
	CPUPerInspect  float64 // CPU seconds of all processes per inspection (with the API load beside)
	IdleRowsPerSec float64 // rows the database reads per second with nothing to do
	IdleXactPerSec float64 // transactions per second with nothing to do
	IdleNodeScans  int64   // sequential scans of the nodes table over the idle window
	IdleDB         DBWork  // the statements of the periodic tasks per second with nothing to do
	InspectRetries int64   // inspect requests answered 409 or 503 (no free worker) and sent again
	PageAll        time.Duration
	Takeover       time.Duration // from SIGKILL until no node names the dead process
	LocksLeft      int           // node locks the dead process still held after the take-over
	StuckNodes     int           // nodes the dead process left in a transient state, after the take-over
	// RunTwice counts the tasks (the inspections, the manage tasks of the
	// kill) that started more than once on a node, in all processes' logs.
	RunTwice int
	// Power are the power-state sync's rounds (with Config.PowerInterval).
	Power []PowerRound
	// Join is the process added after the kill (with Config.Join).
	Join   *JoinResult
	RSS    []int64 // bytes per process, at the end
	DBSize int64   // bytes
}

// Run runs the probe.
func Run(ctx context.Context, c Config) (*Result, error) {
	if c.Processes < 1 {
		c.Processes = 3
	}
	if c.Limit <= 0 {
		c.Limit = 10 * time.Minute
	}
	if c.Log == nil {
		c.Log = io.Discard
	}
	// A conductor that may own more Redfish BMCs than
	// [redfish]connection_cache_size (Ironic's 1,000) logs in to each of
	// them again every power sync cycle, the cache evicting, in turn, the
	// session the next node needs: docs/scale-out.md has an operator size
	// it to the Redfish nodes a conductor may own, so the bench does. The
	// bench's settings come first: -ferro-env overrides them.
	if n := c.Nodes / 2; n > redfish.DefaultCacheSize {
		c.Env = append([]string{"FERRO_REDFISH_CONNECTION_CACHE_SIZE=" + strconv.Itoa(n)}, c.Env...)
	}
	ctx, cancel := context.WithTimeout(ctx, c.Limit)
	defer cancel()
	p := &probe{c: c, res: &Result{Config: c, Latency: map[string][]time.Duration{}}}
	defer p.stop()
	if err := p.run(ctx); err != nil {
		return p.res, fmt.Errorf("%w%s", err, p.logTails())
	}
	return p.res, nil
}

type probe struct {
	c     Config
	res   *Result
	dir   string
	pg    *pgtest.Cluster
	dsn   string
	procs []*proc
	http  *http.Client
	bmcs  *fleet
	mu    sync.Mutex
	nodes []node
	// retries counts requests sent again by retryBusy.
	retries atomic.Int64
}

type node struct {
	uuid, mac string
}

func (p *probe) logf(format string, args ...any) {
	fmt.Fprintf(p.c.Log, "bench/scale: "+format+"\n", args...)
}

func (p *probe) run(ctx context.Context) error {
	var err error
	if p.dir, err = os.MkdirTemp("", "ferro-scale-"); err != nil {
		return err
	}
	p.http = &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 64}, Timeout: time.Minute}
	began := time.Now()
	if p.pg, err = pgtest.StartClusterWith(pgSettings...); err != nil {
		return err
	}
	if p.dsn, _, err = p.pg.CreateDatabase(ctx); err != nil {
		return err
	}
	if err := p.dbExec(ctx, "CREATE EXTENSION pg_stat_statements"); err != nil {
		return fmt.Errorf("pg_stat_statements (postgresql's contrib): %w", err)
	}
	if p.bmcs, err = startFleet(ctx, p.dir, p.c.Nodes, p.c.BMCLatency); err != nil {
		return err
	}
	p.logf("%d simulated BMCs (IPMI and Redfish, latency %v) up in %v", p.c.Nodes, p.c.BMCLatency, since(began))
	images := filepath.Join(p.dir, "images")
	if err := os.MkdirAll(images, 0o755); err != nil {
		return err
	}
	for name, data := range map[string]string{"ipa.kernel": "kernel\n", "ipa.initramfs": "ramdisk\n"} {
		if err := os.WriteFile(filepath.Join(images, name), []byte(data), 0o644); err != nil {
			return err
		}
	}
	for i := range p.c.Processes {
		pr, err := startProc(ctx, p.c.Ferro, p.dir, p.dsn, images, i, p.c.Env)
		if err != nil {
			return err
		}
		p.procs = append(p.procs, pr)
	}
	p.logf("PostgreSQL and %d ferro serve processes up in %v", len(p.procs), since(began))
	if err := p.waitConductors(ctx, len(p.procs)); err != nil {
		return err
	}
	if err := p.enroll(ctx); err != nil {
		return err
	}
	if err := p.idle(ctx); err != nil {
		return err
	}
	if err := p.pageAll(ctx); err != nil {
		return err
	}
	if err := p.inspectUnderLoad(ctx); err != nil {
		return err
	}
	if p.c.Kill && len(p.procs) > 1 {
		if err := p.kill(ctx); err != nil {
			return err
		}
		if p.c.Join {
			if err := p.join(ctx, images); err != nil {
				return err
			}
		}
	}
	for _, pr := range p.procs {
		if !pr.dead() {
			p.res.RSS = append(p.res.RSS, pr.rss())
		}
	}
	if p.c.PowerInterval > 0 {
		if err := p.powerSync(ctx, images); err != nil {
			return err
		}
	}
	return p.dbQuery(ctx, "SELECT pg_database_size(current_database())", &p.res.DBSize)
}

func (p *probe) stop() {
	for _, pr := range p.procs {
		pr.stop()
	}
	if p.pg != nil {
		p.pg.Stop()
	}
	if p.bmcs != nil {
		if err := p.bmcs.stop(); err != nil {
			p.logf("simulated BMCs: %v", err)
		}
	}
	if p.dir != "" {
		os.RemoveAll(p.dir)
	}
}

func (p *probe) logTails() string {
	var b strings.Builder
	for _, pr := range p.procs {
		fmt.Fprintf(&b, "\n--- %s (last lines of ferro.log)\n%s", pr.host, pr.logTail())
	}
	return b.String()
}

func since(t time.Time) time.Duration { return time.Since(t).Round(time.Millisecond) }

// api is the process for the i-th request of a kind: requests go round
// the processes as a load balancer would send them.
func (p *probe) api(i int) *proc { return p.live()[i%len(p.live())] }

func (p *probe) live() []*proc {
	var out []*proc
	for _, pr := range p.procs {
		if !pr.dead() {
			out = append(out, pr)
		}
	}
	return out
}

// enroll creates the nodes, two ports each (the first the PXE one), and
// makes manageable those that will be inspected and a few more for the
// provision verbs.
func (p *probe) enroll(ctx context.Context) error {
	began, cpu0 := time.Now(), p.cpu()
	p.nodes = make([]node, p.c.Nodes)
	manage := min(p.c.Nodes, p.c.Inspections+p.c.Rounds)
	kernel, ramdisk := "file://"+filepath.Join(p.dir, "images", "ipa.kernel"), "file://"+filepath.Join(p.dir, "images", "ipa.initramfs")
	err := parallel(ctx, p.c.Nodes, 12, func(i int) error {
		var created struct {
			UUID string `json:"uuid"`
		}
		base := p.api(i).url
		drv, info := p.bmcs.node(i)
		info["deploy_kernel"], info["deploy_ramdisk"] = kernel, ramdisk
		if err := p.do(ctx, base, http.MethodPost, "/v1/nodes", map[string]any{
			"name": fmt.Sprintf("scale-%05d", i), "driver": drv,
			"boot_interface": "pxe", "network_interface": "noop", "inspect_interface": "inspector",
			"driver_info": info,
			"properties":  map[string]any{"cpu_arch": "x86_64"}, "extra": map[string]any{"rack": fmt.Sprintf("r%d", i/40)},
		}, &created); err != nil {
			return fmt.Errorf("create node %d: %w", i, err)
		}
		n := node{uuid: created.UUID, mac: mac(i, 0)}
		p.nodes[i] = n
		for port := range 2 {
			if err := p.do(ctx, base, http.MethodPost, "/v1/ports", map[string]any{
				"node_uuid": n.uuid, "address": mac(i, port), "pxe_enabled": port == 0,
			}, nil); err != nil {
				return fmt.Errorf("create port %d of node %d: %w", port, i, err)
			}
		}
		if i < manage {
			return p.do(ctx, base, http.MethodPut, "/v1/nodes/"+n.uuid+"/states/provision", map[string]any{"target": "manage"}, nil)
		}
		return nil
	})
	if err != nil {
		return err
	}
	if err := p.waitState(ctx, p.nodes[:manage], "manageable", 2*time.Minute); err != nil {
		return err
	}
	p.res.Enroll, p.res.EnrollCPU = time.Since(began), p.cpu()-cpu0
	p.logf("enrolled %d nodes and %d ports (%d managed) in %v", p.c.Nodes, 2*p.c.Nodes, manage, since(began))
	return nil
}

// mac is node n's i-th MAC address.
func mac(n, i int) string {
	return fmt.Sprintf("52:54:%02x:%02x:%02x:%02x", i, n>>16&0xff, n>>8&0xff, n&0xff)
}

// idle measures what the processes ask of the database when nothing
// happens: the periodic tasks alone (heartbeats, the hash ring, the
// take-over check of locked nodes, the status poll of nodes in inspect
// wait), as rows read from every table and transactions, over ten
// seconds. PostgreSQL's statistics are flushed late (an idle backend's
// after up to ten seconds), so the enrolment's are let through first, and
// the tables analysed as autovacuum would soon.
func (p *probe) idle(ctx context.Context) error {
	const q = `SELECT (SELECT COALESCE(sum(seq_tup_read + idx_tup_fetch), 0)::bigint FROM pg_stat_user_tables),
		(SELECT COALESCE(sum(seq_scan), 0)::bigint FROM pg_stat_user_tables WHERE relname = 'nodes'),
		(SELECT xact_commit FROM pg_stat_database WHERE datname = current_database())`
	conn, err := pgx.Connect(ctx, p.dsn)
	if err != nil {
		return err
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, "ANALYZE"); err != nil {
		return err
	}
	read := func() (rows, seq, xacts int64, err error) {
		// A snapshot of the statistics is kept for the transaction; each
		// read is a transaction of its own.
		err = conn.QueryRow(ctx, q).Scan(&rows, &seq, &xacts)
		return rows, seq, xacts, err
	}
	time.Sleep(11 * time.Second)
	r0, s0, x0, err := read()
	if err != nil {
		return err
	}
	if err := resetWork(ctx, conn); err != nil {
		return err
	}
	const window = 10 * time.Second
	time.Sleep(window)
	w, err := readWork(ctx, conn)
	if err != nil {
		return err
	}
	r1, s1, x1, err := read()
	if err != nil {
		return err
	}
	p.res.IdleDB = w.times(1 / window.Seconds())
	p.res.IdleRowsPerSec = float64(r1-r0) / window.Seconds()
	p.res.IdleXactPerSec = float64(x1-x0) / window.Seconds()
	p.res.IdleNodeScans = s1 - s0
	p.logf("idle: %.0f rows read/s, %.1f transactions/s, %d sequential scans of nodes over %v; statements/s: %.1f on nodes (%.1f rows/s), %.1f others",
		p.res.IdleRowsPerSec, p.res.IdleXactPerSec, p.res.IdleNodeScans, window, p.res.IdleDB.NodeQueries, p.res.IdleDB.NodeRows, p.res.IdleDB.Other)
	return nil
}

func (p *probe) dbExec(ctx context.Context, q string) error {
	conn, err := pgx.Connect(ctx, p.dsn)
	if err != nil {
		return err
	}
	defer conn.Close(ctx)
	_, err = conn.Exec(ctx, q)
	return err
}

func (p *probe) dbQuery(ctx context.Context, q string, out any) error {
	conn, err := pgx.Connect(ctx, p.dsn)
	if err != nil {
		return err
	}
	defer conn.Close(ctx)
	return conn.QueryRow(ctx, q).Scan(out)
}

// pageAll pages through every node, detailed, 1,000 at a time, following
// the next links; each page's latency is recorded.
func (p *probe) pageAll(ctx context.Context) error {
	for round := range 2 {
		began := time.Now()
		path := "/v1/nodes/detail?limit=1000"
		seen := 0
		for pages := 0; path != ""; pages++ {
			if pages > p.c.Nodes/1000+2 {
				return fmt.Errorf("paging: more pages than nodes")
			}
			var page struct {
				Nodes []json.RawMessage `json:"nodes"`
				Next  string            `json:"next"`
			}
			t := time.Now()
			if err := p.do(ctx, p.api(round+pages).url, http.MethodGet, path, nil, &page); err != nil {
				return err
			}
			p.record(fmt.Sprintf("page %02d of detailed list (limit 1000)", pages+1), time.Since(t))
			seen += len(page.Nodes)
			path = ""
			if page.Next != "" {
				i := strings.Index(page.Next, "/v1/")
				path = page.Next[i:]
			}
		}
		if seen != p.c.Nodes {
			return fmt.Errorf("paging saw %d nodes, want %d", seen, p.c.Nodes)
		}
		p.res.PageAll = time.Since(began)
	}
	p.logf("paged through %d nodes in %v", p.c.Nodes, p.res.PageAll.Round(time.Millisecond))
	return nil
}

func (p *probe) record(name string, d time.Duration) {
	p.mu.Lock()
	p.res.Latency[name] = append(p.res.Latency[name], d)
	p.mu.Unlock()
}

// inspectUnderLoad starts the inspections at once, each through the next
// process, answers each with a simulated agent as soon as its node is in
// inspect wait (the report posted to the callback and with the token of
// the boot configuration the inspecting process wrote), and runs the API
// rounds beside them.
func (p *probe) inspectUnderLoad(ctx context.Context) error {
	n := min(p.c.Inspections, p.c.Nodes)
	targets := p.nodes[:n]
	verbNodes := p.nodes[n:min(p.c.Nodes, n+p.c.Rounds)]
	cpu0 := p.cpu()
	began := time.Now()
	owner := make([]*proc, n)
	var (
		wg       sync.WaitGroup
		firstErr atomic.Pointer[error]
		posted   atomic.Int64
		postsAt  [2]atomic.Int64
	)
	fail := func(err error) { firstErr.CompareAndSwap(nil, &err) }
	for i := range targets {
		owner[i] = p.api(i)
		wg.Go(func() {
			if err := p.retryBusy(ctx, owner[i].url, http.MethodPut, "/v1/nodes/"+targets[i].uuid+"/states/provision", map[string]any{"target": "inspect"}); err != nil {
				fail(fmt.Errorf("inspect: %w", err))
			}
		})
	}
	// The agents: every node in inspect wait gets its report once.
	agentsDone := make(chan struct{})
	go func() {
		defer close(agentsDone)
		byUUID := map[string]int{}
		for i, t := range targets {
			byUUID[t.uuid] = i
		}
		reported := map[string]bool{}
		var agents sync.WaitGroup
		sem := make(chan struct{}, 32)
		// It gives up once no node has come to inspect wait for a minute
		// (an inspection that failed before it): waitState then says which.
		progress := time.Now()
		for loops := 0; len(reported) < n && loops < 100000 && time.Since(progress) < time.Minute &&
			ctx.Err() == nil && firstErr.Load() == nil; loops++ {
			var out struct {
				Nodes []struct {
					UUID string `json:"uuid"`
				} `json:"nodes"`
			}
			if err := p.do(ctx, p.api(loops).url, http.MethodGet, "/v1/nodes?provision_state=inspect%20wait&fields=uuid&limit=1000", nil, &out); err != nil {
				fail(err)
				break
			}
			for _, w := range out.Nodes {
				i, ok := byUUID[w.UUID]
				if !ok || reported[w.UUID] {
					continue
				}
				reported[w.UUID] = true
				progress = time.Now()
				agents.Add(1)
				sem <- struct{}{}
				go func() {
					defer agents.Done()
					defer func() { <-sem }()
					if err := p.agent(ctx, owner[i], targets[i]); err != nil {
						fail(err)
						return
					}
					now := time.Now().UnixNano()
					postsAt[0].CompareAndSwap(0, now)
					postsAt[1].Store(now)
					posted.Add(1)
				}()
			}
			time.Sleep(20 * time.Millisecond)
		}
		agents.Wait()
	}()
	p.apiRounds(ctx, verbNodes, agentsDone)
	wg.Wait()
	<-agentsDone
	if e := firstErr.Load(); e != nil {
		return *e
	}
	if err := p.waitState(ctx, targets, "manageable", 3*time.Minute); err != nil {
		p.res.InspectFailed = p.countNot(ctx, targets, "manageable")
		return fmt.Errorf("inspections: %w", err)
	}
	p.res.InspectAll = time.Since(began)
	if span := time.Duration(postsAt[1].Load() - postsAt[0].Load()); span > 0 && posted.Load() > 1 {
		p.res.ReportsPerSec = float64(posted.Load()-1) / span.Seconds()
	}
	p.res.CPUPerInspect = (p.cpu() - cpu0) / float64(n)
	p.res.InspectRetries = p.retries.Load()
	p.logf("%d inspections: all manageable in %v, %.0f reports/s", n, since(began), p.res.ReportsPerSec)
	return nil
}

// agent posts node t's report as its ramdisk would: to the callback on the
// kernel command line, with the token, both from the boot configuration
// the inspecting process wrote under its TFTP root.
func (p *probe) agent(ctx context.Context, pr *proc, t node) error {
	var bc *inspection.BootConfig
	var err error
	for try := 0; try < 100; try++ {
		if bc, err = inspection.ReadBootConfig("pxe", pr.tftpRoot, t.mac); err == nil {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	if err != nil {
		return fmt.Errorf("agent of %s: %w", t.uuid, err)
	}
	rep, err := inspection.Report(t.mac, strings.Replace(t.mac, "52:54:00", "52:54:01", 1))
	if err != nil {
		return err
	}
	began := time.Now()
	code, body, err := inspection.Post(ctx, p.http, bc.Callback, bc.Token, rep)
	if err != nil {
		return err
	}
	if code != http.StatusOK && code != http.StatusAccepted {
		return fmt.Errorf("agent of %s: HTTP %d %s", t.uuid, code, bytes.TrimSpace(body))
	}
	p.record("agent report (POST /v1/continue)", time.Since(began))
	return nil
}

// apiRounds runs the API rounds: a detailed list of 1,000, five GETs of a
// node, two PATCHes, one provision verb (manage of an enroll node, or
// provide of a manageable one). It stops after Rounds rounds, and goes on
// no further than one more round once the inspections are over.
func (p *probe) apiRounds(ctx context.Context, verbNodes []node, inspectionsOver <-chan struct{}) {
	rng := rand.New(rand.NewPCG(1, 2))
	timed := func(name string, fn func() error) {
		t := time.Now()
		if err := fn(); err != nil {
			p.logf("%s: %v", name, err)
			p.record(name+" (failed)", 0)
			return
		}
		p.record(name, time.Since(t))
	}
	for round := range p.c.Rounds {
		if ctx.Err() != nil {
			return
		}
		base := p.api(round).url
		timed("GET /v1/nodes/detail?limit=1000", func() error {
			return p.do(ctx, base, http.MethodGet, "/v1/nodes/detail?limit=1000", nil, nil)
		})
		for range 5 {
			n := p.nodes[rng.IntN(len(p.nodes))]
			timed("GET /v1/nodes/{node}", func() error { return p.do(ctx, base, http.MethodGet, "/v1/nodes/"+n.uuid, nil, nil) })
		}
		for range 2 {
			n := p.nodes[len(p.nodes)-1-rng.IntN(len(p.nodes)/2+1)]
			timed("PATCH /v1/nodes/{node}", func() error {
				return p.do(ctx, base, http.MethodPatch, "/v1/nodes/"+n.uuid,
					[]map[string]any{{"op": "add", "path": "/extra/round", "value": round}}, nil)
			})
		}
		if round < len(verbNodes) {
			n := verbNodes[round]
			timed("PUT /v1/nodes/{node}/states/provision (provide)", func() error {
				return p.retryBusy(ctx, base, http.MethodPut, "/v1/nodes/"+n.uuid+"/states/provision", map[string]any{"target": "provide"})
			})
		}
		select {
		case <-inspectionsOver:
			if round >= p.c.Rounds/2 {
				return
			}
		default:
		}
	}
}

// kill starts manage tasks through the last process, SIGKILLs it while
// they and a stream of reads run, and measures how long until no node
// names it as its conductor, and what it left behind.
func (p *probe) kill(ctx context.Context) error {
	victim := p.procs[len(p.procs)-1]
	var batch []node
	for _, n := range p.nodes[min(p.c.Nodes, p.c.Inspections+p.c.Rounds):] {
		if len(batch) == 50 {
			break
		}
		batch = append(batch, n)
	}
	for _, n := range batch {
		if err := p.do(ctx, victim.url, http.MethodPut, "/v1/nodes/"+n.uuid+"/states/provision", map[string]any{"target": "manage"}, nil); err != nil {
			return err
		}
	}
	stopReads := make(chan struct{})
	var reads sync.WaitGroup
	reads.Go(func() {
		for i := 0; i < 10000; i++ {
			select {
			case <-stopReads:
				return
			default:
			}
			p.do(ctx, p.procs[i%(len(p.procs)-1)].url, http.MethodGet, "/v1/nodes/"+p.nodes[i%len(p.nodes)].uuid, nil, nil)
		}
	})
	killed := time.Now()
	victim.cmd.Process.Signal(syscall.SIGKILL)
	<-victim.exited
	defer func() { close(stopReads); reads.Wait() }()
	survivor := p.procs[0].url
	for try := 0; ; try++ {
		if try > 600 || ctx.Err() != nil {
			return fmt.Errorf("nodes still name %s as their conductor %v after the kill", victim.host, since(killed))
		}
		owned, locked, err := p.namesHost(ctx, survivor, victim.host)
		if err != nil {
			return err
		}
		if owned == 0 && locked == 0 {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	p.res.Takeover = time.Since(killed)
	// Every manage task the dead process took ends manageable (it finished
	// before the kill) or failed by the take-over with a last_error; none
	// stays in verifying.
	p.res.StuckNodes = p.countState(ctx, batch, "verifying")
	inspTwice, inspNever := p.startedTwice(p.nodes[:min(p.c.Nodes, p.c.Inspections)], "event=inspect state=inspecting")
	manageTwice, _ := p.startedTwice(batch, "event=manage state=verifying")
	if inspNever > 0 {
		// Every one of them was inspected: the log lines looked for are
		// not what ferro writes (any more).
		return fmt.Errorf("the logs show no start of %d inspections: cannot count tasks run twice", inspNever)
	}
	p.res.RunTwice = inspTwice + manageTwice
	p.logf("SIGKILL of %s: every node owned by a live conductor again after %v; %d nodes left verifying", victim.host, p.res.Takeover.Round(time.Millisecond), p.res.StuckNodes)
	return nil
}

// startedTwice counts the nodes whose logs, across all processes, show
// the task starting (its first state change, marker) more than once, and
// those that show it never.
func (p *probe) startedTwice(nodes []node, marker string) (twice, never int) {
	var logs []string
	for _, pr := range p.procs {
		b, _ := os.ReadFile(pr.log)
		logs = append(logs, string(b))
	}
	for _, n := range nodes {
		started := 0
		for _, l := range logs {
			started += strings.Count(l, "node="+n.uuid+" "+marker)
		}
		switch {
		case started > 1:
			twice++
		case started == 0:
			never++
		}
	}
	return twice, never
}

// namesHost counts the nodes whose conductor is host, and those it locks.
func (p *probe) namesHost(ctx context.Context, base, host string) (owned, locked int, err error) {
	path := "/v1/nodes?fields=uuid,conductor,reservation&limit=1000"
	for pages := 0; path != "" && pages < p.c.Nodes/1000+2; pages++ {
		var page struct {
			Nodes []struct {
				Conductor   *string `json:"conductor"`
				Reservation *string `json:"reservation"`
			} `json:"nodes"`
			Next string `json:"next"`
		}
		if err := p.do(ctx, base, http.MethodGet, path, nil, &page); err != nil {
			return 0, 0, err
		}
		for _, n := range page.Nodes {
			if n.Conductor != nil && *n.Conductor == host {
				owned++
			}
			if n.Reservation != nil && *n.Reservation == host {
				locked++
			}
		}
		path = ""
		if page.Next != "" {
			path = page.Next[strings.Index(page.Next, "/v1/"):]
		}
	}
	p.res.LocksLeft = locked
	return owned, locked, nil
}

func (p *probe) waitConductors(ctx context.Context, want int) error {
	for try := 0; try < 300; try++ {
		var out struct {
			Conductors []struct {
				Alive bool `json:"alive"`
			} `json:"conductors"`
		}
		if err := p.do(ctx, p.procs[0].url, http.MethodGet, "/v1/conductors", nil, &out); err != nil {
			return err
		}
		alive := 0
		for _, c := range out.Conductors {
			if c.Alive {
				alive++
			}
		}
		if alive == want {
			return nil
		}
		time.Sleep(100 * time.Millisecond)
	}
	return fmt.Errorf("the conductors did not all register")
}

// states returns the provision state of every node, by UUID.
func (p *probe) states(ctx context.Context) (map[string]string, error) {
	out := map[string]string{}
	path := "/v1/nodes?fields=uuid,provision_state&limit=1000"
	for pages := 0; path != "" && pages < p.c.Nodes/1000+2; pages++ {
		var page struct {
			Nodes []struct {
				UUID  string `json:"uuid"`
				State string `json:"provision_state"`
			} `json:"nodes"`
			Next string `json:"next"`
		}
		if err := p.do(ctx, p.api(pages).url, http.MethodGet, path, nil, &page); err != nil {
			return nil, err
		}
		for _, n := range page.Nodes {
			out[n.UUID] = n.State
		}
		path = ""
		if page.Next != "" {
			path = page.Next[strings.Index(page.Next, "/v1/"):]
		}
	}
	return out, nil
}

func (p *probe) countState(ctx context.Context, nodes []node, state string) int {
	st, err := p.states(ctx)
	if err != nil {
		return -1
	}
	c := 0
	for _, n := range nodes {
		if st[n.uuid] == state {
			c++
		}
	}
	return c
}

func (p *probe) countNot(ctx context.Context, nodes []node, state string) int {
	return len(nodes) - p.countState(ctx, nodes, state)
}

// waitState waits until every node is in state.
func (p *probe) waitState(ctx context.Context, nodes []node, state string, within time.Duration) error {
	deadline := time.Now().Add(within)
	for {
		st, err := p.states(ctx)
		if err != nil {
			return err
		}
		var other []string
		for _, n := range nodes {
			if st[n.uuid] != state {
				other = append(other, n.uuid+" "+st[n.uuid])
			}
		}
		if len(other) == 0 {
			return nil
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			return fmt.Errorf("%d of %d nodes not %s after %v (e.g. %s)", len(other), len(nodes), state, within, other[0])
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// cpu is the CPU seconds the live processes have used.
func (p *probe) cpu() float64 {
	var s float64
	for _, pr := range p.procs {
		s += pr.cpu()
	}
	return s
}

// apiError is an answer other than 2xx.
type apiError struct {
	code int
	body string
}

func (e *apiError) Error() string { return fmt.Sprintf("HTTP %d: %s", e.code, e.body) }

func (p *probe) do(ctx context.Context, base, method, path string, in, out any) error {
	var body io.Reader
	if in != nil {
		b, err := json.Marshal(in)
		if err != nil {
			return err
		}
		body = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, base+path, body)
	if err != nil {
		return err
	}
	req.Header.Set("X-OpenStack-Ironic-API-Version", "1.82")
	if in != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := p.http.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	buf := bodyBuffers.Get().(*bytes.Buffer)
	defer bodyBuffers.Put(buf)
	buf.Reset()
	if _, err := buf.ReadFrom(resp.Body); err != nil {
		return err
	}
	if resp.StatusCode/100 != 2 {
		return &apiError{resp.StatusCode, strings.TrimSpace(buf.String())}
	}
	if out != nil {
		return json.Unmarshal(buf.Bytes(), out)
	}
	return nil
}

// bodyBuffers are the buffers answers are read into, reused as an
// efficient client does: a request is timed to the body's last byte, and
// growing a slice to a megabyte on every list is the client's cost, not
// the server's.
var bodyBuffers = sync.Pool{New: func() any { return new(bytes.Buffer) }}

// retryBusy sends a request again while the node is locked (409) or the
// process has no free worker (503), as a client does, up to 400 times.
func (p *probe) retryBusy(ctx context.Context, base, method, path string, in any) error {
	var err error
	for try := 0; try < 400; try++ {
		err = p.do(ctx, base, method, path, in, nil)
		var ae *apiError
		if !errors.As(err, &ae) || (ae.code != http.StatusConflict && ae.code != http.StatusServiceUnavailable) {
			return err
		}
		p.retries.Add(1)
		time.Sleep(time.Duration(25+try) * time.Millisecond)
	}
	return err
}

// parallel runs fn(0…n-1) on limit goroutines, stopping at the first error.
func parallel(ctx context.Context, n, limit int, fn func(i int) error) error {
	var next atomic.Int64
	var first atomic.Pointer[error]
	var wg sync.WaitGroup
	for range limit {
		wg.Go(func() {
			for first.Load() == nil && ctx.Err() == nil {
				i := int(next.Add(1) - 1)
				if i >= n {
					return
				}
				if err := fn(i); err != nil {
					first.CompareAndSwap(nil, &err)
				}
			}
		})
	}
	wg.Wait()
	if e := first.Load(); e != nil {
		return *e
	}
	return ctx.Err()
}

// Percentile is the p-th percentile (0–100) of ds, which it sorts.
func Percentile(ds []time.Duration, pct float64) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	slices.Sort(ds)
	i := int(float64(len(ds)-1) * pct / 100)
	return ds[i]
}

// proc is one `ferro serve`.
type proc struct {
	host, url, tftpRoot, log string
	cmd                      *exec.Cmd
	exited                   chan struct{}
}

func (pr *proc) dead() bool {
	select {
	case <-pr.exited:
		return true
	default:
		return false
	}
}

// The processes heart-beat every two seconds and count as dead after ten
// silent ones, a sixth of production's 10 and 60 s so that the take-over
// after SIGKILL is measured in seconds. Shorter is not safe on a starved
// machine: with 1 and 3 s, two cores at a load of 12 during 1,000
// inspections missed heartbeats, live processes were declared dead, their
// locks taken over, and their inspect tasks failed on the fence.
const heartbeatInterval, heartbeatTimeout = 2, 10

// startProc starts process i on the database, as production runs several:
// a host name of its own, and the heartbeats above.
// base is Config.Env, set after the probe's own settings, and env the
// phase's (the power sync's: its log is a file of its own).
func startProc(ctx context.Context, bin, dir, dsn, images string, i int, base []string, env ...string) (*proc, error) {
	pdir := filepath.Join(dir, fmt.Sprintf("proc%d", i))
	pr := &proc{host: fmt.Sprintf("scale-%d", i), tftpRoot: filepath.Join(pdir, "tftpboot"), log: filepath.Join(pdir, "ferro.log"), exited: make(chan struct{})}
	if len(env) > 0 {
		pr.log = filepath.Join(pdir, "ferro-power.log") // the first run's log stays for its counts
	}
	for _, d := range []string{pr.tftpRoot, filepath.Join(pdir, "httpboot"), filepath.Join(pdir, "data")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return nil, err
		}
	}
	apiPort, err := freeport.Next()
	if err != nil {
		return nil, err
	}
	inspPort, err := freeport.Next()
	if err != nil {
		return nil, err
	}
	pr.url = "http://127.0.0.1:" + strconv.Itoa(apiPort)
	pr.cmd = exec.Command(bin, "serve", "--data-dir", filepath.Join(pdir, "data"))
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "FERRO_") {
			pr.cmd.Env = append(pr.cmd.Env, kv)
		}
	}
	pr.cmd.Env = append(pr.cmd.Env,
		"FERRO_DATABASE_CONNECTION="+dsn,
		"FERRO_DEFAULT_HOST="+pr.host,
		"FERRO_CONDUCTOR_HEARTBEAT_INTERVAL="+strconv.Itoa(heartbeatInterval),
		"FERRO_CONDUCTOR_HEARTBEAT_TIMEOUT="+strconv.Itoa(heartbeatTimeout),
		"FERRO_API_HOST_IP=127.0.0.1",
		"FERRO_API_PORT="+strconv.Itoa(apiPort),
		"FERRO_INSPECTOR_LISTEN_ADDRESS=127.0.0.1",
		"FERRO_INSPECTOR_LISTEN_PORT="+strconv.Itoa(inspPort),
		"FERRO_INSPECTOR_ALLOW_LOOPBACK_CALLBACK=true",
		"FERRO_CONDUCTOR_FILE_URL_ALLOWED_PATHS="+images,
		"FERRO_PXE_TFTP_ROOT="+pr.tftpRoot,
		"FERRO_DEPLOY_HTTP_ROOT="+filepath.Join(pdir, "httpboot"),
		"FERRO_DEPLOY_HTTP_URL=http://192.0.2.10:8080",
		// No power sync unless asked (env): the other figures are those
		// of the tasks they name.
		"FERRO_CONDUCTOR_SYNC_POWER_STATE_INTERVAL=0",
		// Ironic's 5 s between two IPMI commands to one BMC would make
		// each inspection wait seconds for nothing on these BMCs.
		"FERRO_IPMI_MIN_COMMAND_INTERVAL=0.2",
	)
	pr.cmd.Env = append(append(pr.cmd.Env, base...), env...)
	if err := startLogged(pr.cmd, pr.log, pr.exited); err != nil {
		return nil, err
	}
	for try := 0; try < 600; try++ {
		resp, err := http.Get(pr.url + "/")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return pr, nil
			}
		}
		select {
		case <-pr.exited:
			return nil, fmt.Errorf("%s exited while starting:\n%s", pr.host, pr.logTail())
		case <-ctx.Done():
			pr.stop()
			return nil, ctx.Err()
		case <-time.After(50 * time.Millisecond):
		}
	}
	pr.stop()
	return nil, fmt.Errorf("%s did not answer in 30 s:\n%s", pr.host, pr.logTail())
}

func (pr *proc) stop() {
	if pr.dead() {
		return
	}
	pr.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-pr.exited:
	case <-time.After(15 * time.Second):
		pr.cmd.Process.Kill()
		<-pr.exited
	}
}

func (pr *proc) logTail() string {
	b, _ := os.ReadFile(pr.log)
	if len(b) > 3000 {
		b = b[len(b)-3000:]
	}
	return string(b)
}

// rss is the process's resident set, from /proc.
func (pr *proc) rss() int64 {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pr.cmd.Process.Pid))
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		if rest, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			kb, _ := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
			return kb << 10
		}
	}
	return 0
}

// cpu is the process's user and system CPU seconds, from /proc.
func (pr *proc) cpu() float64 {
	if pr.dead() {
		return 0
	}
	return lab.CPUSeconds(pr.cmd.Process.Pid)
}

type powerCycle struct {
	checked, corrected, failed int
	took                       time.Duration
	began, ended               time.Time // the log line's time less took, the log line's time
}

var powerCycleLine = regexp.MustCompile(`time=(\S+) .*msg="power state sync done".* checked=(\d+) corrected=(\d+) failed=(\d+) seconds=([0-9.e+-]+)`)

// powerCycles are the power-state sync cycles the process logged.
func (pr *proc) powerCycles() []powerCycle {
	b, _ := os.ReadFile(pr.log)
	var out []powerCycle
	for _, m := range powerCycleLine.FindAllStringSubmatch(string(b), -1) {
		end, _ := time.Parse(time.RFC3339Nano, m[1])
		n, _ := strconv.Atoi(m[2])
		corrected, _ := strconv.Atoi(m[3])
		failed, _ := strconv.Atoi(m[4])
		secs, _ := strconv.ParseFloat(m[5], 64)
		took := time.Duration(secs * float64(time.Second))
		out = append(out, powerCycle{checked: n, corrected: corrected, failed: failed, took: took, began: end.Add(-took), ended: end})
	}
	return out
}

// startLogged starts cmd with its output in the file at log, killed with
// the bench, and closes exited when it has ended.
func startLogged(cmd *exec.Cmd, log string, exited chan struct{}) error {
	out, err := os.Create(log)
	if err != nil {
		return err
	}
	cmd.Stdout, cmd.Stderr = out, out
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		out.Close()
		return err
	}
	go func() {
		cmd.Wait()
		out.Close()
		close(exited)
	}()
	return nil
}
