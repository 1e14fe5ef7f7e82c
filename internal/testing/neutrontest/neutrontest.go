// Package neutrontest runs a real Neutron server for tests: Debian's
// neutron-server (ML2 with the flat and vlan type drivers, the "baremetal"
// mechanism driver from networking-baremetal, the port_security extension),
// standalone on loopback with noauth, in-memory messaging (fake://) and a
// PostgreSQL database from pgtest: the configuration of the shared
// reference "A real Neutron server for tests" (neutron-test-server.md).
//
// Needs the Debian packages neutron-server and python3-ironic-neutron-agent
// (`apt-get install -y --no-install-recommends neutron-server
// python3-ironic-neutron-agent`) and PostgreSQL. When they are missing Start
// skips the test, or fails it with CI=true.
//
// The database is migrated once (neutron-db-manage upgrade heads, several
// seconds) into a template, and each Start copies it (CREATE DATABASE …
// TEMPLATE) and runs its own neutron-server on a free port in its own
// process group, which the test's cleanup stops. To share the PostgreSQL
// cluster and the migrated template between the tests of a package, call
// Main from TestMain:
//
//	func TestMain(m *testing.M) { os.Exit(neutrontest.Main(m)) }
//
// Without it each Start makes, migrates and removes a cluster of its own.
//
// Neutron is slow: about one port create, update or delete per second, and
// a few seconds to start. Keep tests that use it lean.
package neutrontest

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/ferrometal/ferro/internal/testing/ferrotest"
	"github.com/ferrometal/ferro/internal/testing/pgtest"
)

// PhysicalNetwork is the physical network the server's configuration
// knows for flat and vlan networks (VLANs 1000–1999).
const PhysicalNetwork = "physnet1"

const (
	readyTimeout = 90 * time.Second
	stopTimeout  = 15 * time.Second
)

// Server is a running neutron-server.
type Server struct {
	// URL is the endpoint, http://127.0.0.1:<port>, without /v2.0: what
	// [neutron]url takes.
	URL string
	// ConfigFile is the neutron.conf the server runs with.
	ConfigFile string
	// DSN is the server's database (postgres://…).
	DSN string

	dir    string
	cmd    *exec.Cmd
	exited chan struct{}
}

// Start runs a neutron-server for t and stops it (the whole process group)
// when t ends.
func Start(t testing.TB) *Server {
	t.Helper()
	server := ferrotest.RequireTool(t, "neutron-server", "/usr/bin")
	dbManage := ferrotest.RequireTool(t, "neutron-db-manage", "/usr/bin")
	if _, err := os.Stat("/usr/share/neutron-common/api-paste.ini"); err != nil {
		ferrotest.SkipOrFail(t, "neutron-server is installed without /usr/share/neutron-common/api-paste.ini (Debian package neutron-common)")
	}
	if _, err := os.Stat("/usr/lib/python3/dist-packages/networking_baremetal"); err != nil {
		ferrotest.SkipOrFail(t, "the baremetal ML2 mechanism driver is missing (Debian package python3-ironic-neutron-agent)")
	}
	if !pgtest.Available() {
		ferrotest.SkipOrFail(t, "neutron lane: PostgreSQL is not installed (Debian package postgresql)")
	}

	began := time.Now()
	tpl := sharedTemplate(t, dbManage)
	if tpl == nil {
		c, err := pgtest.StartCluster()
		if err != nil {
			t.Fatalf("neutrontest: start PostgreSQL: %v", err)
		}
		t.Cleanup(func() {
			if err := c.Stop(); err != nil {
				t.Errorf("neutrontest: stop PostgreSQL: %v", err)
			}
		})
		if tpl, err = newTemplate(c, dbManage); err != nil {
			t.Fatalf("neutrontest: %v", err)
		}
	}
	prepared := time.Now()
	dsn, drop, err := tpl.copy(context.Background())
	if err != nil {
		t.Fatalf("neutrontest: create the database: %v", err)
	}
	// Registered before the server's cleanup, so it runs after the server stopped.
	t.Cleanup(func() {
		if err := drop(); err != nil {
			t.Errorf("neutrontest: drop the database: %v", err)
		}
	})

	s := &Server{dir: t.TempDir(), DSN: dsn}
	port := ferrotest.FreePort(t)
	s.URL = "http://127.0.0.1:" + strconv.Itoa(port)
	s.ConfigFile = filepath.Join(s.dir, "neutron.conf")
	if err := writeConfig(s.ConfigFile, s.dir, port, dsn); err != nil {
		t.Fatalf("neutrontest: %v", err)
	}
	if err := s.start(server); err != nil {
		t.Fatalf("neutrontest: %v", err)
	}
	t.Cleanup(func() {
		if err := s.stop(); err != nil {
			t.Errorf("neutrontest: %v", err)
		}
		if t.Failed() {
			t.Logf("neutron-server log (tail):\n%s", s.LogTail(8000))
		}
	})
	ctx, cancel := context.WithTimeout(context.Background(), readyTimeout)
	defer cancel()
	if err := s.waitReady(ctx); err != nil {
		t.Fatalf("neutrontest: %v\nneutron-server log (tail):\n%s", err, s.LogTail(8000))
	}
	t.Logf("neutrontest: neutron-server at %s; database ready in %v, server in %v", s.URL,
		prepared.Sub(began).Round(time.Millisecond), time.Since(prepared).Round(time.Millisecond))
	return s
}

