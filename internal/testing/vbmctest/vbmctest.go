// Package vbmctest starts ferro-vbmc as a real process for tests: it builds
// the binary once per test binary, writes a configuration, waits for the
// ready line, and stops the process (SIGTERM) when the test ends.
package vbmctest

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/ferrometal/ferro/internal/testing/ferrotest"
	"github.com/ferrometal/ferro/internal/vbmc"
)

// BinaryEnv names the environment variable pointing at a prebuilt
// ferro-vbmc (scripts/go-test.sh sets it to bin/ferro-vbmc).
const BinaryEnv = "FERRO_VBMC_BIN"

// readyPrefix is cmd/ferro-vbmc's ReadyPrefix.
const readyPrefix = "ferro-vbmc ready "

const (
	readyTimeout = 60 * time.Second
	stopTimeout  = 30 * time.Second
	logTail      = 64 << 10
)

// Binary returns the path of ferro-vbmc built from this checkout.
func Binary(t testing.TB) string {
	t.Helper()
	return ferrotest.Command(t, "ferro-vbmc", BinaryEnv)
}

// Config is what Start runs. Zero fields get defaults: user "admin",
// password "vbmc-secret", Redfish and every machine's IPMI on a free
// 127.0.0.1 port, a state directory under t.TempDir().
type Config struct {
	Username string
	Password string
	Machines []vbmc.MachineConfig
	// Debug runs ferro-vbmc with --debug (every request logged).
	Debug bool
	// Listen is the host the Redfish service and the IPMI endpoints
	// without an ipmi_listen bind to (default 127.0.0.1).
	Listen string
	// Netns runs ferro-vbmc, and so its QEMU machines, inside this network
	// namespace (ip netns exec), where their taps are.
	Netns string
}

// FakeMachines returns n fake machines named prefix0…, each with 2 CPUs,
// 2 GiB, one 10 GB disk and one MAC unique to (prefix, index).
func FakeMachines(prefix string, n int) []vbmc.MachineConfig {
	out := make([]vbmc.MachineConfig, n)
	seed := byte(len(prefix))
	for _, c := range prefix {
		seed = seed*31 + byte(c)
	}
	for i := range out {
		out[i] = vbmc.MachineConfig{
			Name:     prefix + strconv.Itoa(i),
			Backend:  vbmc.BackendFake,
			CPUs:     2,
			MemoryMB: 2048,
			MACs:     []string{fmt.Sprintf("52:54:%02x:%02x:%02x:%02x", seed, byte(i>>16), byte(i>>8), byte(i))},
			DisksGB:  []int{10},
		}
	}
	return out
}

// VBMC is a running ferro-vbmc.
type VBMC struct {
	// RedfishURL is the service's base URL (http://127.0.0.1:port).
	RedfishURL string
	// IPMI maps each machine to its IPMI endpoint.
	IPMI     map[string]Endpoint
	Username string
	Password string
	// ConfigPath is the configuration file it runs with.
	ConfigPath string
	// StateDir holds the machines' images, disks and console logs.
	StateDir string

	cmd      *exec.Cmd
	out      *logBuffer
	done     chan struct{}
	waitErr  error
	stopOnce sync.Once
}

// Endpoint is a machine's IPMI address.
type Endpoint struct {
	Host string
	Port int
}

// String is host:port.
func (e Endpoint) String() string { return net.JoinHostPort(e.Host, strconv.Itoa(e.Port)) }

