package vbmc

import (
	"bufio"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// Bounds of the qemu backend's waits.
const (
	qmpConnectTimeout = 30 * time.Second
	qmpCommandTimeout = 10 * time.Second
	qemuQuitTimeout   = 10 * time.Second
	maxQMPLine        = 1 << 20
)

// qemuBackend runs a machine as a QEMU process: power on starts it with the
// boot device and the inserted ISO, power off quits it (QMP quit), reset is
// QMP system_reset, or a restart when the boot device or ISO changed.
type qemuBackend struct {
	mc      MachineConfig
	q       QEMUConfig
	uuid    string
	dir     string
	log     *slog.Logger
	disks   []string
	vars    string // per-machine copy of the OVMF variable store
	console string

	proc *qemuProc // the running VM, nil when off
}

func newQEMUBackend(mc MachineConfig, uuid, dir string, log *slog.Logger) (Backend, error) {
	q := *mc.QEMU
	b := &qemuBackend{mc: mc, q: q, uuid: uuid, dir: dir, log: log, console: q.ConsoleLog}
	if b.console == "" {
		b.console = filepath.Join(dir, "console.log")
	}
	if strings.Contains(dir, ",") || strings.Contains(b.console, ",") {
		return nil, fmt.Errorf("qemu: paths with commas are not supported (%s)", dir)
	}
	if _, err := exec.LookPath(q.Binary); err != nil {
		return nil, fmt.Errorf("qemu: %w", err)
	}
	for i, gb := range mc.DisksGB {
		path := filepath.Join(dir, "disk"+strconv.Itoa(i)+".raw")
		if err := sparseFile(path, int64(gb)<<30); err != nil {
			return nil, fmt.Errorf("qemu: disk %d: %w", i, err)
		}
		b.disks = append(b.disks, path)
	}
	if q.Firmware == "uefi" {
		if _, err := os.Stat(q.OVMFCode); err != nil {
			return nil, fmt.Errorf("qemu: UEFI firmware (Debian package ovmf): %w", err)
		}
		b.vars = filepath.Join(dir, "OVMF_VARS.fd")
		if _, err := os.Stat(b.vars); errors.Is(err, os.ErrNotExist) {
			if err := copyFile(q.OVMFVars, b.vars); err != nil {
				return nil, fmt.Errorf("qemu: UEFI variable store: %w", err)
			}
		}
	}
	return b, nil
}

// sparseFile creates a raw disk image of size bytes unless one exists (a
// lab's state directory keeps its disks across restarts).
func sparseFile(path string, size int64) error {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o644)
	if errors.Is(err, os.ErrExist) {
		return nil
	}
	if err != nil {
		return err
	}
	if err := f.Truncate(size); err != nil {
		f.Close()
		os.Remove(path)
		return err
	}
	return f.Close()
}

func copyFile(from, to string) error {
	in, err := os.Open(from)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(to, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o644)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}

// qemuEscape doubles commas, QEMU's option escape.
func qemuEscape(s string) string { return strings.ReplaceAll(s, ",", ",,") }

// kvmUsable reports whether KVM can run a stock kernel here: /dev/kvm
// opens, the CPU has vmx or svm, and the module is not kvm_pvm (which runs
// only PVM guests; qemu-lab.md).
func kvmUsable() bool {
	f, err := os.OpenFile("/dev/kvm", os.O_RDWR, 0)
	if err != nil {
		return false
	}
	f.Close()
	if _, err := os.Stat("/sys/module/kvm_pvm"); err == nil {
		return false
	}
	cpuinfo, err := os.ReadFile("/proc/cpuinfo")
	if err != nil {
		return false
	}
	return regexp.MustCompile(`(?m)^flags\s*:.*\b(vmx|svm)\b`).Match(cpuinfo)
}

// bootArg is QEMU's -boot for a request: a one-time override as once=
// (QEMU falls back to the default order on the guest's next reboot),
// continuous ones as order=.
func bootArg(req BootRequest, persistent bool) string {
	dev := map[BootDevice]string{BootPxe: "n", BootHdd: "c", BootCd: "d"}[req.Device]
	switch {
	case req.Device == BootBiosSetup:
		return "order=cdn,menu=on"
	case dev == "":
		return "order=cdn"
	case persistent:
		return "order=" + dev
	default:
		return "once=" + dev + ",order=cdn"
	}
}

