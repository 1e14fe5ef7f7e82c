// Command inspector measures how many agent reports ferro's inspector
// processes per second: a 40-NIC, 24-disk report with LLDP on every NIC
// (testdata/ipa/large-40nic-24disk.json, with MAC addresses of its own for
// each node), posted to /v1/continue over real HTTP by concurrent workers,
// against a SQLite database in which -nodes introspections are waiting, each
// node with a port of its own MAC so that lookup chooses among all of them.
//
// The inspector is the real one, wired as all-in-one `ferro serve` wires
// it: the service on the SQLite store, the in-process bare metal client
// taking node locks through the real conductor, the ironic-inspector API
// handler behind an HTTP server on loopback. Every report runs the whole
// pipeline: decode, lookup, token check, the default hooks (LLDP and
// local_link_connection included), rules, the node and port updates in one
// transaction, and storing the raw and processed data.
//
//	go run ./bench/inspector [-path both|inspector|agent] [-nodes 1000] [-workers 8] [-rounds 1] [-postgres] [-cpuprofile cpu.out]
//
// -path agent posts the same reports to the bare metal API's
// /v1/continue_inspection instead (the agent inspect interface: the
// conductor processes each in a worker, with Ironic's counterparts of the
// inspector's default hooks); both (the default) runs the two paths one
// after the other in the same process and prints the ratio. The agent
// path answers 202 once a worker has the report, so it is measured twice:
// reports accepted per second, and report → manageable (each node's
// provision_updated_at after its report was posted).
//
// -postgres runs the same against a throwaway PostgreSQL cluster (Debian's
// postgresql package), to see what scaling out costs per report.
//
// It prints reports/s and latency percentiles next to the target (500
// reports/s); it asserts nothing about time, but fails when a report is
// refused or a node is not updated.
package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"runtime"
	"runtime/pprof"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/google/uuid"

	inspectorapi "github.com/ferrometal/ferro/internal/api/inspector"
	"github.com/ferrometal/ferro/internal/baremetal"
	"github.com/ferrometal/ferro/internal/conductor"
	"github.com/ferrometal/ferro/internal/driver"
	"github.com/ferrometal/ferro/internal/driver/fake"
	"github.com/ferrometal/ferro/internal/driver/network"
	"github.com/ferrometal/ferro/internal/inspector"
	"github.com/ferrometal/ferro/internal/store"
	sqlstore "github.com/ferrometal/ferro/internal/store/sql"
	"github.com/ferrometal/ferro/internal/testing/pgtest"
)

// targetRate is the target on a 2-core machine.
const targetRate = 500

type options struct {
	nodes      int
	workers    int
	rounds     int
	payload    string
	cpuprofile string
	storeData  string
	keep       bool
	postgres   bool
	maxReports int
	path       string
}

func main() {
	var o options
	flag.IntVar(&o.nodes, "nodes", 1000, "introspections waiting, one report each per round")
	flag.IntVar(&o.workers, "workers", 8, "concurrent HTTP clients posting reports")
	flag.IntVar(&o.rounds, "rounds", 1, "rounds of -nodes reports; the introspections restart between rounds (not timed)")
	flag.StringVar(&o.payload, "payload", "testdata/ipa/large-40nic-24disk.json", "report to post, with its MACs replaced per node")
	flag.StringVar(&o.cpuprofile, "cpuprofile", "", "write a CPU profile of the timed rounds to this file")
	flag.StringVar(&o.storeData, "store-data", "database", "[processing]store_data: database, or none to see what storing the reports costs")
	flag.BoolVar(&o.keep, "keep", false, "keep the working directory (the SQLite database)")
	flag.IntVar(&o.maxReports, "max-concurrent-reports", 0, "[processing]max_concurrent_reports (0: the server's default, twice the CPUs)")
	flag.BoolVar(&o.postgres, "postgres", false, "use a throwaway PostgreSQL cluster (Debian's postgresql) instead of SQLite")
	flag.StringVar(&o.path, "path", "both", "inspector (/v1/continue), agent (/v1/continue_inspection) or both, one after the other")
	flag.Parse()
	if err := run(o); err != nil {
		fmt.Fprintln(os.Stderr, "bench/inspector:", err)
		os.Exit(1)
	}
}

// lab is the inspector and what it stands on.
type lab struct {
	db      store.Store
	closeDB func()
	cond    *conductor.Conductor
	svc     *inspector.Service
	srv     *httptest.Server
}

