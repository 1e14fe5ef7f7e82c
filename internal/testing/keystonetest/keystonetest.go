// Package keystonetest runs a real Keystone for tests: Debian's keystone
// (the 2023.1 "Antelope" release's identity v3 API, Fernet tokens), standalone
// on loopback with a SQLite database, served by uWSGI (Debian's
// uwsgi-plugin-python3, which the keystone package depends on) with
// keystone.server.wsgi's public application (/usr/bin/keystone-wsgi-public).
//
// Needs the Debian package keystone (`apt-get install -y
// --no-install-recommends keystone uwsgi-plugin-python3`). When it is
// missing Start skips the test, or fails it with CI=true.
//
// Setting Keystone up takes about fifteen seconds (keystone-manage db_sync,
// fernet_setup, credential_setup and bootstrap, a Python start each), so it
// is done once into a template directory — the database file and both key
// repositories — and each Start copies it and runs its own uWSGI on a free
// port in its own process group, which the test's cleanup stops. Starting
// the copy takes about five seconds (Keystone's import time). One
// single-threaded worker serves the requests in turn, with Keystone's
// in-memory cache on. To share the
// template between the tests of a package, call Main from TestMain:
//
//	func TestMain(m *testing.M) { os.Exit(keystonetest.Main(m)) }
//
// Without it each Start makes and removes a template of its own.
//
// Every server has what `keystone-manage bootstrap` makes: the Default
// domain, the admin, member and reader roles (admin implies member implies
// reader), the admin project, the admin user (AdminPassword) with admin on
// that project and on the system, region RegionOne and the identity service
// with its public endpoint at AuthURL. The helpers below add projects,
// users, role assignments, services with endpoints, and issue, validate and
// revoke tokens, all through Keystone's own API.
package keystonetest

import (
	"bytes"
	"context"
	stdsql "database/sql"
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync"
	"syscall"
	"testing"
	"time"

	_ "modernc.org/sqlite" // the template's endpoint URL is rewritten per copy

	"github.com/ferrometal/ferro/internal/testing/ferrotest"
)

// Names that bootstrap creates in every server.
const (
	// Region is the region of every endpoint.
	Region = "RegionOne"
	// Domain is the id (and, capitalised, the name) of the default domain.
	Domain = "default"
	// AdminUser has the admin role on AdminProject and on the system.
	AdminUser = "admin"
	// AdminPassword is AdminUser's password.
	AdminPassword = "keystonetest-admin"
	// AdminProject is the bootstrap project.
	AdminProject = "admin"
)

// Role names, as bootstrap creates them.
const (
	RoleAdmin  = "admin"
	RoleMember = "member"
	RoleReader = "reader"
)

// templatePort is the port written into the template's identity endpoint;
// each copy replaces it with its own.
const templatePort = 1

const (
	readyTimeout = 90 * time.Second
	stopTimeout  = 15 * time.Second
	setupTimeout = 5 * time.Minute
)

// Server is a running Keystone.
type Server struct {
	// URL is http://127.0.0.1:<port>, without /v3.
	URL string
	// ConfigFile is the keystone.conf the server runs with.
	ConfigFile string

	dir    string
	cmd    *exec.Cmd
	exited chan struct{}
	client *http.Client

	mu         sync.Mutex
	adminToken string
	roles      map[string]string // name → id
}

// AuthURL is the identity v3 endpoint, URL + "/v3": what clients take as
// auth_url (OS_AUTH_URL) and what the catalog lists for the identity service.
func (s *Server) AuthURL() string { return s.URL + "/v3" }

// tools are the executables a server needs.
type tools struct {
	manage, uwsgi, app string
}

func requireTools(t testing.TB) tools {
	t.Helper()
	var tl tools
	tl.manage = ferrotest.RequireTool(t, "keystone-manage", "/usr/bin")
	tl.uwsgi = ferrotest.RequireTool(t, "uwsgi", "/usr/bin")
	tl.app = "/usr/bin/keystone-wsgi-public"
	if _, err := os.Stat(tl.app); err != nil {
		ferrotest.SkipOrFail(t, "%s is missing (Debian package keystone)", tl.app)
	}
	if _, err := os.Stat("/usr/lib/uwsgi/plugins/python3_plugin.so"); err != nil {
		ferrotest.SkipOrFail(t, "uWSGI's Python 3 plugin is missing (Debian package uwsgi-plugin-python3)")
	}
	return tl
}