// args is QEMU's command line for a boot; qmp is the socket QEMU connects
// its QMP monitor to.
func (b *qemuBackend) args(req BootRequest, persistent bool, qmp string) []string {
	accel := b.q.Accel
	if accel == "auto" {
		accel = "tcg"
		if kvmUsable() {
			accel = "kvm"
		}
	}
	sku := ""
	if b.mc.SKU != "" {
		sku = ",sku=" + b.mc.SKU
	}
	a := []string{
		"-name", qemuEscape(b.mc.Name),
		"-machine", b.q.Machine,
		"-accel", accel,
		"-m", strconv.Itoa(b.mc.MemoryMB),
		"-smp", strconv.Itoa(b.mc.CPUs),
		"-uuid", b.uuid,
		"-smbios", "type=1,manufacturer=" + b.mc.Manufacturer + ",product=" + b.mc.Product + ",serial=" + b.mc.Serial + sku + ",uuid=" + b.uuid,
		"-nodefaults", "-nographic", "-monitor", "none",
		"-chardev", "file,id=console,append=on,path=" + b.console,
		"-serial", "chardev:console",
		"-chardev", "socket,id=qmp,path=" + qmp,
		"-mon", "chardev=qmp,mode=control",
	}
	uefi := b.q.Firmware == "uefi"
	if !uefi {
		a = append(a, "-boot", bootArg(req, persistent))
	}
	if accel == "tcg" {
		// RDRAND for the guest's random pool (qemu-lab.md).
		a = append(a, "-cpu", "max")
	} else {
		a = append(a, "-cpu", "host")
	}
	if b.q.Firmware == "uefi" {
		a = append(a,
			"-drive", "if=pflash,format=raw,unit=0,readonly=on,file="+qemuEscape(b.q.OVMFCode),
			"-drive", "if=pflash,format=raw,unit=1,file="+qemuEscape(b.vars))
	}
	// SeaBIOS follows -boot; OVMF follows only bootindex, so under UEFI the
	// chosen device gets bootindex 0 and the rest follow disk, CD, network.
	order := bootOrder(req.Device, len(b.disks), len(b.mc.MACs))
	bootindex := func(dev string) string {
		if !uefi {
			return ""
		}
		return ",bootindex=" + strconv.Itoa(order[dev])
	}
	for i, d := range b.disks {
		id := "disk" + strconv.Itoa(i)
		if uefi {
			a = append(a, "-drive", "file="+qemuEscape(d)+",format=raw,if=none,id="+id,
				"-device", "virtio-blk-pci,drive="+id+bootindex(id))
		} else {
			a = append(a, "-drive", "file="+qemuEscape(d)+",format=raw,if=virtio,index="+strconv.Itoa(i))
		}
	}
	cdFile := ""
	if req.ISO != "" {
		cdFile = ",format=raw,file=" + qemuEscape(req.ISO)
	}
	if uefi {
		bus := "ide.1" // pc: secondary IDE master, where -cdrom goes
		if b.q.Machine == "q35" {
			bus = "ide.2" // q35: the AHCI port -cdrom uses
		}
		a = append(a, "-drive", "if=none,id=cd0,media=cdrom,readonly=on"+cdFile,
			"-device", "ide-cd,drive=cd0,bus="+bus+bootindex("cd0"))
	} else {
		a = append(a, "-drive", "if=ide,index=2,media=cdrom,readonly=on"+cdFile)
	}
	for i, mac := range b.mc.MACs {
		id := "net" + strconv.Itoa(i)
		if len(b.q.Taps) > 0 {
			a = append(a, "-netdev", "tap,id="+id+",ifname="+b.q.Taps[i]+",script=no,downscript=no")
		} else {
			a = append(a, "-netdev", "user,id="+id+",restrict=on")
		}
		a = append(a, "-device", b.q.NICModel+",netdev="+id+",id="+id+"dev,mac="+strings.ToLower(mac)+bootindex(id))
		if b.q.OnboardNICs {
			n := strconv.Itoa(i + 1)
			a = append(a, "-smbios", "type=41,designation=Onboard LAN "+n+",kind=ethernet,instance="+n+",pcidev="+id+"dev")
		}
	}
	if b.q.IPMIDevice {
		a = append(a, "-device", "ipmi-bmc-sim,id=bmc0", "-device", "isa-ipmi-kcs,bmc=bmc0")
	}
	return append(a, b.q.ExtraArgs...)
}