func run(o options) error {
	dir, err := os.MkdirTemp("", "ferro-bench-inspector-")
	if err != nil {
		return err
	}
	if o.keep {
		fmt.Println("working directory:", dir)
	} else {
		defer os.RemoveAll(dir)
	}
	template, err := os.ReadFile(o.payload)
	if err != nil {
		return fmt.Errorf("read the payload (run from the module root): %w", err)
	}
	bodies, err := makeBodies(o.nodes, template)
	if err != nil {
		return err
	}
	var inspectorRate, agentRate float64
	if o.path == "inspector" || o.path == "both" {
		if inspectorRate, err = runInspector(dir, o, template); err != nil {
			return err
		}
	}
	if o.path == "agent" || o.path == "both" {
		if agentRate, err = runAgent(dir, o, bodies); err != nil {
			return err
		}
	}
	if o.path == "both" {
		fmt.Printf("\nagent / inspector, reports accepted per second in the same run: %.2f× (%.0f / %.0f)\n", agentRate/inspectorRate, agentRate, inspectorRate)
	}
	return nil
}

// runInspector is the inspector path; it returns the reports per second.
func runInspector(dir string, o options, template []byte) (float64, error) {
	l, err := startLab(dir, o)
	if err != nil {
		return 0, err
	}
	defer l.stop()

	began := time.Now()
	nodes, bodies, err := enroll(l, o.nodes, template)
	if err != nil {
		return 0, err
	}
	fmt.Printf("enrolled %d nodes with a port each and started their introspections in %v\n",
		len(nodes), time.Since(began).Round(time.Millisecond))

	stopProfile, err := startProfile(o.cpuprofile, "inspector")
	if err != nil {
		return 0, err
	}
	var rounds []result
	for r := range o.rounds {
		if r > 0 {
			if err := restart(l, nodes); err != nil {
				return 0, err
			}
		}
		res := post(l.srv.URL+"/v1/continue", bodies, o.workers, http.StatusOK)
		rounds = append(rounds, res)
		if len(res.failures) > 0 {
			break
		}
	}
	stopProfile()

	rate := printTable(o, "inspector /v1/continue", len(bodies[0]), rounds)
	for _, res := range rounds {
		if len(res.failures) > 0 {
			return 0, fmt.Errorf("%d reports refused, first: %s", len(res.failures), res.failures[0])
		}
	}
	return rate, check(l, nodes)
}

// runAgent is the agent path; it returns the reports accepted per second.
func runAgent(dir string, o options, bodies [][]byte) (float64, error) {
	db, closeDB, err := openStore(filepath.Join(dir, "agent"), o)
	if err != nil {
		return 0, err
	}
	defer closeDB()
	l, err := startAgentLab(db, o.storeData != "none")
	if err != nil {
		return 0, err
	}
	defer l.stop()
	nodes, err := enrollAgent(l, len(bodies))
	if err != nil {
		return 0, err
	}
	stopProfile, err := startProfile(o.cpuprofile, "agent")
	if err != nil {
		return 0, err
	}
	var rounds []result
	var done []time.Duration
	for r := range o.rounds {
		if r > 0 {
			if err := restartAgent(l, nodes); err != nil {
				return 0, err
			}
		}
		res := post(l.srv.URL+"/v1/continue_inspection", bodies, o.workers, http.StatusAccepted)
		rounds = append(rounds, res)
		if len(res.failures) > 0 {
			break
		}
		posted := map[string]time.Time{}
		for i, at := range res.postedAt {
			posted[nodes[i]] = at
		}
		d, err := waitAgent(l, nodes, posted, 10*time.Minute)
		if err != nil {
			return 0, err
		}
		done = append(done, d...)
	}
	stopProfile()
	rate := printTable(o, "agent /v1/continue_inspection (accepted)", len(bodies[0]), rounds)
	for _, res := range rounds {
		if len(res.failures) > 0 {
			return 0, fmt.Errorf("%d reports refused, first: %s", len(res.failures), res.failures[0])
		}
	}
	slices.Sort(done)
	fmt.Printf("report → manageable (%d reports): p50 %s, p90 %s, p99 %s, max %s; busy answers retried: %d\n",
		len(done), ms(percentile(done, .5)), ms(percentile(done, .9)), ms(percentile(done, .99)), ms(done[len(done)-1]), totalRetries(rounds))
	return rate, checkAgent(l, nodes, o.storeData != "none")
}

