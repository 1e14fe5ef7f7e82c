// Command inspection is the managed-inspection load probe: it starts
// `ferro serve` (SQLite) as a process, enrols N fake-hardware nodes with
// one port each, pxe (or ipxe) boot from file:// deploy images and the
// noop network interface, inspects them all at once, and answers for each
// node with a simulated agent that posts a hardware report to the callback
// URL as soon as the node is in inspect wait. It prints what it measured
// next to the targets; it asserts nothing about time, but fails when an
// inspection fails or leaves boot files behind.
//
// The agent takes the callback URL and the per-inspection token from the
// boot configuration ferro wrote for the node's MAC address, as a booted
// ramdisk would. That is why the probe uses pxe or ipxe boot: the fake boot
// interface prepares nothing, so a token would exist only in the
// inspector's database, as a hash.
//
//	FERRO_BIN=bin/ferro go run ./bench/inspection [-nodes 500] [-boot pxe]
//
// `make bench` runs it so. Without FERRO_BIN (or -ferro) it builds
// ./cmd/ferro first.
package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/ferrometal/ferro/internal/testing/freeport"
	"github.com/ferrometal/ferro/test/inspection"
)

type options struct {
	nodes   int
	boot    string
	workers int
	poll    time.Duration
	timeout time.Duration
	ferro   string
	keep    bool
}

