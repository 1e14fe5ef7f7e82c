package vm_test

import (
	"context"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// TestNetboot_ServeAnswersAManagedInspectionAndCleansUp runs a managed
// inspection of a fake-hardware node with the ipxe boot interface: ferro
// serve's built-in DHCP answers the VM, which fetches the node's iPXE
// script, kernel and initramfs from the API port. Aborting the inspection
// removes the boot files and releases the lease.
func TestNetboot_ServeAnswersAManagedInspectionAndCleansUp(t *testing.T) {
	l := startLab(t)
	// The deploy "kernel" is iPXE in Linux kernel format: iPXE loads it
	// like a kernel, so every fetch happens without a real ramdisk.
	kernel := filepath.Join(l.images, "kernel")
	b, err := os.ReadFile("/usr/lib/ipxe/ipxe.lkrn")
	if err != nil {
		t.Fatalf("Debian's ipxe package: %v", err)
	}
	os.WriteFile(kernel, b, 0o644)
	os.WriteFile(filepath.Join(l.images, "ramdisk"), []byte(strings.Repeat("ramdisk", 10000)), 0o644)

	mac := "52:54:00:77:01:01"
	uuid := strings.TrimSpace(l.baremetal("node", "create", "--driver", "fake-hardware", "--boot-interface", "ipxe",
		"--network-interface", "noop", "--inspect-interface", "inspector",
		"--driver-info", "deploy_kernel=file://"+kernel, "--driver-info", "deploy_ramdisk=file://"+filepath.Join(l.images, "ramdisk"),
		"-f", "value", "-c", "uuid"))
	l.baremetal("port", "create", mac, "--node", uuid, "--pxe-enabled", "true")
	l.baremetal("node", "manage", uuid, "--wait", "60")
	l.baremetal("node", "inspect", uuid) // no --wait: nothing will post a report
	if st := l.node(uuid)["provision_state"]; st != "inspect wait" {
		t.Fatalf("provision_state %v, want inspect wait", st)
	}
	// The node's script (it holds its token) is on the API port for the
	// address DHCP leases the node only: this one gets a 403.
	if !strings.HasPrefix(l.bootScript(t, uuid), "#!ipxe") {
		t.Fatal("no iPXE script")
	}
	if code, body := l.get(httpURL + "/" + uuid + "/config"); code != 403 {
		t.Fatalf("the node's iPXE script on the API port from ferro's own address: %d %q, want 403", code, body)
	}

	v := l.startVM(t, "tap0", mac)
	ctx, cancel := context.WithTimeout(t.Context(), 3*time.Minute)
	defer cancel()
	start := time.Now()
	for _, phase := range []string{"dhcp_offer_sent", "boot_script_fetched", "kernel_fetched", "initramfs_fetched"} {
		if err := l.waitLog(ctx, regexp.MustCompile(`netboot: `+phase+`".*node=`+uuid)); err != nil {
			t.Fatalf("%v\nserial tail:\n%s", err, v.tail(2000))
		}
		t.Logf("%s after %.1fs", phase, time.Since(start).Seconds())
	}
	v.stop()

	l.baremetal("node", "abort", uuid)
	if _, err := l.waitState(ctx, uuid, "inspect failed"); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(l.httpRoot, uuid)); !os.IsNotExist(err) {
		t.Errorf("the node's boot files are still there: %v", err)
	}
	if err := l.waitLog(ctx, regexp.MustCompile(`dhcp: lease released.*node=`+uuid)); err != nil {
		t.Error(err)
	}
}
