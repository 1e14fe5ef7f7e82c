package vm_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ferrometal/ferro/internal/ramdisk"
	sqlstore "github.com/ferrometal/ferro/internal/store/sql"
	"github.com/ferrometal/ferro/internal/testing/ferrotest"
	"github.com/ferrometal/ferro/internal/testing/vbmctest"
	"github.com/ferrometal/ferro/internal/vbmc"
)

// machine is one QEMU machine of the lane and how ferro drives it; the
// inspection must find exactly what it is.
type machine struct {
	name, mac, tap string
	driver, boot   string // ipmi or redfish; pxe, ipxe or redfish-virtual-media
	uefi           bool
	q35            bool // QEMU's q35 (AHCI disks and CD) rather than pc (IDE); UEFI machines are q35
	cpus, memMB    int
	disksGB        []int
	serial         string
	sku            string // SMBIOS type 1 SKU Number, "" for none
	onboard        bool   // the NIC is SMBIOS type 41 instance 1: biosdevname em1
	// inspect is the inspect interface: agent (Ironic master's, the
	// report to the bare metal API) for pxe, ipxe and virtual media, and
	// inspector (the 2023.1 compatibility mode) on one iPXE machine.
	inspect string
}

var machines = []machine{
	{name: "bios-pxe", mac: "52:54:00:77:10:01", tap: "tap0", driver: "ipmi", boot: "pxe", cpus: 1, memMB: 1024, disksGB: []int{4}, serial: "LAB-PXE-1", inspect: "agent"},
	{name: "bios-ipxe", mac: "52:54:00:77:10:02", tap: "tap1", driver: "ipmi", boot: "ipxe", cpus: 2, memMB: 1024, disksGB: []int{5, 2}, serial: "LAB-IPXE-2", sku: "SKU-IPXE-2", onboard: true, inspect: "inspector"},
	{name: "bios-vmedia", mac: "52:54:00:77:10:03", tap: "tap2", driver: "redfish", boot: "redfish-virtual-media", q35: true, cpus: 1, memMB: 1024, disksGB: []int{6}, serial: "LAB-VMEDIA-3", inspect: "agent"},
	{name: "uefi-ipxe", mac: "52:54:00:77:10:04", tap: "tap3", driver: "ipmi", boot: "ipxe", uefi: true, cpus: 1, memMB: 1024, disksGB: []int{4}, serial: "LAB-UEFI-4", inspect: "agent"},
}

// maxParallelVMs caps the machines booting at once (two cores, TCG).
const maxParallelVMs = 3

var (
	ramdiskOnce sync.Once
	ramdiskDir  string
	ramdiskErr  error
)

func TestMain(m *testing.M) {
	code := m.Run()
	if ramdiskDir != "" {
		os.RemoveAll(ramdiskDir)
	}
	os.Exit(code)
}

// builtRamdisk is `ferro ramdisk build`'s kernel and initramfs (Debian's
// kernel, cached in the user cache directory), built once per test binary.
func builtRamdisk(t *testing.T) string {
	t.Helper()
	ferrotest.RequireTool(t, "apt-get")
	ferrotest.RequireTool(t, "dpkg-deb")
	ramdiskOnce.Do(func() {
		ramdiskDir, ramdiskErr = os.MkdirTemp("", "ferro-vm-ramdisk-")
		if ramdiskErr != nil {
			return
		}
		wd, _ := os.Getwd()
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
		defer cancel()
		var res *ramdisk.Result
		res, ramdiskErr = ramdisk.Build(ctx, ramdisk.BuildOptions{
			CacheDir: ramdisk.DefaultKernelCache(), AgentSource: ramdisk.FindSource(wd), OutDir: ramdiskDir})
		if ramdiskErr == nil {
			t.Logf("ramdisk: kernel %d bytes, initramfs %d bytes", res.KernelBytes, res.InitramfsBytes)
		}
	})
	if ramdiskErr != nil {
		t.Fatalf("ramdisk build: %v", ramdiskErr)
	}
	return ramdiskDir
}