func main() {
	var o options
	flag.IntVar(&o.nodes, "nodes", 500, "nodes to inspect at once")
	flag.StringVar(&o.boot, "boot", "pxe", "boot interface: pxe or ipxe")
	flag.IntVar(&o.workers, "workers", 0, "[conductor]workers_pool_size (0: ferro's default)")
	flag.DurationVar(&o.poll, "poll", 20*time.Millisecond, "how often the simulated agents look for nodes in inspect wait")
	flag.DurationVar(&o.timeout, "timeout", 5*time.Minute, "give up on the inspections after this long")
	flag.StringVar(&o.ferro, "ferro", os.Getenv("FERRO_BIN"), "ferro binary (default $FERRO_BIN, else build ./cmd/ferro)")
	flag.BoolVar(&o.keep, "keep", false, "keep the working directory (database, boot roots, ferro.log)")
	flag.Parse()
	if o.boot != "pxe" && o.boot != "ipxe" {
		fmt.Fprintln(os.Stderr, "bench/inspection: -boot must be pxe or ipxe (fake boot writes no config the agent could take its token from)")
		os.Exit(2)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, o); err != nil {
		fmt.Fprintln(os.Stderr, "bench/inspection:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, o options) error {
	dir, err := os.MkdirTemp("", "ferro-bench-inspection-")
	if err != nil {
		return err
	}
	if o.keep {
		fmt.Println("working directory:", dir)
	} else {
		defer os.RemoveAll(dir)
	}
	bin, err := ferroBinary(o.ferro, dir)
	if err != nil {
		return err
	}
	srv, err := startFerro(ctx, bin, dir, o)
	if err != nil {
		return err
	}
	defer srv.stop()

	c := newClient(srv.url)
	began := time.Now()
	nodes, err := enroll(ctx, c, srv, o)
	if err != nil {
		return fmt.Errorf("enrol nodes: %w\n%s", err, srv.logTail())
	}
	fmt.Printf("enrolled and managed %d nodes in %v\n", len(nodes), time.Since(began).Round(time.Millisecond))

	res, err := inspectAll(ctx, c, srv, o, nodes)
	if err != nil {
		return fmt.Errorf("%w\n%s", err, srv.logTail())
	}
	res.print(o)
	if err := res.problems(); err != nil {
		return fmt.Errorf("%w\n%s", err, srv.logTail())
	}
	return nil
}

// ferroBinary returns the binary to run, building ./cmd/ferro into dir
// when none is given.
func ferroBinary(given, dir string) (string, error) {
	if given != "" {
		return filepath.Abs(given)
	}
	out := filepath.Join(dir, "ferro")
	cmd := exec.Command("go", "build", "-trimpath", "-o", out, "./cmd/ferro")
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	if msg, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("go build ./cmd/ferro (run from the module root, or set FERRO_BIN): %w\n%s", err, msg)
	}
	return out, nil
}

// server is the running `ferro serve`.
type server struct {
	url      string
	tftpRoot string
	httpRoot string
	kernel   string
	ramdisk  string
	log      string
	cmd      *exec.Cmd
	exited   chan struct{}
}

func startFerro(ctx context.Context, bin, dir string, o options) (*server, error) {
	s := &server{
		tftpRoot: filepath.Join(dir, "tftpboot"),
		httpRoot: filepath.Join(dir, "httpboot"),
		log:      filepath.Join(dir, "ferro.log"),
		exited:   make(chan struct{}),
	}
	images := filepath.Join(dir, "images")
	for _, d := range []string{images, s.tftpRoot, s.httpRoot} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return nil, err
		}
	}
	for name, data := range map[string]string{"ipa.kernel": "kernel\n", "ipa.initramfs": "ramdisk\n"} {
		if err := os.WriteFile(filepath.Join(images, name), []byte(data), 0o644); err != nil {
			return nil, err
		}
	}
	s.kernel = "file://" + filepath.Join(images, "ipa.kernel")
	s.ramdisk = "file://" + filepath.Join(images, "ipa.initramfs")
	apiPort, err := freeport.Next()
	if err != nil {
		return nil, err
	}
	inspPort, err := freeport.Next()
	if err != nil {
		return nil, err
	}
	s.url = "http://127.0.0.1:" + strconv.Itoa(apiPort)
	env := []string{
		"FERRO_API_HOST_IP=127.0.0.1",
		"FERRO_API_PORT=" + strconv.Itoa(apiPort),
		"FERRO_INSPECTOR_LISTEN_PORT=" + strconv.Itoa(inspPort),
		"FERRO_INSPECTOR_ALLOW_LOOPBACK_CALLBACK=true",
		"FERRO_CONDUCTOR_FILE_URL_ALLOWED_PATHS=" + images,
		"FERRO_PXE_TFTP_ROOT=" + s.tftpRoot,
		"FERRO_DEPLOY_HTTP_ROOT=" + s.httpRoot,
		"FERRO_DEPLOY_HTTP_URL=http://192.0.2.10:8080",
	}
	if o.workers > 0 {
		env = append(env, "FERRO_CONDUCTOR_WORKERS_POOL_SIZE="+strconv.Itoa(o.workers))
	}
	logf, err := os.Create(s.log)
	if err != nil {
		return nil, err
	}
	s.cmd = exec.Command(bin, "serve", "--data-dir", filepath.Join(dir, "data"))
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "FERRO_") {
			s.cmd.Env = append(s.cmd.Env, kv)
		}
	}
	s.cmd.Env = append(s.cmd.Env, env...)
	s.cmd.Stdout, s.cmd.Stderr = logf, logf
	s.cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := s.cmd.Start(); err != nil {
		logf.Close()
		return nil, fmt.Errorf("start ferro serve: %w", err)
	}
	go func() {
		s.cmd.Wait()
		logf.Close()
		close(s.exited)
	}()
	deadline := time.Now().Add(30 * time.Second)
	for {
		resp, err := http.Get(s.url + "/")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return s, nil
			}
		}
		select {
		case <-s.exited:
			return nil, fmt.Errorf("ferro serve exited while starting\n%s", s.logTail())
		case <-ctx.Done():
			s.stop()
			return nil, ctx.Err()
		case <-time.After(50 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			s.stop()
			return nil, fmt.Errorf("ferro serve did not answer in 30 s\n%s", s.logTail())
		}
	}
}

func (s *server) stop() {
	select {
	case <-s.exited:
		return
	default:
	}
	_ = s.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-s.exited:
	case <-time.After(15 * time.Second):
		_ = s.cmd.Process.Kill()
		<-s.exited
	}
}

func (s *server) logTail() string {
	b, _ := os.ReadFile(s.log)
	if len(b) > 8000 {
		b = b[len(b)-8000:]
	}
	return "ferro serve log (tail):\n" + string(b)
}

