package probe

import (
	"bytes"
	"context"
	stdsql "database/sql"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"time"

	_ "modernc.org/sqlite" // Ironic's SQLite database, loaded in bulk

	"github.com/ferrometal/ferro/internal/testing/freeport"
)

// The side-by-side probe: the same requests, by the same code, to one
// `ferro serve` and to one Debian Ironic 21.4 (python3-ironic, its
// single-process `ironic` with rpc_transport = none), each on SQLite,
// both with the same fake-hardware nodes (two ports each, manageable):
//
//   - the detailed list, limit=1000, paging through every node;
//   - GET one node, PATCH, provide and manage (the fake deploy and
//     cleaning, automated_clean off);
//   - the power-state sync at every node (fake power, no BMC latency):
//     ferro's cycle as it logs it, Ironic's as its own statsd timer
//     (ConductorManager._sync_power_states) reports it.
//
// ferro's nodes are enrolled over its API. Ironic's first SideSample
// nodes are too (their rate is reported); the rest are copies of the
// first one's rows (node and ports) inserted into its database while it is
// stopped, since its API would need most of the budget for 10,000 nodes.

// SideConfig is a side-by-side probe's profile.
type SideConfig struct {
	Ferro  string // the ferro binary
	Nodes  int    // nodes on each side, two ports each
	Sample int    // Ironic nodes enrolled over its API (the rest are copied)
	Gets   int    // GETs of one node, and PATCHes
	Verbs  int    // nodes provided, then managed again
	// PowerInterval is [conductor]sync_power_state_interval for the power
	// phase (0: no power phase); IronicPowerWait bounds the wait for
	// Ironic's first cycle.
	PowerInterval, IronicPowerWait time.Duration
	Limit                          time.Duration
	Log                            io.Writer
}

// SideResult is what a side-by-side probe measured, per side ("ferro",
// "ironic").
type SideResult struct {
	Config  SideConfig
	Version map[string]string
	Latency map[string]map[string][]time.Duration
	// PageAll is the time to page through every node, detailed, 1,000 a
	// page: the sum of the pages' times (the faster of two passes).
	PageAll map[string]time.Duration
	// Enroll is how long creating Enrolled nodes (and their ports, and
	// making them manageable) over the API took.
	Enroll   map[string]time.Duration
	Enrolled map[string]int
	// PowerCycle is one power-state sync cycle at every node, PowerNodes
	// the nodes it went through.
	PowerCycle map[string]time.Duration
	PowerNodes map[string]int
	RSS        map[string]int64
}

// side is one of the two servers.
type side struct {
	name string
	p    *probe
	url  string
}

