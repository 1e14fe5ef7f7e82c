// Package tempest_test is the tempest lane: OpenStack's own API test suite
// for Ironic — ironic-tempest-plugin's API tests (Debian's
// ironic-tempest-plugin 2.5.0) run by tempest 33's stestr — against a real
// `ferro serve`, with a real Keystone (internal/testing/keystonetest) for
// the tokens and the catalog. It runs twice, in parallel, each run with a
// Keystone of its own: subtest noauth, where tempest's tokens are sent and
// ignored as they are by Ironic with auth_strategy=noauth (the baseline's
// setting), and subtest keystone, where ferro validates them
// (auth_strategy=keystone, a service user with the service role) and
// enforces its default policy. That policy is Ironic's new defaults with
// scope enforced ([oslo_policy]enforce_scope and enforce_new_defaults on);
// Ironic 21.4 out of the box has both off, so that its deprecated rules
// ("role:admin" in any project) let a project admin do everything. ferro
// refuses a project admin the system's API (node create, drivers,
// conductors, chassis…), as Ironic does with those options on, so the
// keystone run sets the plugin's [enforce_scope]ironic=true and the API
// tests use tempest's system-scoped admin — the plugin's configuration
// for a scope-enforcing Ironic. Every baseline test passes either way.
//
// The lane compares test by test with testdata/tempest/ironic-21.4-passing.txt,
// the tests that pass against Debian's Ironic 21.4 (scripts/tempest-baseline.sh
// produced it, see testdata/tempest/README.md): every one of them must pass
// against ferro. The same test, with FERRO_TEMPEST_TARGET set to another
// server's URL, runs the suite against that server instead and, with
// FERRO_TEMPEST_WRITE_PASSING set to a path, writes the tests that passed
// there; that is how the baseline is made. FERRO_TEMPEST_DIR keeps the
// workspace (tempest.conf, tempest.log, the stestr repository).
package tempest_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ferrometal/ferro/internal/testing/ferrotest"
	"github.com/ferrometal/ferro/internal/testing/keystonetest"
	"github.com/ferrometal/ferro/internal/testing/stestrtest"
)

func TestMain(m *testing.M) { os.Exit(keystonetest.Main(m)) }

const (
	// pluginDir is where Debian installs ironic-tempest-plugin.
	pluginDir = "/usr/lib/python3/dist-packages/ironic_tempest_plugin"
	// suite is the selection: the plugin's API tests (not its scenario
	// tests, which deploy real machines).
	suite = `^ironic_tempest_plugin\.tests\.api\.`
	// runTimeout bounds the whole stestr run against ferro (under the
	// package's go test -timeout); baselineTimeout against another server
	// (Ironic takes several times longer).
	runTimeout      = 8 * time.Minute
	baselineTimeout = 45 * time.Minute
	// baselineFile lists the tests Ironic 21.4 passes, relative to this
	// package.
	baselineFile = "../../testdata/tempest/ironic-21.4-passing.txt"
)

// Tempest's accounts: admins (the API tests run as admin) and plain
// members, each in a project of its own. Pre-provisioned accounts keep
// tempest from creating and deleting users and projects for every test
// class (dynamic credentials), which costs several Keystone calls each.
// The plugin's base class asks for a system-scoped admin too.
var accounts = []struct {
	name, role string
	system     bool
}{
	{"tempest-admin-1", keystonetest.RoleAdmin, false},
	{"tempest-admin-2", keystonetest.RoleAdmin, false},
	{"tempest-member-1", keystonetest.RoleMember, false},
	{"tempest-member-2", keystonetest.RoleMember, false},
	{"tempest-system-admin-1", keystonetest.RoleAdmin, true},
	{"tempest-system-admin-2", keystonetest.RoleAdmin, true},
}

