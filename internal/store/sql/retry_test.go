package sql_test

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	sqlstore "github.com/ferrometal/ferro/internal/store/sql"
	"github.com/ferrometal/ferro/internal/testing/pgtest"
)

// syncBuffer is a log sink the retry loop writes while the test reads.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// refusedPort is a TCP port on 127.0.0.1 where nobody listens.
func refusedPort(t *testing.T) int {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	return port
}

// A PostgreSQL nobody answers for is tried max_retries times, each failure
// logged with the attempts left, as oslo.db does; then Open fails.
func TestOpen_RetriesAnUnansweredPostgreSQL(t *testing.T) {
	var log syncBuffer
	dsn := fmt.Sprintf("postgres://ferro:s3cret@127.0.0.1:%d/ferro?sslmode=disable", refusedPort(t))
	_, err := sqlstore.Open(context.Background(), dsn, sqlstore.WithLogger(slog.New(slog.NewTextHandler(&log, nil))),
		sqlstore.WithConnectRetries(3, time.Millisecond))
	if err == nil || !strings.Contains(err.Error(), "connection refused") {
		t.Fatalf("Open = %v, want the refusal", err)
	}
	if n := strings.Count(log.String(), "database connection failed, retrying"); n != 2 {
		t.Errorf("logged %d retries, want 2 (3 attempts):\n%s", n, log.String())
	}
	for _, want := range []string{"attempts_left=2", "attempts_left=1"} {
		if !strings.Contains(log.String(), want) {
			t.Errorf("the log lacks %s:\n%s", want, log.String())
		}
	}
	if strings.Contains(log.String()+err.Error(), "s3cret") {
		t.Errorf("the password is logged")
	}
}

// Retrying forever ends when the context does.
func TestOpen_RetriesUntilTheContextEnds(t *testing.T) {
	var log syncBuffer
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		_, err := sqlstore.Open(ctx, fmt.Sprintf("postgres://ferro@127.0.0.1:%d/ferro", refusedPort(t)),
			sqlstore.WithLogger(slog.New(slog.NewTextHandler(&log, nil))), sqlstore.WithConnectRetries(-1, time.Hour))
		done <- err
	}()
	deadline := time.Now().Add(30 * time.Second)
	for !strings.Contains(log.String(), "attempts_left=unlimited") {
		if time.Now().After(deadline) {
			t.Fatalf("no failed attempt logged:\n%s", log.String())
		}
		time.Sleep(10 * time.Millisecond)
	}
	cancel()
	if err := <-done; err == nil || !strings.Contains(err.Error(), "gave up") {
		t.Errorf("Open = %v, want it to give up when the context ends", err)
	}
}

// What a later server would not mend fails at once: a database that does
// not exist, and every SQLite error (a path under a regular file).
func TestOpen_DoesNotRetryWhatRetryingCannotMend(t *testing.T) {
	file := filepath.Join(t.TempDir(), "plain-file")
	if err := os.WriteFile(file, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	conns := []string{"sqlite://" + filepath.Join(file, "ferro.db")}
	if pgtest.Available() || os.Getenv("CI") == "true" {
		dsn := pgtest.Start(t)
		i := strings.LastIndex(dsn, "/")
		q := strings.Index(dsn[i:], "?")
		conns = append(conns, dsn[:i]+"/ferro_no_such_database"+dsn[i+q:])
	}
	for _, conn := range conns {
		var log syncBuffer
		_, err := sqlstore.Open(context.Background(), conn, sqlstore.WithLogger(slog.New(slog.NewTextHandler(&log, nil))),
			sqlstore.WithConnectRetries(-1, time.Hour))
		if err == nil {
			t.Errorf("Open(%s) succeeded", conn)
		}
		if strings.Contains(log.String(), "retrying") {
			t.Errorf("Open(%s) retried %v:\n%s", conn, err, log.String())
		}
	}
}
