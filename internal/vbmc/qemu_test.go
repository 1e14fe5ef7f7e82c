package vbmc

import (
	"bytes"
	"crypto/rand"
	"net/http"
	"net/http/httptest"
	"os"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/ferrometal/ferro/internal/testing/ferrotest"
)

// consoleBootTimeout bounds the wait for SeaBIOS to pick a boot device under
// TCG (SeaBIOS about 2 s, OVMF about 30 s alone; four VMs share two busy cores).
const consoleBootTimeout = 90 * time.Second

var bootingFrom = regexp.MustCompile(`Booting from ([^.\r\n]+)`)

// waitConsole polls the VM's console log (a file QEMU appends to; there is
// no event to wait on) until re matches, and returns the log.
func waitConsole(t *testing.T, path string, re *regexp.Regexp) string {
	t.Helper()
	deadline := time.Now().Add(consoleBootTimeout)
	for {
		data, _ := os.ReadFile(path)
		if re.Match(data) {
			return string(data)
		}
		if time.Now().After(deadline) {
			t.Fatalf("console %s: no %q after %v; it has:\n%s", path, re, consoleBootTimeout, data)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

func qemuPid(m *Machine) int {
	m.mu.Lock()
	defer m.mu.Unlock()
	if b, ok := m.backend.(*qemuBackend); ok && b.proc != nil {
		return b.proc.cmd.Process.Pid
	}
	return 0
}

func processGone(pid int) bool { return syscall.Kill(pid, 0) == syscall.ESRCH }

// TestQEMU_PowerOnBootsTheChosenDevice boots three QEMU VMs (TCG) far enough
// for SeaBIOS to say what it boots: PXE and disk chosen with ipmitool's
// bootdev, the CD with Redfish virtual media and a one-time Cd override.
func TestQEMU_PowerOnBootsTheChosenDevice(t *testing.T) {
	t.Parallel()
	qemu := ferrotest.RequireTool(t, "qemu-system-x86_64")
	ferrotest.RequireTool(t, "ipmitool")

	iso := make([]byte, 1<<20)
	rand.Read(iso) // not bootable: SeaBIOS tries it, which is what is checked
	images := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.ServeContent(w, r, "cd.iso", time.Time{}, bytes.NewReader(iso))
	}))
	t.Cleanup(images.Close)

	var (
		pidsMu sync.Mutex
		pids   []int
	)
	addPid := func(pid int) {
		pidsMu.Lock()
		defer pidsMu.Unlock()
		pids = append(pids, pid)
	}
	t.Cleanup(func() {
		// Runs after the server stopped: no VM outlives ferro-vbmc.
		for _, pid := range pids {
			if !processGone(pid) {
				t.Errorf("qemu %d still running after the server stopped", pid)
				syscall.Kill(-pid, syscall.SIGKILL)
			}
		}
	})
	cfg := Config{Username: "admin", Password: "vbmc-pass", Redfish: RedfishConfig{Listen: "127.0.0.1:0"}, StateDir: t.TempDir()}
	for i, name := range []string{"pxe", "disk", "cd", "uefi"} {
		q := &QEMUConfig{Binary: qemu, Accel: "tcg"}
		if name == "uefi" {
			q.Machine, q.Firmware = "q35", "uefi"
			if _, err := os.Stat("/usr/share/OVMF/OVMF_CODE_4M.fd"); err != nil {
				ferrotest.SkipOrFail(t, "OVMF firmware missing (Debian package ovmf; .ci/run installs it): %v", err)
			}
		}
		cfg.Machines = append(cfg.Machines, MachineConfig{
			Name: name, Backend: BackendQEMU, IPMIListen: "127.0.0.1:0",
			CPUs: 1, MemoryMB: 1024, MACs: []string{"52:54:00:51:00:0" + string(rune('1'+i))}, DisksGB: []int{1},
			QEMU: q,
		})
	}
	srv, ready := startConfig(t, cfg)
	console := func(name string) string { return srv.Machine(name).backend.(*qemuBackend).console }

	t.Run("pxe", func(t *testing.T) {
		t.Parallel()
		m := srv.Machine("pxe")
		ipmi := newIPMITool(t, ready.IPMI["pxe"], []string{"-I", "lanplus", "-C", "3"}, "vbmc-pass")
		ipmi.must("chassis", "bootdev", "pxe")
		ipmi.must("chassis", "power", "on")
		pid := qemuPid(m)
		addPid(pid)
		log := waitConsole(t, console("pxe"), regexp.MustCompile(`iPXE initialising devices|Booting from (Hard|DVD)`))
		if first := bootingFrom.FindStringSubmatch(log); first == nil || first[1] != "ROM" || !strings.Contains(log, "iPXE initialising devices") {
			t.Fatalf("after bootdev pxe the VM did not network-boot first:\n%s", log)
		}
		if out := ipmi.must("chassis", "power", "status"); !strings.Contains(out, "is on") {
			t.Fatalf("power status: %q", out)
		}
		ipmi.must("chassis", "power", "off")
		if on, _ := m.PowerState(t.Context()); on || !processGone(pid) {
			t.Fatalf("after power off: on=%v, qemu %d gone=%v", on, pid, processGone(pid))
		}
	})
	t.Run("disk", func(t *testing.T) {
		t.Parallel()
		ipmi := newIPMITool(t, ready.IPMI["disk"], []string{"-I", "lan"}, "vbmc-pass")
		ipmi.must("chassis", "bootdev", "disk")
		ipmi.must("chassis", "power", "on")
		addPid(qemuPid(srv.Machine("disk")))
		log := waitConsole(t, console("disk"), bootingFrom)
		if first := bootingFrom.FindStringSubmatch(log); first[1] != "Hard Disk" {
			t.Fatalf("after bootdev disk the VM booted from %q first:\n%s", first[1], log)
		}
	})
	t.Run("cd", func(t *testing.T) {
		t.Parallel()
		c := &rfClient{t: t, base: ready.RedfishURL, user: "admin", pass: "vbmc-pass"}
		if st, _, body := c.do("POST", "/redfish/v1/Managers/cd/VirtualMedia/Cd/Actions/VirtualMedia.InsertMedia", map[string]any{"Image": images.URL + "/cd.iso"}); st != 204 {
			t.Fatalf("insert: %d %v", st, body)
		}
		if st, _, body := c.do("PATCH", "/redfish/v1/Systems/cd", map[string]any{"Boot": map[string]string{"BootSourceOverrideTarget": "Cd", "BootSourceOverrideEnabled": "Once"}}); st != 204 {
			t.Fatalf("boot override: %d %v", st, body)
		}
		if st, _, body := c.do("POST", "/redfish/v1/Systems/cd/Actions/ComputerSystem.Reset", map[string]any{"ResetType": "On"}); st != 204 {
			t.Fatalf("power on: %d %v", st, body)
		}
		addPid(qemuPid(srv.Machine("cd")))
		log := waitConsole(t, console("cd"), bootingFrom)
		if first := bootingFrom.FindStringSubmatch(log); first[1] != "DVD/CD" {
			t.Fatalf("after inserting the ISO and Cd once the VM booted from %q first:\n%s", first[1], log)
		}
		// Left running: stopping the server must kill it (checked at cleanup).
	})
	t.Run("uefi", func(t *testing.T) {
		t.Parallel()
		// Ironic's EFI flag with a one-time PXE boot on an OVMF (q35) VM.
		ipmi := newIPMITool(t, ready.IPMI["uefi"], []string{"-I", "lanplus", "-C", "17"}, "vbmc-pass")
		ipmi.must("chassis", "bootdev", "pxe", "options=efiboot")
		ipmi.must("chassis", "power", "on")
		addPid(qemuPid(srv.Machine("uefi")))
		log := waitConsole(t, console("uefi"), regexp.MustCompile(`Features:[^\r\n]*\bEFI\b`))
		if i := strings.Index(log, "BdsDxe:"); i >= 0 && i < strings.Index(log, "Features:") {
			t.Fatalf("OVMF tried another boot option before iPXE:\n%s", log)
		}
		if lb := srv.Machine("uefi").LastBoot(); lb.Device != BootPxe || !lb.UEFI {
			t.Fatalf("booted %+v, want PXE with the EFI flag", lb)
		}
	})
}