// shared is the per-binary cluster and template that Main sets up.
var shared struct {
	enabled bool
	once    sync.Once
	c       *pgtest.Cluster
	tpl     *template
	err     error
}

// Main runs the tests of m with one PostgreSQL cluster and one migrated
// template database for all of them, made when a test first starts Neutron
// and removed at the end. It returns m.Run's exit code.
func Main(m *testing.M) int {
	shared.enabled = true
	code := m.Run()
	if shared.c != nil {
		if err := shared.c.Stop(); err != nil {
			fmt.Fprintf(os.Stderr, "neutrontest: stop PostgreSQL: %v\n", err)
			if code == 0 {
				code = 1
			}
		}
	}
	return code
}

func sharedTemplate(t testing.TB, dbManage string) *template {
	t.Helper()
	if !shared.enabled {
		return nil
	}
	shared.once.Do(func() {
		shared.c, shared.err = pgtest.StartCluster()
		if shared.err == nil {
			shared.tpl, shared.err = newTemplate(shared.c, dbManage)
		}
	})
	if shared.err != nil {
		t.Fatalf("neutrontest: %v", shared.err)
	}
	return shared.tpl
}

// template is a database migrated to Neutron's schema, copied for each server.
type template struct {
	admin string // DSN of the cluster's postgres database
	name  string
	n     atomic.Int64
}