// Start runs ferro-vbmc with cfg and returns once it is serving; the test
// fails (with the process's output) if it exits or is not ready in 60 s.
func Start(t testing.TB, cfg Config) *VBMC {
	t.Helper()
	bin := Binary(t)
	if cfg.Username == "" {
		cfg.Username = "admin"
	}
	if cfg.Password == "" {
		cfg.Password = "vbmc-secret"
	}
	dir := t.TempDir()
	if cfg.Listen == "" {
		cfg.Listen = "127.0.0.1"
	}
	file := vbmc.Config{
		Username: cfg.Username,
		Password: cfg.Password,
		Redfish:  vbmc.RedfishConfig{Listen: net.JoinHostPort(cfg.Listen, "0")},
		StateDir: filepath.Join(dir, "state"),
		Machines: make([]vbmc.MachineConfig, len(cfg.Machines)),
	}
	copy(file.Machines, cfg.Machines)
	for i := range file.Machines {
		if file.Machines[i].IPMIListen == "" {
			file.Machines[i].IPMIListen = net.JoinHostPort(cfg.Listen, "0")
		}
	}
	data, err := json.MarshalIndent(file, "", "  ")
	if err != nil {
		t.Fatalf("encode ferro-vbmc config: %v", err)
	}
	v := &VBMC{
		Username:   cfg.Username,
		Password:   cfg.Password,
		ConfigPath: filepath.Join(dir, "vbmc.json"),
		StateDir:   file.StateDir,
		out:        &logBuffer{},
		done:       make(chan struct{}),
	}
	if err := os.WriteFile(v.ConfigPath, data, 0o600); err != nil {
		t.Fatalf("write ferro-vbmc config: %v", err)
	}
	args := []string{"serve", "--config", v.ConfigPath}
	if cfg.Debug {
		args = append(args, "--debug")
	}
	v.cmd = exec.Command(bin, args...)
	if cfg.Netns != "" {
		v.cmd = exec.Command("ip", append([]string{"netns", "exec", cfg.Netns, bin}, args...)...)
	}
	v.cmd.Stderr = v.out
	setProcAttr(v.cmd)
	stdout, err := v.cmd.StdoutPipe()
	if err != nil {
		t.Fatalf("ferro-vbmc stdout: %v", err)
	}
	if err := v.cmd.Start(); err != nil {
		t.Fatalf("start ferro-vbmc: %v", err)
	}
	readyc := make(chan vbmc.Ready, 1)
	// Stdout is read to its end (the ready line, then anything else) so the
	// process never blocks on a full pipe; Wait runs after it is drained.
	go func() {
		sc := bufio.NewScanner(stdout)
		sc.Buffer(make([]byte, 64<<10), 4<<20)
		for sc.Scan() {
			line := sc.Text()
			if rest, ok := strings.CutPrefix(line, readyPrefix); ok {
				var rd vbmc.Ready
				if err := json.Unmarshal([]byte(rest), &rd); err == nil {
					readyc <- rd
				} else {
					fmt.Fprintf(v.out, "vbmctest: bad ready line %q: %v\n", line, err)
				}
				continue
			}
			fmt.Fprintln(v.out, line)
		}
		io.Copy(io.Discard, stdout)
		v.waitErr = v.cmd.Wait()
		close(v.done)
	}()
	t.Cleanup(func() { v.Stop(t) })

	select {
	case rd := <-readyc:
		v.RedfishURL = rd.RedfishURL
		v.IPMI = map[string]Endpoint{}
		for name, addr := range rd.IPMI {
			host, port, err := net.SplitHostPort(addr)
			if err != nil {
				t.Fatalf("ferro-vbmc ready line: ipmi address %q: %v", addr, err)
			}
			p, _ := strconv.Atoi(port)
			v.IPMI[name] = Endpoint{Host: host, Port: p}
		}
		return v
	case <-v.done:
		v.markStopped()
		t.Fatalf("ferro-vbmc exited before it was ready: %v\n%s", exitStatus(v.waitErr), v.logTail())
	case <-time.After(readyTimeout):
		t.Fatalf("ferro-vbmc not ready after %v\n%s", readyTimeout, v.logTail())
	}
	return nil
}

// Log returns what ferro-vbmc has written so far.
func (v *VBMC) Log() string { return v.out.String() }

func (v *VBMC) logTail() string {
	l := v.Log()
	if len(l) > logTail {
		l = "…" + l[len(l)-logTail:]
	}
	return l
}

// Stop sends SIGTERM and waits for a clean exit (it is called when the test
// ends; only the first call acts). A non-zero exit, an exit before Stop, or
// no exit within 30 s fails the test.
func (v *VBMC) Stop(t testing.TB) {
	t.Helper()
	v.stopOnce.Do(func() {
		select {
		case <-v.done:
			t.Errorf("ferro-vbmc exited before the test stopped it: %v\n%s", exitStatus(v.waitErr), v.logTail())
			return
		default:
		}
		if err := v.cmd.Process.Signal(syscall.SIGTERM); err != nil {
			t.Errorf("send SIGTERM to ferro-vbmc: %v", err)
		}
		select {
		case <-v.done:
		case <-time.After(stopTimeout):
			t.Errorf("ferro-vbmc still running %v after SIGTERM; sending SIGKILL", stopTimeout)
			_ = v.cmd.Process.Kill()
			<-v.done
			return
		}
		if v.waitErr != nil {
			t.Errorf("ferro-vbmc did not exit cleanly on SIGTERM: %v\n%s", exitStatus(v.waitErr), v.logTail())
		}
	})
}

func (v *VBMC) markStopped() { v.stopOnce.Do(func() {}) }

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

type logBuffer struct {
	mu  sync.Mutex
	buf strings.Builder
}

func (b *logBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *logBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}
