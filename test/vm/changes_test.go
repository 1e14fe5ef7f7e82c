package vm_test

import (
	"encoding/json"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/ferrometal/ferro/internal/ramdisk"
	"github.com/ferrometal/ferro/internal/testing/ferrotest"
	"github.com/ferrometal/ferro/internal/testing/vbmctest"
	"github.com/ferrometal/ferro/internal/vbmc"
)

// TestInspect_QEMUReinspectionShowsTheChanges inspects a QEMU machine with
// two disks on one port of the lab's bridge, then pulls its second disk and
// plugs its NIC into another port (lldpd on both) and inspects it again:
// the history, the API (/ferro/v1) and the web view show exactly those two
// changes.
func TestInspect_QEMUReinspectionShowsTheChanges(t *testing.T) {
	ferrotest.RequireTool(t, "qemu-system-x86_64")
	images := builtRamdisk(t)
	kernel := "file://" + filepath.Join(images, ramdisk.KernelFile)
	initrd := "file://" + filepath.Join(images, ramdisk.InitramfsFile)
	params := "console=ttyS0 panic=-1 loglevel=4 cryptomgr.notests=1 ipa-lldp-timeout=30 ipa-debug=1"
	l := startLab(t,
		"FERRO_CONDUCTOR_FILE_URL_ALLOWED_PATHS="+images,
		"FERRO_INSPECTOR_CALLBACK_ENDPOINT_OVERRIDE=http://"+bridgeIP+":5050",
		"FERRO_PXE_KERNEL_APPEND_PARAMS="+params,
		"FERRO_DEPLOY_DEFAULT_BOOT_MODE=bios",
		"FERRO_IPMI_MIN_COMMAND_INTERVAL=1",
		"FERRO_SERVICE_CATALOG_ENDPOINT_OVERRIDE="+apiURL,
		"FERRO_INSPECTOR_HOOKS=$default_hooks,cpus,memory,root-device,parse-lldp,local-link-connection",
	)
	before, after := "tapc0", "tapc1"
	l.ns.AddTap(before)
	l.ns.AddTap(after)
	chassis, lldpPorts := l.lldpd(t, []string{before, after})
	m := machine{name: "changes", mac: "52:54:00:77:10:09", tap: before, driver: "ipmi", boot: "ipxe",
		cpus: 1, memMB: 1024, disksGB: []int{4, 2}, serial: "LAB-CHANGES-9", inspect: "agent"}
	console := filepath.Join(t.TempDir(), "console.log")
	start := func(m machine) *vbmctest.VBMC {
		q := &vbmc.QEMUConfig{Taps: []string{m.tap}, IPMIDevice: true, Accel: "auto", ConsoleLog: console}
		return vbmctest.Start(t, vbmctest.Config{Listen: bridgeIP, Netns: l.ns.Name, Machines: []vbmc.MachineConfig{{
			Name: m.name, Backend: "qemu", CPUs: m.cpus, MemoryMB: m.memMB, MACs: []string{m.mac}, DisksGB: m.disksGB,
			Manufacturer: "FerroLab", Product: "lane-" + m.driver, Serial: m.serial, QEMU: q}}})
	}
	v := start(m)
	uuid := l.inspectMachine(t, v, m, kernel, initrd, console, chassis, lldpPorts[before])
	if code, body := l.apiGet("/ferro/v1/nodes/" + uuid + "/hardware/changes"); code != 200 || !strings.Contains(string(body), `"previous_inspection":null`) {
		t.Fatalf("changes after the first inspection: %d %s", code, body)
	}

	// Power the machine down for good, pull a disk, move the cable.
	v.Stop(t)
	m.disksGB, m.tap = []int{4}, after
	v = start(m)
	ep := v.IPMI[m.name]
	l.baremetal("node", "set", uuid, "--driver-info", "ipmi_address="+ep.Host, "--driver-info", "ipmi_port="+strconv.Itoa(ep.Port),
		"--driver-info", "ipmi_username="+v.Username, "--driver-info", "ipmi_password="+v.Password)
	if _, stderr, err := l.baremetalErr("node", "inspect", uuid, "--wait", "900"); err != nil {
		n := l.node(uuid)
		t.Fatalf("re-inspection: %v\n%s\nprovision_state %v, last_error %v", err, stderr, n["provision_state"], n["last_error"])
	}
	t.Logf("re-inspection: %s", l.timeline(uuid))

	// The API: exactly the pulled disk and the moved NIC.
	code, body := l.apiGet("/ferro/v1/nodes/" + uuid + "/hardware/changes")
	var got struct {
		PreviousInspection *string `json:"previous_inspection"`
		Changes            []struct {
			Component, ID, Change, Field, Old, New string
		} `json:"changes"`
	}
	if code != 200 || json.Unmarshal(body, &got) != nil {
		t.Fatalf("changes: %d %s", code, body)
	}
	if got.PreviousInspection == nil || len(got.Changes) != 2 {
		t.Fatalf("changes = %s, want the removed disk and the moved NIC", body)
	}
	disk, nic := got.Changes[0], got.Changes[1]
	if disk.Component != "disk" || disk.Change != "removed" || disk.ID != "/dev/vdb" || !strings.Contains(disk.Old, "2 GiB") {
		t.Errorf("first change = %+v, want /dev/vdb (2 GiB, the second virtio disk) removed", disk)
	}
	if nic.Component != "nic" || nic.ID != m.mac || nic.Change != "changed" || nic.Field != "switch_port" ||
		!strings.HasSuffix(nic.Old, "port "+lldpPorts[before]) || !strings.HasSuffix(nic.New, "port "+lldpPorts[after]) {
		t.Errorf("second change = %+v, want %s moved from lldpd's port %s to %s", nic, m.mac, lldpPorts[before], lldpPorts[after])
	}

	// The history: one line saying both.
	var history struct {
		History []struct {
			Event     string `json:"event"`
			EventType string `json:"event_type"`
		} `json:"history"`
	}
	code, body = l.apiGet("/v1/nodes/" + uuid + "/history?detail=true")
	if code != 200 || json.Unmarshal(body, &history) != nil {
		t.Fatalf("history: %d %s", code, body)
	}
	var lines []string
	for _, e := range history.History {
		if e.EventType == "hardware changes" {
			lines = append(lines, e.Event)
		}
	}
	if len(lines) != 1 || !strings.HasPrefix(lines[0], "2 hardware changes: disk /dev/vdb removed") || !strings.Contains(lines[0], lldpPorts[after]) {
		t.Errorf("hardware change history = %q, want one line with the disk and the NIC", lines)
	}

	// The web view: the machine's page lists the same two.
	code, body = l.apiGet("/ui/machines/" + uuid)
	rows := regexp.MustCompile(`<tr class="change-(\w+)">(.*?)</tr>`).FindAllStringSubmatch(string(body), -1)
	if code != 200 || len(rows) != 2 || rows[0][1] != "removed" || !strings.Contains(rows[0][2], "/dev/vdb") ||
		rows[1][1] != "changed" || !strings.Contains(rows[1][2], lldpPorts[after]) {
		t.Errorf("web view: %d, change rows %q", code, rows)
	}
}
