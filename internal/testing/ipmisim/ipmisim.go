// Package ipmisim runs Debian's OpenIPMI BMC simulator, ipmi_sim, for tests:
// an independent BMC that ferro's IPMI client and driver talk to over real
// UDP. The harness writes ipmi_sim's lan.conf and emulator command file, puts
// it on a free loopback UDP port with one administrator user, and hands the
// chassis to a small shell script (ipmi_sim's chassis_control) that records
// the power state and the boot device in files the test reads. ipmi_sim runs
// with message debugging on (-d -d): every request it receives, with its
// netfn, command and data bytes, and the time of its response, is in its
// output, which Messages parses. Tests check what the simulator saw and
// holds, not what ferro believes.
//
// What ipmi_sim (OpenIPMI 2.0.33) does not do, so tests cannot check it here:
// RMCP+ cipher suite 17 (RAKP-HMAC-SHA256; it answers "invalid
// authentication algorithm"), Set System Boot Options parameter 0 (set in
// progress; it answers "invalid data field"), and keeping the valid,
// persistent and EFI bits of the boot flags (it stores only the device and
// reads back data byte 1 as zero). The bits ferro sent are in Messages.
//
// Needs the Debian package openipmi; without it Start skips the test, or
// fails it with CI=true.
package ipmisim

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/ferrometal/ferro/internal/testing/ferrotest"
)

const (
	readyTimeout = 10 * time.Second
	stopTimeout  = 5 * time.Second
)

// Sim is a running ipmi_sim.
type Sim struct {
	Address  string // 127.0.0.1
	Port     int    // UDP
	Username string
	Password string

	dir    string
	cmd    *exec.Cmd
	stdin  *os.File
	out    *logBuffer
	exited chan struct{}
}

// Option changes the simulated BMC.
type Option func(*config)

type config struct {
	user, password string
	powerOn        bool
	powerDelay     time.Duration
	stuck          bool
	quiet          bool
	vm             bool
}

// WithQEMUChassis sets ipmi_sim up as its documentation sets it up for a
// QEMU machine (OpenIPMI's README.vm and ipmi_lan(5)): a "serial 15 … codec
// VM" channel and a startcmd, no chassis_control. The startcmd here is a
// stand-in for QEMU that connects to that channel as QEMU's
// ipmi-bmc-extern chardev does, and power off kills it — and, as with the
// documented setup, ipmi_sim answers Set System Boot Options parameter 5
// (the boot device) with completion code 0xcc, invalid data field.
// PowerOn reads whether the stand-in runs (ipmi_sim itself reports on as
// soon as it started it); BootDevice has nothing to read.
func WithQEMUChassis() Option { return func(c *config) { c.vm = true } }

// WithQuiet runs ipmi_sim without message debugging (for benchmarks):
// Messages and Sessions then see nothing.
func WithQuiet() Option { return func(c *config) { c.quiet = true } }

// WithCredentials sets the administrator's user name and password
// (letters and digits only; default admin / ferro-sim-password).
func WithCredentials(user, password string) Option {
	return func(c *config) { c.user, c.password = user, password }
}

// WithPowerOn starts the chassis powered on.
func WithPowerOn() Option { return func(c *config) { c.powerOn = true } }

// WithPowerDelay makes power changes take effect d after the command, like
// a real server, so a client must poll for the new state.
func WithPowerDelay(d time.Duration) Option { return func(c *config) { c.powerDelay = d } }

// WithStuckPower makes the chassis accept power commands and never change
// state: a BMC that never confirms.
func WithStuckPower() Option { return func(c *config) { c.stuck = true } }

// Start runs ipmi_sim for t and stops it when t ends.
func Start(t testing.TB, opts ...Option) *Sim {
	t.Helper()
	bin := ferrotest.RequireTool(t, "ipmi_sim", "/usr/bin")
	s, err := run(bin, t.TempDir(), opts)
	if err != nil {
		t.Fatalf("ipmisim: %v", err)
	}
	t.Cleanup(func() {
		s.stop()
		if t.Failed() {
			t.Logf("ipmi_sim output (tail):\n%s", tail(s.out.String(), 6000))
		}
	})
	return s
}

// Run starts ipmi_sim outside a test (benchmarks) in dir, which must
// exist; Close stops it.
func Run(dir string, opts ...Option) (*Sim, error) {
	bin, err := exec.LookPath("ipmi_sim")
	if err != nil {
		return nil, fmt.Errorf("ipmi_sim not found (Debian package openipmi): %w", err)
	}
	return run(bin, dir, opts)
}

// Close stops a simulator started with Run.
func (s *Sim) Close() { s.stop() }

