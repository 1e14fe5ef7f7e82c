// Package sdk_test is the openstacksdk lane: the bare metal functional
// tests that Debian's python3-openstacksdk 0.101 ships
// (openstack/tests/functional/baremetal, 70 tests) run by stestr against a
// real `ferro serve`, twice in parallel: through a clouds.yaml with
// `auth_type: none`, as a user of the SDK would point it at a standalone
// Ironic (subtest noauth), and logged in to a real Keystone
// (internal/testing/keystonetest) as its system-scoped admin, ferro
// validating the tokens with its default policy (subtest keystone). The
// baseline is made without authentication.
//
// The lane compares test by test with testdata/ironic-21.4-passing.txt, the
// tests that pass against Debian's Ironic 21.4 (scripts/sdk-baseline.sh
// produced it): every one of them must pass against ferro. With
// FERRO_SDK_TARGET set to another server's URL the same test runs the suite
// against that server instead and, with FERRO_SDK_WRITE_PASSING set to a
// path, writes the tests that passed there. FERRO_SDK_DIR keeps the
// workspace (clouds.yaml, stestr.log, the stestr repository).
package sdk_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
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
	// testsDir is where Debian installs the SDK's bare metal functional
	// tests; topDir is the import root stestr discovers them from.
	testsDir = "/usr/lib/python3/dist-packages/openstack/tests/functional/baremetal"
	topDir   = "/usr/lib/python3/dist-packages"
	// runTimeout bounds the stestr run against ferro; baselineTimeout
	// against another server (Ironic takes minutes).
	runTimeout      = 5 * time.Minute
	baselineTimeout = 30 * time.Minute
	// testTimeout is each test's own limit (OS_TEST_TIMEOUT; the SDK's
	// default is 5 s, which a busy 2-core machine exceeds with waits).
	testTimeout = "120"
	// cloud is the clouds.yaml entry every connection of the tests uses.
	cloud        = "ferro"
	baselineFile = "testdata/ironic-21.4-passing.txt"
)

func TestSDK_BaremetalFunctionalTestsPassAsAgainstIronic(t *testing.T) {
	// Debian's interpreter, where the packages are.
	python := "/usr/bin/python3"
	if _, err := os.Stat(python); err != nil {
		ferrotest.SkipOrFail(t, "%s is missing (Debian package python3)", python)
	}
	csvTool := ferrotest.RequireTool(t, "subunit2csv", "/usr/bin")
	for _, mod := range []string{"stestr", "openstack"} {
		if err := exec.Command(python, "-c", "import "+mod).Run(); err != nil {
			ferrotest.SkipOrFail(t, "python3 cannot import %s (Debian packages python3-stestr, python3-openstacksdk; .ci/run installs them): %v", mod, err)
		}
	}
	// The functional tests' base module reads clouds.yaml when imported,
	// so their presence is checked on disk.
	if _, err := os.Stat(filepath.Join(testsDir, "base.py")); err != nil {
		ferrotest.SkipOrFail(t, "openstacksdk's bare metal functional tests are missing (Debian package python3-openstacksdk 0.101): %v", err)
	}

	l := lane{python: python, csvTool: csvTool}

	// Another server (the baseline's Ironic): one run, without
	// authentication.
	if target := os.Getenv("FERRO_SDK_TARGET"); target != "" {
		l.run(t, target, os.Getenv("FERRO_SDK_DIR"), noAuthCloud(target), baselineTimeout)
		return
	}

	// ferro twice, in parallel: with auth_type none, and with Keystone
	// tokens (keystonetest) that ferro validates, the SDK logged in as
	// Keystone's admin scoped to the system, whom ferro's default policy
	// (Ironic's new defaults, scope enforced) lets do everything.
	t.Run("noauth", func(t *testing.T) {
		t.Parallel()
		srv := ferrotest.Start(t)
		l.run(t, srv.URL, subdir(t.Name()), noAuthCloud(srv.URL), runTimeout)
	})
	t.Run("keystone", func(t *testing.T) {
		t.Parallel()
		ks := keystonetest.Start(t)
		srv := ferrotest.Start(t, ferrotest.WithConfig(ks.FerroConfig(t)))
		if !strings.Contains(srv.Log(), "auth_strategy=keystone") {
			t.Fatalf("ferro serve does not say it validates Keystone tokens:\n%s", srv.Log())
		}
		ks.RegisterService(t, "baremetal", "ironic", keystonetest.Endpoints{Public: srv.URL, Internal: srv.URL, Admin: srv.URL})
		l.run(t, srv.URL, subdir(t.Name()), keystoneCloud(ks), runTimeout)
	})
}

// subdir is the workspace of a subtest under FERRO_SDK_DIR, "" when that
// is unset.
func subdir(name string) string {
	dir := os.Getenv("FERRO_SDK_DIR")
	if dir == "" {
		return ""
	}
	return filepath.Join(dir, filepath.Base(name))
}

// noAuthCloud is the clouds.yaml entry of a server without
// authentication: `auth: {endpoint}` is the endpoint of every service with
// auth_type none.
func noAuthCloud(target string) string {
	return fmt.Sprintf("    auth_type: none\n    auth:\n      endpoint: %s\n", target)
}

// keystoneCloud is the entry of ks's system-scoped admin; the catalog
// names the bare metal endpoint.
func keystoneCloud(ks *keystonetest.Server) string {
	return fmt.Sprintf(`    auth_type: password
    auth:
      auth_url: %s
      username: %s
      password: %s
      user_domain_name: Default
      system_scope: all
    region_name: %s
`, ks.AuthURL(), keystonetest.AdminUser, keystonetest.AdminPassword, keystonetest.Region)
}

