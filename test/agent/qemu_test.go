package agent_test

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/ferrometal/ferro/internal/callback"
	"github.com/ferrometal/ferro/internal/ramdisk"
	"github.com/ferrometal/ferro/internal/testing/ferrotest"
)

// What the QEMU machine is; the inspection must find exactly this.
const (
	vmMAC     = "52:54:00:fe:00:01" // virtio-net, the boot NIC
	vmMAC2    = "52:54:00:fe:00:02" // e1000, no DHCP (not BOOTIF)
	vmCPUs    = 2
	vmMemMB   = 512
	vmVendor  = "FerroLab"
	vmProduct = "QEMU-Agent-VM"
	vmSerial  = "FERRO-SN-0001"
)

var vmDisks = []struct {
	name, serial string
	size         int64
	qemu         string // -device for the drive
}{
	{"/dev/vda", "VBLK-0001", 10 << 30, "virtio-blk-pci,drive=d0,serial=VBLK-0001"},
	{"/dev/sda", "SCSI-0002", 5 << 30, "scsi-hd,drive=d1,bus=scsi0.0,serial=SCSI-0002"},
}

// TestQEMU_AgentInspectsMachine boots Debian's kernel with the initramfs
// `ferro ramdisk build` makes (ferro-agent as /init) in QEMU, with the
// callback URL and token ferro's managed inspection wrote into the node's
// PXE config, and checks what ferro's inspector stored against what QEMU
// was told the machine is: CPUs, memory, disks and sizes, MAC, SMBIOS
// identity, and a BMC (QEMU's ipmi-bmc-sim seen in-band through
// /dev/ipmi0). It logs the agent's run time and power-on → report.
func TestQEMU_AgentInspectsMachine(t *testing.T) {
	qemu := ferrotest.RequireTool(t, "qemu-system-x86_64")
	ferrotest.RequireTool(t, "apt-get")
	ferrotest.RequireTool(t, "dpkg-deb")
	ctx, cancel := context.WithTimeout(context.Background(), 8*time.Minute)
	defer cancel()

	images := buildRamdisk(t, ctx)
	l := startLab(t, images)
	uuid := l.enroll(vmMAC, ramdisk.KernelFile, ramdisk.InitramfsFile)
	bc := l.inspect(uuid, vmMAC)
	if bc.Token == "" {
		t.Fatal("no token in the boot configuration")
	}
	rec := startRecorder(t, l.inspectorPort)

	// QEMU's user network reaches the host's loopback at 10.0.2.2.
	cb, err := url.Parse(bc.Callback)
	if err != nil {
		t.Fatal(err)
	}
	cb.Host = "10.0.2.2:" + portOf(t, rec.URL)
	cmdline := strings.Join([]string{
		"console=ttyS0", "panic=-1", "quiet", "loglevel=3",
		callback.URLParam + "=" + cb.String(),
		callback.TokenParam + "=" + bc.Token,
		"BOOTIF=01-" + strings.ReplaceAll(vmMAC, ":", "-"),
		"ipa-lldp-timeout=1",
	}, " ")

	dir := t.TempDir()
	args := []string{
		"-machine", "pc", "-m", fmt.Sprint(vmMemMB), "-smp", fmt.Sprint(vmCPUs),
		"-nographic", "-monitor", "none", "-no-reboot",
		// ferro copied the deploy images into the TFTP root: boot those
		"-kernel", filepath.Join(l.tftpRoot, uuid, "deploy_kernel"),
		"-initrd", filepath.Join(l.tftpRoot, uuid, "deploy_ramdisk"),
		"-append", cmdline,
		"-smbios", fmt.Sprintf("type=1,manufacturer=%s,product=%s,serial=%s", vmVendor, vmProduct, vmSerial),
		"-netdev", "user,id=n0", "-device", "virtio-net-pci,netdev=n0,mac=" + vmMAC,
		"-netdev", "user,id=n1", "-device", "e1000,netdev=n1,mac=" + vmMAC2,
		"-device", "virtio-scsi-pci,id=scsi0",
		"-device", "ipmi-bmc-sim,id=bmc0", "-device", "isa-ipmi-kcs,bmc=bmc0",
	}
	args = append(args, accel()...)
	for i, d := range vmDisks {
		img := filepath.Join(dir, fmt.Sprintf("disk%d.raw", i))
		if err := os.WriteFile(img, nil, 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Truncate(img, d.size); err != nil { // sparse
			t.Fatal(err)
		}
		args = append(args, "-drive", fmt.Sprintf("file=%s,if=none,id=d%d,format=raw", img, i), "-device", d.qemu)
	}
	serialPath := filepath.Join(dir, "serial.log")
	serial, err := os.Create(serialPath)
	if err != nil {
		t.Fatal(err)
	}
	defer serial.Close()
	cmd := exec.Command(qemu, args...)
	cmd.Stdout, cmd.Stderr = serial, serial
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	powerOn := time.Now()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	stopped := false
	t.Cleanup(func() {
		if !stopped {
			syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
			<-exited
		}
	})
	failf := func(format string, args ...any) {
		t.Helper()
		t.Fatalf(format+"\nserial console (tail):\n%s", append(args, tail(serialPath, 60))...)
	}

	select {
	case <-rec.got:
	case err := <-exited:
		stopped = true
		failf("QEMU exited (%v) before the agent posted its report", err)
	case <-time.After(4 * time.Minute):
		failf("no report within 4 minutes of power-on")
	}
	rec.mu.Lock()
	reportAt, hdr := rec.at, rec.hdr
	rec.mu.Unlock()
	if got := hdr.Get(callback.TokenHeader); got != bc.Token {
		t.Errorf("report's %s header is not the inspection's token (len %d)", callback.TokenHeader, len(got))
	}
	select {
	case err := <-exited:
		stopped = true
		if err != nil {
			failf("QEMU: %v", err)
		}
	case <-time.After(90 * time.Second):
		failf("the machine did not power off within 90 s of its report")
	}

	node := l.waitState(uuid, "manageable", stateTimeout)
	props, _ := node["properties"].(map[string]any)
	for k, want := range map[string]string{
		"cpus": fmt.Sprint(vmCPUs), "memory_mb": fmt.Sprint(vmMemMB), "cpu_arch": "x86_64",
		"local_gb": fmt.Sprint(vmDisks[1].size>>30 - 1), // the smallest disk ≥ 4 GiB, less 1 GiB
	} {
		if str(props[k]) != want {
			t.Errorf("properties[%s] = %v, want %s", k, props[k], want)
		}
	}
	inv := l.inventory(uuid)
	checkInventory(t, inv)
	if t.Failed() {
		t.Logf("inventory:\n%s\nserial console (tail):\n%s", dump(inv), tail(serialPath, 60))
	}
	start, posted := agentTimes(serialPath)
	t.Logf("figures (TCG=%v): power-on → report received %.1f s; agent /init → report posted %s (kernel uptime at /init %s)",
		len(accel()) > 2 && accel()[1] == "tcg", reportAt.Sub(powerOn).Seconds(), posted, start)
}

func checkInventory(t *testing.T, inv map[string]any) {
	t.Helper()
	cpu, _ := inv["cpu"].(map[string]any)
	if str(cpu["count"]) != fmt.Sprint(vmCPUs) || str(cpu["architecture"]) != "x86_64" {
		t.Errorf("cpu = %v", cpu)
	}
	mem, _ := inv["memory"].(map[string]any)
	if str(mem["physical_mb"]) != fmt.Sprint(vmMemMB) {
		t.Errorf("memory = %v, want physical_mb %d", mem, vmMemMB)
	}
	sv, _ := inv["system_vendor"].(map[string]any)
	if str(sv["manufacturer"]) != vmVendor || str(sv["product_name"]) != vmProduct || str(sv["serial_number"]) != vmSerial {
		t.Errorf("system_vendor = %v", sv)
	}
	ifs, _ := inv["interfaces"].([]any)
	byMAC := map[string]map[string]any{}
	for _, i := range ifs {
		m := i.(map[string]any)
		byMAC[str(m["mac_address"])] = m
	}
	if len(ifs) != 2 {
		t.Errorf("interfaces = %v, want the two NICs", ifs)
	}
	if i := byMAC[vmMAC]; i == nil || str(i["ipv4_address"]) != "10.0.2.15" || i["has_carrier"] != true || str(i["driver"]) != "virtio_net" {
		t.Errorf("boot NIC %s = %v, want virtio_net with the DHCP address", vmMAC, i)
	}
	// DHCP ran on the BOOTIF NIC only.
	if i := byMAC[vmMAC2]; i == nil || str(i["driver"]) != "e1000" || str(i["ipv4_address"]) != "" || str(i["vendor"]) != "0x8086" {
		t.Errorf("second NIC %s = %v, want e1000 without an address", vmMAC2, i)
	}
	disks, _ := inv["disks"].([]any)
	found := map[string]map[string]any{}
	for _, d := range disks {
		m := d.(map[string]any)
		found[str(m["name"])] = m
	}
	if len(found) != len(vmDisks) {
		t.Errorf("disks = %v, want %d", disks, len(vmDisks))
	}
	for _, want := range vmDisks {
		d := found[want.name]
		if d == nil || str(d["size"]) != fmt.Sprint(want.size) || str(d["serial"]) != want.serial {
			t.Errorf("disk %s = %v, want size %d serial %s", want.name, d, want.size, want.serial)
		}
	}
	// ipmi-bmc-sim has no LAN channel: a BMC is there but has no address,
	// which IPA reports as 0.0.0.0 (a machine without BMC has no field).
	if str(inv["bmc_address"]) != "0.0.0.0" {
		t.Errorf("bmc_address = %v, want 0.0.0.0 (in-band BMC without LAN)", inv["bmc_address"])
	}
	boot, _ := inv["boot"].(map[string]any)
	if str(boot["current_boot_mode"]) != "bios" || str(boot["pxe_interface"]) != "01-"+strings.ReplaceAll(vmMAC, ":", "-") {
		t.Errorf("boot = %v", boot)
	}
}

// buildRamdisk builds ferro-agent from this checkout and the ramdisk with
// Debian's kernel (fetched once into the user cache), into a temp dir.
func buildRamdisk(t *testing.T, ctx context.Context) string {
	t.Helper()
	wd, _ := os.Getwd()
	src := ramdisk.FindSource(wd)
	out := t.TempDir()
	started := time.Now()
	res, err := ramdisk.Build(ctx, ramdisk.BuildOptions{
		CacheDir:    ramdisk.DefaultKernelCache(),
		AgentSource: src,
		OutDir:      out,
	})
	if err != nil {
		t.Fatalf("ramdisk build: %v", err)
	}
	t.Logf("ramdisk built in %.1f s: agent %d bytes, initramfs %d bytes (%d modules), kernel %d bytes, kernel+initramfs %.1f MB",
		time.Since(started).Seconds(), res.AgentBytes, res.InitramfsBytes, len(res.Modules), res.KernelBytes,
		float64(res.KernelBytes+res.InitramfsBytes)/1e6)
	if total := res.KernelBytes + res.InitramfsBytes; total > 15e6 {
		t.Errorf("kernel + initramfs = %d bytes, more than the 15 MB target", total)
	}
	return out
}

// accel follows qemu-lab.md: KVM only when /dev/kvm opens, the CPU has
// vmx or svm and the host is not kvm_pvm (which runs only PVM guests);
// else TCG with -cpu max (RDRAND, or Go's crypto/rand blocks forever).
func accel() []string {
	if f, err := os.OpenFile("/dev/kvm", os.O_RDWR, 0); err == nil {
		f.Close()
		cpuinfo, _ := os.ReadFile("/proc/cpuinfo")
		_, pvm := os.Stat("/sys/module/kvm_pvm")
		if os.IsNotExist(pvm) && regexp.MustCompile(`\b(vmx|svm)\b`).Match(cpuinfo) {
			return []string{"-accel", "kvm", "-cpu", "host"}
		}
	}
	return []string{"-accel", "tcg", "-cpu", "max"}
}

// agentTimes reads the agent's log on the serial console: the kernel's
// uptime when /init started and the "report posted" elapsed time.
func agentTimes(serial string) (start, posted string) {
	f, err := os.Open(serial)
	if err != nil {
		return "?", "?"
	}
	defer f.Close()
	start, posted = "?", "?"
	re := regexp.MustCompile(`msg="report posted" elapsed=([0-9.]+s)`)
	up := regexp.MustCompile(`msg="ferro-agent starting" uptime=([0-9.]+s)`)
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		if m := up.FindStringSubmatch(line); m != nil {
			start = m[1]
		}
		if m := re.FindStringSubmatch(line); m != nil {
			posted = m[1]
		}
	}
	return start, posted
}

func tail(path string, lines int) string {
	b, _ := os.ReadFile(path)
	ls := bytes.Split(b, []byte("\n"))
	if len(ls) > lines {
		ls = ls[len(ls)-lines:]
	}
	return string(bytes.Join(ls, []byte("\n")))
}