// startProfile starts a CPU profile of one path's rounds into
// <file>.<path> ("" profiles nothing); the returned function stops it.
func startProfile(file, path string) (func(), error) {
	if file == "" {
		return func() {}, nil
	}
	f, err := os.Create(file + "." + path)
	if err != nil {
		return nil, err
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		f.Close()
		return nil, err
	}
	return func() { pprof.StopCPUProfile(); f.Close() }, nil
}

// openStore opens the SQLite database under dir, or a database in a
// throwaway PostgreSQL cluster with -postgres; closeDB closes it and
// stops the cluster.
func openStore(dir string, o options) (store.Store, func(), error) {
	ctx := context.Background()
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, nil, err
	}
	conn := "sqlite://" + filepath.Join(dir, "ferro.db")
	var pg *pgtest.Cluster
	if o.postgres {
		var err error
		if pg, err = pgtest.StartCluster(); err != nil {
			return nil, nil, fmt.Errorf("start PostgreSQL: %w", err)
		}
		if conn, _, err = pg.CreateDatabase(ctx); err != nil {
			pg.Stop()
			return nil, nil, err
		}
	}
	db, err := sqlstore.Open(ctx, conn)
	if err != nil {
		if pg != nil {
			pg.Stop()
		}
		return nil, nil, err
	}
	return db, func() {
		db.Close()
		if pg != nil {
			pg.Stop()
		}
	}, nil
}

func startLab(dir string, o options) (*lab, error) {
	ctx := context.Background()
	db, closeDB, err := openStore(dir, o)
	if err != nil {
		return nil, err
	}
	types := []driver.HardwareType{fake.HardwareType}
	reg := driver.NewRegistry(types, driver.EnableAll(types))
	fake.Register(reg)
	reg.RegisterNetwork("noop", network.Noop{})
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	cond := conductor.New(conductor.Options{Store: db, Registry: reg, Log: quiet, Host: "bench", Workers: 100,
		PowerTimeout: time.Minute, HeartbeatTimeout: time.Minute, InspectWaitTimeout: 30 * time.Minute})
	l := &lab{db: db, closeDB: closeDB, cond: cond}
	if err := cond.Start(ctx); err != nil {
		l.closeDB()
		return nil, err
	}
	bm := &inspector.Local{Store: db, Locker: cond, Power: cond, LockedNodeErr: conductor.ErrNodeLocked}
	l.svc, err = inspector.New(inspector.Options{Store: db, BareMetal: bm, Log: quiet,
		// [processing] and [inspector]'s defaults, but store_data.
		StoreData:                 o.storeData != "none",
		RamdiskLogsFilenameFormat: "{uuid}_{dt:%Y%m%d-%H%M%S.%f}.tar.gz", CanManageBoot: true,
		IntrospectionDelay: 5 * time.Second, Timeout: time.Hour})
	if err != nil {
		l.closeDB()
		return nil, err
	}
	l.srv = httptest.NewServer(inspectorapi.New(inspectorapi.Options{Service: l.svc, Rules: db, Log: quiet, MaxConcurrentReports: o.maxReports}))
	return l, nil
}

func (l *lab) stop() {
	l.srv.Close()
	l.svc.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	l.cond.Stop(ctx)
	l.closeDB()
}

// mac is node n's address for NIC i.
func mac(n, i int) string {
	return fmt.Sprintf("3c:fd:%02x:%02x:%02x:%02x", n>>16&0xff, n>>8&0xff, n&0xff, i)
}

// makeBodies is node n's report for every n: the template with MAC
// addresses of its own and a BMC address of its own.
func makeBodies(count int, template []byte) ([][]byte, error) {
	var doc map[string]any
	dec := json.NewDecoder(bytes.NewReader(template))
	dec.UseNumber()
	if err := dec.Decode(&doc); err != nil {
		return nil, fmt.Errorf("payload: %w", err)
	}
	inv, _ := doc["inventory"].(map[string]any)
	ifaces, _ := inv["interfaces"].([]any)
	if len(ifaces) == 0 {
		return nil, errors.New("payload has no interfaces")
	}
	var bodies [][]byte
	for n := range count {
		for i, iface := range ifaces {
			iface.(map[string]any)["mac_address"] = mac(n, i)
		}
		if boot, ok := inv["boot"].(map[string]any); ok {
			boot["pxe_interface"] = mac(n, 0)
		}
		doc["boot_interface"] = "01-" + dashes(mac(n, 0))
		// The BMC address is the node's own too; nodes are found by MAC.
		inv["bmc_address"] = bmcAddress(n)
		inv["bmc_v6address"] = "::/0"
		b, err := json.Marshal(doc)
		if err != nil {
			return nil, err
		}
		bodies = append(bodies, b)
	}
	return bodies, nil
}