// newTemplate creates a database in c and runs Neutron's migrations on it.
func newTemplate(c *pgtest.Cluster, dbManage string) (*template, error) {
	ctx := context.Background()
	dsn, _, err := c.CreateDatabase(ctx)
	if err != nil {
		return nil, fmt.Errorf("create the template database: %w", err)
	}
	u, err := url.Parse(dsn)
	if err != nil {
		return nil, err
	}
	tpl := &template{name: strings.TrimPrefix(u.Path, "/")}
	u.Path = "/postgres"
	tpl.admin = u.String()

	dir, err := os.MkdirTemp("", "neutrontest-migrate-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	conf := filepath.Join(dir, "neutron.conf")
	if err := writeConfig(conf, dir, 9696, dsn); err != nil {
		return nil, err
	}
	cmd := exec.Command(dbManage, "--config-file", conf, "upgrade", "heads")
	cmd.Dir = dir
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	out, err := cmd.CombinedOutput()
	if err != nil {
		return nil, fmt.Errorf("neutron-db-manage upgrade heads: %w\n%s", err, tail(string(out), 4000))
	}
	return tpl, nil
}

// copy creates a new database from the template.
func (tpl *template) copy(ctx context.Context) (dsn string, drop func() error, err error) {
	name := fmt.Sprintf("neutron_%d_%d", os.Getpid(), tpl.n.Add(1))
	if err := execSQL(ctx, tpl.admin, "CREATE DATABASE "+name+" TEMPLATE "+tpl.name); err != nil {
		return "", nil, err
	}
	u, _ := url.Parse(tpl.admin)
	u.Path = "/" + name
	drop = func() error {
		return execSQL(context.Background(), tpl.admin, "DROP DATABASE IF EXISTS "+name+" WITH (FORCE)")
	}
	return u.String(), drop, nil
}

func execSQL(ctx context.Context, dsn, sql string, args ...string) error {
	conn, err := pgconn.Connect(ctx, dsn)
	if err != nil {
		return err
	}
	defer conn.Close(context.Background())
	if len(args) == 0 {
		_, err = conn.Exec(ctx, sql).ReadAll()
		return err
	}
	params := make([][]byte, len(args))
	for i, a := range args {
		params[i] = []byte(a)
	}
	return conn.ExecParams(ctx, sql, params, nil, nil, nil).Read().Err
}

// sqlalchemyURL turns postgres://user@host:port/db into the URL Neutron's
// oslo.db takes.
func sqlalchemyURL(dsn string) (string, error) {
	u, err := url.Parse(dsn)
	if err != nil {
		return "", err
	}
	u.Scheme = "postgresql+psycopg2"
	u.RawQuery = ""
	return u.String(), nil
}

// writeConfig writes the configuration from neutron-test-server.md, with
// its paths under dir.
func writeConfig(path, dir string, port int, dsn string) error {
	conn, err := sqlalchemyURL(dsn)
	if err != nil {
		return err
	}
	for _, d := range []string{"state", "log", "lock"} {
		if err := os.MkdirAll(filepath.Join(dir, d), 0o755); err != nil {
			return err
		}
	}
	conf := fmt.Sprintf(`[DEFAULT]
bind_host = 127.0.0.1
bind_port = %d
auth_strategy = noauth
api_paste_config = /usr/share/neutron-common/api-paste.ini
core_plugin = ml2
service_plugins =
transport_url = fake://
state_path = %[2]s/state
api_workers = 0
rpc_workers = 0
rpc_state_report_workers = 0
notify_nova_on_port_status_changes = false
notify_nova_on_port_data_changes = false
dhcp_agent_notification = false
# Agent rows written once by AddBaremetalAgent stay alive.
agent_down_time = 2147483
log_dir = %[2]s/log
use_stderr = false

[database]
connection = %[3]s

[oslo_concurrency]
lock_path = %[2]s/lock

[oslo_messaging_notifications]
driver = noop

[ml2]
type_drivers = flat,vlan
tenant_network_types = vlan
mechanism_drivers = baremetal
extension_drivers = port_security

[ml2_type_flat]
flat_networks = *

[ml2_type_vlan]
network_vlan_ranges = %[4]s:1000:1999
`, port, dir, conn, PhysicalNetwork)
	return os.WriteFile(path, []byte(conf), 0o644)
}

func (s *Server) start(bin string) error {
	out, err := os.Create(filepath.Join(s.dir, "log", "stdout.log"))
	if err != nil {
		return err
	}
	cmd := exec.Command(bin, "--config-file", s.ConfigFile)
	cmd.Dir = s.dir
	cmd.Stdout, cmd.Stderr = out, out
	// Its own process group: neutron-server forks an RPC worker and a
	// periodic worker, and stop signals them all. Pdeathsig covers a test
	// binary that dies without cleaning up.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		out.Close()
		return fmt.Errorf("start neutron-server: %w", err)
	}
	s.cmd = cmd
	s.exited = make(chan struct{})
	go func() {
		cmd.Wait()
		out.Close()
		close(s.exited)
	}()
	return nil
}

// stop sends SIGTERM to the process group, then SIGKILL after stopTimeout.
func (s *Server) stop() error {
	if s.cmd == nil {
		return nil
	}
	pgid := s.cmd.Process.Pid
	_ = syscall.Kill(-pgid, syscall.SIGTERM)
	select {
	case <-s.exited:
	case <-time.After(stopTimeout):
		_ = syscall.Kill(-pgid, syscall.SIGKILL)
		<-s.exited
	}
	// Workers that outlive the parent still belong to the group.
	_ = syscall.Kill(-pgid, syscall.SIGKILL)
	return nil
}