// SideBySide runs the side-by-side probe.
func SideBySide(ctx context.Context, c SideConfig) (*SideResult, error) {
	if c.Limit <= 0 {
		c.Limit = 20 * time.Minute
	}
	if c.Log == nil {
		c.Log = io.Discard
	}
	c.Sample = min(max(c.Sample, 1), c.Nodes)
	ctx, cancel := context.WithTimeout(ctx, c.Limit)
	defer cancel()
	res := &SideResult{Config: c, Version: map[string]string{}, Latency: map[string]map[string][]time.Duration{},
		PageAll: map[string]time.Duration{}, Enroll: map[string]time.Duration{}, Enrolled: map[string]int{},
		PowerCycle: map[string]time.Duration{}, PowerNodes: map[string]int{}, RSS: map[string]int64{}}
	dir, err := os.MkdirTemp("", "ferro-side-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	logf := func(format string, args ...any) { fmt.Fprintf(c.Log, "bench/scale: "+format+"\n", args...) }
	hc := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 64}, Timeout: 5 * time.Minute}
	newProbe := func() *probe {
		return &probe{c: Config{Nodes: c.Nodes, Log: c.Log}, http: hc, res: &Result{Latency: map[string][]time.Duration{}}}
	}

	// ferro: one process on SQLite, enrolled over the API.
	images := filepath.Join(dir, "images")
	if err := os.MkdirAll(images, 0o755); err != nil {
		return nil, err
	}
	db := "sqlite://" + filepath.Join(dir, "ferro.db")
	fp, err := startProc(ctx, c.Ferro, dir, db, images, 0, nil)
	if err != nil {
		return nil, err
	}
	defer func() { fp.stop() }()
	f := &side{name: "ferro", p: newProbe(), url: fp.url}
	res.Version["ferro"] = "ferro serve (SQLite, one process)"
	began := time.Now()
	if f.p.nodes, err = enrollOver(ctx, f, 0, c.Nodes); err != nil {
		return res, fmt.Errorf("ferro: %w%s", err, fp.logTail())
	}
	res.Enroll["ferro"], res.Enrolled["ferro"] = time.Since(began), c.Nodes
	logf("ferro: %d nodes, %d ports enrolled and manageable over the API in %v", c.Nodes, 2*c.Nodes, since(began))
	// Each side's API is measured while the other is not busy: ferro's
	// before Ironic is started (its conductor's start-up and periodic
	// tasks at 10,000 nodes take a core for a while), Ironic's with ferro
	// idle.
	if err := measureSide(ctx, f, c, res, logf); err != nil {
		return res, err
	}
	res.RSS["ferro"] = fp.rss()

	// Ironic: the sample over the API, the rest copied in its database.
	ir, err := startIronic(ctx, dir, false, 0)
	if err != nil {
		return res, err
	}
	defer func() { ir.stop() }()
	i := &side{name: "ironic", p: newProbe(), url: ir.url}
	res.Version["ironic"] = ir.version
	began = time.Now()
	sample, err := enrollOver(ctx, i, 0, c.Sample)
	if err != nil {
		return res, fmt.Errorf("ironic: %w%s", err, ir.logTail())
	}
	res.Enroll["ironic"], res.Enrolled["ironic"] = time.Since(began), c.Sample
	logf("ironic: %d nodes, %d ports enrolled and manageable over the API in %v", c.Sample, 2*c.Sample, since(began))
	ir.stop()
	began = time.Now()
	copies, err := copyIronicNodes(ctx, ir.db, sample[0].uuid, c.Nodes-c.Sample)
	if err != nil {
		return res, fmt.Errorf("ironic: copy nodes: %w", err)
	}
	i.p.nodes = append(sample, copies...)
	logf("ironic: %d more nodes (and their ports) copied into its database in %v", len(copies), since(began))
	if ir, err = startIronic(ctx, dir, false, 0); err != nil {
		return res, err
	}
	i.url = ir.url

	if err := measureSide(ctx, i, c, res, logf); err != nil {
		return res, err
	}
	res.RSS["ironic"] = ir.rss()

	if c.PowerInterval <= 0 {
		return res, nil
	}
	// The power phase: each restarted with the sync on.
	fp.stop()
	if fp, err = startProc(ctx, c.Ferro, dir, db, images, 0, nil,
		"FERRO_CONDUCTOR_SYNC_POWER_STATE_INTERVAL="+strconv.Itoa(int(c.PowerInterval.Seconds()))); err != nil {
		return res, err
	}
	deadline := time.Now().Add(3*c.PowerInterval + time.Minute)
	for len(fp.powerCycles()) < 2 && time.Now().Before(deadline) && ctx.Err() == nil {
		time.Sleep(100 * time.Millisecond)
	}
	cs := fp.powerCycles()
	if len(cs) < 2 {
		return res, fmt.Errorf("ferro: %d power sync cycles logged in time", len(cs))
	}
	res.PowerCycle["ferro"], res.PowerNodes["ferro"] = cs[1].took, cs[1].checked
	logf("ferro: power sync cycle %v, %d nodes", cs[1].took.Round(time.Millisecond), cs[1].checked)
	fp.stop()

	ir.stop()
	if ir, err = startIronic(ctx, dir, true, c.PowerInterval); err != nil {
		return res, err
	}
	wait := c.IronicPowerWait
	if wait <= 0 {
		wait = 10 * time.Minute
	}
	took, nodes, err := ir.powerCycle(ctx, c.PowerInterval+wait)
	if err != nil {
		return res, fmt.Errorf("ironic: %w%s", err, ir.logTail())
	}
	res.PowerCycle["ironic"], res.PowerNodes["ironic"] = took, nodes
	logf("ironic: power sync cycle %v, %d nodes", took.Round(time.Millisecond), nodes)
	return res, nil
}

