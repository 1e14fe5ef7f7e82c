// Package boottest gives boot tests what they need to boot something real:
// the Debian kernel (downloaded once with apt-get and cached under the
// user cache directory, by package ramdisk), a tiny initramfs whose /init prints a marker from
// the kernel command line and powers off, and a QEMU runner that waits for
// a line on the serial console.
package boottest

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/ferrometal/ferro/internal/ramdisk"
	"github.com/ferrometal/ferro/internal/testing/ferrotest"
)

// MarkerPrefix starts the line the marker /init prints: "FERRO-INIT <v>"
// for the kernel parameter ferro.marker=<v>.
const MarkerPrefix = "FERRO-INIT "

// DebianKernel returns the path of the kernel of Debian's linux-image-amd64,
// fetched by ramdisk.FetchDebianKernel into ramdisk.DefaultKernelCache the
// first time: the cache `ferro ramdisk build` and the VM lanes use too.
func DebianKernel(t testing.TB) string {
	t.Helper()
	ferrotest.RequireTool(t, "apt-get")
	ferrotest.RequireTool(t, "dpkg-deb")
	k, err := ramdisk.FetchDebianKernel(t.Context(), ramdisk.DefaultKernelCache(), "")
	if err != nil {
		ferrotest.SkipOrFail(t, "Debian kernel: %v", err)
	}
	return k.Image
}

const initSource = `package main

import (
	"fmt"
	"os"
	"strings"
	"syscall"
)

func main() {
	syscall.Mount("proc", "/proc", "proc", 0, "")
	b, _ := os.ReadFile("/proc/cmdline")
	fmt.Printf("FERRO-CMDLINE %s\n", strings.TrimSpace(string(b)))
	for _, f := range strings.Fields(string(b)) {
		if v, ok := strings.CutPrefix(f, "ferro.marker="); ok {
			fmt.Printf("FERRO-INIT %s\n", v)
		}
	}
	syscall.Sync()
	syscall.Reboot(syscall.LINUX_REBOOT_CMD_POWER_OFF)
}
`

var (
	initOnce sync.Once
	initCpio []byte
	initErr  error
)

// MarkerInitramfs returns an uncompressed newc cpio archive with /dev/console
// and a static /init that prints MarkerPrefix and the value of
// ferro.marker= from /proc/cmdline, then powers off.
func MarkerInitramfs(t testing.TB) []byte {
	t.Helper()
	initOnce.Do(func() {
		dir, err := os.MkdirTemp("", "ferro-init-*")
		if err != nil {
			initErr = err
			return
		}
		defer os.RemoveAll(dir)
		if err := os.WriteFile(filepath.Join(dir, "main.go"), []byte(initSource), 0o644); err != nil {
			initErr = err
			return
		}
		os.WriteFile(filepath.Join(dir, "go.mod"), []byte("module ferroinit\n\ngo 1.22\n"), 0o644)
		cmd := exec.Command("go", "build", "-trimpath", "-ldflags=-s -w", "-o", "init", ".")
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOOS=linux", "GOARCH=amd64", "GOFLAGS=-mod=mod")
		if out, err := cmd.CombinedOutput(); err != nil {
			initErr = fmt.Errorf("build marker init: %v\n%s", err, out)
			return
		}
		bin, err := os.ReadFile(filepath.Join(dir, "init"))
		if err != nil {
			initErr = err
			return
		}
		var w bytes.Buffer
		ino := 1
		add := func(name string, mode uint32, rdevMajor, rdevMinor int, data []byte) {
			fmt.Fprintf(&w, "070701%08X%08X%08X%08X%08X%08X%08X%08X%08X%08X%08X%08X%08X",
				ino, mode, 0, 0, 1, 0, len(data), 0, 0, rdevMajor, rdevMinor, len(name)+1, 0)
			ino++
			w.WriteString(name)
			w.WriteByte(0)
			pad(&w)
			w.Write(data)
			pad(&w)
		}
		add("dev", 0o040755, 0, 0, nil)
		add("dev/console", 0o020600, 5, 1, nil)
		add("proc", 0o040755, 0, 0, nil)
		add("init", 0o100755, 0, 0, bin)
		add("TRAILER!!!", 0, 0, 0, nil)
		initCpio = w.Bytes()
	})
	if initErr != nil {
		t.Fatal(initErr)
	}
	return initCpio
}

func pad(w *bytes.Buffer) {
	for w.Len()%4 != 0 {
		w.WriteByte(0)
	}
}

// OVMF returns QEMU arguments for UEFI firmware (OVMF 4M, q35) with a
// private copy of the variable store in dir, or nil when OVMF is missing
// outside CI.
func OVMF(t testing.TB, dir string) []string {
	t.Helper()
	code, vars := "/usr/share/OVMF/OVMF_CODE_4M.fd", "/usr/share/OVMF/OVMF_VARS_4M.fd"
	b, err := os.ReadFile(vars)
	if err != nil {
		ferrotest.SkipOrFail(t, "OVMF missing (Debian package ovmf): %v", err)
		return nil
	}
	mine := filepath.Join(dir, "OVMF_VARS.fd")
	if err := os.WriteFile(mine, b, 0o644); err != nil {
		t.Fatal(err)
	}
	return []string{"-machine", "q35",
		"-drive", "if=pflash,format=raw,unit=0,readonly=on,file=" + code,
		"-drive", "if=pflash,format=raw,unit=1,file=" + mine}
}

// Boot runs QEMU with args until its serial console prints a line holding
// want (returned) or timeout passes (the test fails with the console's
// tail). QEMU is killed either way. Under TCG pass -cpu max (qemu-lab.md).
func Boot(t testing.TB, qemu string, args []string, want string, timeout time.Duration) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, qemu, args...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = cmd.Stdout
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var tail []string
	found := make(chan string, 1)
	done := make(chan struct{})
	go func() {
		defer close(done)
		sc := bufio.NewScanner(stdout)
		sc.Buffer(make([]byte, 64<<10), 1<<20)
		for sc.Scan() {
			l := sc.Text()
			mu.Lock()
			tail = append(tail, l)
			if len(tail) > 40 {
				tail = tail[1:]
			}
			mu.Unlock()
			if strings.Contains(l, want) {
				select {
				case found <- l:
				default:
				}
			}
		}
	}()
	var line string
	select {
	case line = <-found:
	case <-done:
	case <-ctx.Done():
	}
	cancel()
	_ = cmd.Wait()
	<-done
	if line == "" {
		select {
		case line = <-found:
		default:
		}
	}
	if line == "" {
		mu.Lock()
		defer mu.Unlock()
		t.Fatalf("QEMU never printed %q within %v; console tail:\n%s", want, timeout, strings.Join(tail, "\n"))
	}
	return line
}
