package vm_test

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ferrometal/ferro/internal/ramdisk"
	"github.com/ferrometal/ferro/internal/testing/ferrotest"
	"github.com/ferrometal/ferro/internal/testing/vbmctest"
	"github.com/ferrometal/ferro/internal/vbmc"
)

// TestInspect_QEMUVirtualMediaBehindTheSitesDHCP is docs/real-server.md's
// virtual media configuration: Redfish virtual media with ferro's built-in
// DHCP off ([dhcp]dhcp_provider none) and the site's DHCP server (busybox
// udhcpd) giving the agent its address. ferro serves the ISO from
// [deploy]http_root on its API port; the BMC (ferro-vbmc) fetches it; the
// agent posts to continue_inspection.
func TestInspect_QEMUVirtualMediaBehindTheSitesDHCP(t *testing.T) {
	ferrotest.RequireTool(t, "qemu-system-x86_64")
	busybox := ferrotest.RequireTool(t, "busybox")
	images := builtRamdisk(t)
	kernel := "file://" + filepath.Join(images, ramdisk.KernelFile)
	initrd := "file://" + filepath.Join(images, ramdisk.InitramfsFile)
	params := "console=ttyS0 panic=-1 loglevel=4 cryptomgr.notests=1 ipa-lldp-timeout=30 ipa-debug=1"
	l := startLab(t,
		"FERRO_DHCP_DHCP_PROVIDER=none",
		"FERRO_CONDUCTOR_FILE_URL_ALLOWED_PATHS="+images,
		"FERRO_REDFISH_KERNEL_APPEND_PARAMS="+params,
		"FERRO_DEPLOY_DEFAULT_BOOT_MODE=bios",
		"FERRO_SERVICE_CATALOG_ENDPOINT_OVERRIDE="+apiURL,
		"FERRO_INSPECTOR_HOOKS=$default_hooks,cpus,memory,root-device,parse-lldp,local-link-connection",
	)
	// The site's DHCP, on a range ferro's built-in one never uses.
	dir := t.TempDir()
	conf := filepath.Join(dir, "udhcpd.conf")
	leases := filepath.Join(dir, "udhcpd.leases")
	os.WriteFile(leases, nil, 0o644)
	if err := os.WriteFile(conf, []byte(fmt.Sprintf("start 192.168.77.210\nend 192.168.77.220\ninterface br0\nlease_file %s\noption subnet 255.255.255.0\n", leases)), 0o644); err != nil {
		t.Fatal(err)
	}
	d := l.ns.Command(busybox, "udhcpd", "-f", conf)
	var out logBuffer
	d.Stdout, d.Stderr = &out, &out
	if err := d.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		d.Process.Kill()
		d.Wait()
		if t.Failed() {
			t.Logf("udhcpd output:\n%s", tail(out.String(), 4000))
		}
	})

	m := machine{name: "site-dhcp-vmedia", mac: "52:54:00:77:10:09", tap: "tap9", driver: "redfish", boot: "redfish-virtual-media",
		q35: true, cpus: 1, memMB: 1024, disksGB: []int{3}, serial: "LAB-SITE-DHCP-9", inspect: "agent"}
	l.ns.AddTap(m.tap)
	chassis, lldpPorts := l.lldpd(t, []string{m.tap})
	console := filepath.Join(t.TempDir(), m.name+".log")
	v := vbmctest.Start(t, vbmctest.Config{Listen: bridgeIP, Netns: l.ns.Name, Machines: []vbmc.MachineConfig{{
		Name: m.name, Backend: "qemu", CPUs: m.cpus, MemoryMB: m.memMB, MACs: []string{m.mac}, DisksGB: m.disksGB,
		Manufacturer: "FerroLab", Product: "lane-" + m.driver, Serial: m.serial,
		QEMU: &vbmc.QEMUConfig{Taps: []string{m.tap}, IPMIDevice: true, Accel: "auto", Machine: "q35", ConsoleLog: console},
	}}})
	uuid := l.inspectMachine(t, v, m, kernel, initrd, console, chassis, lldpPorts[m.tap])

	// The agent's address came from the site's DHCP.
	var inv struct {
		Inventory struct {
			Interfaces []struct {
				MAC  string `json:"mac_address"`
				IPv4 string `json:"ipv4_address"`
			} `json:"interfaces"`
		} `json:"inventory"`
	}
	if code, body := l.apiGet("/v1/nodes/" + uuid + "/inventory"); code != 200 || json.Unmarshal(body, &inv) != nil {
		t.Fatalf("inventory: %d %s", code, body)
	}
	found := false
	for _, i := range inv.Inventory.Interfaces {
		if strings.EqualFold(i.MAC, m.mac) {
			found = strings.HasPrefix(i.IPv4, "192.168.77.21") || i.IPv4 == "192.168.77.220"
			if !found {
				t.Errorf("the agent's address %q is not from the site's DHCP range", i.IPv4)
			}
		}
	}
	if !found {
		t.Errorf("no interface %s with an address in the inventory: %+v", m.mac, inv.Inventory.Interfaces)
	}
	if strings.Contains(l.out.String(), "dhcp server started") {
		t.Error("the built-in DHCP ran with dhcp_provider=none")
	}
	// The ISO is gone from http_root.
	filepath.WalkDir(l.httpRoot, func(p string, e os.DirEntry, err error) error {
		if err == nil && strings.HasSuffix(p, ".iso") {
			t.Errorf("left behind: %s", p)
		}
		return nil
	})
}