// Start runs a Keystone for t and stops it (the whole process group) when t
// ends.
func Start(t testing.TB) *Server {
	t.Helper()
	tl := requireTools(t)
	began := time.Now()
	tpl := sharedTemplate(t, tl)
	if tpl == "" {
		tpl = t.TempDir()
		if err := newTemplate(tpl, tl); err != nil {
			t.Fatalf("keystonetest: %v", err)
		}
	}
	prepared := time.Now()

	s := &Server{dir: t.TempDir(), client: &http.Client{Timeout: 60 * time.Second}, roles: map[string]string{}}
	port := ferrotest.FreePort(t)
	s.URL = "http://127.0.0.1:" + strconv.Itoa(port)
	if err := copyDir(tpl, s.dir); err != nil {
		t.Fatalf("keystonetest: copy the template: %v", err)
	}
	s.ConfigFile = filepath.Join(s.dir, "keystone.conf")
	if err := writeConfig(s.ConfigFile, s.dir); err != nil {
		t.Fatalf("keystonetest: %v", err)
	}
	if err := setEndpointURL(filepath.Join(s.dir, "keystone.db"), endpointURL(templatePort), s.AuthURL()); err != nil {
		t.Fatalf("keystonetest: %v", err)
	}
	if err := s.start(tl, port); err != nil {
		t.Fatalf("keystonetest: %v", err)
	}
	t.Cleanup(func() {
		s.stop()
		if t.Failed() {
			t.Logf("keystone log (tail):\n%s", s.LogTail(8000))
		}
	})
	ctx, cancel := context.WithTimeout(context.Background(), readyTimeout)
	defer cancel()
	if err := s.waitReady(ctx); err != nil {
		t.Fatalf("keystonetest: %v", err) // the cleanup logs the server's log
	}
	t.Logf("keystonetest: keystone at %s; template ready in %v, server in %v", s.URL,
		prepared.Sub(began).Round(time.Millisecond), time.Since(prepared).Round(time.Millisecond))
	return s
}

// shared is the per-binary template that Main enables.
var shared struct {
	enabled bool
	once    sync.Once
	dir     string
	err     error
}

// Main runs the tests of m with one migrated and bootstrapped template for
// all of them, made when a test first starts Keystone and removed at the
// end. It returns m.Run's exit code.
func Main(m *testing.M) int {
	shared.enabled = true
	code := m.Run()
	if shared.dir != "" {
		if err := os.RemoveAll(shared.dir); err != nil {
			fmt.Fprintf(os.Stderr, "keystonetest: remove the template: %v\n", err)
		}
	}
	return code
}

func sharedTemplate(t testing.TB, tl tools) string {
	t.Helper()
	if !shared.enabled {
		return ""
	}
	shared.once.Do(func() {
		shared.dir, shared.err = os.MkdirTemp("", "keystonetest-template-")
		if shared.err == nil {
			shared.err = newTemplate(shared.dir, tl)
		}
	})
	if shared.err != nil {
		t.Fatalf("keystonetest: %v", shared.err)
	}
	return shared.dir
}

func endpointURL(port int) string { return "http://127.0.0.1:" + strconv.Itoa(port) + "/v3" }

