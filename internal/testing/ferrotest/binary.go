package ferrotest

import (
	"bufio"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// modulePath is the module whose cmd/ferro Binary builds.
const modulePath = "github.com/ferrometal/ferro"

// BinaryEnv names the environment variable that points the harness at a
// prebuilt ferro binary instead of building one (`make test` sets it to
// bin/ferro so the binary is linked once for all packages).
const BinaryEnv = "FERRO_BIN"

var build struct {
	once sync.Once
	path string
	err  error
}

// Binary returns the path of a ferro binary built from this checkout's
// cmd/ferro, building it at most once per test binary. $FERRO_BIN, when set,
// is used as is.
func Binary(t testing.TB) string {
	t.Helper()
	build.once.Do(func() { build.path, build.err = buildCommand("ferro", BinaryEnv) })
	return checkBinary(t, "ferro", build.path, build.err)
}

var commands struct {
	mu    sync.Mutex
	built map[string]*builtCommand
}

type builtCommand struct {
	once sync.Once
	path string
	err  error
}

// Command returns the path of the binary of this checkout's cmd/<name>
// (e.g. "ferro-vbmc"), building it at most once per test binary; $envVar,
// when set and not empty, names a prebuilt binary to use instead.
func Command(t testing.TB, name, envVar string) string {
	t.Helper()
	commands.mu.Lock()
	if commands.built == nil {
		commands.built = map[string]*builtCommand{}
	}
	b := commands.built[name]
	if b == nil {
		b = &builtCommand{}
		commands.built[name] = b
	}
	commands.mu.Unlock()
	b.once.Do(func() { b.path, b.err = buildCommand(name, envVar) })
	return checkBinary(t, name, b.path, b.err)
}

func checkBinary(t testing.TB, name, path string, err error) string {
	t.Helper()
	if err != nil {
		t.Fatalf("%s binary: %v", name, err)
	}
	// Stat the file so that go test's result cache sees the binary: a test
	// that only runs the binary does not import the server's packages, and
	// without this a changed server would not invalidate a cached pass.
	if _, err := os.Stat(path); err != nil {
		t.Fatalf("%s binary: %v", name, err)
	}
	return path
}

func buildCommand(name, envVar string) (string, error) {
	if p := os.Getenv(envVar); envVar != "" && p != "" {
		abs, err := filepath.Abs(p)
		if err != nil {
			return "", fmt.Errorf("%s=%s: %w", envVar, p, err)
		}
		if _, err := os.Stat(abs); err != nil {
			return "", fmt.Errorf("%s: %w", envVar, err)
		}
		return abs, nil
	}
	root, err := moduleRoot()
	if err != nil {
		return "", err
	}
	// Keep one binary per checkout in the user cache rather than in a temp
	// directory: nothing is left behind run after run, and no TestMain is
	// needed to clean up. Concurrent test binaries each build into their own
	// file and rename it into place, so a running server is never overwritten.
	cache, err := os.UserCacheDir()
	if err != nil {
		cache = os.TempDir()
	}
	sum := sha256.Sum256([]byte(root))
	dir := filepath.Join(cache, "ferrotest", hex.EncodeToString(sum[:6]))
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", fmt.Errorf("create build directory: %w", err)
	}
	tmp, err := os.MkdirTemp(dir, "build-")
	if err != nil {
		return "", fmt.Errorf("create build directory: %w", err)
	}
	defer os.RemoveAll(tmp)

	goTool, err := exec.LookPath("go")
	if err != nil {
		return "", fmt.Errorf("find the go command: %w", err)
	}
	out := filepath.Join(tmp, name)
	cmd := exec.Command(goTool, "build", "-trimpath", "-buildvcs=false", "-o", out, "./cmd/"+name)
	cmd.Dir = root
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	if msg, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("go build ./cmd/%s in %s: %w\n%s", name, root, err, msg)
	}
	final := filepath.Join(dir, name)
	if err := os.Rename(out, final); err != nil {
		return "", fmt.Errorf("install built binary: %w", err)
	}
	return final, nil
}

// moduleRoot finds the directory of ferro's go.mod, walking up from the
// working directory (go test runs tests in their package's directory).
func moduleRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if isFerroModule(filepath.Join(dir, "go.mod")) {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("no go.mod for " + modulePath + " above the working directory")
		}
		dir = parent
	}
}

func isFerroModule(gomod string) bool {
	f, err := os.Open(gomod)
	if err != nil {
		return false
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if fields := strings.Fields(sc.Text()); len(fields) == 2 && fields[0] == "module" {
			return strings.Trim(fields[1], `"`) == modulePath
		}
	}
	return false
}