// measureSide runs the API figures against s and keeps them in res.
func measureSide(ctx context.Context, s *side, c SideConfig, res *SideResult, logf func(string, ...any)) error {
	began := time.Now()
	if err := measureAPI(ctx, s, c); err != nil {
		return fmt.Errorf("%s: %w", s.name, err)
	}
	res.Latency[s.name] = s.p.res.Latency
	res.PageAll[s.name] = s.p.res.PageAll
	logf("%s: API measured in %v", s.name, since(began))
	return nil
}

// sideNode is the node both sides enroll: fake hardware, with BMC
// credentials (masked in every answer), images, properties, extra.
func sideNode(i int) map[string]any {
	return map[string]any{
		"name": fmt.Sprintf("side-%05d", i), "driver": "fake-hardware", "resource_class": "baremetal",
		"driver_info": map[string]any{"ipmi_address": fmt.Sprintf("10.0.%d.%d", i/250, i%250), "ipmi_username": "admin",
			"ipmi_password": "secret", "deploy_kernel": "http://images.example/ipa.kernel",
			"deploy_ramdisk": "http://images.example/ipa.initramfs"},
		"properties": map[string]any{"cpus": 32, "memory_mb": 131072, "local_gb": 900, "cpu_arch": "x86_64",
			"capabilities": "boot_mode:uefi"},
		"extra": map[string]any{"rack": fmt.Sprintf("r%d", i/40)},
	}
}

// enrollOver creates nodes [from, to) over s's API, two ports each, and
// makes them manageable.
func enrollOver(ctx context.Context, s *side, from, to int) ([]node, error) {
	nodes := make([]node, to-from)
	err := parallel(ctx, len(nodes), 12, func(k int) error {
		i := from + k
		var created struct {
			UUID string `json:"uuid"`
		}
		if err := s.p.do(ctx, s.url, http.MethodPost, "/v1/nodes", sideNode(i), &created); err != nil {
			return fmt.Errorf("create node %d: %w", i, err)
		}
		nodes[k] = node{uuid: created.UUID, mac: mac(i, 0)}
		for port := range 2 {
			if err := s.p.do(ctx, s.url, http.MethodPost, "/v1/ports", map[string]any{
				"node_uuid": created.UUID, "address": mac(i, port), "pxe_enabled": port == 0,
			}, nil); err != nil {
				return fmt.Errorf("create port %d of node %d: %w", port, i, err)
			}
		}
		return s.p.retryBusy(ctx, s.url, http.MethodPut, "/v1/nodes/"+created.UUID+"/states/provision", map[string]any{"target": "manage"})
	})
	if err != nil {
		return nil, err
	}
	return nodes, waitStates(ctx, s, nodes, "manageable", 5*time.Minute)
}

