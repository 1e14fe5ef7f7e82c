package netboot_test

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/ferrometal/ferro/internal/netboot"
	"github.com/ferrometal/ferro/internal/states"
	"github.com/ferrometal/ferro/internal/testing/ferrotest"
)

// Budgets per milestone under software emulation (qemu-lab.md): generous,
// since several helpers share two cores.
const (
	vmDHCPBudget  = 90 * time.Second
	vmFetchBudget = 90 * time.Second
)

// vm is a QEMU machine on a tap of the env's bridge.
type vm struct {
	cmd    *exec.Cmd
	serial string
	done   chan struct{}
}

type firmware int

const (
	bios     firmware = iota // SeaBIOS with QEMU's iPXE ROM
	uefiPXE                  // OVMF's own PXE (no option ROM): chain-loads snponly.efi
	uefiIPXE                 // OVMF with QEMU's iPXE EFI ROM
)

// startVM boots a VM from the network with one virtio NIC of this MAC.
func (e *env) startVM(t *testing.T, tap, mac string, fw firmware) *vm {
	t.Helper()
	qemu := ferrotest.RequireTool(t, "qemu-system-x86_64")
	e.ns.AddTap(tap)
	dir := t.TempDir()
	v := &vm{serial: filepath.Join(dir, "serial.log"), done: make(chan struct{})}
	nic := "virtio-net-pci,netdev=n0,mac=" + mac + ",bootindex=1"
	args := []string{"-accel", "tcg", "-cpu", "max", "-m", "256", "-smp", "1",
		"-display", "none", "-vga", "none", "-monitor", "none", "-no-reboot",
		"-serial", "file:" + v.serial,
		"-netdev", "tap,id=n0,ifname=" + tap + ",script=no,downscript=no"}
	switch fw {
	case bios:
		args = append(args, "-machine", "pc", "-device", nic, "-boot", "n")
	case uefiPXE, uefiIPXE:
		code := "/usr/share/OVMF/OVMF_CODE_4M.fd"
		vars, err := os.ReadFile("/usr/share/OVMF/OVMF_VARS_4M.fd")
		if err != nil {
			ferrotest.SkipOrFail(t, "Debian's ovmf package is needed: %v", err)
		}
		varsCopy := filepath.Join(dir, "vars.fd")
		os.WriteFile(varsCopy, vars, 0o644)
		if fw == uefiPXE {
			nic += ",romfile="
		}
		args = append(args, "-machine", "q35",
			"-drive", "if=pflash,format=raw,unit=0,readonly=on,file="+code,
			"-drive", "if=pflash,format=raw,unit=1,file="+varsCopy,
			"-device", nic)
	}
	v.cmd = e.ns.Command(qemu, args...)
	v.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	var out bytes.Buffer
	v.cmd.Stdout, v.cmd.Stderr = &out, &out
	if err := v.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { v.cmd.Wait(); close(v.done) }()
	t.Cleanup(func() {
		syscall.Kill(-v.cmd.Process.Pid, syscall.SIGKILL)
		<-v.done
		if t.Failed() {
			t.Logf("qemu output: %s\nserial console tail:\n%s", out.String(), v.tail(3000))
		}
	})
	return v
}

var ansiRE = regexp.MustCompile(`\x1b\[[0-9;?]*[A-Za-z]|\x1b[()][A-Z0-9]|\r`)

// tail is the end of the serial console, escape sequences removed.
func (v *vm) tail(n int) string {
	b, _ := os.ReadFile(v.serial)
	b = ansiRE.ReplaceAll(b, nil)
	if len(b) > n {
		b = b[len(b)-n:]
	}
	return string(b)
}

// waitPhases waits for the node's phases in order, each within its budget.
func (e *env) waitPhases(t *testing.T, v *vm, uuid string, phases ...string) {
	t.Helper()
	start := time.Now()
	for i, phase := range phases {
		budget := vmFetchBudget
		if i == 0 {
			budget = vmDHCPBudget
		}
		ctx, cancel := context.WithTimeout(t.Context(), budget)
		err := e.events.wait(ctx, uuid, phase)
		cancel()
		if err != nil {
			select {
			case <-v.done:
				err = fmt.Errorf("%w\n(the VM exited)", err)
			default:
			}
			t.Fatal(err)
		}
		t.Logf("%s after %.1fs", phase, time.Since(start).Seconds())
	}
}

// logTFTPOptions logs what the firmware asked of TFTP and got.
func (e *env) logTFTPOptions(t *testing.T) {
	for _, line := range strings.Split(e.logBuf.String(), "\n") {
		if strings.Contains(line, "tftp: options negotiated") {
			if _, rest, ok := strings.Cut(line, "file="); ok {
				t.Logf("tftp: file=%s", rest)
			}
		}
	}
}