func run(bin, dir string, opts []Option) (*Sim, error) {
	cfg := config{user: "admin", password: "ferrosimpassword"}
	for _, o := range opts {
		o(&cfg)
	}
	// The free port can be taken by another process before ipmi_sim binds
	// it (tests run in parallel); try another one then.
	for attempt := 1; ; attempt++ {
		s := &Sim{Address: "127.0.0.1", Username: cfg.user, Password: cfg.password, dir: dir,
			out: &logBuffer{}, exited: make(chan struct{})}
		port, err := freeUDPPort()
		if err != nil {
			return nil, err
		}
		s.Port = port
		if err := s.write(cfg); err != nil {
			return nil, err
		}
		if err := s.start(bin, cfg.quiet); err != nil {
			return nil, err
		}
		if err := s.waitReady(); err != nil {
			s.stop()
			if attempt < 5 && strings.Contains(s.out.String(), "Address already in use") {
				continue
			}
			return nil, fmt.Errorf("%w\nipmi_sim output:\n%s", err, tail(s.out.String(), 6000))
		}
		return s, nil
	}
}

func freeUDPPort() (int, error) {
	c, err := net.ListenPacket("udp4", "127.0.0.1:0")
	if err != nil {
		return 0, fmt.Errorf("find a free UDP port: %w", err)
	}
	defer c.Close()
	return c.LocalAddr().(*net.UDPAddr).Port, nil
}

// chassisScript is ipmi_sim's chassis_control program: called as
// "<script> <mc> get power|boot" or "<script> <mc> set <parm> <value>…". It
// keeps the power state (1 or 0) in "power" and the boot device (none,
// pxe, default, cdrom, bios) in "boot", and appends each call to "calls".
const chassisScript = `#!/bin/sh
dir=%[1]q
delay=%[2]q
stuck=%[3]q
echo "$*" >> "$dir/calls"
shift
op=$1
shift
setpower() {
	[ "$stuck" = 1 ] && return
	if [ "$delay" = 0 ]; then
		echo "$1" > "$dir/power.new" && mv "$dir/power.new" "$dir/power"
	else
		( sleep "$delay"; echo "$1" > "$dir/power.new" && mv "$dir/power.new" "$dir/power" ) >/dev/null 2>&1 &
	fi
}
case $op in
get)
	for p in "$@"; do
		case $p in
		power) echo "power:$(cat "$dir/power")" ;;
		boot) echo "boot:$(cat "$dir/boot")" ;;
		*) echo "invalid parameter $p"; exit 1 ;;
		esac
	done
	;;
set)
	while [ $# -ge 2 ]; do
		case $1 in
		power) setpower "$2" ;;
		reset) echo reset >> "$dir/resets" ;;
		shutdown) setpower 0 ;;
		boot) echo "$2" > "$dir/boot" ;;
		identify) shift ;;
		*) echo "invalid parameter $1"; exit 1 ;;
		esac
		shift 2
	done
	;;
*) echo "unknown operation $op"; exit 1 ;;
esac
`

// vmScript is WithQEMUChassis's startcmd: it records its pid (kept
// through exec) and holds a connection to the VM channel, as QEMU would,
// until ipmi_sim kills it at power off.
const vmScript = `#!/bin/bash
echo $$ > %[1]q
exec 3<>/dev/tcp/%[2]s/%[3]d
exec cat <&3 >/dev/null
`