// client talks to the bare metal API.
type client struct {
	base string
	http *http.Client
}

func newClient(base string) *client {
	tr := http.DefaultTransport.(*http.Transport).Clone()
	// Every node's requests run at once: keep their connections.
	tr.MaxIdleConns, tr.MaxIdleConnsPerHost = 2000, 2000
	return &client{base: base, http: &http.Client{Transport: tr, Timeout: 2 * time.Minute}}
}

// apiError is an answer with an error status.
type apiError struct {
	code int
	body string
}

func (e *apiError) Error() string {
	return fmt.Sprintf("HTTP %d: %s", e.code, strings.TrimSpace(e.body))
}

func (c *client) do(ctx context.Context, method, path string, body, out any) error {
	var r io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return err
		}
		r = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, c.base+path, r)
	if err != nil {
		return err
	}
	req.Header.Set("X-OpenStack-Ironic-API-Version", "latest")
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		return err
	}
	if resp.StatusCode >= 300 {
		return &apiError{resp.StatusCode, string(data)}
	}
	if out != nil && len(data) > 0 {
		return json.Unmarshal(data, out)
	}
	return nil
}

// busy reports an answer a client retries: no free conductor worker (503)
// or the node locked (409).
func busy(err error) bool {
	var ae *apiError
	return errors.As(err, &ae) && (ae.code == http.StatusServiceUnavailable || ae.code == http.StatusConflict)
}

// node is an enrolled node.
type node struct {
	uuid string
	mac  string
}

// nodeState is a node as the list shows it.
type nodeState struct {
	UUID               string  `json:"uuid"`
	ProvisionState     string  `json:"provision_state"`
	ProvisionUpdatedAt *string `json:"provision_updated_at"`
	LastError          *string `json:"last_error"`
}

// list returns the state of every node, or of those in provisionState
// when it is not empty, page by page.
func (c *client) list(ctx context.Context, provisionState string) ([]nodeState, error) {
	var all []nodeState
	marker := ""
	for {
		q := url.Values{"fields": {"uuid,provision_state,provision_updated_at,last_error"}, "limit": {"1000"}}
		if provisionState != "" {
			q.Set("provision_state", provisionState)
		}
		if marker != "" {
			q.Set("marker", marker)
		}
		var page struct {
			Nodes []nodeState `json:"nodes"`
		}
		if err := c.do(ctx, http.MethodGet, "/v1/nodes?"+q.Encode(), nil, &page); err != nil {
			return nil, err
		}
		all = append(all, page.Nodes...)
		if len(page.Nodes) < 1000 {
			return all, nil
		}
		marker = page.Nodes[len(page.Nodes)-1].UUID
	}
}