// lldpd runs Debian's lldpd in the lab's namespace on the machines' taps
// (the bridge's ports) and returns what it says it sends on each: chassis
// ID and port ID.
func (l *lab) lldpd(t *testing.T, taps []string) (chassis string, ports map[string]string) {
	t.Helper()
	bin := ferrotest.RequireTool(t, "lldpd", "/usr/sbin")
	cli := ferrotest.RequireTool(t, "lldpcli", "/usr/sbin")
	// lldpcli drops privileges: the control socket's directory must be reachable.
	dir, err := os.MkdirTemp("", "ferro-lldpd-")
	if err != nil {
		t.Fatal(err)
	}
	os.Chmod(dir, 0o755)
	sock := filepath.Join(dir, "lldpd.sock")
	d := l.ns.Command(bin, "-d", "-u", sock, "-I", strings.Join(taps, ","), "-C", taps[0], "-S", "ferro lab switch")
	var out logBuffer
	d.Stdout, d.Stderr = &out, &out
	if err := d.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		d.Process.Kill()
		d.Wait()
		os.RemoveAll(dir)
		if t.Failed() {
			t.Logf("lldpd output:\n%s", tail(out.String(), 4000))
		}
	})
	ctl := func(args ...string) ([]byte, error) {
		return l.ns.Command(cli, append([]string{"-u", sock}, args...)...).CombinedOutput()
	}
	// Send every second, so that the agent's few seconds of capture see a
	// frame. lldpd may acknowledge the setting before its start-up is done
	// and keep 30 s: configure until the setting reads back.
	deadline := time.Now().Add(time.Minute)
	for {
		b, err := ctl("configure", "lldp", "tx-interval", "1")
		if err == nil {
			b, err = ctl("show", "configuration")
			if err == nil && strings.Contains(string(b), "Transmit delay: 1") {
				break
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("lldpd's tx-interval does not read back as 1 s: %v: %s", err, b)
		}
		time.Sleep(200 * time.Millisecond) // lldpd creates its socket at start; no event to wait for
	}
	// lldpd may not notice at once that a tap came up when QEMU opened
	// it, and sent nothing in a minute on a busy machine: ask it to send
	// now, every second, for the rest of the test ("lldpcli update"
	// re-reads the interfaces and sends an LLDPDU on each).
	ferrotest.Repeat(t, time.Second, func() { _, _ = ctl("update") })
	b, err := ctl("-f", "json", "show", "interfaces")
	if err != nil {
		t.Fatalf("lldpcli show interfaces: %v: %s", err, b)
	}
	ports = map[string]string{}
	// {"lldp":{"interface":{"tap0":{"chassis":{"<name>":{"id":{"type":"mac","value":"…"}}},"port":{"id":{"type":"mac","value":"…"}}}}}}
	var shown struct {
		LLDP struct {
			Interface json.RawMessage `json:"interface"`
		} `json:"lldp"`
	}
	if err := json.Unmarshal(b, &shown); err != nil {
		t.Fatalf("lldpcli json %s: %v", b, err)
	}
	type iface struct {
		Chassis map[string]struct {
			ID struct{ Type, Value string } `json:"id"`
		} `json:"chassis"`
		Port struct {
			ID struct{ Type, Value string } `json:"id"`
		} `json:"port"`
	}
	byName := map[string]iface{}
	if err := json.Unmarshal(shown.LLDP.Interface, &byName); err != nil {
		// several interfaces come as a list of one-key objects
		var list []map[string]iface
		if err := json.Unmarshal(shown.LLDP.Interface, &list); err != nil {
			t.Fatalf("lldpcli interfaces %s: %v", shown.LLDP.Interface, err)
		}
		for _, m := range list {
			for k, v := range m {
				byName[k] = v
			}
		}
	}
	for name, i := range byName {
		ports[name] = i.Port.ID.Value
		for _, c := range i.Chassis {
			chassis = c.ID.Value
		}
	}
	l.lldpStats = func() string {
		b, _ := ctl("show", "statistics")
		return string(b)
	}
	if chassis == "" || len(ports) != len(taps) {
		t.Fatalf("lldpd identity: chassis %q ports %v from %s", chassis, ports, b)
	}
	return chassis, ports
}

