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
//	go run ./bench/inspector [-nodes 1000] [-workers 8] [-rounds 1] [-postgres] [-cpuprofile cpu.out]
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
	flag.Parse()
	if err := run(o); err != nil {
		fmt.Fprintln(os.Stderr, "bench/inspector:", err)
		os.Exit(1)
	}
}

// lab is the inspector and what it stands on.
type lab struct {
	db   store.Store
	pg   *pgtest.Cluster // nil on SQLite
	cond *conductor.Conductor
	svc  *inspector.Service
	srv  *httptest.Server
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
	l, err := startLab(dir, o)
	if err != nil {
		return err
	}
	defer l.stop()

	began := time.Now()
	nodes, bodies, err := enroll(l, o.nodes, template)
	if err != nil {
		return err
	}
	fmt.Printf("enrolled %d nodes with a port each and started their introspections in %v\n",
		len(nodes), time.Since(began).Round(time.Millisecond))

	var prof *os.File
	if o.cpuprofile != "" {
		if prof, err = os.Create(o.cpuprofile); err != nil {
			return err
		}
		if err := pprof.StartCPUProfile(prof); err != nil {
			return err
		}
	}
	var rounds []result
	for r := range o.rounds {
		if r > 0 {
			if err := restart(l, nodes); err != nil {
				return err
			}
		}
		res := post(l.srv.URL+"/v1/continue", bodies, o.workers)
		rounds = append(rounds, res)
		if len(res.failures) > 0 {
			break
		}
	}
	if prof != nil {
		pprof.StopCPUProfile()
		prof.Close()
	}

	printTable(o, len(bodies[0]), rounds)
	for _, res := range rounds {
		if len(res.failures) > 0 {
			return fmt.Errorf("%d reports refused, first: %s", len(res.failures), res.failures[0])
		}
	}
	return check(l, nodes)
}

func startLab(dir string, o options) (*lab, error) {
	ctx := context.Background()
	conn := "sqlite://" + filepath.Join(dir, "ferro.db")
	var pg *pgtest.Cluster
	if o.postgres {
		var err error
		if pg, err = pgtest.StartCluster(); err != nil {
			return nil, fmt.Errorf("start PostgreSQL: %w", err)
		}
		if conn, _, err = pg.CreateDatabase(ctx); err != nil {
			pg.Stop()
			return nil, err
		}
	}
	db, err := sqlstore.Open(ctx, conn)
	if err != nil {
		if pg != nil {
			pg.Stop()
		}
		return nil, err
	}
	types := []driver.HardwareType{fake.HardwareType}
	reg := driver.NewRegistry(types, driver.EnableAll(types))
	fake.Register(reg)
	reg.RegisterNetwork("noop", network.Noop{})
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	cond := conductor.New(conductor.Options{Store: db, Registry: reg, Log: quiet, Host: "bench", Workers: 100,
		PowerTimeout: time.Minute, HeartbeatTimeout: time.Minute, InspectWaitTimeout: 30 * time.Minute})
	l := &lab{db: db, pg: pg, cond: cond}
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

// closeDB closes the store and stops PostgreSQL if the lab started it.
func (l *lab) closeDB() {
	l.db.Close()
	if l.pg != nil {
		l.pg.Stop()
	}
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

// enroll creates the nodes, each with a port for its first NIC's MAC,
// starts their introspections (manage_boot=false, no token) and returns
// each node's report.
func enroll(l *lab, count int, template []byte) ([]string, [][]byte, error) {
	ctx := context.Background()
	var doc map[string]any
	dec := json.NewDecoder(bytes.NewReader(template))
	dec.UseNumber()
	if err := dec.Decode(&doc); err != nil {
		return nil, nil, fmt.Errorf("payload: %w", err)
	}
	inv, _ := doc["inventory"].(map[string]any)
	ifaces, _ := inv["interfaces"].([]any)
	if len(ifaces) == 0 {
		return nil, nil, errors.New("payload has no interfaces")
	}
	ifs := map[string]string{}
	for _, k := range driver.Kinds {
		ifs[k] = "fake"
	}
	ifs["network"] = "noop"
	var ids []string
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
		inv["bmc_address"] = fmt.Sprintf("10.%d.%d.%d", 100+n>>16&0xff, n>>8&0xff, n&0xff)
		inv["bmc_v6address"] = "::/0"
		b, err := json.Marshal(doc)
		if err != nil {
			return nil, nil, err
		}
		bodies = append(bodies, b)

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
}

// post sends every body once, from workers goroutines sharing one
// keep-alive HTTP client, in an order that spreads the nodes.
func post(url string, bodies [][]byte, workers int) result {
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: workers}}
	defer client.CloseIdleConnections()
	var next atomic.Int64
	var mu sync.Mutex
	res := result{latencies: make([]time.Duration, 0, len(bodies))}
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
				body := bodies[(i*7919)%len(bodies)]
				start := time.Now()
				resp, err := client.Post(url, "application/json", bytes.NewReader(body))
				var msg string
				if err == nil {
					b, _ := io.ReadAll(resp.Body)
					resp.Body.Close()
					if resp.StatusCode != http.StatusOK {
						msg = fmt.Sprintf("%d %s", resp.StatusCode, b)
					}
				} else {
					msg = err.Error()
				}
				d := time.Since(start)
				mu.Lock()
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

func printTable(o options, size int, rounds []result) {
	engine := "SQLite"
	if o.postgres {
		engine = "PostgreSQL (local cluster)"
	}
	fmt.Printf("\ninspector /v1/continue: %d-byte report (40 NICs, 24 disks, LLDP), %d introspections waiting, %s (store_data=%s), %d workers over HTTP, GOMAXPROCS %d\n\n",
		size, o.nodes, engine, o.storeData, o.workers, runtime.GOMAXPROCS(0))
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
		return
	}
	verdict := "met"
	if rate < targetRate {
		verdict = "NOT met"
	}
	fmt.Printf("\ntarget ≥ %d reports/s: %s (%.0f reports/s, %.2f× the target)\n", targetRate, verdict, rate, rate/targetRate)
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