func freeTCPPort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, fmt.Errorf("find a free TCP port: %w", err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

func (s *Sim) write(cfg config) error {
	power := "0"
	if cfg.powerOn {
		power = "1"
	}
	stuck := "0"
	if cfg.stuck {
		stuck = "1"
	}
	delay := strconv.FormatFloat(cfg.powerDelay.Seconds(), 'f', 3, 64)
	if cfg.powerDelay == 0 {
		delay = "0"
	}
	for _, v := range []string{cfg.user, cfg.password} {
		if v == "" || strings.ContainsAny(v, "\" \t\n\\") {
			return fmt.Errorf("user name and password must be plain words, got %q", v)
		}
	}
	chassis := fmt.Sprintf(`  chassis_control "%s 0x20"
`, filepath.Join(s.dir, "chassis.sh"))
	if cfg.vm {
		vmPort, err := freeTCPPort()
		if err != nil {
			return err
		}
		chassis = fmt.Sprintf(`  serial 15 %[1]s %[2]d codec VM
  startcmd "%[3]s"
  startnow %[4]v
  poweroff_wait 1
  kill_wait 1
`, s.Address, vmPort, filepath.Join(s.dir, "vm.sh"), cfg.powerOn)
		vm := fmt.Sprintf(vmScript, filepath.Join(s.dir, "vm.pid"), s.Address, vmPort)
		if err := os.WriteFile(filepath.Join(s.dir, "vm.sh"), []byte(vm), 0o700); err != nil {
			return err
		}
	}
	files := map[string]string{
		"power":      power + "\n",
		"boot":       "none\n",
		"chassis.sh": fmt.Sprintf(chassisScript, s.dir, delay, stuck),
		"sim.emu": `mc_setbmc 0x20
mc_add 0x20 0 no-device-sdrs 0x23 9 8 0x9f 0x1291 0xf02
mc_enable 0x20
`,
		"lan.conf": fmt.Sprintf(`name "ferrosim"
set_working_mc 0x20
  startlan 1
    addr %s %d
    priv_limit admin
    allowed_auths_callback md5 straight
    allowed_auths_user md5 straight
    allowed_auths_operator md5 straight
    allowed_auths_admin md5 straight
    guid a123456789abcdefa123456789abcdef
  endlan
%s  user 2 true "%s" "%s" admin 10 md5 straight
`, s.Address, s.Port, chassis, cfg.user, cfg.password),
	}
	for name, content := range files {
		mode := os.FileMode(0o600)
		if name == "chassis.sh" {
			mode = 0o700
		}
		if err := os.WriteFile(filepath.Join(s.dir, name), []byte(content), mode); err != nil {
			return err
		}
	}
	// A retry after a port clash writes into the same directory: the state
	// and call logs of the attempt that failed go first.
	for _, name := range []string{"state", "calls", "resets"} {
		if err := os.RemoveAll(filepath.Join(s.dir, name)); err != nil {
			return err
		}
	}
	return os.Mkdir(filepath.Join(s.dir, "state"), 0o700)
}

func (s *Sim) start(bin string, quiet bool) error {
	// ipmi_sim reads emulator commands from stdin and exits when it
	// closes; the pipe stays open until stop.
	r, w, err := os.Pipe()
	if err != nil {
		return err
	}
	args := []string{"-c", filepath.Join(s.dir, "lan.conf"), "-f", filepath.Join(s.dir, "sim.emu"),
		"-s", filepath.Join(s.dir, "state")}
	if !quiet {
		args = append(args, "-d", "-d")
	}
	cmd := exec.Command(bin, args...)
	cmd.Dir = s.dir
	cmd.Stdin = r
	cmd.Stdout = s.out
	cmd.Stderr = s.out
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		r.Close()
		w.Close()
		return fmt.Errorf("start ipmi_sim: %w", err)
	}
	r.Close()
	s.cmd, s.stdin = cmd, w
	go func() {
		_ = cmd.Wait()
		close(s.exited)
	}()
	return nil
}