// newTemplate sets Keystone up in dir: database, key repositories,
// bootstrap data.
func newTemplate(dir string, tl tools) error {
	conf := filepath.Join(dir, "keystone.conf")
	if err := writeConfig(conf, dir); err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(context.Background(), setupTimeout)
	defer cancel()
	user, group := currentUserGroup()
	steps := [][]string{
		{"db_sync"},
		{"fernet_setup", "--keystone-user", user, "--keystone-group", group},
		{"credential_setup", "--keystone-user", user, "--keystone-group", group},
		{"bootstrap",
			"--bootstrap-username", AdminUser,
			"--bootstrap-project-name", AdminProject,
			"--bootstrap-role-name", RoleAdmin,
			"--bootstrap-service-name", "keystone",
			"--bootstrap-region-id", Region,
			"--bootstrap-public-url", endpointURL(templatePort)},
	}
	for _, step := range steps {
		cmd := exec.CommandContext(ctx, tl.manage, append([]string{"--config-file", conf}, step...)...)
		cmd.Dir = dir
		// The password goes through the environment, not the command line.
		cmd.Env = append(os.Environ(), "OS_BOOTSTRAP_PASSWORD="+AdminPassword)
		cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
		out, err := cmd.CombinedOutput()
		if err != nil {
			return fmt.Errorf("keystone-manage %s: %w\n%s", step[0], err, tail(string(out), 4000))
		}
	}
	return nil
}

// currentUserGroup names the user and group the key repositories belong
// to: the one running the tests, which also runs the server.
func currentUserGroup() (string, string) {
	return strconv.Itoa(os.Getuid()), strconv.Itoa(os.Getgid())
}

// writeConfig writes a keystone.conf whose files are all under dir. Fast
// password hashing (bcrypt's minimum cost): the passwords are throwaway.
func writeConfig(path, dir string) error {
	conf := fmt.Sprintf(`[DEFAULT]
use_stderr = true
log_file =
debug = false

[database]
connection = sqlite:///%[1]s/keystone.db

[token]
provider = fernet
expiration = 7200

[fernet_tokens]
key_repository = %[1]s/fernet-keys

[fernet_receipts]
key_repository = %[1]s/fernet-keys

[credential]
key_repository = %[1]s/credential-keys

[identity]
password_hash_rounds = 4

[cache]
# Token validation and role lookups cached in the (single) worker: ten
# times faster, and revocation stays exact.
enabled = true
backend = dogpile.cache.memory
`, dir)
	return os.WriteFile(path, []byte(conf), 0o644)
}

// setEndpointURL rewrites the identity endpoint the template was
// bootstrapped with, before the copy's server starts (a second bootstrap
// would take seconds), and puts the database in WAL mode.
func setEndpointURL(dbPath, from, to string) error {
	db, err := stdsql.Open("sqlite", dbPath)
	if err != nil {
		return fmt.Errorf("open %s: %w", dbPath, err)
	}
	defer db.Close()
	// WAL, so that an open read transaction (keystone-manage's, another
	// worker's) does not keep a commit out ("database is locked"). The mode
	// is stored in the file, and Close checkpoints it.
	if _, err := db.Exec(`PRAGMA journal_mode = WAL`); err != nil {
		return fmt.Errorf("set %s to WAL: %w", dbPath, err)
	}
	res, err := db.Exec(`UPDATE endpoint SET url = ? WHERE url = ?`, to, from)
	if err != nil {
		return fmt.Errorf("set the identity endpoint to %s: %w", to, err)
	}
	if n, _ := res.RowsAffected(); n != 1 {
		return fmt.Errorf("set the identity endpoint to %s: %d rows had %s, want 1", to, n, from)
	}
	return nil
}

func copyDir(from, to string) error {
	return filepath.WalkDir(from, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(from, p)
		if err != nil {
			return err
		}
		dst := filepath.Join(to, rel)
		info, err := d.Info()
		if err != nil {
			return err
		}
		if d.IsDir() {
			return os.MkdirAll(dst, info.Mode().Perm())
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(dst, data, info.Mode().Perm())
	})
}