// waitStates waits until every node of nodes is in state on s.
func waitStates(ctx context.Context, s *side, nodes []node, state string, within time.Duration) error {
	deadline := time.Now().Add(within)
	for {
		st := map[string]string{}
		path := "/v1/nodes?fields=uuid,provision_state&limit=1000"
		for pages := 0; path != "" && pages < s.p.c.Nodes/1000+2; pages++ {
			var page struct {
				Nodes []struct {
					UUID  string `json:"uuid"`
					State string `json:"provision_state"`
				} `json:"nodes"`
				Next string `json:"next"`
			}
			if err := s.p.do(ctx, s.url, http.MethodGet, path, nil, &page); err != nil {
				return err
			}
			for _, n := range page.Nodes {
				st[n.UUID] = n.State
			}
			path = nextPath(page.Next)
		}
		other := 0
		var example string
		for _, n := range nodes {
			if st[n.uuid] != state {
				other++
				example = n.uuid + " " + st[n.uuid]
			}
		}
		if other == 0 {
			return nil
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			return fmt.Errorf("%d of %d nodes not %s after %v (e.g. %s)", other, len(nodes), state, within, example)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// waitEach waits until every node of nodes is in state on s, reading
// each node that is not yet.
func waitEach(ctx context.Context, s *side, nodes []node, state string, within time.Duration) error {
	deadline := time.Now().Add(within)
	left := nodes
	for len(left) > 0 {
		var still []node
		for _, n := range left {
			var out struct {
				State string `json:"provision_state"`
			}
			if err := s.p.do(ctx, s.url, http.MethodGet, "/v1/nodes/"+n.uuid+"?fields=provision_state", nil, &out); err != nil {
				return err
			}
			if out.State != state {
				still = append(still, n)
			}
		}
		if left = still; len(left) > 0 {
			if time.Now().After(deadline) || ctx.Err() != nil {
				return fmt.Errorf("%d of %d nodes not %s after %v (e.g. %s)", len(left), len(nodes), state, within, left[0].uuid)
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
	return nil
}

// nextPath is the path of a list's next link, "" for none.
func nextPath(next string) string {
	if i := strings.Index(next, "/v1/"); i >= 0 {
		return next[i:]
	}
	return ""
}

// measureAPI runs the API figures against s: two passes through every
// node (the detailed list, 1,000 a page), c.Gets GETs and PATCHes of
// random nodes, and c.Verbs nodes provided and managed again.
func measureAPI(ctx context.Context, s *side, c SideConfig) error {
	p := s.p
	// One buffer for every body, as an efficient client reads them: the
	// time is the server's and the transfer's, not that of growing a
	// slice to 1.3 MB on every answer (1.4 ms of the 3.5 here).
	var buf bytes.Buffer
	// The figure the issue bounds: the first 500 nodes, detailed.
	for range c.Gets / 2 {
		t := time.Now()
		if err := getBody(ctx, p, s.url+"/v1/nodes?detail=True&limit=500", &buf); err != nil {
			return err
		}
		p.record("GET /v1/nodes?detail=True&limit=500", time.Since(t))
	}
	for pass := range 2 {
		var paging time.Duration
		path, seen := "/v1/nodes?detail=True&limit=1000", 0
		for pages := 0; path != ""; pages++ {
			if pages > c.Nodes/1000+2 {
				return fmt.Errorf("paging: more pages than nodes")
			}
			var page struct {
				Nodes []json.RawMessage `json:"nodes"`
				Next  string            `json:"next"`
			}
			// Timed to the body's last byte: decoding it is the client's
			// work, not the server's.
			t := time.Now()
			if err := getBody(ctx, p, s.url+path, &buf); err != nil {
				return err
			}
			d := time.Since(t)
			paging += d
			p.record("GET /v1/nodes?detail=True&limit=1000 (a page)", d)
			if err := json.Unmarshal(buf.Bytes(), &page); err != nil {
				return err
			}
			seen += len(page.Nodes)
			path = nextPath(page.Next)
		}
		if seen != c.Nodes {
			return fmt.Errorf("paging saw %d nodes, want %d", seen, c.Nodes)
		}
		if pass == 0 || paging < p.res.PageAll {
			p.res.PageAll = paging
		}
	}
	rng := rand.New(rand.NewPCG(1, 2))
	timed := func(name string, fn func() error) error {
		t := time.Now()
		if err := fn(); err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
		p.record(name, time.Since(t))
		return nil
	}
	for range c.Gets {
		n := p.nodes[rng.IntN(len(p.nodes))]
		if err := timed("GET /v1/nodes/{node}", func() error { return p.do(ctx, s.url, http.MethodGet, "/v1/nodes/"+n.uuid, nil, nil) }); err != nil {
			return err
		}
	}
	for k := range c.Gets {
		n := p.nodes[rng.IntN(len(p.nodes))]
		if err := timed("PATCH /v1/nodes/{node} (extra)", func() error {
			return p.do(ctx, s.url, http.MethodPatch, "/v1/nodes/"+n.uuid,
				[]map[string]any{{"op": "add", "path": "/extra/round", "value": k}}, nil)
		}); err != nil {
			return err
		}
	}
	// The verbs on nodes no PATCH touched last: the end of the list.
	verbs := p.nodes[len(p.nodes)-min(c.Verbs, len(p.nodes)):]
	for _, v := range []struct{ target, state string }{{"provide", "available"}, {"manage", "manageable"}} {
		began := time.Now()
		for _, n := range verbs {
			if err := timed("PUT …/states/provision ("+v.target+")", func() error {
				return p.retryBusy(ctx, s.url, http.MethodPut, "/v1/nodes/"+n.uuid+"/states/provision", map[string]any{"target": v.target})
			}); err != nil {
				return err
			}
		}
		if err := waitEach(ctx, s, verbs, v.state, 5*time.Minute); err != nil {
			return err
		}
		p.record(fmt.Sprintf("%d nodes %s: first request to all %s", len(verbs), v.target, v.state), time.Since(began))
	}
	return nil
}

// getBody GETs url as probe.do does and leaves the body, undecoded, in
// buf.
func getBody(ctx context.Context, p *probe, url string, buf *bytes.Buffer) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return err
	}
	req.Header.Set("X-OpenStack-Ironic-API-Version", "1.82")
	resp, err := p.http.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	buf.Reset()
	_, err = buf.ReadFrom(resp.Body)
	if err == nil && resp.StatusCode != http.StatusOK {
		err = &apiError{resp.StatusCode, strings.TrimSpace(buf.String())}
	}
	return err
}

// ironic is a running Debian Ironic 21.4.
type ironic struct {
	url, version, db, log string
	dir                   string
	cmd                   *exec.Cmd
	exited                chan struct{}
	statsd                *net.UDPConn
}

// ironicProgram is the argv that runs one of python3-ironic's commands:
// /usr/bin/NAME from the ironic-api and ironic-conductor packages, else the
// module's main() under Debian's python3 (the packaged library).
func ironicProgram(name, module string) []string {
	if _, err := os.Stat("/usr/bin/" + name); err == nil {
		return []string{"/usr/bin/" + name}
	}
	return []string{"/usr/bin/python3", "-c", "import sys; sys.argv[0] = '" + name + "'; from " + module + " import main; main()"}
}

// startIronic starts Ironic in dir (its database created on first use):
// fake hardware only, noauth, on SQLite; with power set, the power-state
// sync every interval and its timers sent to a statsd socket the probe
// reads.
func startIronic(ctx context.Context, dir string, power bool, interval time.Duration) (*ironic, error) {
	if err := exec.Command("/usr/bin/python3", "-c", "import ironic.cmd.singleprocess").Run(); err != nil {
		return nil, fmt.Errorf("Debian's python3-ironic (21.4) is needed for -ironic: apt-get install python3-ironic")
	}
	idir := filepath.Join(dir, "ironic")
	ir := &ironic{dir: idir, db: filepath.Join(idir, "ironic.sqlite"), log: filepath.Join(idir, "ironic.log"), exited: make(chan struct{})}
	for _, d := range []string{"lock", "tftp", "http"} {
		if err := os.MkdirAll(filepath.Join(idir, d), 0o755); err != nil {
			return nil, err
		}
	}
	port, err := freeport.Next()
	if err != nil {
		return nil, err
	}
	ir.url = "http://127.0.0.1:" + strconv.Itoa(port)
	syncInterval, metrics := -1, ""
	if power {
		syncInterval = int(interval.Seconds())
		if ir.statsd, err = net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)}); err != nil {
			return nil, err
		}
		metrics = fmt.Sprintf("[metrics]\nbackend = statsd\n\n[metrics_statsd]\nstatsd_host = 127.0.0.1\nstatsd_port = %d\n",
			ir.statsd.LocalAddr().(*net.UDPAddr).Port)
	}
	conf := fmt.Sprintf(`[DEFAULT]
auth_strategy = noauth
rpc_transport = none
host = localhost
use_stderr = false
log_file = %[1]s/ironic.log
enabled_hardware_types = fake-hardware
enabled_bios_interfaces = fake
enabled_boot_interfaces = fake
enabled_console_interfaces = fake
enabled_deploy_interfaces = fake
enabled_inspect_interfaces = fake
enabled_management_interfaces = fake
enabled_network_interfaces = noop
enabled_power_interfaces = fake
enabled_raid_interfaces = fake
enabled_rescue_interfaces = fake
enabled_storage_interfaces = noop
enabled_vendor_interfaces = fake

[api]
host_ip = 127.0.0.1
port = %[2]d

[database]
connection = sqlite:///%[3]s

[dhcp]
dhcp_provider = none

[conductor]
automated_clean = false
sync_power_state_interval = %[4]d

[oslo_concurrency]
lock_path = %[1]s/lock

[pxe]
tftp_root = %[1]s/tftp

[deploy]
http_root = %[1]s/http
http_url = http://127.0.0.1:1/

%[5]s`, idir, port, ir.db, syncInterval, metrics)
	confPath := filepath.Join(idir, "ironic.conf")
	if err := os.WriteFile(confPath, []byte(conf), 0o644); err != nil {
		return nil, err
	}
	if _, err := os.Stat(ir.db); err != nil {
		argv := append(ironicProgram("ironic-dbsync", "ironic.cmd.dbsync"), "--config-file", confPath, "create_schema")
		if out, err := exec.CommandContext(ctx, argv[0], argv[1:]...).CombinedOutput(); err != nil {
			return nil, fmt.Errorf("ironic-dbsync: %w\n%s", err, out)
		}
	}
	argv := append(ironicProgram("ironic", "ironic.cmd.singleprocess"), "--config-file", confPath)
	ir.cmd = exec.Command(argv[0], argv[1:]...)
	if err := startLogged(ir.cmd, filepath.Join(idir, "stdout.log"), ir.exited); err != nil {
		return nil, err
	}
	for try := 0; try < 600; try++ {
		var v struct {
			Version struct {
				Version string `json:"version"`
			} `json:"version"`
		}
		if resp, err := http.Get(ir.url + "/v1"); err == nil {
			err = json.NewDecoder(resp.Body).Decode(&v)
			resp.Body.Close()
			if err == nil && resp.StatusCode == http.StatusOK {
				ver, _ := exec.Command("dpkg-query", "-W", "-f=${Version}", "python3-ironic").Output()
				ir.version = fmt.Sprintf("Ironic %s (python3-ironic, API 1.%s max; SQLite, one process)", ver,
					strings.TrimPrefix(v.Version.Version, "1."))
				return ir, nil
			}
		}
		select {
		case <-ir.exited:
			return nil, fmt.Errorf("ironic exited while starting:%s", ir.logTail())
		case <-ctx.Done():
			ir.stop()
			return nil, ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
	}
	ir.stop()
	return nil, fmt.Errorf("ironic did not answer in 60 s:%s", ir.logTail())
}

func (ir *ironic) stop() {
	if ir.statsd != nil {
		ir.statsd.Close()
	}
	select {
	case <-ir.exited:
		return
	default:
	}
	ir.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-ir.exited:
	case <-time.After(20 * time.Second):
		ir.cmd.Process.Kill()
		<-ir.exited
	}
}

func (ir *ironic) logTail() string {
	var b strings.Builder
	for _, name := range []string{"stdout.log", "ironic.log"} {
		data, _ := os.ReadFile(filepath.Join(ir.dir, name))
		if len(data) > 3000 {
			data = data[len(data)-3000:]
		}
		fmt.Fprintf(&b, "\n--- ironic %s\n%s", name, data)
	}
	return b.String()
}

// rss is Ironic's resident set.
func (ir *ironic) rss() int64 {
	return (&proc{cmd: ir.cmd, exited: ir.exited}).rss()
}

var statsdTimer = regexp.MustCompile(`ConductorManager\._sync_power_states:([0-9.]+)\|ms`)
var statsdNodes = regexp.MustCompile(`ConductorManager\.PowerSyncNodesCount:([0-9.]+)\|g`)

// powerCycle waits, up to within, for Ironic's first power-state sync
// cycle and returns its time and nodes, from its statsd timer and gauge.
func (ir *ironic) powerCycle(ctx context.Context, within time.Duration) (time.Duration, int, error) {
	deadline := time.Now().Add(within)
	buf := make([]byte, 64<<10)
	nodes := -1
	for time.Now().Before(deadline) && ctx.Err() == nil {
		ir.statsd.SetReadDeadline(time.Now().Add(time.Second))
		n, _, err := ir.statsd.ReadFromUDP(buf)
		if err != nil {
			if ne, ok := err.(net.Error); ok && ne.Timeout() {
				continue
			}
			return 0, 0, err
		}
		for _, line := range strings.Split(string(buf[:n]), "\n") {
			if m := statsdNodes.FindStringSubmatch(line); m != nil {
				v, _ := strconv.ParseFloat(m[1], 64)
				nodes = int(v)
			}
			if m := statsdTimer.FindStringSubmatch(line); m != nil {
				ms, _ := strconv.ParseFloat(m[1], 64)
				return time.Duration(ms * float64(time.Millisecond)), nodes, nil
			}
		}
	}
	return 0, 0, fmt.Errorf("no power sync cycle ended within %v", within)
}

// copyIronicNodes inserts n copies of Ironic's node uuid, each with copies
// of its ports (new UUIDs, names side-NNNNN after the sample's, MAC
// addresses as mac gives them), into Ironic's database, and returns them.
func copyIronicNodes(ctx context.Context, path, uuid string, n int) ([]node, error) {
	if n <= 0 {
		return nil, nil
	}
	db, err := stdsql.Open("sqlite", path)
	if err != nil {
		return nil, err
	}
	defer db.Close()
	cols := func(table string, except ...string) ([]string, error) {
		rows, err := db.QueryContext(ctx, "SELECT name FROM pragma_table_info('"+table+"')")
		if err != nil {
			return nil, err
		}
		defer rows.Close()
		var out []string
		for rows.Next() {
			var c string
			if err := rows.Scan(&c); err != nil {
				return nil, err
			}
			keep := true
			for _, e := range except {
				keep = keep && c != e
			}
			if keep {
				out = append(out, c)
			}
		}
		return out, rows.Err()
	}
	var templateID, sample int
	if err := db.QueryRowContext(ctx, "SELECT id FROM nodes WHERE uuid = ?", uuid).Scan(&templateID); err != nil {
		return nil, err
	}
	if err := db.QueryRowContext(ctx, "SELECT count(*) FROM nodes").Scan(&sample); err != nil {
		return nil, err
	}
	nodeCols, err := cols("nodes", "id", "uuid", "name")
	if err != nil {
		return nil, err
	}
	portCols, err := cols("ports", "id", "uuid", "address", "node_id")
	if err != nil {
		return nil, err
	}
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return nil, err
	}
	defer tx.Rollback()
	// Copy k (sample ≤ k < sample+n) gets a UUID and MACs made of k.
	const series = `WITH RECURSIVE c(k) AS (SELECT ? UNION ALL SELECT k + 1 FROM c WHERE k + 1 < ?) `
	list, sel := strings.Join(nodeCols, ", "), "t."+strings.Join(nodeCols, ", t.")
	if _, err := tx.ExecContext(ctx, series+`INSERT INTO nodes (`+list+`, uuid, name)
SELECT `+sel+`, printf('00000000-0000-4000-8000-%012x', c.k), printf('side-%05d', c.k) FROM c, nodes t WHERE t.id = ?`,
		sample, sample+n, templateID); err != nil {
		return nil, fmt.Errorf("nodes: %w", err)
	}
	plist, psel := strings.Join(portCols, ", "), "p."+strings.Join(portCols, ", p.")
	if _, err := tx.ExecContext(ctx, `INSERT INTO ports (`+plist+`, uuid, address, node_id)
SELECT `+psel+`, printf('00000000-0000-4001-8000-%012x', n.id * 2 + (p.address <> ?)),
	printf('52:54:%02x:%02x:%02x:%02x', p.address <> ?, (k.k >> 16) & 255, (k.k >> 8) & 255, k.k & 255), n.id
FROM ports p, nodes t, (SELECT id, CAST(substr(name, 6) AS INTEGER) AS k FROM nodes WHERE uuid LIKE '00000000-0000-4000-8000-%') k
	JOIN nodes n ON n.id = k.id
WHERE t.id = ? AND p.node_id = t.id`, mac(0, 0), mac(0, 0), templateID); err != nil {
		return nil, fmt.Errorf("ports: %w", err)
	}
	if err := tx.Commit(); err != nil {
		return nil, err
	}
	out := make([]node, n)
	for k := range n {
		out[k] = node{uuid: fmt.Sprintf("00000000-0000-4000-8000-%012x", sample+k), mac: mac(sample+k, 0)}
	}
	return out, nil
}
