package ferrotest

import (
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/signal"
	"runtime"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
)

// fakeEnv makes the test binary, re-executed by Start, behave as a stand-in
// for `ferro serve`, so the harness is tested without the real server.
const fakeEnv = "FERROTEST_FAKE_SERVE"

func TestMain(m *testing.M) {
	if mode := os.Getenv(fakeEnv); mode != "" {
		fakeServe(mode)
		return
	}
	os.Exit(m.Run())
}

// fakeServe follows ferro serve's contract: listen on
// FERRO_API_HOST_IP:FERRO_API_PORT, answer GET /, exit 0 on SIGTERM. The mode
// makes it misbehave.
func fakeServe(mode string) {
	if mode == "crash" {
		fmt.Fprintln(os.Stderr, "fake: configuration is broken")
		os.Exit(3)
	}
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, syscall.SIGTERM)
	l, err := net.Listen("tcp", net.JoinHostPort(os.Getenv("FERRO_API_HOST_IP"), os.Getenv("FERRO_API_PORT")))
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	fmt.Println("fake: listening on", l.Addr())
	go http.Serve(l, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		json.NewEncoder(w).Encode(map[string]any{"args": os.Args[1:], "extra": os.Getenv("EXTRA")})
	}))
	<-sigs
	fmt.Println("fake: stopping")
	if mode == "bad-exit" {
		os.Exit(2)
	}
	os.Exit(0)
}

func fake(mode string) []Option {
	return []Option{
		func(o *options) { o.binary = os.Args[0] },
		WithEnv(fakeEnv + "=" + mode),
	}
}

// recorder is a testing.TB that records failures instead of failing the
// real test, so the harness's own failure reports can be checked.
type recorder struct {
	testing.TB
	mu       sync.Mutex
	errs     []string
	skipped  bool
	cleanups []func()
}

func (r *recorder) Helper()             {}
func (r *recorder) Logf(string, ...any) {}

func (r *recorder) Errorf(format string, args ...any) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.errs = append(r.errs, fmt.Sprintf(format, args...))
}

func (r *recorder) Fatalf(format string, args ...any) {
	r.Errorf(format, args...)
	runtime.Goexit()
}

func (r *recorder) Skip(args ...any) {
	r.mu.Lock()
	r.skipped = true
	r.mu.Unlock()
	runtime.Goexit()
}

func (r *recorder) Failed() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.errs) > 0
}

func (r *recorder) Cleanup(f func()) { r.cleanups = append(r.cleanups, f) }

func (r *recorder) failures() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return strings.Join(r.errs, "\n")
}

// record runs f against a recorder, then its cleanups, as a test would.
func record(t *testing.T, f func(r *recorder)) *recorder {
	r := &recorder{TB: t}
	done := make(chan struct{})
	go func() {
		defer close(done)
		f(r)
	}()
	<-done
	for i := len(r.cleanups) - 1; i >= 0; i-- {
		r.cleanups[i]()
	}
	return r
}

func TestStart_ServesOnLoopbackUntilStopped(t *testing.T) {
	var s *Server
	r := record(t, func(r *recorder) {
		s = Start(r, append(fake("ok"), WithRole("api"), WithEnv("EXTRA=yes"))...)
		resp, err := http.Get(s.URL + "/")
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var got struct {
			Args  []string
			Extra string
		}
		if err := json.NewDecoder(resp.Body).Decode(&got); err != nil {
			t.Fatal(err)
		}
		want := []string{"serve", "--data-dir", s.DataDir, "--role", "api"}
		if !slices.Equal(got.Args, want) || got.Extra != "yes" {
			t.Errorf("server got args %q, EXTRA=%q; want %q, EXTRA=yes", got.Args, got.Extra, want)
		}
		if !strings.HasPrefix(s.URL, "http://127.0.0.1:") {
			t.Errorf("URL = %q, want loopback", s.URL)
		}
	})
	if r.Failed() {
		t.Fatalf("harness reported failures for a well-behaved server:\n%s", r.failures())
	}
	if !strings.Contains(s.Log(), "fake: stopping") {
		t.Errorf("server was not stopped with SIGTERM; log:\n%s", s.Log())
	}
}

func TestStart_FailsWithOutputWhenServerExits(t *testing.T) {
	r := record(t, func(r *recorder) { Start(r, fake("crash")...) })
	if got := r.failures(); !strings.Contains(got, "exit status 3") || !strings.Contains(got, "configuration is broken") {
		t.Errorf("failure = %q, want the exit status and the server's output", got)
	}
}

func TestStop_FailsTestOnNonZeroExit(t *testing.T) {
	r := record(t, func(r *recorder) { Start(r, fake("bad-exit")...) })
	if got := r.failures(); !strings.Contains(got, "exit status 2") {
		t.Errorf("failure = %q, want it to report exit status 2", got)
	}
}

func TestKill_DoesNotCheckExitStatus(t *testing.T) {
	r := record(t, func(r *recorder) {
		s := Start(r, fake("ok")...)
		s.Kill(r)
	})
	if r.Failed() {
		t.Errorf("Kill reported failures: %s", r.failures())
	}
}

func TestFreePort_NeverRepeats(t *testing.T) {
	seen := map[int]bool{}
	for range 20 {
		p := FreePort(t)
		if seen[p] {
			t.Fatalf("port %d handed out twice", p)
		}
		seen[p] = true
	}
}

func TestRequireTool_FindsInExtraDirs(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(dir+"/ferrotest-tool", []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	if got := RequireTool(t, "ferrotest-tool", dir+"/nowhere", dir); got != dir+"/ferrotest-tool" {
		t.Errorf("RequireTool = %q, want %q", got, dir+"/ferrotest-tool")
	}
}

func TestRequireTool_MissingToolSkipsOrFailsInCI(t *testing.T) {
	for _, tc := range []struct {
		ci                 string
		wantSkip, wantFail bool
	}{
		{ci: "", wantSkip: true},
		{ci: "true", wantFail: true},
	} {
		t.Run("CI="+tc.ci, func(t *testing.T) {
			t.Setenv("CI", tc.ci)
			r := record(t, func(r *recorder) { RequireTool(r, "ferrotest-no-such-tool") })
			if r.skipped != tc.wantSkip || r.Failed() != tc.wantFail {
				t.Errorf("skipped=%v failed=%v (%s), want skipped=%v failed=%v",
					r.skipped, r.Failed(), r.failures(), tc.wantSkip, tc.wantFail)
			}
		})
	}
}