// TestInspect_QEMUMachinesWithTheBaremetalCLI is the QEMU lane: four
// machines behind ferro-vbmc — ipmi + pxe (BIOS, PXELINUX over TFTP), ipmi
// + ipxe (HTTP), redfish + redfish-virtual-media (the ISO as a CD on q35's
// AHCI, as in ferro lab), and a UEFI (OVMF) machine with ipxe — inspected
// by `baremetal node inspect --wait`, three at a time, each result checked
// against what QEMU was told the machine is, and nothing left behind.
func TestInspect_QEMUMachinesWithTheBaremetalCLI(t *testing.T) {
	ferrotest.RequireTool(t, "qemu-system-x86_64")
	images := builtRamdisk(t)
	kernel := "file://" + filepath.Join(images, ramdisk.KernelFile)
	initrd := "file://" + filepath.Join(images, ramdisk.InitramfsFile)
	// The agent stops listening at the first frame; lldpd sends every
	// second once QEMU has opened the machine's tap.
	params := "console=ttyS0 panic=-1 loglevel=4 cryptomgr.notests=1 ipa-lldp-timeout=30 ipa-debug=1"
	l := startLab(t,
		"FERRO_CONDUCTOR_FILE_URL_ALLOWED_PATHS="+images,
		"FERRO_INSPECTOR_CALLBACK_ENDPOINT_OVERRIDE=http://"+bridgeIP+":5050",
		"FERRO_PXE_KERNEL_APPEND_PARAMS="+params,
		"FERRO_REDFISH_KERNEL_APPEND_PARAMS="+params,
		"FERRO_DEPLOY_DEFAULT_BOOT_MODE=bios",
		"FERRO_IPMI_MIN_COMMAND_INTERVAL=1",
		"FERRO_INSPECTOR_POWER_OFF=true",
		// The agent interface's callback, and the hooks that learn what
		// the inspector's defaults learn (properties, the switch port).
		"FERRO_SERVICE_CATALOG_ENDPOINT_OVERRIDE="+apiURL,
		"FERRO_INSPECTOR_HOOKS=$default_hooks,cpus,memory,root-device,parse-lldp,local-link-connection",
	)
	var taps []string
	for _, m := range machines {
		l.ns.AddTap(m.tap)
		taps = append(taps, m.tap)
	}
	chassis, lldpPorts := l.lldpd(t, taps)

	consoles := t.TempDir()
	var vms []vbmc.MachineConfig
	for _, m := range machines {
		q := &vbmc.QEMUConfig{Taps: []string{m.tap}, IPMIDevice: true, Accel: "auto", OnboardNICs: m.onboard,
			ConsoleLog: filepath.Join(consoles, m.name+".log")}
		if m.q35 || m.uefi {
			q.Machine = "q35" // SeaBIOS boots the CD from AHCI, as ferro lab's machines do
		}
		if m.uefi {
			q.Firmware = "uefi"
		}
		mc := vbmc.MachineConfig{Name: m.name, Backend: "qemu", CPUs: m.cpus, MemoryMB: m.memMB,
			MACs: []string{m.mac}, DisksGB: m.disksGB, Manufacturer: "FerroLab", Product: "lane-" + m.driver, Serial: m.serial, SKU: m.sku, QEMU: q}
		vms = append(vms, mc)
	}
	v := vbmctest.Start(t, vbmctest.Config{Machines: vms, Listen: bridgeIP, Netns: l.ns.Name})

	sem := make(chan struct{}, maxParallelVMs)
	uuids := make([]string, len(machines))
	t.Run("machines", func(t *testing.T) {
		for i, m := range machines {
			t.Run(m.name, func(t *testing.T) {
				t.Parallel()
				sem <- struct{}{}
				defer func() { <-sem }()
				uuids[i] = l.inspectMachine(t, v, m, kernel, initrd, filepath.Join(consoles, m.name+".log"), chassis, lldpPorts[m.tap])
			})
		}
	})

	// Nothing left: no lease, no boot file, no ISO; every VM off.
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	for _, uuid := range uuids {
		if uuid == "" {
			continue
		}
		if err := l.waitLog(ctx, regexp.MustCompile(`dhcp: lease released.*node=`+uuid)); err != nil {
			t.Errorf("node %s: %v", uuid, err)
		}
	}
	db, err := sqlstore.Open(t.Context(), "sqlite://"+filepath.Join(l.dir, "data", "ferro.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if leases, err := db.ListLeases(t.Context()); err != nil || len(leases) != 0 {
		t.Errorf("leases left: %v %v", leases, err)
	}
	for _, root := range []string{l.tftpRoot, l.httpRoot} {
		filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
			if err != nil {
				return nil
			}
			rel, _ := filepath.Rel(root, p)
			for _, uuid := range uuids {
				if uuid != "" && strings.Contains(rel, uuid) {
					t.Errorf("left behind: %s", p)
				}
			}
			if strings.HasSuffix(p, ".iso") || (strings.HasPrefix(rel, "pxelinux.cfg/") && d.Type()&os.ModeSymlink != 0) {
				t.Errorf("left behind: %s", p)
			}
			return nil
		})
	}
	for _, m := range machines {
		if st := l.vbmcPower(v, m.name); st != "Off" {
			t.Errorf("machine %s is %s after inspection, want Off", m.name, st)
		}
	}
}