// waitReady waits for GET / and then GET /v2.0/networks to answer 200.
func (s *Server) waitReady(ctx context.Context) error {
	for _, path := range []string{"/", "/v2.0/networks"} {
		for {
			req, _ := http.NewRequestWithContext(ctx, http.MethodGet, s.URL+path, nil)
			resp, err := http.DefaultClient.Do(req)
			if err == nil {
				io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				if resp.StatusCode == http.StatusOK {
					break
				}
				err = fmt.Errorf("HTTP %d", resp.StatusCode)
			}
			select {
			case <-s.exited:
				return fmt.Errorf("neutron-server exited while starting (%v)", s.cmd.ProcessState)
			case <-ctx.Done():
				return fmt.Errorf("neutron-server did not answer GET %s in time: %v", path, err)
			case <-time.After(200 * time.Millisecond):
			}
		}
	}
	return nil
}

// LogTail returns up to n bytes from the end of the server's log.
func (s *Server) LogTail(n int) string {
	var b strings.Builder
	for _, f := range []string{"stdout.log", "neutron-server.log"} {
		data, err := os.ReadFile(filepath.Join(s.dir, "log", f))
		if err == nil && len(data) > 0 {
			fmt.Fprintf(&b, "==> %s <==\n%s\n", f, tail(string(data), n))
		}
	}
	return b.String()
}

func tail(s string, n int) string {
	if len(s) > n {
		return "…" + s[len(s)-n:]
	}
	return s
}

// Do sends a request to Neutron's API with no auth headers (noauth makes
// it admin) and decodes a successful JSON answer into out (when out is
// non-nil). path is under /v2.0, e.g. "/ports/ID". It returns the status
// code; errors other than the transport's are the caller's to judge.
func (s *Server) Do(t testing.TB, method, path string, body, out any) int {
	t.Helper()
	code, data := s.do(t, method, path, body)
	if out != nil && len(data) > 0 && code < 300 {
		if err := json.Unmarshal(data, out); err != nil {
			t.Fatalf("neutron %s %s: decode %q: %v", method, path, data, err)
		}
	}
	return code
}

func (s *Server) do(t testing.TB, method, path string, body any) (int, []byte) {
	t.Helper()
	var r io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			t.Fatal(err)
		}
		r = bytes.NewReader(b)
	}
	req, err := http.NewRequest(method, s.URL+"/v2.0"+path, r)
	if err != nil {
		t.Fatal(err)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("neutron %s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("neutron %s %s: read the answer: %v", method, path, err)
	}
	return resp.StatusCode, data
}

// must sends a request that has to succeed and returns the decoded answer.
func (s *Server) must(t testing.TB, method, path string, body any) map[string]any {
	t.Helper()
	code, data := s.do(t, method, path, body)
	if code >= 300 {
		t.Fatalf("neutron %s %s: HTTP %d: %s", method, path, code, data)
	}
	var out map[string]any
	if err := json.Unmarshal(data, &out); err != nil {
		t.Fatalf("neutron %s %s: decode %q: %v", method, path, data, err)
	}
	return out
}

// NetworkOpts describes a network for CreateNetwork.
type NetworkOpts struct {
	Name string
	// Type is "flat" (default) or "vlan", on PhysicalNetwork.
	Type string
	// SegmentationID is the VLAN (1000–1999) of a vlan network; 0 lets
	// Neutron pick one.
	SegmentationID int
	// CIDR, when set, adds an IPv4 or IPv6 subnet with DHCP enabled, so
	// that ports get addresses.
	CIDR string
}

// CreateNetwork creates a provider network (and its subnet) and returns
// its id.
func (s *Server) CreateNetwork(t testing.TB, o NetworkOpts) string {
	t.Helper()
	typ := o.Type
	if typ == "" {
		typ = "flat"
	}
	net := map[string]any{
		"name":                      o.Name,
		"admin_state_up":            true,
		"provider:network_type":     typ,
		"provider:physical_network": PhysicalNetwork,
	}
	if o.SegmentationID != 0 {
		net["provider:segmentation_id"] = o.SegmentationID
	}
	res := s.must(t, http.MethodPost, "/networks", map[string]any{"network": net})
	id, _ := res["network"].(map[string]any)["id"].(string)
	if o.CIDR != "" {
		version := 4
		if strings.Contains(o.CIDR, ":") {
			version = 6
		}
		s.must(t, http.MethodPost, "/subnets", map[string]any{"subnet": map[string]any{
			"network_id": id, "cidr": o.CIDR, "ip_version": version, "enable_dhcp": true,
		}})
	}
	return id
}