// bootOrder gives each device id (disk<i>, cd0, net<i>) its bootindex: the
// chosen device's first, then disks, CD, NICs.
func bootOrder(dev BootDevice, disks, nics int) map[string]int {
	var ids []string
	for i := range disks {
		ids = append(ids, "disk"+strconv.Itoa(i))
	}
	ids = append(ids, "cd0")
	for i := range nics {
		ids = append(ids, "net"+strconv.Itoa(i))
	}
	first := map[BootDevice]string{BootPxe: "net0", BootHdd: "disk0", BootCd: "cd0"}[dev]
	order := map[string]int{}
	n := 0
	if first != "" && slices.Contains(ids, first) {
		order[first] = n
		n++
	}
	for _, id := range ids {
		if _, done := order[id]; !done {
			order[id] = n
			n++
		}
	}
	return order
}

// qemuProc is one running QEMU.
type qemuProc struct {
	cmd  *exec.Cmd
	req  BootRequest
	qmp  *qmpConn
	done chan struct{} // closed when the process has exited
	err  error         // Wait's result, valid after done
}

func (p *qemuProc) exited() bool {
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}

// kill ends the process group and waits for the process.
func (p *qemuProc) kill() {
	if p.cmd.Process != nil {
		syscall.Kill(-p.cmd.Process.Pid, syscall.SIGKILL)
	}
	<-p.done
	if p.qmp != nil {
		p.qmp.close()
	}
}

func (b *qemuBackend) PowerState(context.Context) (bool, error) {
	if b.proc != nil && b.proc.exited() {
		// The guest powered itself off (or QEMU died).
		b.log.Info("qemu exited", "status", exitString(b.proc.err))
		b.proc.kill()
		b.proc = nil
	}
	return b.proc != nil, nil
}

func exitString(err error) string {
	if err == nil {
		return "exit status 0"
	}
	return err.Error()
}

func (b *qemuBackend) PowerOn(ctx context.Context, req BootRequest) error {
	return b.start(ctx, req)
}

// start runs QEMU and waits for its QMP monitor to connect, which says the
// VM is built and running.
func (b *qemuBackend) start(ctx context.Context, req BootRequest) error {
	sock := filepath.Join(os.TempDir(), "ferro-vbmc-qmp-"+randomName()+".sock")
	ln, err := net.Listen("unix", sock)
	if err != nil {
		return fmt.Errorf("qmp socket: %w", err)
	}
	defer ln.Close() // the one connection is kept; the path is removed
	logf, err := os.OpenFile(filepath.Join(b.dir, "qemu.log"), os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644)
	if err != nil {
		return fmt.Errorf("qemu log: %w", err)
	}
	defer logf.Close()

	// A continuous override outlives the guest's own reboots; a one-time one
	// does not.
	persistent := req.Device != BootNone && req.Persistent
	args := b.args(req, persistent, sock)
	cmd := exec.Command(b.q.Binary, args...)
	cmd.Stdout, cmd.Stderr = logf, logf
	// Its own process group, killed as a whole; and killed if ferro-vbmc dies.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("start %s: %w", b.q.Binary, err)
	}
	p := &qemuProc{cmd: cmd, req: req, done: make(chan struct{})}
	go func() {
		p.err = cmd.Wait()
		close(p.done)
	}()
	b.log.Info("qemu started", "pid", cmd.Process.Pid, "boot", bootArg(req, persistent), "iso", req.ISO != "", "console", b.console)

	type accepted struct {
		c   net.Conn
		err error
	}
	acc := make(chan accepted, 1)
	go func() {
		c, err := ln.Accept()
		acc <- accepted{c, err}
	}()
	timer := time.NewTimer(qmpConnectTimeout)
	defer timer.Stop()
	var conn net.Conn
	select {
	case a := <-acc:
		if a.err != nil {
			p.kill()
			return fmt.Errorf("qmp: %w", a.err)
		}
		conn = a.c
	case <-p.done:
		ln.Close()
		return fmt.Errorf("qemu exited at start (%s); see %s", exitString(p.err), filepath.Join(b.dir, "qemu.log"))
	case <-timer.C:
		ln.Close()
		p.kill()
		return fmt.Errorf("qemu's QMP monitor did not connect within %v", qmpConnectTimeout)
	case <-ctx.Done():
		ln.Close()
		p.kill()
		return ctx.Err()
	}
	q, err := newQMP(conn)
	if err != nil {
		conn.Close()
		p.kill()
		return fmt.Errorf("qmp handshake: %w", err)
	}
	p.qmp = q
	b.proc = p
	return nil
}

func randomName() string {
	var r [6]byte
	rand.Read(r[:])
	return hex.EncodeToString(r[:])
}

func (b *qemuBackend) PowerOff(ctx context.Context) error {
	p := b.proc
	if p == nil {
		return nil
	}
	b.proc = nil
	// quit is a hard power off; kill if QEMU does not go.
	if err := p.qmp.execute(ctx, "quit", nil); err != nil && !p.exited() {
		b.log.Warn("qmp quit failed, killing qemu", "error", err)
	}
	select {
	case <-p.done:
	case <-time.After(qemuQuitTimeout):
		b.log.Warn("qemu still running after quit, killing it")
	}
	p.kill()
	b.log.Info("qemu stopped")
	return nil
}