// inspectMachine enrols the machine with the CLI, inspects it with
// `baremetal node inspect --wait` and checks the result; it returns the
// node's UUID.
func (l *lab) inspectMachine(t *testing.T, v *vbmctest.VBMC, m machine, kernel, initrd, console, chassis, lldpPort string) string {
	args := []string{"node", "create", "--name", m.name, "--driver", m.driver, "--boot-interface", m.boot,
		"--network-interface", "noop", "--inspect-interface", m.inspect,
		"--driver-info", "deploy_kernel=" + kernel, "--driver-info", "deploy_ramdisk=" + initrd,
		"-f", "value", "-c", "uuid"}
	mode := "bios"
	if m.uefi {
		mode = "uefi"
	}
	args = append(args, "--property", "capabilities=boot_mode:"+mode)
	switch m.driver {
	case "ipmi":
		ep := v.IPMI[m.name]
		args = append(args, "--driver-info", "ipmi_address="+ep.Host, "--driver-info", "ipmi_port="+strconv.Itoa(ep.Port),
			"--driver-info", "ipmi_username="+v.Username, "--driver-info", "ipmi_password="+v.Password)
	case "redfish":
		args = append(args, "--driver-info", "redfish_address="+v.RedfishURL, "--driver-info", "redfish_system_id=/redfish/v1/Systems/"+m.name,
			"--driver-info", "redfish_username="+v.Username, "--driver-info", "redfish_password="+v.Password)
	}
	uuid := strings.TrimSpace(l.baremetal(args...))
	l.baremetal("port", "create", m.mac, "--node", uuid, "--pxe-enabled", "true")
	l.baremetal("node", "manage", uuid, "--wait", "120")
	failed := true
	t.Cleanup(func() {
		if failed {
			b, _ := os.ReadFile(console)
			t.Logf("serial console of %s (tail):\n%s", m.name, tail(string(ansiRE.ReplaceAll(b, nil)), 4000))
		}
	})

	began := time.Now()
	if _, stderr, err := l.baremetalErr("node", "inspect", uuid, "--wait", "900"); err != nil {
		n := l.node(uuid)
		t.Fatalf("baremetal node inspect --wait: %v\n%s\nprovision_state %v, last_error %v", err, stderr, n["provision_state"], n["last_error"])
	}
	took := time.Since(began)
	n := l.node(uuid)
	if n["provision_state"] != "manageable" || n["last_error"] != nil {
		t.Fatalf("after inspection: provision_state %v, last_error %v", n["provision_state"], n["last_error"])
	}
	t.Logf("%s (%s + %s, %s): inspect --wait took %.1f s; %s; agent: %s", m.name, m.driver, m.boot, m.inspect, took.Seconds(), l.timeline(uuid), agentTimes(console))

	props, _ := n["properties"].(map[string]any)
	want := map[string]string{"cpus": strconv.Itoa(m.cpus), "memory_mb": strconv.Itoa(m.memMB), "cpu_arch": "x86_64"}
	for k, w := range want {
		if str(props[k]) != w {
			t.Errorf("properties[%s] = %v, want %s (properties %v)", k, props[k], w, props)
		}
	}
	var inv struct {
		Inventory map[string]any `json:"inventory"`
	}
	code, body := l.apiGet("/v1/nodes/" + uuid + "/inventory")
	if code != 200 || json.Unmarshal(body, &inv) != nil {
		t.Fatalf("inventory: %d %s", code, body)
	}
	checkInventory(t, m, inv.Inventory)

	var ports []map[string]any
	if err := json.Unmarshal([]byte(l.baremetal("port", "list", "--node", uuid, "--long", "-f", "json")), &ports); err != nil || len(ports) != 1 {
		t.Fatalf("ports: %v %v", ports, err)
	}
	llc, _ := ports[0]["Local Link Connection"].(map[string]any)
	if str(llc["switch_id"]) != chassis || str(llc["port_id"]) != lldpPort {
		t.Errorf("local_link_connection = %v, want switch_id %s (lldpd's chassis) port_id %s (lldpd's port on %s); lldpd's statistics:\n%s",
			llc, chassis, lldpPort, m.tap, l.lldpStats())
	}
	if n["power_state"] != "power off" {
		t.Errorf("power_state after inspection %v, want power off", n["power_state"])
	}
	failed = t.Failed()
	return uuid
}