func TestTempest_IronicAPITestsPassAsAgainstIronic(t *testing.T) {
	// Debian's interpreter, where the packages are: not whatever python3
	// comes first in PATH.
	python := "/usr/bin/python3"
	if _, err := os.Stat(python); err != nil {
		ferrotest.SkipOrFail(t, "%s is missing (Debian package python3)", python)
	}
	csvTool := ferrotest.RequireTool(t, "subunit2csv", "/usr/bin")
	for _, mod := range []string{"tempest", "stestr", "ironic_tempest_plugin"} {
		if err := exec.Command(python, "-c", "import "+mod).Run(); err != nil {
			ferrotest.SkipOrFail(t, "python3 cannot import %s (Debian packages tempest, ironic-tempest-plugin; .ci/run installs them): %v", mod, err)
		}
	}
	l := lane{python: python, csvTool: csvTool}

	// Another server (the baseline's Ironic): one run, with noauth.
	if target := os.Getenv("FERRO_TEMPEST_TARGET"); target != "" {
		ks := keystonetest.Start(t)
		l.run(t, ks, target, os.Getenv("FERRO_TEMPEST_DIR"), false, baselineTimeout)
		return
	}

	// ferro twice, in parallel (each with its own Keystone copied from
	// the package's one template): once with noauth, tempest's tokens
	// sent and ignored, and once validating them. The two stestr runs
	// share the 2 cores; in parallel the package takes little more than
	// the longer of the two.
	t.Run("noauth", func(t *testing.T) {
		t.Parallel()
		ks := keystonetest.Start(t)
		l.run(t, ks, ferrotest.Start(t).URL, subdir(t.Name()), false, runTimeout)
	})
	t.Run("keystone", func(t *testing.T) {
		t.Parallel()
		ks := keystonetest.Start(t)
		l.run(t, ks, startKeystoneFerro(t, ks).URL, subdir(t.Name()), true, runTimeout)
	})
}

// subdir is the workspace of a subtest under FERRO_TEMPEST_DIR, "" when
// that is unset.
func subdir(name string) string {
	dir := os.Getenv("FERRO_TEMPEST_DIR")
	if dir == "" {
		return ""
	}
	return filepath.Join(dir, filepath.Base(name))
}

