package lifecycle_test

import (
	"context"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/ferrometal/ferro/internal/testing/ferrotest"
	"github.com/ferrometal/ferro/internal/testing/pgtest"
)

// failedAttempt is what ferro serve logs for each failed connection attempt.
const failedAttempt = "database connection failed, retrying"

// TestServe_WaitsForALatePostgreSQL: ferro serve started before its
// PostgreSQL (as under systemd, where the database often comes up later)
// retries as oslo.db does, logging each failed attempt, and starts once
// the server is up. The test waits for events: ferro's log line of a
// failed attempt, then PostgreSQL's start, then the API's answer.
func TestServe_WaitsForALatePostgreSQL(t *testing.T) {
	if !pgtest.Available() {
		ferrotest.SkipOrFail(t, "PostgreSQL lane: the server binaries are not installed")
	}
	port := ferrotest.FreePort(t)
	srv := ferrotest.Start(t, ferrotest.WithReadyCheck(nil), ferrotest.WithEnv(
		"FERRO_DATABASE_CONNECTION="+pgtest.URL(port, "postgres"),
		"FERRO_DATABASE_MAX_RETRIES=-1", "FERRO_DATABASE_RETRY_INTERVAL=1"))
	srv.WaitLog(t, failedAttempt, 60*time.Second)
	if !strings.Contains(srv.Log(), "attempts_left=unlimited") {
		t.Errorf("the failed attempt does not say how many are left:\n%s", srv.Log())
	}

	c, err := pgtest.StartClusterOn(port)
	if err != nil {
		t.Fatalf("start PostgreSQL on port %d: %v", port, err)
	}
	t.Cleanup(func() {
		if err := c.Stop(); err != nil {
			t.Errorf("stop PostgreSQL: %v", err)
		}
	})
	srv.WaitLog(t, "ferro started", 120*time.Second)
	if code, body := ferrotest.Call(t, srv.URL, http.MethodGet, "/v1/nodes", nil); code != http.StatusOK {
		t.Errorf("GET /v1/nodes: %d %s", code, body)
	}
	if !strings.Contains(srv.Log(), "database connected") {
		t.Errorf("ferro did not log the connection after the retries:\n%s", srv.Log())
	}
	srv.Stop(t) // before PostgreSQL stops: exit 0 with the database up
}

// TestServe_StopsPromptlyWhileWaitingForTheDatabase: SIGTERM and SIGINT
// end the retries at once (the next attempt would be an hour away) and
// ferro exits 0.
func TestServe_StopsPromptlyWhileWaitingForTheDatabase(t *testing.T) {
	for _, sig := range []syscall.Signal{syscall.SIGTERM, syscall.SIGINT} {
		t.Run(sig.String(), func(t *testing.T) {
			srv := ferrotest.Start(t, ferrotest.WithReadyCheck(nil), ferrotest.WithEnv(
				"FERRO_DATABASE_CONNECTION="+pgtest.URL(ferrotest.FreePort(t), "postgres"),
				"FERRO_DATABASE_MAX_RETRIES=-1", "FERRO_DATABASE_RETRY_INTERVAL=3600"))
			srv.WaitLog(t, failedAttempt, 60*time.Second)
			if err := srv.Signal(sig); err != nil {
				t.Fatal(err)
			}
			srv.WaitLog(t, "ferro stopped during start-up", 30*time.Second)
			srv.Stop(t) // fails the test unless it exited 0
		})
	}
}

// TestServe_SQLiteErrorsAreNotRetried: an SQLite file that cannot be
// opened ends the start at once even with max_retries=-1.
func TestServe_SQLiteErrorsAreNotRetried(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "not-a-directory")
	if err := os.WriteFile(file, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, ferrotest.Binary(t), "serve", "--data-dir", dir)
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "FERRO_API_HOST_IP=127.0.0.1",
		"FERRO_API_PORT=" + strconv.Itoa(ferrotest.FreePort(t)), "FERRO_INSPECTOR_LISTEN_PORT=" + strconv.Itoa(ferrotest.FreePort(t)),
		"FERRO_DATABASE_CONNECTION=sqlite://" + filepath.Join(file, "ferro.db"), "FERRO_DATABASE_MAX_RETRIES=-1"}
	out, err := cmd.CombinedOutput()
	if ctx.Err() != nil {
		t.Fatalf("ferro serve kept running on an SQLite file it cannot open:\n%s", out)
	}
	if code := cmd.ProcessState.ExitCode(); err == nil || code != 1 || !strings.Contains(string(out), "open database") {
		t.Errorf("ferro serve: exit %d, want 1 naming the database:\n%s", code, out)
	}
	if strings.Contains(string(out), failedAttempt) {
		t.Errorf("an SQLite error was retried:\n%s", out)
	}
}