func checkInventory(t *testing.T, m machine, inv map[string]any) {
	t.Helper()
	cpu, _ := inv["cpu"].(map[string]any)
	if str(cpu["count"]) != strconv.Itoa(m.cpus) {
		t.Errorf("cpu = %v, want count %d", cpu, m.cpus)
	}
	mem, _ := inv["memory"].(map[string]any)
	total, _ := strconv.ParseFloat(str(mem["total"]), 64)
	if str(mem["physical_mb"]) != strconv.Itoa(m.memMB) || total <= 0 || total > float64(m.memMB)*(1<<20) {
		t.Errorf("memory = %v, want physical_mb %d and total within it", mem, m.memMB)
	}
	sv, _ := inv["system_vendor"].(map[string]any)
	if str(sv["manufacturer"]) != "FerroLab" || str(sv["product_name"]) != "lane-"+m.driver || str(sv["serial_number"]) != m.serial {
		t.Errorf("system_vendor = %v, want FerroLab lane-%s %s", sv, m.driver, m.serial)
	}
	if sku, ok := sv["sku"]; str(sku) != m.sku || ok != (m.sku != "") {
		t.Errorf("system_vendor.sku = %v, want %q (QEMU's -smbios type=1,sku=)", sku, m.sku)
	}
	ifs, _ := inv["interfaces"].([]any)
	var macs []string
	for _, i := range ifs {
		ifc := i.(map[string]any)
		macs = append(macs, str(ifc["mac_address"]))
		// biosdevname from SMBIOS type 41; none when SMBIOS says nothing
		wantName := ""
		if m.onboard {
			wantName = "em1"
		}
		if name, ok := ifc["biosdevname"]; str(name) != wantName || ok != (wantName != "") {
			t.Errorf("interface %v: biosdevname %v, want %q", ifc["name"], name, wantName)
		}
	}
	if len(macs) != 1 || macs[0] != m.mac {
		t.Errorf("interfaces' MACs = %v, want [%s]", macs, m.mac)
	}
	disks, _ := inv["disks"].([]any)
	var sizes []string
	for _, d := range disks {
		dm := d.(map[string]any)
		if strings.HasPrefix(str(dm["name"]), "/dev/sr") {
			continue // the virtual media CD
		}
		sizes = append(sizes, str(dm["size"]))
	}
	var wantSizes []string
	for _, gb := range m.disksGB {
		wantSizes = append(wantSizes, strconv.FormatInt(int64(gb)<<30, 10))
	}
	if strings.Join(sizes, ",") != strings.Join(wantSizes, ",") {
		t.Errorf("disk sizes = %v, want %v (disks %v)", sizes, wantSizes, disks)
	}
	// QEMU's ipmi-bmc-sim, seen in-band, has no LAN channel: IPA reports 0.0.0.0.
	if str(inv["bmc_address"]) != "0.0.0.0" {
		t.Errorf("bmc_address = %v, want 0.0.0.0 (QEMU's in-band ipmi-bmc-sim)", inv["bmc_address"])
	}
	boot, _ := inv["boot"].(map[string]any)
	wantMode := "bios"
	if m.uefi {
		wantMode = "uefi"
	}
	if str(boot["current_boot_mode"]) != wantMode {
		t.Errorf("boot = %v, want current_boot_mode %s", boot, wantMode)
	}
}

