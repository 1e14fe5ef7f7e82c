package metal3_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gophercloud/gophercloud/v2"
	"github.com/gophercloud/gophercloud/v2/openstack/baremetal/noauth"
	"github.com/gophercloud/gophercloud/v2/openstack/baremetal/v1/nodes"

	"github.com/ferrometal/ferro/internal/testing/ferrotest"
	"github.com/ferrometal/ferro/internal/testing/vbmctest"
	"github.com/ferrometal/ferro/internal/vbmc"
	"github.com/ferrometal/ferro/test/inspection"
)

const (
	bmcUser     = "admin"
	bmcPassword = "metal3-bmc-secret"
	machine     = "worker-0"
	// stepTimeout bounds one reconcile loop (a state ferro must reach).
	stepTimeout = 3 * time.Minute
)

func TestBMO_IPMI(t *testing.T) {
	t.Parallel()
	walk(t, "ipmi")
}

func TestBMO_RedfishVirtualMedia(t *testing.T) {
	t.Parallel()
	walk(t, "redfish-virtualmedia")
}

// lab is one ferro serve configured as metal3's Ironic, a virtual BMC
// with one machine, and an HTTP server for the deploy images and ferro's
// HTTP boot root.
type lab struct {
	srv      *ferrotest.Server
	bmc      *vbmctest.VBMC
	httpRoot string
	images   string // base URL of the deploy kernel and ramdisk
}