// lane is the SDK installation the runs use.
type lane struct {
	python, csvTool string
}

// run runs the suite against target in dir (a temporary directory when
// "") with the clouds.yaml entry entry, and compares with the baseline (or
// writes it, with FERRO_SDK_WRITE_PASSING).
func (l lane) run(t *testing.T, target, dir, entry string, timeout time.Duration) {
	if dir == "" {
		dir = t.TempDir()
	} else if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := writeWorkspace(dir, entry); err != nil {
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
	t.Logf("openstacksdk against %s: %d tests, %d passed, %d failed, %d skipped", target, len(results), len(passed), len(failed), len(skipped))

	if out := os.Getenv("FERRO_SDK_WRITE_PASSING"); out != "" {
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
	if len(baseline) == 0 {
		t.Fatalf("%s lists no test", baselineFile)
	}
	var missing []string
	for _, id := range baseline {
		if st := results[id]; st != "success" {
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
		t.Errorf("%d of the %d tests that pass against Ironic 21.4 do not pass against ferro:\n  %s",
			len(missing), len(baseline), strings.Join(missing, "\n  "))
		stestrtest.LogFailures(t, dir, l.python, sdkEnv(dir))
	}
}

// writeWorkspace writes clouds.yaml (in dir/.config/openstack, found
// through HOME=dir) with the cloud entry, and .stestr.conf, into dir. The
// SDK's functional base class opens four clouds (OS_CLOUD and the
// OPENSTACKSDK_*_CLOUD ones); sdkEnv points all at the one entry.
// has_compute and has_image false keep the base class from looking for
// flavors and images.
func writeWorkspace(dir, entry string) error {
	conf := filepath.Join(dir, ".config", "openstack")
	if err := os.MkdirAll(conf, 0o755); err != nil {
		return err
	}
	clouds := "clouds:\n  " + cloud + ":\n" + entry + "    has_compute: false\n    has_image: false\n"
	if err := os.WriteFile(filepath.Join(conf, "clouds.yaml"), []byte(clouds), 0o644); err != nil {
		return err
	}
	stestr := fmt.Sprintf("[DEFAULT]\ntest_path=%s\ntop_dir=%s\n", testsDir, topDir)
	return os.WriteFile(filepath.Join(dir, ".stestr.conf"), []byte(stestr), 0o644)
}

// sdkEnv is the environment stestr and its workers run in: the test's,
// without the user's OS_* settings, clouds.yaml and SDK cache.
func sdkEnv(dir string) []string {
	env := []string{
		"HOME=" + dir,
		"XDG_CONFIG_HOME=" + filepath.Join(dir, ".config"),
		"XDG_CACHE_HOME=" + filepath.Join(dir, ".cache"),
		"OS_CLOUD=" + cloud,
		"OPENSTACKSDK_DEMO_CLOUD=" + cloud,
		"OPENSTACKSDK_DEMO_CLOUD_ALT=" + cloud,
		"OPENSTACKSDK_OPERATOR_CLOUD=" + cloud,
		"OS_TEST_TIMEOUT=" + testTimeout,
		"PYTHONDONTWRITEBYTECODE=1",
	}
	for _, kv := range os.Environ() {
		switch {
		case strings.HasPrefix(kv, "OS_"), strings.HasPrefix(kv, "OPENSTACKSDK_"),
			strings.HasPrefix(kv, "HOME="), strings.HasPrefix(kv, "XDG_"):
		default:
			env = append(env, kv)
		}
	}
	return env
}

// runSuite runs the SDK's bare metal tests at concurrency 1 and returns
// each test's status ("success", "fail", "skip", …) by id. The results
// are read back from stestr's repository (stestr last --subunit): the
// stream of `stestr run --subunit` has the workers' log lines (the SDK
// logs to stdout) between its packets.
func runSuite(t *testing.T, python, csvTool, dir string, timeout time.Duration) (map[string]string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	began := time.Now()
	log, err := os.Create(filepath.Join(dir, "stestr.log"))
	if err != nil {
		return nil, err
	}
	defer log.Close()
	cmd := exec.CommandContext(ctx, python, "-m", "stestr", "run", "--concurrency", "1")
	cmd.Dir = dir
	cmd.Env = sdkEnv(dir)
	cmd.Stdout, cmd.Stderr = log, log
	cmd.WaitDelay = 10 * time.Second
	runErr := cmd.Run()
	t.Logf("stestr run took %v", time.Since(began).Round(time.Second))
	// stestr exits 1 when a test fails; that is judged per test.
	var exit *exec.ExitError
	if runErr != nil && !(errors.As(runErr, &exit) && exit.ExitCode() == 1) {
		out, _ := os.ReadFile(log.Name())
		return nil, fmt.Errorf("stestr run: %w\n%s", runErr, stestrtest.Tail(string(out), 8000))
	}

	var stream, stderr bytes.Buffer
	last := exec.CommandContext(ctx, python, "-m", "stestr", "last", "--subunit")
	last.Dir = dir
	last.Env = sdkEnv(dir)
	last.Stdout, last.Stderr = &stream, &stderr
	if err := last.Run(); err != nil && !(errors.As(err, &exit) && exit.ExitCode() == 1) {
		return nil, fmt.Errorf("stestr last: %w\n%s", err, stestrtest.Tail(stderr.String(), 4000))
	}
	conv := exec.CommandContext(ctx, csvTool)
	conv.Stdin = &stream
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
		out, _ := os.ReadFile(log.Name())
		return nil, fmt.Errorf("no test results; stestr said:\n%s", stestrtest.Tail(string(out), 8000))
	}
	return results, nil
}