func TestQEMU_BIOSiPXEBootsTheNodeScriptOverHTTP(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	mac := "52:54:00:77:00:01"
	n := e.addNode(t, "ipxe", states.InspectWait, true, mac)
	e.start(t, e.options(false))
	v := e.startVM(t, "tap0", mac, bios)
	e.waitPhases(t, v, n.UUID, netboot.PhaseDHCPOffer, netboot.PhaseBootScript, netboot.PhaseKernel, netboot.PhaseInitramfs)
	// iPXE solicits a router before it configures IPv4.
	if got := e.svc.RouterAdvertisements(); got == 0 {
		t.Error("iPXE's router solicitations got no advertisement")
	}
}

func TestQEMU_BIOSPXELINUXBootsOverTFTP(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	if _, err := os.Stat("/usr/lib/syslinux/modules/bios/ldlinux.c32"); err != nil {
		ferrotest.SkipOrFail(t, "Debian's pxelinux and syslinux-common packages are needed: %v", err)
	}
	mac := "52:54:00:77:00:02"
	n := e.addNode(t, "pxe", states.InspectWait, true, mac)
	e.start(t, e.options(false))
	v := e.startVM(t, "tap0", mac, bios)
	e.waitPhases(t, v, n.UUID, netboot.PhaseDHCPOffer, netboot.PhaseBootScript, netboot.PhaseKernel, netboot.PhaseInitramfs)
	e.logTFTPOptions(t)
}

// TestQEMU_UEFIPXEChainsSNPOnlyOverTFTP boots OVMF's own PXE client (the
// NIC has no option ROM), which reads snponly.efi over TFTP (asking for its
// size alone first, then aborting), and iPXE then boots the node's script
// over HTTP.
func TestQEMU_UEFIPXEChainsSNPOnlyOverTFTP(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.kernelSrc = "/usr/lib/ipxe/ipxe.efi" // an EFI image iPXE can boot as the "kernel"
	mac := "52:54:00:77:00:03"
	n := e.addNode(t, "ipxe", states.InspectWait, true, mac)
	e.start(t, e.options(false))
	v := e.startVM(t, "tap0", mac, uefiPXE)
	e.waitPhases(t, v, n.UUID, netboot.PhaseDHCPOffer, netboot.PhaseBootScript, netboot.PhaseKernel, netboot.PhaseInitramfs)
	if !bytes.Contains([]byte(e.logBuf.String()), []byte("snponly.efi")) {
		t.Errorf("snponly.efi was never served:\n%s", e.logBuf)
	}
	e.logTFTPOptions(t)
}

// TestQEMU_ProxyDHCPBesideBusyboxUdhcpd runs busybox's udhcpd as the
// site's DHCP server and ferro in proxy mode: iPXE takes its address from
// udhcpd and its boot file from ferro.
func TestQEMU_ProxyDHCPBesideBusyboxUdhcpd(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	bb := ferrotest.RequireTool(t, "busybox")
	dir := t.TempDir()
	conf := filepath.Join(dir, "udhcpd.conf")
	os.WriteFile(filepath.Join(dir, "leases"), nil, 0o644)
	os.WriteFile(conf, []byte("start 192.168.77.50\nend 192.168.77.60\ninterface br0\nmax_leases 10\n"+
		"lease_file "+filepath.Join(dir, "leases")+"\nopt subnet 255.255.255.0\n"), 0o644)
	site := e.ns.Command(bb, "udhcpd", "-f", conf)
	var siteOut bytes.Buffer
	site.Stdout, site.Stderr = &siteOut, &siteOut
	site.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := site.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		syscall.Kill(-site.Process.Pid, syscall.SIGKILL)
		site.Wait()
		if t.Failed() {
			t.Logf("udhcpd output:\n%s", siteOut.String())
		}
	})
	mac := "52:54:00:77:00:04"
	n := e.addNode(t, "ipxe", states.InspectWait, true, mac)
	e.start(t, e.options(true))
	v := e.startVM(t, "tap0", mac, bios)
	e.waitPhases(t, v, n.UUID, netboot.PhaseDHCPOffer, netboot.PhaseBootScript, netboot.PhaseKernel, netboot.PhaseInitramfs)
	if l := leases(t, e.db); len(l) != 0 {
		t.Errorf("proxy mode stored leases: %v", l)
	}
	if !strings.Contains(e.events.String(), "to 192.168.77.5") {
		t.Errorf("the boot files were not fetched from an address udhcpd gave:\n%s", e.events)
	}
	// ferro learnt the address iPXE asked udhcpd for: the node's script
	// went there, and goes nowhere else (curl here asks from ferro's own
	// address).
	curl := ferrotest.RequireTool(t, "curl")
	b, _ := e.ns.Command(curl, "-sS", "--max-time", "10", "-o", "/dev/null", "-w", "%{http_code}", httpURL+"/"+n.UUID+"/config").CombinedOutput()
	if string(b) != "403" {
		t.Errorf("the node's script from another address: %s, want 403", b)
	}
}