// timeline is the node's netboot and inspection phases from ferro's log,
// in seconds after it entered inspect wait (just after power-on).
func (l *lab) timeline(uuid string) string {
	var start time.Time
	var parts []string
	timeRE := regexp.MustCompile(`^time=(\S+) `)
	for _, line := range strings.Split(l.out.String(), "\n") {
		if !strings.Contains(line, "node="+uuid) {
			continue
		}
		m := timeRE.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		at, err := time.Parse(time.RFC3339Nano, m[1])
		if err != nil {
			continue
		}
		var what string
		switch {
		case strings.Contains(line, `state="inspect wait"`):
			start, what = at, ""
			parts = nil
			continue
		case strings.Contains(line, "netboot: "):
			what = regexp.MustCompile(`netboot: (\w+)`).FindStringSubmatch(line)[1]
		case strings.Contains(line, `msg="introspection ended"`),
			strings.Contains(line, `msg="provision state changed"`) && strings.Contains(line, "event=done"):
			what = "report processed"
		default:
			continue
		}
		if !start.IsZero() {
			parts = append(parts, fmt.Sprintf("%s +%.1fs", what, at.Sub(start).Seconds()))
		}
	}
	return "power-on → " + strings.Join(parts, ", ")
}

// baremetalErr runs the CLI and returns stdout, stderr and the error.
func (l *lab) baremetalErr(args ...string) (string, string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Minute)
	defer cancel()
	full := append([]string{"netns", "exec", l.ns.Name, l.cliBin, "--os-endpoint", apiURL, "--os-auth-type", "none"}, args...)
	cmd := exec.CommandContext(ctx, "ip", full...)
	cmd.Env = l.cliEnv
	var stdout, stderr logBuffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	return stdout.String(), stderr.String(), err
}

// apiGet is a GET of the bare metal API at the latest microversion.
func (l *lab) apiGet(path string) (int, []byte) {
	req, _ := http.NewRequest(http.MethodGet, apiURL+path, nil)
	req.Header.Set("X-OpenStack-Ironic-API-Version", "latest")
	return l.do(req)
}

// vbmcPower is the machine's PowerState as ferro-vbmc's Redfish says.
func (l *lab) vbmcPower(v *vbmctest.VBMC, name string) string {
	req, _ := http.NewRequest(http.MethodGet, v.RedfishURL+"/redfish/v1/Systems/"+name, nil)
	req.SetBasicAuth(v.Username, v.Password)
	code, body := l.do(req)
	var sys struct{ PowerState string }
	if code != 200 || json.Unmarshal(body, &sys) != nil {
		return fmt.Sprintf("unknown (%d %s)", code, body)
	}
	return sys.PowerState
}

func (l *lab) do(req *http.Request) (int, []byte) {
	l.t.Helper()
	resp, err := l.client.Do(req)
	if err != nil {
		l.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 4<<20))
	return resp.StatusCode, b
}

func str(v any) string {
	switch v := v.(type) {
	case nil:
		return ""
	case string:
		return v
	case float64:
		return strconv.FormatFloat(v, 'f', -1, 64)
	}
	return fmt.Sprint(v)
}

// agentTimes reads the agent's own log on the serial console: the kernel's
// uptime when /init started, and each step's elapsed time.
func agentTimes(console string) string {
	b, _ := os.ReadFile(console)
	var parts []string
	re := regexp.MustCompile(`msg="(ferro-agent starting|modules loaded|network up|inventory collected|report posted)"(?: .*?(?:uptime|elapsed)=(\S+))?`)
	for _, m := range re.FindAllStringSubmatch(string(b), -1) {
		parts = append(parts, m[1]+" "+m[2])
	}
	return strings.Join(parts, ", ")
}