// waitReady waits until ipmi_sim holds its UDP port. There is no event
// to wait on, so it polls briefly.
func (s *Sim) waitReady() error {
	deadline := time.Now().Add(readyTimeout)
	for {
		select {
		case <-s.exited:
			return errors.New("ipmi_sim exited during start-up")
		default:
		}
		c, err := net.ListenPacket("udp4", net.JoinHostPort(s.Address, strconv.Itoa(s.Port)))
		if err != nil {
			return nil // bound by ipmi_sim
		}
		c.Close()
		if time.Now().After(deadline) {
			return fmt.Errorf("ipmi_sim did not bind UDP port %d within %v", s.Port, readyTimeout)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func (s *Sim) stop() {
	if s.cmd == nil {
		return
	}
	s.stdin.Close()
	_ = syscall.Kill(-s.cmd.Process.Pid, syscall.SIGTERM)
	select {
	case <-s.exited:
	case <-time.After(stopTimeout):
		_ = syscall.Kill(-s.cmd.Process.Pid, syscall.SIGKILL)
		<-s.exited
	}
}

// PowerOn reports the chassis power state the simulator holds (with
// WithQEMUChassis: whether the QEMU stand-in runs).
func (s *Sim) PowerOn(t testing.TB) bool {
	t.Helper()
	if _, err := os.Stat(filepath.Join(s.dir, "vm.sh")); err == nil {
		b, err := os.ReadFile(filepath.Join(s.dir, "vm.pid"))
		if errors.Is(err, os.ErrNotExist) {
			return false
		} else if err != nil {
			t.Fatalf("ipmisim: %v", err)
		}
		// Running, not a zombie ipmi_sim has yet to reap.
		stat, err := os.ReadFile(filepath.Join("/proc", strings.TrimSpace(string(b)), "stat"))
		if err != nil {
			return false
		}
		_, rest, _ := strings.Cut(string(stat), ") ")
		return !strings.HasPrefix(rest, "Z") && !strings.HasPrefix(rest, "X")
	}
	return s.read(t, "power") == "1"
}

// BootDevice is the boot device ipmi_sim passed to its chassis control:
// none, pxe, default (disk), cdrom or bios.
func (s *Sim) BootDevice(t testing.TB) string {
	t.Helper()
	return s.read(t, "boot")
}

// Resets counts hard resets the chassis received.
func (s *Sim) Resets(t testing.TB) int {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(s.dir, "resets"))
	if errors.Is(err, os.ErrNotExist) {
		return 0
	} else if err != nil {
		t.Fatalf("ipmisim: %v", err)
	}
	return bytes.Count(b, []byte("\n"))
}

func (s *Sim) read(t testing.TB, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(s.dir, name))
	if err != nil {
		t.Fatalf("ipmisim: %v", err)
	}
	return strings.TrimSpace(string(b))
}

// Output is ipmi_sim's output so far.
func (s *Sim) Output() string { return s.out.String() }

// Message is one request ipmi_sim received, from its debug log.
type Message struct {
	NetFn, Cmd  uint8
	Data        []byte
	RespondedAt time.Time // ipmi_sim's timestamp of its response
	Response    []byte    // completion code first
}

// IPMI network functions and commands that tests look for.
const (
	NetFnChassis             = 0x00
	CmdGetChassisStatus      = 0x01
	CmdChassisControl        = 0x02
	CmdSetSystemBootOptions  = 0x08
	CmdGetSystemBootOptions  = 0x09
	NetFnApp                 = 0x06
	CmdSetSessionPrivilege   = 0x3b
	CmdCloseSession          = 0x3c
	CmdGetChannelAuthCapable = 0x38
)

var msgHeader = regexp.MustCompile(`netfn=0x([0-9a-f]+) cmd=0x([0-9a-f]+)`)

// Messages parses the requests ipmi_sim logged so far, in order.
func (s *Sim) Messages() []Message {
	var (
		out  []Message
		cur  *Message
		want string // "", "header", "data", "response"
	)
	sc := bufio.NewScanner(strings.NewReader(s.out.String()))
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		line := strings.TrimLeft(strings.TrimSpace(strings.ReplaceAll(sc.Text(), "\r", "")), "> ")
		switch {
		case strings.HasPrefix(line, "Receive message:"):
			cur, want = &Message{}, "header"
		case cur == nil:
		case want == "header":
			if m := msgHeader.FindStringSubmatch(line); m != nil {
				nf, _ := strconv.ParseUint(m[1], 16, 8)
				cmd, _ := strconv.ParseUint(m[2], 16, 8)
				cur.NetFn, cur.Cmd = uint8(nf), uint8(cmd)
			}
			if strings.HasPrefix(line, "rq_lun=") {
				want = "data"
			}
		case strings.HasPrefix(line, "Response message:"):
			f := strings.Fields(line)
			if ts, err := strconv.ParseFloat(f[len(f)-1], 64); err == nil {
				sec := int64(ts)
				cur.RespondedAt = time.Unix(sec, int64((ts-float64(sec))*1e9))
			}
			want = "response"
		case want == "data":
			cur.Data = hexBytes(line)
		case want == "response":
			cur.Response = hexBytes(line)
			out = append(out, *cur)
			cur, want = nil, ""
		}
	}
	return out
}

// Sessions counts the sessions ipmi_sim activated (IPMI 2.0 and 1.5).
func (s *Sim) Sessions() int {
	out := s.out.String()
	return strings.Count(out, "Activate session: Session started") + strings.Count(out, "Activate session: Session opened")
}

// SessionsClosed counts the sessions a client closed (Close Session).
func (s *Sim) SessionsClosed() int {
	return strings.Count(s.out.String(), "Session closed: Closed due to request")
}

func hexBytes(line string) []byte {
	var b []byte
	for _, f := range strings.Fields(line) {
		v, err := strconv.ParseUint(f, 16, 8)
		if err != nil {
			return b
		}
		b = append(b, byte(v))
	}
	return b
}

func tail(s string, n int) string {
	if len(s) > n {
		return s[len(s)-n:]
	}
	return s
}

// Wait waits until cond holds, re-checking it whenever ipmi_sim writes to
// its log (its log lags behind its answers: exec copies it through a pipe).
func (s *Sim) Wait(t testing.TB, what string, cond func() bool) {
	t.Helper()
	timeout := time.NewTimer(10 * time.Second)
	defer timeout.Stop()
	for {
		changed := s.out.changed()
		if cond() {
			return
		}
		select {
		case <-changed:
		case <-timeout.C:
			t.Fatalf("ipmisim: waited 10s for %s\nipmi_sim output (tail):\n%s", what, tail(s.out.String(), 4000))
		}
	}
}

type logBuffer struct {
	mu   sync.Mutex
	buf  bytes.Buffer
	wake chan struct{} // closed at the next write
}

func (b *logBuffer) changed() <-chan struct{} {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.wake == nil {
		b.wake = make(chan struct{})
	}
	return b.wake
}

func (b *logBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.wake != nil {
		close(b.wake)
		b.wake = nil
	}
	if b.buf.Len() > 64<<20 {
		return len(p), nil // bounded: a runaway log stops growing
	}
	return b.buf.Write(p)
}

func (b *logBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}