// parallel runs fn for 0..n-1 with at most limit at a time and returns the
// first error.
func parallel(n, limit int, fn func(i int) error) error {
	sem := make(chan struct{}, limit)
	var (
		wg    sync.WaitGroup
		mu    sync.Mutex
		first error
	)
	for i := range n {
		sem <- struct{}{}
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			if err := fn(i); err != nil {
				mu.Lock()
				if first == nil {
					first = err
				}
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	return first
}

// enroll creates the nodes and their ports and makes them manageable.
func enroll(ctx context.Context, c *client, s *server, o options) ([]node, error) {
	n := o.nodes
	nodes := make([]node, n)
	err := parallel(n, 16, func(i int) error {
		var created struct {
			UUID string `json:"uuid"`
		}
		err := c.do(ctx, http.MethodPost, "/v1/nodes", map[string]any{
			"name": fmt.Sprintf("bench-%04d", i), "driver": "fake-hardware",
			"boot_interface": o.boot, "network_interface": "noop", "inspect_interface": "inspector",
			"driver_info": map[string]any{"deploy_kernel": s.kernel, "deploy_ramdisk": s.ramdisk},
		}, &created)
		if err != nil {
			return fmt.Errorf("create node %d: %w", i, err)
		}
		mac := fmt.Sprintf("52:54:00:%02x:%02x:%02x", i>>16&0xff, i>>8&0xff, i&0xff)
		nodes[i] = node{uuid: created.UUID, mac: mac}
		if err := c.do(ctx, http.MethodPost, "/v1/ports", map[string]any{
			"node_uuid": created.UUID, "address": mac, "pxe_enabled": true,
		}, nil); err != nil {
			return fmt.Errorf("create port of node %d: %w", i, err)
		}
		return c.do(ctx, http.MethodPut, "/v1/nodes/"+created.UUID+"/states/provision", map[string]any{"target": "manage"}, nil)
	})
	if err != nil {
		return nil, err
	}
	deadline := time.Now().Add(time.Minute)
	for {
		all, err := c.list(ctx, "")
		if err != nil {
			return nil, err
		}
		if countState(all, "manageable") == n {
			return nodes, nil
		}
		if time.Now().After(deadline) {
			return nil, fmt.Errorf("only %d of %d nodes manageable after a minute", countState(all, "manageable"), n)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func countState(all []nodeState, st string) int {
	n := 0
	for _, s := range all {
		if s.ProvisionState == st {
			n++
		}
	}
	return n
}

// post is one report the simulated agent sent.
type post struct {
	start, end time.Time
	code       int
	err        error
}

// result is what one run measured.
type result struct {
	nodes int
	// firstInspect: the first inspect request was sent; inspectsAnswered:
	// the last one was answered (202).
	firstInspect, inspectsAnswered time.Time
	inspectRetries                 int64
	// firstPost and lastPost: when the first and the last report were sent;
	// lastPostAnswered: when the last answer came.
	firstPost, lastPost, lastPostAnswered time.Time
	// lastManageable is the latest provision_updated_at (ferro's clock:
	// when the last node moved to manageable); seenDone is when the
	// probe's poll saw every inspection over.
	lastManageable, seenDone time.Time
	postLatency              []time.Duration
	settle                   []time.Duration // per node: report sent → manageable
	failed                   []nodeState
	postErrors               []string
	leftover                 []string
	// loadBefore and loadAfter are the machine's load averages around the
	// inspections: other work on the machine shows in every figure.
	loadBefore, loadAfter string
}

// inspectAll starts every inspection at once and plays every node's agent.
func inspectAll(ctx context.Context, c *client, s *server, o options, nodes []node) (*result, error) {
	ctx, cancel := context.WithTimeout(ctx, o.timeout)
	defer cancel()
	res := &result{nodes: len(nodes), loadBefore: loadavg()}
	byUUID := map[string]node{}
	for _, n := range nodes {
		byUUID[n.uuid] = n
	}
	var (
		mu      sync.Mutex
		posts   = map[string]post{}
		agents  sync.WaitGroup
		retries atomic.Int64
	)
	root := s.tftpRoot
	if o.boot == "ipxe" {
		root = s.httpRoot
	}
	agent := func(n node) {
		defer agents.Done()
		p := post{}
		bc, err := inspection.ReadBootConfig(o.boot, root, n.mac)
		var rep map[string]any
		if err == nil {
			rep, err = inspection.Report(n.mac)
		}
		if err == nil {
			p.start = time.Now()
			var body []byte
			p.code, body, err = inspection.Post(ctx, c.http, bc.Callback, bc.Token, rep)
			p.end = time.Now()
			if err == nil && p.code != http.StatusOK {
				err = fmt.Errorf("HTTP %d: %s", p.code, strings.TrimSpace(string(body)))
			}
		}
		p.err = err
		mu.Lock()
		posts[n.uuid] = p
		mu.Unlock()
	}

	// Every inspect request at once; a busy answer is retried as a client would.
	var answered sync.WaitGroup
	var inspectErr atomic.Pointer[error]
	res.firstInspect = time.Now()
	for _, n := range nodes {
		answered.Add(1)
		go func() {
			defer answered.Done()
			for {
				err := c.do(ctx, http.MethodPut, "/v1/nodes/"+n.uuid+"/states/provision", map[string]any{"target": "inspect"}, nil)
				if err == nil {
					return
				}
				if !busy(err) || ctx.Err() != nil {
					err = fmt.Errorf("inspect node %s: %w", n.uuid, err)
					inspectErr.CompareAndSwap(nil, &err)
					return
				}
				retries.Add(1)
				time.Sleep(10 * time.Millisecond)
			}
		}()
	}
	inspectsDone := make(chan struct{})
	go func() {
		answered.Wait()
		res.inspectsAnswered = time.Now()
		close(inspectsDone)
	}()

	// The agents: one per node, started when the node is in inspect wait.
	// Looking for those costs the API little (a filtered list); the whole
	// list, to see every inspection over, is fetched only once every
	// report is out.
	dispatched := map[string]bool{}
	var final []nodeState
	lastFull := time.Now()
	for {
		if len(dispatched) < len(nodes) && time.Since(lastFull) > time.Second {
			// A node whose inspection failed to start never waits: count it.
			all, err := c.list(ctx, "")
			if err != nil {
				return nil, fmt.Errorf("list nodes: %w", err)
			}
			for _, st := range all {
				if st.ProvisionState == "inspect failed" {
					dispatched[st.UUID] = true
				}
			}
			lastFull = time.Now()
		}
		if len(dispatched) < len(nodes) {
			waiting, err := c.list(ctx, "inspect wait")
			if err != nil {
				return nil, fmt.Errorf("list nodes in inspect wait: %w", err)
			}
			for _, st := range waiting {
				if !dispatched[st.UUID] {
					dispatched[st.UUID] = true
					agents.Add(1)
					go agent(byUUID[st.UUID])
				}
			}
		} else {
			all, err := c.list(ctx, "")
			if err != nil {
				return nil, fmt.Errorf("list nodes: %w", err)
			}
			if countState(all, "manageable")+countState(all, "inspect failed") == len(nodes) {
				res.seenDone = time.Now()
				final = all
				break
			}
		}
		if ep := inspectErr.Load(); ep != nil {
			return nil, *ep
		}
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("after %v: %d of %d nodes reached inspect wait and got a report", o.timeout, len(dispatched), len(nodes))
		case <-time.After(o.poll):
		}
	}
	<-inspectsDone
	agents.Wait()
	res.inspectRetries = retries.Load()

	for _, st := range final {
		if st.ProvisionState != "manageable" {
			res.failed = append(res.failed, st)
		}
		p, posted := posts[st.UUID]
		if !posted {
			continue
		}
		if p.err != nil {
			res.postErrors = append(res.postErrors, fmt.Sprintf("node %s: %v", st.UUID, p.err))
			continue
		}
		if res.firstPost.IsZero() || p.start.Before(res.firstPost) {
			res.firstPost = p.start
		}
		if p.start.After(res.lastPost) {
			res.lastPost = p.start
		}
		if p.end.After(res.lastPostAnswered) {
			res.lastPostAnswered = p.end
		}
		res.postLatency = append(res.postLatency, p.end.Sub(p.start))
		if st.ProvisionState != "manageable" || st.ProvisionUpdatedAt == nil {
			continue
		}
		at, err := time.Parse(time.RFC3339Nano, *st.ProvisionUpdatedAt)
		if err != nil {
			return nil, fmt.Errorf("node %s: provision_updated_at %q: %w", st.UUID, *st.ProvisionUpdatedAt, err)
		}
		if at.After(res.lastManageable) {
			res.lastManageable = at
		}
		res.settle = append(res.settle, at.Sub(p.start))
	}
	res.leftover = leftovers(root)
	res.loadAfter = loadavg()
	return res, nil
}

// loadavg returns the 1, 5 and 15 minute load averages, or "n/a".
func loadavg() string {
	b, err := os.ReadFile("/proc/loadavg")
	if f := strings.Fields(string(b)); err == nil && len(f) >= 3 {
		return strings.Join(f[:3], " ")
	}
	return "n/a"
}

// leftovers lists what is left under the boot root besides the shared
// files (boot.ipxe, the empty pxelinux.cfg and master_images).
func leftovers(root string) []string {
	var left []string
	entries, _ := os.ReadDir(root)
	for _, e := range entries {
		switch e.Name() {
		case "boot.ipxe", "master_images":
		case "pxelinux.cfg":
			macs, _ := os.ReadDir(filepath.Join(root, e.Name()))
			for _, m := range macs {
				left = append(left, filepath.Join(e.Name(), m.Name()))
			}
		default:
			left = append(left, e.Name())
		}
	}
	return left
}

func (r *result) problems() error {
	var msgs []string
	if len(r.postErrors) > 0 {
		msgs = append(msgs, fmt.Sprintf("%d reports failed, first: %s", len(r.postErrors), r.postErrors[0]))
	}
	if len(r.failed) > 0 {
		le := ""
		if r.failed[0].LastError != nil {
			le = *r.failed[0].LastError
		}
		msgs = append(msgs, fmt.Sprintf("%d nodes ended in %s, first: %s", len(r.failed), r.failed[0].ProvisionState, le))
	}
	if len(r.leftover) > 0 {
		msgs = append(msgs, fmt.Sprintf("%d boot files left behind, first: %s", len(r.leftover), r.leftover[0]))
	}
	if len(msgs) > 0 {
		return errors.New(strings.Join(msgs, "; "))
	}
	return nil
}

func percentile(ds []time.Duration, p float64) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	i := int(float64(len(s)-1) * p)
	return s[i]
}

func round(d time.Duration) string {
	switch {
	case d >= 10*time.Second:
		return d.Round(100 * time.Millisecond).String()
	case d >= time.Second:
		return d.Round(10 * time.Millisecond).String()
	default:
		return d.Round(100 * time.Microsecond).String()
	}
}

func (r *result) print(o options) {
	ok := r.nodes - len(r.failed)
	reportSpan := r.lastPostAnswered.Sub(r.firstPost)
	rate := 0.0
	if reportSpan > 0 {
		rate = float64(len(r.postLatency)) / reportSpan.Seconds()
	}
	workers := "default"
	if o.workers > 0 {
		workers = strconv.Itoa(o.workers)
	}
	fmt.Printf("\nmanaged inspection of %d nodes at once: fake power, %s boot (file:// images), noop network, SQLite, workers %s\n",
		r.nodes, o.boot, workers)
	fmt.Printf("machine: %d CPUs, load average %s before, %s after\n\n", runtime.NumCPU(), r.loadBefore, r.loadAfter)
	rows := [][3]string{
		{"last report sent → last node manageable", round(r.lastManageable.Sub(r.lastPost)), "< 1 s"},
		{"  same, as seen by polling every " + o.poll.String(), round(r.seenDone.Sub(r.lastPost)), ""},
		{"control plane: first inspect → all manageable", round(r.lastManageable.Sub(r.firstInspect)), "report"},
		{"  inspect requests: first sent → last answered", round(r.inspectsAnswered.Sub(r.firstInspect)), ""},
		{"  inspect requests retried (no free worker / locked)", strconv.FormatInt(r.inspectRetries, 10), ""},
		{"reports: first sent → last answered", round(reportSpan), ""},
		{"reports/s over that span", fmt.Sprintf("%.0f", rate), "report"},
		{"report answer p50 / p99 / max", fmt.Sprintf("%s / %s / %s", round(percentile(r.postLatency, .5)), round(percentile(r.postLatency, .99)), round(percentile(r.postLatency, 1))), ""},
		{"report sent → node manageable p50 / p99 / max", fmt.Sprintf("%s / %s / %s", round(percentile(r.settle, .5)), round(percentile(r.settle, .99)), round(percentile(r.settle, 1))), ""},
		{"nodes manageable", fmt.Sprintf("%d of %d", ok, r.nodes), fmt.Sprintf("%d", r.nodes)},
		{"boot files left behind", strconv.Itoa(len(r.leftover)), "0"},
	}
	fmt.Printf("%-55s %-24s %s\n", "measure", "value", "target")
	fmt.Printf("%-55s %-24s %s\n", strings.Repeat("-", 55), strings.Repeat("-", 24), strings.Repeat("-", 6))
	for _, row := range rows {
		fmt.Printf("%-55s %-24s %s\n", row[0], row[1], row[2])
	}
}