// enroll creates the nodes, each with a port for its first NIC's MAC,
// starts their introspections (manage_boot=false, no token) and returns
// each node's report.
func enroll(l *lab, count int, template []byte) ([]string, [][]byte, error) {
	ctx := context.Background()
	bodies, err := makeBodies(count, template)
	if err != nil {
		return nil, nil, err
	}
	ifs := map[string]string{}
	for _, k := range driver.Kinds {
		ifs[k] = "fake"
	}
	ifs["network"] = "noop"
	var ids []string
	for n := range count {
		node := &baremetal.Node{UUID: uuid.NewString(), Name: fmt.Sprintf("bench-%04d", n), Driver: "fake-hardware",
			ProvisionState: "manageable", PowerState: baremetal.PowerOff, Interfaces: ifs, DriverInfo: baremetal.JSON{},
			DriverInternalInfo: baremetal.JSON{}, Properties: baremetal.JSON{}, Extra: baremetal.JSON{}, InstanceInfo: baremetal.JSON{}}
		if err := l.db.CreateNode(ctx, node); err != nil {
			return nil, nil, err
		}
		port := &baremetal.Port{UUID: uuid.NewString(), Address: mac(n, 0), NodeUUID: node.UUID, PXEEnabled: true,
			LocalLinkConnection: baremetal.JSON{}, Extra: baremetal.JSON{}, InternalInfo: baremetal.JSON{}}
		if err := l.db.CreatePort(ctx, port); err != nil {
			return nil, nil, err
		}
		if err := l.svc.Start(ctx, node.UUID, false, ""); err != nil {
			return nil, nil, err
		}
		ids = append(ids, node.UUID)
	}
	return ids, bodies, nil
}

// bmcAddress is node n's BMC address.
func bmcAddress(n int) string { return fmt.Sprintf("10.%d.%d.%d", 100+n>>16&0xff, n>>8&0xff, n&0xff) }

func dashes(mac string) string {
	b := []byte(mac)
	for i, c := range b {
		if c == ':' {
			b[i] = '-'
		}
	}
	return string(b)
}

// restart starts every introspection again for another round.
func restart(l *lab, nodes []string) error {
	for _, id := range nodes {
		if err := l.svc.Start(context.Background(), id, false, ""); err != nil {
			return fmt.Errorf("restart introspection of %s: %w", id, err)
		}
	}
	return nil
}

type result struct {
	wall      time.Duration
	latencies []time.Duration
	failures  []string
	// postedAt is when body i was first posted; retries counts the
	// answers 503 (busy, retried as the agent does).
	postedAt []time.Time
	retries  int
}

func totalRetries(rs []result) int {
	n := 0
	for _, r := range rs {
		n += r.retries
	}
	return n
}

// post sends every body once, from workers goroutines sharing one
// keep-alive HTTP client, in an order that spreads the nodes; want is the
// status of an accepted report, and a 503 is retried as the agent does.
func post(url string, bodies [][]byte, workers int, want int) result {
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: workers}}
	defer client.CloseIdleConnections()
	var next atomic.Int64
	var mu sync.Mutex
	res := result{latencies: make([]time.Duration, 0, len(bodies)), postedAt: make([]time.Time, len(bodies))}
	var wg sync.WaitGroup
	began := time.Now()
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := int(next.Add(1) - 1)
				if i >= len(bodies) {
					return
				}
				// A stride, so that concurrent reports are for nodes far apart.
				k := (i * 7919) % len(bodies)
				body := bodies[k]
				start := time.Now()
				var msg string
				retries := 0
				for {
					resp, err := client.Post(url, "application/json", bytes.NewReader(body))
					msg = ""
					if err == nil {
						b, _ := io.ReadAll(resp.Body)
						resp.Body.Close()
						if resp.StatusCode == http.StatusServiceUnavailable && retries < 100 {
							retries++
							time.Sleep(50 * time.Millisecond)
							continue
						}
						if resp.StatusCode != want {
							msg = fmt.Sprintf("%d %s", resp.StatusCode, b)
						}
					} else {
						msg = err.Error()
					}
					break
				}
				d := time.Since(start)
				mu.Lock()
				res.postedAt[k] = start
				res.retries += retries
				res.latencies = append(res.latencies, d)
				if msg != "" {
					res.failures = append(res.failures, msg)
				}
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	res.wall = time.Since(began)
	return res
}

