package ferrotest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/ferrometal/ferro/internal/testing/freeport"
)

const (
	readyTimeout = 30 * time.Second
	stopTimeout  = 10 * time.Second
	// logTail is how much of the server's output a failure message shows.
	logTail = 64 << 10
)

// Server is a `ferro serve` process started by Start. It is stopped with
// SIGTERM when the test ends, and a non-zero exit fails the test.
type Server struct {
	// URL is the API's base URL, http://127.0.0.1:<Port>, without a
	// trailing slash.
	URL     string
	Port    int
	DataDir string
	// InspectorURL is the inspector's own listener
	// ([inspector]listen_port), when the inspector role runs. The
	// inspector's routes are also served on URL in the all-in-one process.
	InspectorURL string

	cmd      *exec.Cmd
	out      *logBuffer
	done     chan struct{} // closed when the process has exited
	waitErr  error         // valid after done
	stopOnce sync.Once
}

// Option changes how Start runs the server.
type Option func(*options)

type options struct {
	env     []string
	args    []string
	dataDir string
	port    int
	ready   func(ctx context.Context, s *Server) error
	noReady bool
	binary  string // instead of Binary(t); for the harness's own tests
}

// WithEnv adds environment variables ("KEY=VALUE") to the server's
// environment; they override the harness's own FERRO_API_* settings.
func WithEnv(kv ...string) Option {
	return func(o *options) { o.env = append(o.env, kv...) }
}

// WithArgs appends arguments after `serve --data-dir DIR`.
func WithArgs(args ...string) Option {
	return func(o *options) { o.args = append(o.args, args...) }
}

// WithRole runs only the given comma-separated roles (`--role`).
func WithRole(roles string) Option { return WithArgs("--role", roles) }

// WithConfig passes an INI configuration file (`--config`).
func WithConfig(path string) Option { return WithArgs("--config", path) }

// WithDataDir uses dir as the data directory instead of a fresh temporary
// one, e.g. to restart a server on the same database.
func WithDataDir(dir string) Option { return func(o *options) { o.dataDir = dir } }

// WithPort listens on port instead of a free one, e.g. to restart a server
// at the same URL.
func WithPort(port int) Option { return func(o *options) { o.port = port } }

// WithReadyCheck replaces the default readiness check (GET / answers 200).
// Start polls check until it returns nil. A nil check means the server is
// considered started as soon as the process runs (for roles without the API).
func WithReadyCheck(check func(ctx context.Context, s *Server) error) Option {
	return func(o *options) {
		o.ready = check
		o.noReady = check == nil
	}
}

// Start builds ferro (once per test binary) and runs `ferro serve` with a
// temporary data directory, the API on 127.0.0.1 and a free port, and every
// other listener on a free loopback port too, so that tests and a developer's
// own ferro never collide on a default port. It returns
// when GET / answers 200, and fails the test if that takes more than 30 s or
// the process exits, showing the process's output.
func Start(t testing.TB, opts ...Option) *Server {
	t.Helper()
	var o options
	for _, opt := range opts {
		opt(&o)
	}
	if o.ready == nil && !o.noReady {
		o.ready = getRoot
	}
	bin := o.binary
	if bin == "" {
		bin = Binary(t)
	}
	if o.dataDir == "" {
		o.dataDir = t.TempDir()
	}

	// FreePort's ports can be taken by someone else before the server binds
	// them; try other ones then, unless the caller chose the port.
	for attempt := 1; ; attempt++ {
		port := o.port
		if port == 0 {
			port = FreePort(t)
		}
		s, err := start(t, bin, port, FreePort(t), &o)
		if err == nil {
			return s
		}
		if o.port == 0 && attempt < 3 && strings.Contains(s.Log(), "address already in use") {
			t.Logf("ferro serve found a port in use, retrying with others: %v", err)
			continue
		}
		t.Fatalf("start ferro serve: %v\n%s", err, s.logTail())
	}
}

func start(t testing.TB, bin string, port, inspectorPort int, o *options) (*Server, error) {
	s := &Server{
		URL:          "http://127.0.0.1:" + strconv.Itoa(port),
		Port:         port,
		DataDir:      o.dataDir,
		InspectorURL: "http://127.0.0.1:" + strconv.Itoa(inspectorPort),
		out:          &logBuffer{},
		done:         make(chan struct{}),
	}
	args := append([]string{"serve", "--data-dir", o.dataDir}, o.args...)
	s.cmd = exec.Command(bin, args...)
	s.cmd.Env = append(serverEnv(),
		"FERRO_API_HOST_IP=127.0.0.1",
		"FERRO_API_PORT="+strconv.Itoa(port),
		"FERRO_INSPECTOR_LISTEN_ADDRESS=127.0.0.1",
		"FERRO_INSPECTOR_LISTEN_PORT="+strconv.Itoa(inspectorPort),
	)
	s.cmd.Env = append(s.cmd.Env, o.env...)
	s.cmd.Dir = o.dataDir
	s.cmd.Stdout = s.out
	s.cmd.Stderr = s.out
	setProcAttr(s.cmd)
	if err := s.cmd.Start(); err != nil {
		close(s.done)
		return s, err
	}
	go func() {
		s.waitErr = s.cmd.Wait()
		close(s.done)
	}()
	t.Cleanup(func() {
		s.Stop(t)
		if t.Failed() {
			t.Logf("ferro serve (port %d) output:\n%s", s.Port, s.logTail())
		}
	})

	if o.ready == nil {
		return s, nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), readyTimeout)
	defer cancel()
	var lastErr error
	for {
		if lastErr = o.ready(ctx, s); lastErr == nil {
			return s, nil
		}
		select {
		case <-s.done:
			s.markStopped()
			return s, fmt.Errorf("process exited before it was ready: %v", exitStatus(s.waitErr))
		case <-ctx.Done():
			s.Kill(t)
			return s, fmt.Errorf("not ready after %v: %v", readyTimeout, lastErr)
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// serverEnv is the test's environment without FERRO_* variables, so that a
// developer's settings do not leak into the servers tests start.
func serverEnv() []string {
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "FERRO_") {
			env = append(env, kv)
		}
	}
	return env
}