func startLab(t *testing.T) *lab {
	t.Helper()
	dir := t.TempDir()
	l := &lab{httpRoot: filepath.Join(dir, "httpboot")}
	for _, d := range []string{l.httpRoot, filepath.Join(dir, "images")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	// Not real images: nothing boots them; ferro reads them to build a
	// virtual media ISO, and the BMC fetches that.
	for name, data := range map[string]string{"ironic-python-agent.kernel": "kernel\n", "ironic-python-agent.initramfs": "initramfs\n"} {
		if err := os.WriteFile(filepath.Join(dir, "images", name), []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	files := httptest.NewServer(http.FileServer(http.Dir(dir)))
	t.Cleanup(files.Close)
	l.images = files.URL + "/images"

	m := vbmctest.FakeMachines(machine, 1)[0]
	m.Name, m.MACs, m.CPUs, m.MemoryMB = machine, []string{pxeMAC, otherMAC}, 2, 4096
	l.bmc = vbmctest.Start(t, vbmctest.Config{Username: bmcUser, Password: bmcPassword, Machines: []vbmc.MachineConfig{m}, RequestLog: true})

	// metal3's Ironic, as ironic-image configures it where ferro has the
	// option: the agent inspect interface (with ferro's inspector enabled
	// too, for diagnosis mode), noop networking, LLDP parsing, the
	// callback on the API's own URL. The fake deploy interface is the
	// default so that provisioning needs no image (BMO sends no
	// deploy_interface).
	port := ferrotest.FreePort(t)
	api := "http://127.0.0.1:" + strconv.Itoa(port)
	conf := filepath.Join(dir, "ferro.conf")
	body := fmt.Sprintf(`[DEFAULT]
enabled_hardware_types = ipmi,redfish
enabled_boot_interfaces = ipxe,pxe,redfish-virtual-media
enabled_deploy_interfaces = direct,fake
default_deploy_interface = fake
enabled_firmware_interfaces = no-firmware,redfish
enabled_inspect_interfaces = agent,redfish,inspector,no-inspect
default_inspect_interface = agent
enabled_management_interfaces = ipmitool,redfish
enabled_network_interfaces = noop
default_network_interface = noop
enabled_power_interfaces = ipmitool,redfish
enabled_raid_interfaces = no-raid,agent,redfish
[conductor]
automated_clean = true
power_state_change_timeout = 20
[deploy]
http_root = %[1]s
http_url = %[2]s/httpboot
[inspector]
extra_kernel_params = ipa-inspection-collectors=default,logs ipa-collect-lldp=1
hooks = $default_hooks,parse-lldp
require_managed_boot = true
allow_loopback_callback = true
[service_catalog]
endpoint_override = %[3]s
[ipmi]
min_command_interval = 0.2
[redfish]
connection_attempts = 2
connection_retry_interval = 1
`, l.httpRoot, files.URL, api)
	if err := os.WriteFile(conf, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	l.srv = ferrotest.Start(t, ferrotest.WithPort(port), ferrotest.WithConfig(conf))
	return l
}

// newClient is BMO's IronicClient: noauth, the endpoint with /v1/, the
// baseline microversion until the version check chose one.
func newClient(t *testing.T, endpoint string, tr *transcript) *gophercloud.ServiceClient {
	t.Helper()
	c, err := noauth.NewBareMetalNoAuth(noauth.EndpointOpts{IronicEndpoint: endpoint})
	if err != nil {
		t.Fatal(err)
	}
	c.Microversion = fmt.Sprintf("1.%d", baseline)
	c.HTTPClient = http.Client{Transport: tr, Timeout: 30 * time.Second}
	return c
}

// walk takes one BareMetalHost through BMO's sequence against ferro.
func walk(t *testing.T, scheme string) {
	ctx := t.Context()
	var isoinfo string
	if scheme == "redfish-virtualmedia" {
		isoinfo = ferrotest.RequireTool(t, "isoinfo")
	}
	l := startLab(t)
	rec := newRecorder(t)

	h := host{
		namespace: "metal3", name: machine, uid: "6c3c0b8e-3f7e-4d0a-9a47-3b1f0c6a2d11",
		username: bmcUser, password: bmcPassword, bootMAC: pxeMAC, bootMode: "UEFI",
		automatedCleaning: true, rootDeviceName: "/dev/vda",
		image:    image{url: "http://images.example/ubuntu.qcow2", checksum: strings.Repeat("ab", 32), checksumType: "sha256"},
		userData: "#cloud-config\nhostname: worker-0\n",
	}
	var bootConfig func() (*inspection.BootConfig, error)
	switch scheme {
	case "ipmi":
		ep := l.bmc.IPMI[machine]
		h.bmcAddress = fmt.Sprintf("ipmi://%s:%d", ep.Host, ep.Port)
		bootConfig = ipxeBootConfig(l.httpRoot)
	default:
		u, _ := url.Parse(l.bmc.RedfishURL)
		h.bmcAddress = "redfish-virtualmedia+http://" + u.Host + "/redfish/v1/Systems/" + machine
		bootConfig = vmediaBootConfig(isoinfo, l.bmc.StateDir)
	}
	access, err := parseBMC(h.bmcAddress)
	if err != nil {
		t.Fatal(err)
	}
	client := newClient(t, l.srv.URL+"/v1/", rec.transcript)

	// 1. The provisioner factory: version check, then a driver must be
	// listed.
	f, err := checkVersion(ctx, client)
	if rec.ok("version check (GET /v1/)", versionGap(f, err)) {
		client.Microversion = f.chooseMicroversion()
	} else {
		client.Microversion = fmt.Sprintf("1.%d", f.maxVersion)
		rec.lowered("going on at the server's maximum, %s, instead of BMO's %s or more", client.Microversion, features{maxVersion: baseline}.chooseMicroversion())
	}
	rec.ok("conductor check (GET /v1/drivers)", checkConductor(ctx, client))

	p := &provisioner{client: client, features: f, host: h, bmc: access,
		config: deployConfig{kernelURL: l.images + "/ironic-python-agent.kernel", ramdiskURL: l.images + "/ironic-python-agent.initramfs"}}
	if rec.diagnose {
		p.fallback = &fallbacks{rec: rec}
	}

	// 2. Registering: create, port, manage, configure; then the
	// HostFirmwareComponents and HostFirmwareSettings reads.
	rec.must("register (node create with inspect_interface=agent, port, manage, configure)",
		reconcile(ctx, p, stepTimeout, func() (result, error) { return p.register(ctx, true) }, nil))
	rec.ok("registered node as BMO needs it", checkRegistered(ctx, p))
	if fw, err := p.firmwareComponents(ctx); rec.ok("firmware components after registration (GET /v1/nodes/{n}/firmware)", err) {
		t.Logf("firmware components: %+v", fw)
	}
	if s, err := p.firmwareSettings(ctx); rec.ok("BIOS settings (GET /v1/nodes/{n}/bios?detail=True)", err) {
		t.Logf("%d BIOS settings", len(s))
	}

	// 3. Inspecting, with the agent posting IPA 12's report to the
	// callback URL on the ramdisk's kernel command line.
	rec.ok("capacity before inspecting (GET /v1/nodes?fields=…)", capacity(ctx, p))
	ag := &agent{bootConfig: bootConfig}
	var inv *inventoryAnswer
	err = reconcile(ctx, p, stepTimeout, func() (result, error) {
		res, data, err := p.inspectHardware(ctx)
		if data != nil {
			inv = &inventoryAnswer{data: data, raw: rec.transcript.lastInventory()}
		}
		return res, err
	}, func() error {
		if p.cached == nil || p.cached.ProvisionState != "inspect wait" {
			return nil
		}
		_, err := ag.tryPost(ctx)
		return err
	})
	if !ag.posted && err != nil {
		err = fmt.Errorf("%w; the agent found no callback URL in the ramdisk's boot configuration", err)
	}
	rec.must("inspect (provision verb inspect, poll, GET /v1/nodes/{n}/inventory)", err)
	rec.ok("agent's report accepted at the bare metal API's /v1/continue_inspection", ag.checkAnswer(p.nodeID))
	checkHardware(rec, inv)
	if fw, err := p.firmwareComponents(ctx); rec.ok("firmware components after inspection", err) {
		t.Logf("firmware components: %+v", fw)
	}

	// 4. Preparing (no RAID, BIOS or firmware changes), then the host is
	// available: BMO powers it on (spec.online), and off again when
	// spec.online turns false (soft first).
	rec.ok("prepare", reconcile(ctx, p, stepTimeout, func() (result, error) { return p.prepare(ctx) }, nil))
	rec.ok("power on", reconcile(ctx, p, stepTimeout, func() (result, error) { return p.powerOn(ctx) }, nil))
	rec.ok("the BMC is on", machinePower(t, l.bmc, "On"))
	rec.ok("power off (soft, then hard if refused)", reconcile(ctx, p, stepTimeout, func() (result, error) { return p.powerOff(ctx, false) }, nil))
	rec.ok("the BMC is off", machinePower(t, l.bmc, "Off"))

	// 5. Provisioning: provide, instance_info, validate, active with a
	// config drive; the fake deploy makes it active.
	rec.ok("capacity before provisioning", capacity(ctx, p))
	rec.ok("provision (provide, instance_info, validate, active with configdrive)",
		reconcile(ctx, p, stepTimeout, func() (result, error) { return p.provision(ctx) }, nil))

	// 6. Deprovisioning, powering off before delete, deleting.
	rec.ok("capacity before deprovisioning", capacity(ctx, p))
	rec.ok("deprovision (deleted → cleaning → available)",
		reconcile(ctx, p, stepTimeout, func() (result, error) { return p.deprovision(ctx) }, nil))
	rec.ok("power off before delete (hard)", reconcile(ctx, p, stepTimeout, func() (result, error) { return p.powerOff(ctx, true) }, nil))
	rec.ok("delete", reconcile(ctx, p, stepTimeout, func() (result, error) { return p.deleteNode(ctx) }, nil))
	if _, err := p.getNode(ctx); err != errNeedsRegistration {
		rec.ok("node gone after delete", fmt.Errorf("GET /v1/nodes/%s after delete: %v, want 404", p.nodeID, err))
	}
	ferrotest.AssertNoSecrets(t, "ferro serve", l.srv.Log(), bmcPassword)
}

// capacity asks HasCapacity; a lone host must have room.
func capacity(ctx context.Context, p *provisioner) error {
	ok, err := p.hasCapacity(ctx)
	if err == nil && !ok {
		err = errors.New("no capacity for the only host")
	}
	return err
}

// versionGap explains a failed version check with what ferro lacks.
func versionGap(f features, err error) error {
	if err != nil && f.maxVersion > 0 && f.maxVersion < baseline {
		return fmt.Errorf("%w (BMO's own refusal: ferro serves at most 1.%d; BMO needs 1.89 and uses up to 1.110: issue 16 §6)", err, f.maxVersion)
	}
	return err
}

// checkRegistered checks what BMO sent is what the node has.
func checkRegistered(ctx context.Context, p *provisioner) error {
	p.cached = nil
	n, err := p.getNode(ctx)
	if err != nil {
		return err
	}
	var bad []string
	if n.ProvisionState != "manageable" {
		bad = append(bad, "provision_state "+n.ProvisionState)
	}
	if n.InspectInterface != "agent" {
		bad = append(bad, fmt.Sprintf("inspect_interface %q, want agent", n.InspectInterface))
	}
	if n.Name != p.host.nodeName() {
		bad = append(bad, "name "+n.Name)
	}
	if p.bmc.firmwareInterface != "" && n.FirmwareInterface != p.bmc.firmwareInterface {
		bad = append(bad, fmt.Sprintf("firmware_interface %q, want %q", n.FirmwareInterface, p.bmc.firmwareInterface))
	}
	if n.DriverInfo["deploy_kernel"] != p.config.kernelURL || n.DriverInfo["deploy_ramdisk"] != p.config.ramdiskURL {
		bad = append(bad, fmt.Sprintf("driver_info deploy_kernel %v deploy_ramdisk %v", n.DriverInfo["deploy_kernel"], n.DriverInfo["deploy_ramdisk"]))
	}
	if n.AutomatedClean == nil || !*n.AutomatedClean {
		bad = append(bad, "automated_clean not true")
	}
	if len(bad) > 0 {
		return fmt.Errorf("node %s: %s", n.UUID, strings.Join(bad, "; "))
	}
	return nil
}

// inventoryAnswer is GET /v1/nodes/{n}/inventory, decoded and raw.
type inventoryAnswer struct {
	data *nodes.InventoryData
	raw  []byte
}

// machinePower waits for the virtual BMC's own view of the machine.
func machinePower(t *testing.T, v *vbmctest.VBMC, want string) error {
	end := time.Now().Add(stepTimeout)
	for {
		st, err := v.FetchState()
		if err != nil {
			return err
		}
		if st[machine].Power == want {
			return nil
		}
		if time.Now().After(end) {
			return fmt.Errorf("the BMC says %s, want %s", st[machine].Power, want)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// checkHardware compares the details BMO builds with what the report
// says. The PXE NIC and LLDP come from plugin_data in Ironic's shape
// (validate-interfaces' all_interfaces, parse-lldp's parsed_lldp).
func checkHardware(rec *recorder, inv *inventoryAnswer) {
	if inv == nil {
		rec.ok("hardware details", errors.New("no inventory answer"))
		return
	}
	rec.ok("stored inventory is the agent's, field for field, as gophercloud v2.13 (BMO's) decodes it", checkRawInventory(inv.raw))
	hw := buildHardwareDetails(inv.data)
	if hw.pluginDataErr != nil {
		rec.ok("plugin_data decodes as Ironic's standard plugin data", hw.pluginDataErr)
	}
	var bad []string
	wantCPU := cpu{arch: "x86_64", model: "QEMU Virtual CPU version 2.5+", clockMHz: 2394, count: 2,
		flags: []string{"apic", "cmov", "cx8", "de", "fpu", "hypervisor", "mce", "msr", "mtrr", "pae", "pge", "pse", "sep", "tsc"}}
	if !reflect.DeepEqual(hw.cpu, wantCPU) {
		bad = append(bad, fmt.Sprintf("CPU %+v, want %+v", hw.cpu, wantCPU))
	}
	if hw.ramMebibytes != 4096 {
		bad = append(bad, fmt.Sprintf("RAM %d MiB, want 4096", hw.ramMebibytes))
	}
	byPath := "/dev/disk/by-path/pci-0000:04:00.0"
	wantDisk := []storage{{name: byPath, alternateNames: []string{"/dev/vda", byPath}, rotational: true, kind: "HDD", sizeBytes: 21474836480}}
	if !reflect.DeepEqual(hw.storage, wantDisk) {
		bad = append(bad, fmt.Sprintf("storage %+v, want %+v", hw.storage, wantDisk))
	}
	if hw.hostname != "worker-0" || hw.vendor != [3]string{"QEMU", "Standard PC (Q35 + ICH9, 2009)", "ferro-metal3-0"} ||
		hw.bios != [3]string{"EFI Development Kit II / OVMF", "0.0.0", "02/06/2015"} {
		bad = append(bad, fmt.Sprintf("hostname %q, vendor %q, BIOS %q", hw.hostname, hw.vendor, hw.bios))
	}
	// One NIC per address: eth0's IPv4 and IPv6, eth1 without.
	var names []string
	for _, n := range hw.nics {
		names = append(names, n.name+"/"+n.ip)
	}
	if want := []string{"eth0/192.168.122.57", "eth0/fe80::5054:ff:fe12:3456%eth0", "eth1/"}; !slices.Equal(names, want) {
		bad = append(bad, fmt.Sprintf("NICs %q, want %q", names, want))
	}
	if len(bad) > 0 {
		rec.ok("hardware details: CPU, RAM, storage, NICs, hostname, vendor", errors.New(strings.Join(bad, "; ")))
	} else {
		rec.ok("hardware details: CPU, RAM, storage, NICs, hostname, vendor", nil)
	}

	var pxe, lldps []string
	for _, n := range hw.nics {
		if n.pxe != (n.mac == pxeMAC) {
			pxe = append(pxe, fmt.Sprintf("%s pxe=%v", n.name, n.pxe))
		}
		want := (*lldp)(nil)
		if n.name == "eth0" {
			want = &lldp{switchID: "0c:8d:db:4f:2a:80", portID: "ge-0/0/7", switchSystemName: "sw-lab-01"}
		}
		if !reflect.DeepEqual(n.lldp, want) {
			lldps = append(lldps, fmt.Sprintf("%s lldp=%+v, want %+v", n.name, n.lldp, want))
		}
	}
	if len(pxe) > 0 {
		rec.ok("hardware details: the PXE NIC marked", fmt.Errorf("%s: plugin_data has no all_interfaces[<nic>].pxe_enabled (Ironic's validate-interfaces hook, issue 16 §3)", strings.Join(pxe, ", ")))
	} else {
		rec.ok("hardware details: the PXE NIC marked", nil)
	}
	if len(lldps) > 0 {
		rec.ok("hardware details: LLDP", fmt.Errorf("%s: plugin_data has no parsed_lldp[<nic>] (Ironic's parse-lldp hook, issue 16 §3)", strings.Join(lldps, "; ")))
	} else {
		rec.ok("hardware details: LLDP", nil)
	}
}

// checkRawInventory compares the stored inventory with the report's, and
// checks cpu.frequency is a JSON string: gophercloud v2.13's CPUType
// decodes it into a string, so a number would fail BMO's whole Extract.
func checkRawInventory(raw []byte) error {
	var got struct {
		Inventory map[string]any `json:"inventory"`
	}
	var sent struct {
		Inventory map[string]any `json:"inventory"`
	}
	if err := json.Unmarshal(raw, &got); err != nil {
		return fmt.Errorf("decode the answer: %w", err)
	}
	if err := json.Unmarshal(ipa12Report, &sent); err != nil {
		return err
	}
	if cpu, _ := got.Inventory["cpu"].(map[string]any); cpu == nil {
		return errors.New("no inventory.cpu")
	} else if _, ok := cpu["frequency"].(string); !ok {
		return fmt.Errorf("inventory.cpu.frequency is %T, not a string", cpu["frequency"])
	}
	if !reflect.DeepEqual(got.Inventory, sent.Inventory) {
		var diff []string
		for k, v := range sent.Inventory {
			if !reflect.DeepEqual(got.Inventory[k], v) {
				diff = append(diff, k)
			}
		}
		for k := range got.Inventory {
			if _, ok := sent.Inventory[k]; !ok {
				diff = append(diff, k+" (added)")
			}
		}
		slices.Sort(diff)
		return fmt.Errorf("stored inventory differs from the report's in %s", strings.Join(diff, ", "))
	}
	return nil
}