func percentile(sorted []time.Duration, p float64) time.Duration {
	if len(sorted) == 0 {
		return 0
	}
	i := int(p*float64(len(sorted))+0.5) - 1
	i = max(0, min(i, len(sorted)-1))
	return sorted[i]
}

// printTable prints the rounds of one path and returns its reports per second.
func printTable(o options, path string, size int, rounds []result) float64 {
	engine := "SQLite"
	if o.postgres {
		engine = "PostgreSQL (local cluster)"
	}
	fmt.Printf("\n%s: %d-byte report (40 NICs, 24 disks, LLDP), %d nodes waiting, %s (store_data=%s), %d workers over HTTP, GOMAXPROCS %d\n\n",
		path, size, o.nodes, engine, o.storeData, o.workers, runtime.GOMAXPROCS(0))
	fmt.Printf("%-6s %8s %7s %9s %11s %9s %9s %9s %9s\n", "round", "reports", "failed", "wall", "reports/s", "p50", "p90", "p99", "max")
	var all []time.Duration
	var wall time.Duration
	for i, r := range rounds {
		s := slices.Clone(r.latencies)
		slices.Sort(s)
		all = append(all, s...)
		wall += r.wall
		fmt.Printf("%-6d %8d %7d %9s %11.0f %9s %9s %9s %9s\n", i+1, len(s), len(r.failures), r.wall.Round(time.Millisecond),
			float64(len(s))/r.wall.Seconds(), ms(percentile(s, .5)), ms(percentile(s, .9)), ms(percentile(s, .99)), ms(s[len(s)-1]))
	}
	slices.Sort(all)
	rate := float64(len(all)) / wall.Seconds()
	if len(rounds) > 1 {
		fmt.Printf("%-6s %8d %7s %9s %11.0f %9s %9s %9s %9s\n", "all", len(all), "", wall.Round(time.Millisecond), rate,
			ms(percentile(all, .5)), ms(percentile(all, .9)), ms(percentile(all, .99)), ms(all[len(all)-1]))
	}
	if o.postgres {
		// The target is the embedded default's; PostgreSQL shares these
		// two cores with its server here, and scales out across machines.
		fmt.Printf("\n%.0f reports/s on PostgreSQL (the ≥ %d reports/s target is SQLite's)\n", rate, targetRate)
		return rate
	}
	verdict := "met"
	if rate < targetRate {
		verdict = "NOT met"
	}
	fmt.Printf("\ntarget ≥ %d reports/s: %s (%.0f reports/s, %.2f× the target)\n", targetRate, verdict, rate, rate/targetRate)
	return rate
}

func ms(d time.Duration) string { return fmt.Sprintf("%.1fms", float64(d)/float64(time.Millisecond)) }

// check makes sure the reports did their work: every introspection
// finished and a sample of nodes got properties and switch ports.
func check(l *lab, nodes []string) error {
	ctx := context.Background()
	for i, id := range nodes {
		in, err := l.db.GetIntrospection(ctx, id)
		if err != nil {
			return err
		}
		if in.State != inspector.StateFinished {
			return fmt.Errorf("introspection of %s is %q: %s", id, in.State, in.Error)
		}
		if i%97 != 0 {
			continue
		}
		n, err := l.db.GetNode(ctx, id)
		if err != nil {
			return err
		}
		if n.Properties["cpus"] != "64" || n.Properties["local_gb"] == nil {
			return fmt.Errorf("node %s properties %v", id, n.Properties)
		}
		ports, err := l.db.ListPorts(ctx, store.PortFilter{NodeUUID: id})
		if err != nil {
			return err
		}
		if len(ports) != 1 || ports[0].LocalLinkConnection["switch_id"] == nil {
			return fmt.Errorf("node %s ports %+v", id, ports)
		}
	}
	return nil
}
