package vm_test

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"syscall"
	"testing"

	"github.com/ferrometal/ferro/internal/testing/ferrotest"
)

// vm is a QEMU machine on a tap of the lab's bridge.
type vm struct {
	cmd    *exec.Cmd
	serial string
	out    bytes.Buffer
	done   chan struct{}
}

// startVM boots a BIOS machine from the network with one virtio NIC.
func (l *lab) startVM(t *testing.T, tap, mac string, extra ...string) *vm {
	t.Helper()
	qemu := ferrotest.RequireTool(t, "qemu-system-x86_64")
	l.ns.AddTap(tap)
	v := &vm{serial: filepath.Join(t.TempDir(), "serial.log"), done: make(chan struct{})}
	args := append([]string{"-machine", "pc", "-accel", "tcg", "-cpu", "max", "-m", "256", "-smp", "1",
		"-display", "none", "-vga", "none", "-monitor", "none", "-no-reboot",
		"-serial", "file:" + v.serial,
		"-netdev", "tap,id=n0,ifname=" + tap + ",script=no,downscript=no",
		"-device", "virtio-net-pci,netdev=n0,mac=" + mac + ",bootindex=1", "-boot", "n"}, extra...)
	v.cmd = l.ns.Command(qemu, args...)
	v.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	v.cmd.Stdout, v.cmd.Stderr = &v.out, &v.out
	if err := v.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { v.cmd.Wait(); close(v.done) }()
	t.Cleanup(func() {
		v.stop()
		if t.Failed() {
			t.Logf("qemu %s output: %s\nserial console tail:\n%s", tap, v.out.String(), v.tail(3000))
		}
	})
	return v
}

func (v *vm) stop() {
	syscall.Kill(-v.cmd.Process.Pid, syscall.SIGKILL)
	<-v.done
}

var ansiRE = regexp.MustCompile(`\x1b\[[0-9;?]*[A-Za-z]|\x1b[()][A-Z0-9]|\r`)

func (v *vm) tail(n int) string {
	b, _ := os.ReadFile(v.serial)
	return tail(string(ansiRE.ReplaceAll(b, nil)), n)
}
