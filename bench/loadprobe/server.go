package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/ferrometal/ferro/internal/testing/freeport"
)

// ferroBinary returns $FERRO_BIN, or builds cmd/ferro of the module the
// probe runs in into dir.
func ferroBinary(dir string) (string, error) {
	if p := os.Getenv("FERRO_BIN"); p != "" {
		return filepath.Abs(p)
	}
	gomod, err := exec.Command("go", "env", "GOMOD").Output()
	if err != nil {
		return "", fmt.Errorf("find the module root: %w", err)
	}
	root := filepath.Dir(strings.TrimSpace(string(gomod)))
	out := filepath.Join(dir, "ferro")
	cmd := exec.Command("go", "build", "-trimpath", "-o", out, "./cmd/ferro")
	cmd.Dir = root
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	if msg, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("go build ./cmd/ferro in %s: %w\n%s", root, err, msg)
	}
	return out, nil
}

// server is a running `ferro serve` process.
type server struct {
	url  string
	cmd  *exec.Cmd
	log  *os.File
	done chan struct{}
	err  error // the process's exit, valid after done
}

// startServer runs `ferro serve` with dataDir, the API on 127.0.0.1 and a
// free port, and the given extra environment, and waits until GET /
// answers 200.
func startServer(bin, dataDir string, env []string) (*server, error) {
	port, err := freeport.Next()
	if err != nil {
		return nil, err
	}
	logf, err := os.Create(filepath.Join(dataDir, "ferro.log"))
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(bin, "serve", "--data-dir", dataDir)
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "FERRO_") {
			cmd.Env = append(cmd.Env, kv)
		}
	}
	cmd.Env = append(cmd.Env,
		"FERRO_API_HOST_IP=127.0.0.1",
		"FERRO_API_PORT="+strconv.Itoa(port),
		// No second listener for the inspector: its routes are on the API
		// port too, and a fixed port would clash with other servers.
		"FERRO_INSPECTOR_LISTEN_PORT=0",
	)
	cmd.Env = append(cmd.Env, env...)
	cmd.Dir = dataDir
	cmd.Stdout, cmd.Stderr = logf, logf
	// The server dies with the probe, even when the probe is killed.
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		logf.Close()
		return nil, fmt.Errorf("start %s: %w", bin, err)
	}
	s := &server{url: "http://127.0.0.1:" + strconv.Itoa(port), cmd: cmd, log: logf, done: make(chan struct{})}
	go func() {
		s.err = cmd.Wait()
		close(s.done)
	}()

	deadline := time.Now().Add(30 * time.Second)
	for {
		if err := getRoot(s.url); err == nil {
			return s, nil
		} else if time.Now().After(deadline) {
			s.stop()
			return nil, fmt.Errorf("ferro serve not ready after 30s: %v\n%s", err, s.logTail())
		}
		select {
		case <-s.done:
			return nil, fmt.Errorf("ferro serve exited while starting: %v\n%s", s.err, s.logTail())
		case <-time.After(20 * time.Millisecond):
		}
	}
}

func getRoot(url string) error {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url+"/", nil)
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

// stop sends SIGTERM and waits (SIGKILL after 20 s).
func (s *server) stop() error {
	defer s.log.Close()
	select {
	case <-s.done:
		return fmt.Errorf("ferro serve exited before it was stopped: %v", s.err)
	default:
	}
	_ = s.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-s.done:
		return s.err
	case <-time.After(20 * time.Second):
		_ = s.cmd.Process.Kill()
		<-s.done
		return errors.New("ferro serve did not stop within 20s of SIGTERM")
	}
}

func (s *server) logTail() string {
	b, _ := os.ReadFile(s.log.Name())
	if len(b) > 4000 {
		b = b[len(b)-4000:]
	}
	return string(b)
}

// rss is the server's resident set size (VmRSS) in bytes.
func (s *server) rss() (int64, error) {
	f, err := os.Open(fmt.Sprintf("/proc/%d/status", s.cmd.Process.Pid))
	if err != nil {
		return 0, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "VmRSS:"); ok {
			fields := strings.Fields(v) // "12345 kB"
			kb, err := strconv.ParseInt(fields[0], 10, 64)
			return kb << 10, err
		}
	}
	return 0, errors.New("no VmRSS in /proc/PID/status")
}

// cpu is the CPU time (user + system) the server has used so far.
func (s *server) cpu() (time.Duration, error) {
	return procCPU(s.cmd.Process.Pid)
}

// procCPU reads utime and stime from /proc/PID/stat.
func procCPU(pid int) (time.Duration, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, err
	}
	// The command name (field 2) may hold spaces; fields after it are plain.
	i := strings.LastIndexByte(string(b), ')')
	if i < 0 {
		return 0, errors.New("cannot parse /proc/PID/stat")
	}
	f := strings.Fields(string(b[i+1:]))
	// f[0] is field 3 (state); utime and stime are fields 14 and 15.
	if len(f) < 13 {
		return 0, errors.New("cannot parse /proc/PID/stat")
	}
	ut, err1 := strconv.ParseInt(f[11], 10, 64)
	st, err2 := strconv.ParseInt(f[12], 10, 64)
	if err := errors.Join(err1, err2); err != nil {
		return 0, err
	}
	// USER_HZ is 100 on every Linux architecture Go supports.
	return time.Duration(ut+st) * 10 * time.Millisecond, nil
}