// CreateSecurityGroup creates a security group and returns its id.
func (s *Server) CreateSecurityGroup(t testing.TB, name string) string {
	t.Helper()
	res := s.must(t, http.MethodPost, "/security-groups", map[string]any{"security_group": map[string]any{"name": name}})
	id, _ := res["security_group"].(map[string]any)["id"].(string)
	return id
}

// Port returns a port as Neutron's API shows it, or nil when there is none.
func (s *Server) Port(t testing.TB, id string) map[string]any {
	t.Helper()
	var out struct {
		Port map[string]any `json:"port"`
	}
	switch code := s.Do(t, http.MethodGet, "/ports/"+url.PathEscape(id), nil, &out); code {
	case http.StatusOK:
		return out.Port
	case http.StatusNotFound:
		return nil
	default:
		t.Fatalf("neutron GET /ports/%s: HTTP %d", id, code)
		return nil
	}
}

// Ports lists the ports matching the query (e.g. network_id=…&mac_address=…).
func (s *Server) Ports(t testing.TB, query url.Values) []map[string]any {
	t.Helper()
	var out struct {
		Ports []map[string]any `json:"ports"`
	}
	if code := s.Do(t, http.MethodGet, "/ports?"+query.Encode(), nil, &out); code != http.StatusOK {
		t.Fatalf("neutron GET /ports: HTTP %d", code)
	}
	return out.Ports
}

// AddBaremetalAgent writes the "Baremetal Node" agent row that
// ironic-neutron-agent would report for host (a node UUID), with
// bridge_mappings for physnets (PhysicalNetwork when none are given). With
// it, the baremetal mechanism driver binds the node's ports
// (binding:vif_type "other", status ACTIVE); without it they end
// binding_failed. The agent normally reports over RPC, which fake://
// cannot carry, so the row goes straight into the agents table with
// plain SQL (instant, where a Python script importing Neutron's agent code
// takes seconds). Binding is attempted when a port's binding:host_id is
// set, so add the agent first.
func (s *Server) AddBaremetalAgent(t testing.TB, host string, physnets ...string) {
	t.Helper()
	if len(physnets) == 0 {
		physnets = []string{PhysicalNetwork}
	}
	mappings := map[string]string{}
	for _, p := range physnets {
		mappings[p] = "yes"
	}
	confJSON, err := json.Marshal(map[string]any{"bridge_mappings": mappings})
	if err != nil {
		t.Fatal(err)
	}
	const insert = `INSERT INTO agents (id, agent_type, "binary", topic, host, admin_state_up,
	created_at, started_at, heartbeat_timestamp, configurations, load)
VALUES ($1, 'Baremetal Node', 'ironic-neutron-agent', 'N/A', $2, true,
	now() AT TIME ZONE 'utc', now() AT TIME ZONE 'utc', now() AT TIME ZONE 'utc', $3, 0)
ON CONFLICT (agent_type, host) DO UPDATE
	SET configurations = EXCLUDED.configurations, heartbeat_timestamp = EXCLUDED.heartbeat_timestamp`
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := execSQL(ctx, s.DSN, insert, uuid.NewString(), host, string(confJSON)); err != nil {
		t.Fatalf("neutrontest: insert the baremetal agent for %s: %v", host, err)
	}
}

// WaitPortStatus polls a port until its status is want, and returns it.
func (s *Server) WaitPortStatus(t testing.TB, id, want string, timeout time.Duration) map[string]any {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		p := s.Port(t, id)
		if p == nil {
			t.Fatalf("neutron port %s is gone while waiting for status %s", id, want)
		}
		if p["status"] == want {
			return p
		}
		if time.Now().After(deadline) {
			t.Fatalf("neutron port %s: status %v after %v, want %s (binding:vif_type %v)", id, p["status"], timeout, want, p["binding:vif_type"])
		}
		time.Sleep(200 * time.Millisecond)
	}
}