// startKeystoneFerro creates ferro's service user in ks and starts ferro
// with auth_strategy keystone against it.
func startKeystoneFerro(t *testing.T, ks *keystonetest.Server) *ferrotest.Server {
	t.Helper()
	conf := ks.FerroConfig(t)
	srv := ferrotest.Start(t, ferrotest.WithConfig(conf))
	if !strings.Contains(srv.Log(), "auth_strategy=keystone") {
		t.Fatalf("ferro serve does not say it validates Keystone tokens:\n%s", srv.Log())
	}
	// The suite passing proves nothing about authentication unless ferro
	// refuses what it must: no token, and a project admin on the system's
	// API (the plugin's tests would pass as that admin under noauth).
	projectAdmin := ks.IssueToken(t, keystonetest.Credentials{User: keystonetest.AdminUser, Password: keystonetest.AdminPassword,
		Scope: keystonetest.Scope{ProjectName: keystonetest.AdminProject}}).ID
	systemAdmin := ks.IssueToken(t, keystonetest.Credentials{User: keystonetest.AdminUser, Password: keystonetest.AdminPassword,
		Scope: keystonetest.Scope{System: true}}).ID
	for _, c := range []struct {
		who, token string
		want       int
	}{
		{"no token", "", http.StatusUnauthorized},
		{"a made-up token", "made-up", http.StatusUnauthorized},
		{"a project admin", projectAdmin, http.StatusForbidden},
		{"the system admin", systemAdmin, http.StatusOK},
	} {
		req, err := http.NewRequestWithContext(t.Context(), http.MethodGet, srv.URL+"/v1/drivers", nil)
		if err != nil {
			t.Fatal(err)
		}
		if c.token != "" {
			req.Header.Set("X-Auth-Token", c.token)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatalf("GET /v1/drivers: %v", err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode != c.want {
			t.Fatalf("GET /v1/drivers with %s: HTTP %d, want %d", c.who, resp.StatusCode, c.want)
		}
	}
	return srv
}

// lane is the tempest installation the runs use.
type lane struct {
	python, csvTool string
}

// run registers target as the baremetal service in ks, runs the suite
// against it in dir (a temporary directory when "") and compares with the
// baseline. keystone says the target validates tokens with ferro's (and
// Ironic's new) default policy, which scopes the admin API to the system.
func (l lane) run(t *testing.T, ks *keystonetest.Server, target, dir string, keystone bool, timeout time.Duration) {
	ks.RegisterService(t, "baremetal", "ironic", keystonetest.Endpoints{Public: target, Internal: target, Admin: target})
	if dir == "" {
		dir = t.TempDir()
	} else if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := writeWorkspace(t, ks, dir, keystone); err != nil {
		t.Fatal(err)
	}
	results, err := runSuite(t, l.python, l.csvTool, dir, timeout)
	if err != nil {
		t.Fatal(err)
	}

	var passed, failed, skipped []string
	for id, status := range results {
		switch status {
		case "success":
			passed = append(passed, id)
		case "skip":
			skipped = append(skipped, id)
		default:
			failed = append(failed, id)
		}
	}
	slices.Sort(passed)
	slices.Sort(failed)
	t.Logf("tempest against %s: %d tests, %d passed, %d failed, %d skipped", target, len(results), len(passed), len(failed), len(skipped))
	if len(results) == 0 {
		t.Fatalf("stestr ran no test; its output is in %s", dir)
	}

	// The list is the noauth run's (the keystone run would write the
	// same file at the same time).
	if out := os.Getenv("FERRO_TEMPEST_WRITE_PASSING"); out != "" && !keystone {
		if err := os.WriteFile(out, []byte(strings.Join(passed, "\n")+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		t.Logf("wrote the %d passing tests to %s", len(passed), out)
		return
	}

	baseline, err := stestrtest.ReadList(baselineFile)
	if err != nil {
		t.Fatalf("read the baseline: %v", err)
	}
	var missing []string
	for _, id := range baseline {
		if results[id] != "success" {
			st := results[id]
			if st == "" {
				st = "not run"
			}
			missing = append(missing, fmt.Sprintf("%s (%s)", id, st))
		}
	}
	var extra []string
	for _, id := range passed {
		if !slices.Contains(baseline, id) {
			extra = append(extra, id)
		}
	}
	if len(extra) > 0 {
		t.Logf("%d tests pass against ferro that do not against Ironic 21.4:\n  %s", len(extra), strings.Join(extra, "\n  "))
	}
	if len(missing) > 0 {
		t.Errorf("%d of the %d tests that pass against Ironic 21.4 do not pass against ferro:\n  %s\n(tempest's log: tempest.log; per-test details: stestr last in %s)",
			len(missing), len(baseline), strings.Join(missing, "\n  "), dir)
		stestrtest.LogFailures(t, dir, l.python, tempestEnv(dir))
	}
}

// writeWorkspace creates tempest's accounts in Keystone and writes
// tempest.conf, accounts.yaml and .stestr.conf into dir. enforceScope
// sets the plugin's [enforce_scope]ironic: its API tests then run as the
// system admin (tempest-system-admin-*) instead of a project admin.
func writeWorkspace(t *testing.T, ks *keystonetest.Server, dir string, enforceScope bool) error {
	var yaml strings.Builder
	for _, a := range accounts {
		password := "pw-" + a.name
		uid := ks.CreateUser(t, a.name, password)
		// user_domain_name, not domain_name: tempest takes an account
		// with domain_name for a domain-scoped one.
		fmt.Fprintf(&yaml, "- username: %q\n  password: %q\n  user_domain_name: Default\n  roles:\n  - %q\n", a.name, password, a.role)
		if a.system {
			ks.GrantSystem(t, uid, a.role)
			yaml.WriteString("  system: all\n")
			continue
		}
		project := a.name + "-project"
		ks.GrantProject(t, uid, ks.CreateProject(t, project), a.role)
		fmt.Fprintf(&yaml, "  project_name: %q\n  project_domain_name: Default\n", project)
	}
	if err := os.WriteFile(filepath.Join(dir, "accounts.yaml"), []byte(yaml.String()), 0o600); err != nil {
		return err
	}
	conf := fmt.Sprintf(`[DEFAULT]
log_dir = %[1]s
log_file = tempest.log
use_stderr = false
debug = true

[oslo_concurrency]
lock_path = %[1]s/lock

[auth]
use_dynamic_credentials = false
test_accounts_file = %[1]s/accounts.yaml
default_credentials_domain_name = Default
create_isolated_networks = false

[identity]
uri_v3 = %[2]s
auth_version = v3
region = %[3]s
v3_endpoint_type = public
admin_role = admin
disable_ssl_certificate_validation = true

[identity-feature-enabled]
api_v2 = false

[service_available]
ironic = true
ironic_inspector = false
neutron = false
nova = false
glance = false
cinder = false
swift = false
horizon = false

[enforce_scope]
ironic = %[4]t

[baremetal]
driver = fake-hardware
enabled_hardware_types = fake-hardware,ipmi
enabled_deploy_interfaces = fake,direct
enabled_boot_interfaces = fake,pxe
enabled_rescue_interfaces = fake,no-rescue
enabled_bios_interfaces = fake,no-bios
enabled_raid_interfaces = fake,no-raid
enabled_management_interfaces = fake,ipmitool
enabled_power_interfaces = fake,ipmitool
min_microversion = 1.1
max_microversion = 1.82
endpoint_type = public
power_timeout = 30
unprovision_timeout = 30
active_timeout = 30
association_timeout = 10
deploywait_timeout = 10
rescue_timeout = 30
unrescue_timeout = 30
`, dir, ks.AuthURL(), keystonetest.Region, enforceScope)
	if err := os.WriteFile(filepath.Join(dir, "tempest.conf"), []byte(conf), 0o644); err != nil {
		return err
	}
	// Discover from the plugin's own tree: tempest's test_discover would
	// import all of tempest's tests first. The plugin's options are
	// registered by tempest's config loader either way.
	stestr := fmt.Sprintf("[DEFAULT]\ntest_path=%s/tests/api\ntop_dir=%s\n", pluginDir, filepath.Dir(pluginDir))
	return os.WriteFile(filepath.Join(dir, ".stestr.conf"), []byte(stestr), 0o644)
}

// tempestEnv is the environment stestr and its workers run in.
func tempestEnv(dir string) []string {
	env := []string{
		"HOME=" + dir,
		"TEMPEST_CONFIG_DIR=" + dir,
		"TEMPEST_CONFIG=tempest.conf",
		// No log capture: tempest.log has it, and capturing every
		// request of every test into the subunit stream costs time.
		"OS_LOG_CAPTURE=0",
		"OS_STDOUT_CAPTURE=0",
		"OS_STDERR_CAPTURE=0",
		"OS_TEST_TIMEOUT=120",
		"PYTHONDONTWRITEBYTECODE=1",
	}
	for _, kv := range os.Environ() {
		switch {
		case strings.HasPrefix(kv, "OS_"), strings.HasPrefix(kv, "HOME="), strings.HasPrefix(kv, "TEMPEST_"):
		default:
			env = append(env, kv)
		}
	}
	return env
}

// runSuite runs the selection at concurrency 1 and returns each test's
// status ("success", "fail", "skip", …) by id, the id without its
// "[id-…,attrs]" suffix.
func runSuite(t *testing.T, python, csvTool, dir string, timeout time.Duration) (map[string]string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	began := time.Now()
	stream := filepath.Join(dir, "results.subunit")
	out, err := os.Create(stream)
	if err != nil {
		return nil, err
	}
	var stderr bytes.Buffer
	cmd := exec.CommandContext(ctx, python, "-m", "stestr", "run", "--concurrency", "1", "--subunit", suite)
	cmd.Dir = dir
	cmd.Env = tempestEnv(dir)
	cmd.Stdout, cmd.Stderr = out, &stderr
	cmd.WaitDelay = 10 * time.Second
	runErr := cmd.Run()
	out.Close()
	t.Logf("stestr run took %v", time.Since(began).Round(time.Second))
	// stestr exits 1 when a test fails; that is judged below, per test.
	var exit *exec.ExitError
	if runErr != nil && !(errors.As(runErr, &exit) && exit.ExitCode() == 1) {
		return nil, fmt.Errorf("stestr run: %w\n%s", runErr, stestrtest.Tail(stderr.String(), 8000))
	}

	f, err := os.Open(stream)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	conv := exec.CommandContext(ctx, csvTool)
	conv.Stdin = f
	var csvOut bytes.Buffer
	conv.Stdout, conv.Stderr = &csvOut, &stderr
	// subunit2csv exits 1 when the stream holds a failure.
	if err := conv.Run(); err != nil && !(errors.As(err, &exit) && exit.ExitCode() == 1) {
		return nil, fmt.Errorf("subunit2csv: %w\n%s", err, stestrtest.Tail(stderr.String(), 4000))
	}
	results, err := stestrtest.ParseCSV(&csvOut)
	if err != nil {
		return nil, err
	}
	if len(results) == 0 {
		return nil, fmt.Errorf("no test results; stestr said:\n%s", stestrtest.Tail(stderr.String(), 8000))
	}
	return results, nil
}