func (b *qemuBackend) Shutdown(ctx context.Context) error {
	if b.proc == nil {
		return nil
	}
	return b.proc.qmp.execute(ctx, "system_powerdown", nil)
}

func (b *qemuBackend) Reset(ctx context.Context, req BootRequest) error {
	if b.proc == nil {
		return b.start(ctx, req)
	}
	if b.proc.req.Device == req.Device && b.proc.req.ISO == req.ISO && b.proc.req.Persistent == req.Persistent {
		return b.proc.qmp.execute(ctx, "system_reset", nil)
	}
	// Another boot device or CD: QEMU fixes both at start, so restart it.
	if err := b.PowerOff(ctx); err != nil {
		return err
	}
	return b.start(ctx, req)
}

func (b *qemuBackend) NMI(ctx context.Context) error {
	if b.proc == nil {
		return nil
	}
	return b.proc.qmp.execute(ctx, "inject-nmi", nil)
}

func (b *qemuBackend) Close() error {
	if b.proc != nil {
		b.proc.kill()
		b.proc = nil
		b.log.Info("qemu killed at exit")
	}
	return nil
}

// qmpConn is a QMP monitor connection: commands are sent one at a time (the
// Machine serialises them); a reader goroutine hands replies over and drops
// asynchronous events.
type qmpConn struct {
	conn    net.Conn
	replies chan qmpReply
	mu      sync.Mutex
	closed  chan struct{}
}

type qmpReply struct {
	Return json.RawMessage `json:"return"`
	Error  *struct {
		Class string `json:"class"`
		Desc  string `json:"desc"`
	} `json:"error"`
	Event string `json:"event"`
	QMP   any    `json:"QMP"`
}

func newQMP(conn net.Conn) (*qmpConn, error) {
	q := &qmpConn{conn: conn, replies: make(chan qmpReply, 1), closed: make(chan struct{})}
	greeting := make(chan error, 1)
	go q.read(greeting)
	select {
	case err := <-greeting:
		if err != nil {
			return nil, err
		}
	case <-time.After(qmpCommandTimeout):
		return nil, errors.New("no QMP greeting")
	}
	if err := q.execute(context.Background(), "qmp_capabilities", nil); err != nil {
		return nil, err
	}
	return q, nil
}

func (q *qmpConn) read(greeting chan<- error) {
	defer close(q.closed)
	sc := bufio.NewScanner(q.conn)
	sc.Buffer(make([]byte, 64<<10), maxQMPLine)
	first := true
	for sc.Scan() {
		var r qmpReply
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			continue
		}
		switch {
		case first && r.QMP != nil:
			first = false
			greeting <- nil
		case r.Event != "":
			// Events (RESET, POWERDOWN, SHUTDOWN…) are not waited for.
		default:
			select {
			case q.replies <- r:
			default: // a reply nobody waits for (a timed-out command)
			}
		}
	}
	if first {
		greeting <- errors.New("QMP closed before its greeting")
	}
}

// execute runs a QMP command and waits for its reply.
func (q *qmpConn) execute(ctx context.Context, cmd string, args any) error {
	q.mu.Lock()
	defer q.mu.Unlock()
	req := map[string]any{"execute": cmd}
	if args != nil {
		req["arguments"] = args
	}
	data, _ := json.Marshal(req)
	q.conn.SetWriteDeadline(time.Now().Add(qmpCommandTimeout))
	if _, err := q.conn.Write(append(data, '\n')); err != nil {
		return fmt.Errorf("qmp %s: %w", cmd, err)
	}
	timer := time.NewTimer(qmpCommandTimeout)
	defer timer.Stop()
	select {
	case r := <-q.replies:
		if r.Error != nil {
			return fmt.Errorf("qmp %s: %s: %s", cmd, r.Error.Class, r.Error.Desc)
		}
		return nil
	case <-q.closed:
		if cmd == "quit" {
			return nil // QEMU may close before it replies
		}
		return fmt.Errorf("qmp %s: monitor closed", cmd)
	case <-timer.C:
		return fmt.Errorf("qmp %s: no reply within %v", cmd, qmpCommandTimeout)
	case <-ctx.Done():
		return fmt.Errorf("qmp %s: %w", cmd, ctx.Err())
	}
}

func (q *qmpConn) close() { q.conn.Close() }