func getRoot(ctx context.Context, s *Server) error {
	ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, s.URL+"/", nil)
	if err != nil {
		return err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("GET / answered %s", resp.Status)
	}
	return nil
}

// Log returns everything the server has written to stdout and stderr so far.
func (s *Server) Log() string { return s.out.String() }

func (s *Server) logTail() string {
	l := s.Log()
	if len(l) > logTail {
		l = "…" + l[len(l)-logTail:]
	}
	return l
}

// WaitLog waits until the server's output contains substr, re-reading it
// at every write; it fails the test when the process exits first or after
// timeout.
func (s *Server) WaitLog(t testing.TB, substr string, timeout time.Duration) {
	t.Helper()
	deadline := time.NewTimer(timeout)
	defer deadline.Stop()
	for {
		changed := s.out.changed()
		if strings.Contains(s.Log(), substr) {
			return
		}
		select {
		case <-changed:
		case <-s.done:
			if !strings.Contains(s.Log(), substr) {
				s.markStopped()
				t.Fatalf("ferro serve exited (%v) before logging %q:\n%s", exitStatus(s.waitErr), substr, s.logTail())
			}
			return
		case <-deadline.C:
			t.Fatalf("ferro serve did not log %q within %v:\n%s", substr, timeout, s.logTail())
		}
	}
}

// Pid is the server's process id, e.g. to read its /proc entries.
func (s *Server) Pid() int { return s.cmd.Process.Pid }

// Signal sends sig to the server process.
func (s *Server) Signal(sig os.Signal) error { return s.cmd.Process.Signal(sig) }

// Stop sends SIGTERM and waits for the process to exit; a non-zero exit
// status, or an exit that happened before Stop, fails the test. After 10 s it
// sends SIGKILL and fails the test. Stop is called when the test ends; call it
// earlier to stop the server during a test. Only the first call acts.
func (s *Server) Stop(t testing.TB) {
	t.Helper()
	s.stopOnce.Do(func() {
		select {
		case <-s.done:
			t.Errorf("ferro serve (port %d) exited before the test stopped it: %v", s.Port, exitStatus(s.waitErr))
			return
		default:
		}
		if err := s.cmd.Process.Signal(syscall.SIGTERM); err != nil {
			t.Errorf("send SIGTERM to ferro serve: %v", err)
		}
		select {
		case <-s.done:
		case <-time.After(stopTimeout):
			t.Errorf("ferro serve (port %d) still running %v after SIGTERM; sending SIGKILL", s.Port, stopTimeout)
			_ = s.cmd.Process.Kill()
			<-s.done
			return
		}
		if s.waitErr != nil {
			t.Errorf("ferro serve (port %d) did not exit cleanly on SIGTERM: %v", s.Port, exitStatus(s.waitErr))
		}
	})
}

// Kill stops the server with SIGKILL, as a crash would, and waits for it.
// Its exit status is not checked.
func (s *Server) Kill(t testing.TB) {
	t.Helper()
	s.stopOnce.Do(func() {
		_ = s.cmd.Process.Kill()
		<-s.done
	})
}

// markStopped records that the process is gone so that Stop does not report
// it a second time.
func (s *Server) markStopped() { s.stopOnce.Do(func() {}) }

func exitStatus(err error) string {
	var ee *exec.ExitError
	switch {
	case err == nil:
		return "exit status 0"
	case errors.As(err, &ee):
		return ee.String()
	default:
		return err.Error()
	}
}

// FreePort returns a TCP port on 127.0.0.1 that was free a moment ago and
// that this test binary has not handed out before.
func FreePort(t testing.TB) int {
	t.Helper()
	port, err := freeport.Next()
	if err != nil {
		t.Fatalf("find a free port: %v", err)
	}
	return port
}

// logBuffer collects a process's output; it is written by exec's copying
// goroutines and read by the test.
type logBuffer struct {
	mu   sync.Mutex
	buf  bytes.Buffer
	wake chan struct{} // closed at the next write
}

func (b *logBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.wake != nil {
		close(b.wake)
		b.wake = nil
	}
	return b.buf.Write(p)
}

// changed is closed at the next write.
func (b *logBuffer) changed() <-chan struct{} {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.wake == nil {
		b.wake = make(chan struct{})
	}
	return b.wake
}

func (b *logBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// FakeBootDevice returns the boot device fake-hardware's management
// interface was last asked to set on the node (by UUID), as the server
// logged it ("fake boot device set"), or "" when it never was: the fake
// management keeps no boot device, as Ironic's.
func (s *Server) FakeBootDevice(nodeUUID string) string {
	device := ""
	for _, line := range strings.Split(s.Log(), "\n") {
		if !strings.Contains(line, `msg="fake boot device set"`) || !strings.Contains(line, "node="+nodeUUID) {
			continue
		}
		for _, f := range strings.Fields(line) {
			if v, ok := strings.CutPrefix(f, "device="); ok {
				device = v
			}
		}
	}
	return device
}