func (s *Server) start(tl tools, port int) error {
	out, err := os.Create(filepath.Join(s.dir, "keystone.log"))
	if err != nil {
		return err
	}
	cmd := exec.Command(tl.uwsgi,
		"--plugin", "python3",
		"--http-socket", "127.0.0.1:"+strconv.Itoa(port),
		"--wsgi-file", tl.app,
		"--need-app",
		// One single-threaded worker: Keystone's SQLite connections must
		// stay in the thread that made them (threaded workers crash in
		// greenlet), and its in-memory cache is coherent only within one
		// process (a token revoked in one worker would stay valid in
		// another's cache). Requests queue; with the cache each takes
		// tens of milliseconds.
		"--master", "--processes", "1",
		"--buffer-size", "65535",
		// uWSGI's plain http-socket closes every connection after the
		// answer; saying so keeps clients from reusing it (a reused one
		// makes a POST fail with EOF).
		"--add-header", "Connection: close",
		"--die-on-term",
		"--socket-timeout", "60",
		"--harakiri", "120",
		"--disable-logging",
	)
	cmd.Dir = s.dir
	cmd.Env = append(os.Environ(),
		"OS_KEYSTONE_CONFIG_DIR="+s.dir,
		"OS_KEYSTONE_CONFIG_FILES="+s.ConfigFile)
	cmd.Stdout, cmd.Stderr = out, out
	// Its own process group: uWSGI's master forks the workers, and stop
	// signals them all. Pdeathsig covers a test binary that dies without
	// cleaning up.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		out.Close()
		return fmt.Errorf("start uwsgi: %w", err)
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
func (s *Server) stop() {
	if s.cmd == nil {
		return
	}
	pgid := s.cmd.Process.Pid
	_ = syscall.Kill(-pgid, syscall.SIGTERM)
	select {
	case <-s.exited:
	case <-time.After(stopTimeout):
		_ = syscall.Kill(-pgid, syscall.SIGKILL)
		<-s.exited
	}
	_ = syscall.Kill(-pgid, syscall.SIGKILL)
}

// waitReady waits for GET /v3 to answer 200: uWSGI binds its socket
// before the application is loaded.
func (s *Server) waitReady(ctx context.Context) error {
	for {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, s.AuthURL(), nil)
		resp, err := s.client.Do(req)
		if err == nil {
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
			err = fmt.Errorf("HTTP %d", resp.StatusCode)
		}
		select {
		case <-s.exited:
			return fmt.Errorf("uwsgi exited while starting (%v)", s.cmd.ProcessState)
		case <-ctx.Done():
			return fmt.Errorf("keystone did not answer GET /v3 in time: %v", err)
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// LogTail returns up to n bytes from the end of the server's log.
func (s *Server) LogTail(n int) string {
	data, err := os.ReadFile(filepath.Join(s.dir, "keystone.log"))
	if err != nil {
		return err.Error()
	}
	return tail(string(data), n)
}

func tail(s string, n int) string {
	if len(s) > n {
		return "…" + s[len(s)-n:]
	}
	return s
}

// Scope is what a token is scoped to: a project (by id, or by name in the
// default domain), the system, or nothing (unscoped).
type Scope struct {
	ProjectID   string
	ProjectName string
	System      bool
}

// Credentials identify a user by name in the default domain.
type Credentials struct {
	User     string
	Password string
	Scope    Scope
}

// Token is an issued token.
type Token struct {
	// ID is the token itself (X-Subject-Token), a secret.
	ID string
	// Body is the decoded "token" object of the answer: user, roles,
	// project or system, catalog, expires_at.
	Body map[string]any
}

// Roles lists the names of the token's roles.
func (tk Token) Roles() []string {
	var names []string
	roles, _ := tk.Body["roles"].([]any)
	for _, r := range roles {
		if m, ok := r.(map[string]any); ok {
			if n, ok := m["name"].(string); ok {
				names = append(names, n)
			}
		}
	}
	return names
}

// IssueToken authenticates with a password (POST /v3/auth/tokens) and
// returns the token. It fails t unless Keystone answers 201.
func (s *Server) IssueToken(t testing.TB, c Credentials) Token {
	t.Helper()
	tk, code, body := s.issue(c)
	if code != http.StatusCreated {
		t.Fatalf("keystone: issue a token for %s: HTTP %d: %s", c.User, code, body)
	}
	return tk
}

// TryIssueToken is IssueToken for credentials that may be refused: it
// returns Keystone's status code (201 on success) instead of failing.
func (s *Server) TryIssueToken(t testing.TB, c Credentials) (Token, int) {
	t.Helper()
	tk, code, _ := s.issue(c)
	return tk, code
}

func (s *Server) issue(c Credentials) (Token, int, []byte) {
	auth := map[string]any{
		"identity": map[string]any{
			"methods": []string{"password"},
			"password": map[string]any{"user": map[string]any{
				"name": c.User, "domain": map[string]any{"id": Domain}, "password": c.Password,
			}},
		},
	}
	switch {
	case c.Scope.System:
		auth["scope"] = map[string]any{"system": map[string]any{"all": true}}
	case c.Scope.ProjectID != "":
		auth["scope"] = map[string]any{"project": map[string]any{"id": c.Scope.ProjectID}}
	case c.Scope.ProjectName != "":
		auth["scope"] = map[string]any{"project": map[string]any{
			"name": c.Scope.ProjectName, "domain": map[string]any{"id": Domain},
		}}
	}
	resp, data, err := s.send(http.MethodPost, "/v3/auth/tokens", nil, map[string]any{"auth": auth})
	if err != nil {
		return Token{}, 0, []byte(err.Error())
	}
	if resp.StatusCode != http.StatusCreated {
		return Token{}, resp.StatusCode, data
	}
	var out struct {
		Token map[string]any `json:"token"`
	}
	if err := json.Unmarshal(data, &out); err != nil {
		return Token{}, 0, []byte(fmt.Sprintf("decode the token: %v", err))
	}
	return Token{ID: resp.Header.Get("X-Subject-Token"), Body: out.Token}, resp.StatusCode, nil
}

// AdminToken returns a token of AdminUser scoped to AdminProject, issued
// once per server. The helpers below use it.
func (s *Server) AdminToken(t testing.TB) string {
	t.Helper()
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.adminToken == "" {
		s.adminToken = s.IssueToken(t, Credentials{
			User: AdminUser, Password: AdminPassword, Scope: Scope{ProjectName: AdminProject},
		}).ID
	}
	return s.adminToken
}

// ValidateToken asks Keystone about token (GET /v3/auth/tokens as the
// admin) and returns the status code: 200 for a valid token, 404 for a
// revoked or unknown one.
func (s *Server) ValidateToken(t testing.TB, token string) int {
	t.Helper()
	resp, _, err := s.send(http.MethodGet, "/v3/auth/tokens",
		http.Header{"X-Auth-Token": {s.AdminToken(t)}, "X-Subject-Token": {token}}, nil)
	if err != nil {
		t.Fatalf("keystone: validate a token: %v", err)
	}
	return resp.StatusCode
}

// RevokeToken revokes token (DELETE /v3/auth/tokens).
func (s *Server) RevokeToken(t testing.TB, token string) {
	t.Helper()
	resp, data, err := s.send(http.MethodDelete, "/v3/auth/tokens",
		http.Header{"X-Auth-Token": {s.AdminToken(t)}, "X-Subject-Token": {token}}, nil)
	if err != nil {
		t.Fatalf("keystone: revoke a token: %v", err)
	}
	if resp.StatusCode != http.StatusNoContent {
		t.Fatalf("keystone: revoke a token: HTTP %d: %s", resp.StatusCode, data)
	}
}

func (s *Server) send(method, path string, h http.Header, body any) (*http.Response, []byte, error) {
	var r io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return nil, nil, err
		}
		r = bytes.NewReader(b)
	}
	req, err := http.NewRequest(method, s.URL+path, r)
	if err != nil {
		return nil, nil, err
	}
	for k, v := range h {
		req.Header[k] = v
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := s.client.Do(req)
	if err != nil {
		return nil, nil, fmt.Errorf("%s %s: %w", method, path, err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, 16<<20))
	if err != nil {
		return nil, nil, fmt.Errorf("%s %s: read the answer: %w", method, path, err)
	}
	return resp, data, nil
}

// Admin sends a request as the admin (path under the server's root, e.g.
// "/v3/projects"), expects one of the status codes want (any 2xx when none
// are given), and decodes the JSON answer into out when out is non-nil.
func (s *Server) Admin(t testing.TB, method, path string, body, out any, want ...int) int {
	t.Helper()
	resp, data, err := s.send(method, path, http.Header{"X-Auth-Token": {s.AdminToken(t)}}, body)
	if err != nil {
		t.Fatalf("keystone: %v", err)
	}
	ok := resp.StatusCode/100 == 2
	if len(want) > 0 {
		ok = false
		for _, w := range want {
			ok = ok || resp.StatusCode == w
		}
	}
	if !ok {
		t.Fatalf("keystone %s %s: HTTP %d: %s", method, path, resp.StatusCode, data)
	}
	if out != nil && len(data) > 0 {
		if err := json.Unmarshal(data, out); err != nil {
			t.Fatalf("keystone %s %s: decode %q: %v", method, path, data, err)
		}
	}
	return resp.StatusCode
}

// CreateProject creates a project in the default domain and returns its id.
func (s *Server) CreateProject(t testing.TB, name string) string {
	t.Helper()
	var out struct {
		Project struct {
			ID string `json:"id"`
		} `json:"project"`
	}
	s.Admin(t, http.MethodPost, "/v3/projects", map[string]any{"project": map[string]any{
		"name": name, "domain_id": Domain, "enabled": true,
	}}, &out, http.StatusCreated)
	return out.Project.ID
}

// CreateUser creates a user in the default domain and returns its id.
func (s *Server) CreateUser(t testing.TB, name, password string) string {
	t.Helper()
	var out struct {
		User struct {
			ID string `json:"id"`
		} `json:"user"`
	}
	s.Admin(t, http.MethodPost, "/v3/users", map[string]any{"user": map[string]any{
		"name": name, "password": password, "domain_id": Domain, "enabled": true,
	}}, &out, http.StatusCreated)
	return out.User.ID
}

// RoleID returns the id of the role named name.
func (s *Server) RoleID(t testing.TB, name string) string {
	t.Helper()
	s.mu.Lock()
	id, ok := s.roles[name]
	s.mu.Unlock()
	if ok {
		return id
	}
	var out struct {
		Roles []struct {
			ID string `json:"id"`
		} `json:"roles"`
	}
	s.Admin(t, http.MethodGet, "/v3/roles?name="+name, nil, &out, http.StatusOK)
	if len(out.Roles) != 1 {
		t.Fatalf("keystone: %d roles named %q, want 1", len(out.Roles), name)
	}
	s.mu.Lock()
	s.roles[name] = out.Roles[0].ID
	s.mu.Unlock()
	return out.Roles[0].ID
}

// GrantProject gives user (an id) the role (a name) on project (an id).
func (s *Server) GrantProject(t testing.TB, user, project, role string) {
	t.Helper()
	s.Admin(t, http.MethodPut, "/v3/projects/"+project+"/users/"+user+"/roles/"+s.RoleID(t, role),
		nil, nil, http.StatusNoContent)
}

// GrantSystem gives user (an id) the role (a name) on the system.
func (s *Server) GrantSystem(t testing.TB, user, role string) {
	t.Helper()
	s.Admin(t, http.MethodPut, "/v3/system/users/"+user+"/roles/"+s.RoleID(t, role),
		nil, nil, http.StatusNoContent)
}

// Endpoints are the URLs of a service, per interface; an empty one is not
// created. Public is required.
type Endpoints struct {
	Public, Internal, Admin string
}

// RegisterService creates a service of type typ named name with its
// endpoints in Region, so that it appears in every token's catalog, and
// returns the service's id.
func (s *Server) RegisterService(t testing.TB, typ, name string, e Endpoints) string {
	t.Helper()
	if e.Public == "" {
		t.Fatalf("keystonetest: RegisterService %s: no public endpoint", typ)
	}
	var out struct {
		Service struct {
			ID string `json:"id"`
		} `json:"service"`
	}
	s.Admin(t, http.MethodPost, "/v3/services", map[string]any{"service": map[string]any{
		"type": typ, "name": name, "enabled": true,
	}}, &out, http.StatusCreated)
	for iface, u := range map[string]string{"public": e.Public, "internal": e.Internal, "admin": e.Admin} {
		if u == "" {
			continue
		}
		s.Admin(t, http.MethodPost, "/v3/endpoints", map[string]any{"endpoint": map[string]any{
			"service_id": out.Service.ID, "interface": iface, "url": u, "region_id": Region, "enabled": true,
		}}, nil, http.StatusCreated)
	}
	return out.Service.ID
}

// User is a user created by Personas, with the password it logs in with.
type User struct {
	ID, Name, Password string
	// ProjectID is the project the user has its role on, "" for a
	// system-scoped persona.
	ProjectID string
}

// Credentials returns the user's credentials scoped as its role is: to its
// project, or to the system.
func (u User) Credentials() Credentials {
	if u.ProjectID == "" {
		return Credentials{User: u.Name, Password: u.Password, Scope: Scope{System: true}}
	}
	return Credentials{User: u.Name, Password: u.Password, Scope: Scope{ProjectID: u.ProjectID}}
}

// Personas is the set of users that policy tests need: admin, member and
// reader in each of two projects, and a system admin, member and reader.
// Users are keyed "<project>-<role>" ("a-admin", "b-reader", …) and
// "system-<role>".
type Personas struct {
	ProjectA, ProjectB string
	Users              map[string]User
}

// CreatePersonas creates projects prefix-a and prefix-b and the users of
// Personas (named prefix-<key>), each with one role assignment.
func (s *Server) CreatePersonas(t testing.TB, prefix string) Personas {
	t.Helper()
	p := Personas{
		ProjectA: s.CreateProject(t, prefix+"-a"),
		ProjectB: s.CreateProject(t, prefix+"-b"),
		Users:    map[string]User{},
	}
	for _, role := range []string{RoleAdmin, RoleMember, RoleReader} {
		for _, scope := range []struct{ key, project string }{{"a", p.ProjectA}, {"b", p.ProjectB}, {"system", ""}} {
			key := scope.key + "-" + role
			u := User{Name: prefix + "-" + key, Password: "pw-" + prefix + "-" + key, ProjectID: scope.project}
			u.ID = s.CreateUser(t, u.Name, u.Password)
			if scope.project == "" {
				s.GrantSystem(t, u.ID, role)
			} else {
				s.GrantProject(t, u.ID, scope.project, role)
			}
			p.Users[key] = u
		}
	}
	return p
}

// Ferro's service user for [keystone_authtoken], made by FerroConfig: in
// the service project with the service role, which Keystone's
// identity:validate_token allows (rule:service_role) without making the
// user an admin.
const (
	ServiceProject  = "service"
	ServiceRole     = "service"
	ServiceUser     = "ironic"
	ServicePassword = "pw-ironic-service"
)

// FerroConfig creates ferro's service user in s and writes, in a
// temporary directory, a ferro configuration that validates tokens with s
// (auth_strategy keystone); it returns the file's path, for
// ferrotest.WithConfig.
func (s *Server) FerroConfig(t testing.TB) string {
	t.Helper()
	// keystone-manage bootstrap (2023.1) makes admin, member and reader,
	// not the service role.
	s.Admin(t, http.MethodPost, "/v3/roles", map[string]any{"role": map[string]any{"name": ServiceRole}}, nil, http.StatusCreated)
	uid := s.CreateUser(t, ServiceUser, ServicePassword)
	s.GrantProject(t, uid, s.CreateProject(t, ServiceProject), ServiceRole)
	conf := filepath.Join(t.TempDir(), "ferro.conf")
	body := fmt.Sprintf(`[DEFAULT]
auth_strategy = keystone
[keystone_authtoken]
www_authenticate_uri = %[1]s
auth_url = %[1]s
auth_type = password
username = %[2]s
password = %[3]s
project_name = %[4]s
user_domain_name = Default
project_domain_name = Default
region_name = %[5]s
`, s.AuthURL(), ServiceUser, ServicePassword, ServiceProject, Region)
	if err := os.WriteFile(conf, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	return conf
}
