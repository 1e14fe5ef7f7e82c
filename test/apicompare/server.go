package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// server is one `ferro serve` process on its embedded defaults: a fresh
// data directory (SQLite), noauth, the API and the inspector on free
// loopback ports, nothing else configured.
type server struct {
	name string
	url  string
	dir  string
	cmd  *exec.Cmd
	out  *lockedBuffer
	done chan struct{}
	err  error // the process's exit, valid once done is closed
}

// lockedBuffer collects the server's output.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// freePort asks the kernel for a loopback port that is free now.
func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// startServer runs bin as `ferro serve --data-dir DIR` and waits until its
// API answers GET / and its conductor is alive, so that the drivers list is
// the same on every run.
func startServer(ctx context.Context, name, bin, parent string) (*server, error) {
	dir, err := os.MkdirTemp(parent, name+"-")
	if err != nil {
		return nil, err
	}
	apiPort, err := freePort()
	if err != nil {
		return nil, err
	}
	inspPort, err := freePort()
	if err != nil {
		return nil, err
	}
	s := &server{name: name, url: "http://127.0.0.1:" + strconv.Itoa(apiPort), dir: dir,
		out: &lockedBuffer{}, done: make(chan struct{})}
	s.cmd = exec.Command(bin, "serve", "--data-dir", dir)
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "FERRO_") {
			env = append(env, kv)
		}
	}
	s.cmd.Env = append(env,
		"FERRO_API_HOST_IP=127.0.0.1",
		"FERRO_API_PORT="+strconv.Itoa(apiPort),
		"FERRO_INSPECTOR_LISTEN_ADDRESS=127.0.0.1",
		"FERRO_INSPECTOR_LISTEN_PORT="+strconv.Itoa(inspPort),
	)
	s.cmd.Dir = dir
	s.cmd.Stdout, s.cmd.Stderr = s.out, s.out
	s.cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := s.cmd.Start(); err != nil {
		return nil, fmt.Errorf("start %s: %w", bin, err)
	}
	go func() { s.err = s.cmd.Wait(); close(s.done) }()
	ctx, cancel := context.WithTimeout(ctx, 60*time.Second)
	defer cancel()
	for {
		if err := s.ready(ctx); err == nil {
			return s, nil
		}
		select {
		case <-s.done:
			return nil, fmt.Errorf("%s exited before it was ready: %v\n%s", name, s.err, s.out)
		case <-ctx.Done():
			s.stop()
			return nil, fmt.Errorf("%s not ready after 60 s\n%s", name, s.out)
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// ready reports whether the API answers and lists a live conductor.
func (s *server) ready(ctx context.Context) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, s.url+"/v1/conductors", nil)
	if err != nil {
		return err
	}
	req.Header.Set("X-OpenStack-Ironic-API-Version", "latest")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	var b bytes.Buffer
	_, _ = b.ReadFrom(resp.Body)
	if resp.StatusCode != http.StatusOK || !strings.Contains(b.String(), `"alive": true`) {
		return errors.New("no live conductor yet")
	}
	return nil
}

// stop sends SIGTERM, then SIGKILL after 15 s, and removes the data
// directory.
func (s *server) stop() {
	_ = s.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-s.done:
	case <-time.After(15 * time.Second):
		_ = s.cmd.Process.Kill()
		<-s.done
	}
	_ = os.RemoveAll(s.dir)
}
