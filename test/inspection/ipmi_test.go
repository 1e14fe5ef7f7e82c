package inspection_test

import (
	"bytes"
	"net/http"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ferrometal/ferro/internal/testing/ferrotest"
	"github.com/ferrometal/ferro/internal/testing/ipmisim"
	"github.com/ferrometal/ferro/internal/testing/vbmctest"
	"github.com/ferrometal/ferro/internal/vbmc"
)

// The spec's managed inspection of an ipmi node (power and management
// ipmitool) whose BMC is Debian's ipmi_sim: what the BMC was told is read
// from ipmi_sim's own state and log.

// ipmiEnv keeps the BMC pacing short for tests; the defaults are Ironic's 5 s and 60 s.
var ipmiEnv = []string{"FERRO_IPMI_MIN_COMMAND_INTERVAL=0", "FERRO_IPMI_COMMAND_RETRY_TIMEOUT=5"}

func ipmiDriverInfo(sim *ipmisim.Sim, password string) map[string]any {
	return map[string]any{"ipmi_address": sim.Address, "ipmi_port": sim.Port, "ipmi_username": sim.Username,
		"ipmi_password": password, "ipmi_cipher_suite": "3"}
}

func TestInspection_IPMI(t *testing.T) {
	for _, kind := range []string{"pxe", "ipxe"} {
		t.Run(kind, func(t *testing.T) {
			t.Parallel()
			sim := ipmisim.Start(t)
			l := startLab(t, ipmiEnv...)
			n := l.enroll(nodeSpec{driver: "ipmi", boot: kind, network: "noop",
				driverInfo: ipmiDriverInfo(sim, sim.Password), ports: []portSpec{{mac: newMAC()}}})
			got := l.get(n)
			if got["power_state"] != "power off" || field(got, "driver_info", "ipmi_password") != "******" {
				t.Fatalf("after manage: power_state %v, driver_info.ipmi_password %v; want power off and ******",
					got["power_state"], field(got, "driver_info", "ipmi_password"))
			}

			l.inspect(n)
			if !sim.PowerOn(t) {
				t.Error("ipmi_sim is not powered on while the node waits for its report")
			}
			if dev := sim.BootDevice(t); dev != "pxe" {
				t.Errorf("ipmi_sim boot device = %q, want pxe", dev)
			}
			// ferro's default boot mode is uefi, as Ironic's: the boot flags
			// went as Ironic's raw command with the valid and EFI bits.
			var flags []byte
			sim.Wait(t, "the boot flags write", func() bool {
				for _, m := range sim.Messages() {
					if m.NetFn == ipmisim.NetFnChassis && m.Cmd == ipmisim.CmdSetSystemBootOptions && len(m.Data) == 6 && m.Data[0] == 5 {
						flags = m.Data
					}
				}
				return flags != nil
			})
			if flags[1]&0xa0 != 0xa0 || flags[2] != 0x04 {
				t.Errorf("boot flags sent = % x, want valid+EFI and PXE (05 a0|e0 04 …)", flags)
			}
			bc := l.bootConfig(n, kind)

			// The agent posts with the token from its kernel command line.
			if code, body := l.post(bc.Callback, bc.Token, report(t, n)); code != http.StatusOK {
				t.Fatalf("report: HTTP %d %s", code, body)
			}
			got = l.waitState(n, "manageable")
			checkProperties(t, got)
			if sim.PowerOn(t) {
				t.Error("ipmi_sim is still powered on after the inspection finished")
			}
			l.checkLeftClean(n, got)
			if sim.Sessions() > 2 {
				t.Errorf("ipmi_sim activated %d sessions for one inspection, want sessions reused", sim.Sessions())
			}
			ferrotest.AssertNoSecrets(t, "ferro serve", l.srv.Log(), sim.Password)
		})
	}
}

func TestInspection_IPMIWrongPassword(t *testing.T) {
	sim := ipmisim.Start(t)
	l := startLab(t, ipmiEnv...)
	n := l.enroll(nodeSpec{driver: "ipmi", boot: "ipxe", network: "noop",
		driverInfo: ipmiDriverInfo(sim, sim.Password), ports: []portSpec{{mac: newMAC()}}})
	const wrong = "wrongbmcpassword"
	l.must(http.MethodPatch, "/v1/nodes/"+n.uuid, []map[string]any{
		{"op": "replace", "path": "/driver_info/ipmi_password", "value": wrong}}, nil)

	// The API, not the CLI: the CLI lane is TestInspection_IPMI.
	l.must(http.MethodPut, "/v1/nodes/"+n.uuid+"/states/provision", map[string]any{"target": "inspect"}, nil)
	got := l.waitState(n, "inspect failed")
	le, _ := got["last_error"].(string)
	for _, want := range []string{sim.Address, "open session"} {
		if !strings.Contains(le, want) {
			t.Errorf("last_error %q does not name %q", le, want)
		}
	}
	if strings.Contains(le, wrong) || strings.Contains(le, sim.Password) {
		t.Errorf("last_error %q contains a password", le)
	}
	if sim.PowerOn(t) {
		t.Error("ipmi_sim powered on despite the wrong password")
	}
	// Teardown ran (its power off failed the same way): no boot files, no lock.
	if got["reservation"] != nil {
		t.Errorf("reservation = %v, want null", got["reservation"])
	}
	l.checkNoBootFiles(n)
	ferrotest.AssertNoSecrets(t, "ferro serve", l.srv.Log(), wrong, sim.Password)
	if bytes.Contains([]byte(l.baremetal("node", "show", n.uuid, "-f", "json")), []byte(wrong)) {
		t.Error("the CLI shows the BMC password")
	}
}

// TestInspection_IPMINeverConfirmsPower: a ferro-vbmc BMC that takes the
// power-on command and never shows it fails the managed start in the
// background, naming the BMC and the phase; the teardown leaves no boot
// files, no lock and no managed-boot mark, and no password is logged.
func TestInspection_IPMINeverConfirmsPower(t *testing.T) {
	machines := vbmctest.FakeMachines("nc", 1)
	machines[0].Faults = &vbmc.Faults{NeverConfirmPower: true}
	v := vbmctest.Start(t, vbmctest.Config{Machines: machines, RequestLog: true})
	l := startLab(t, append(ipmiEnv, "FERRO_CONDUCTOR_POWER_STATE_CHANGE_TIMEOUT=3")...)
	e := v.IPMI["nc0"]
	n := l.enroll(nodeSpec{driver: "ipmi", boot: "ipxe", network: "noop",
		driverInfo: map[string]any{"ipmi_address": e.Host, "ipmi_port": e.Port, "ipmi_username": v.Username,
			"ipmi_password": v.Password, "ipmi_cipher_suite": "3"},
		ports: []portSpec{{mac: machines[0].MACs[0]}}})

	l.baremetal("node", "inspect", n.uuid)
	got := l.waitState(n, "inspect failed")
	le, _ := got["last_error"].(string)
	for _, want := range []string{e.String(), "powering on the node"} {
		if !strings.Contains(le, want) {
			t.Errorf("last_error %q does not name %q", le, want)
		}
	}
	if got["reservation"] != nil {
		t.Errorf("reservation = %v, want null", got["reservation"])
	}
	if m := field(got, "driver_internal_info", "inspector_manage_boot"); m != nil {
		t.Errorf("driver_internal_info[inspector_manage_boot] = %v after the failed start, want it removed", m)
	}
	l.checkNoBootFiles(n)
	var on bool
	for _, r := range v.State(t)["nc0"].Requests {
		on = on || r.Op == "chassis control on"
	}
	if !on {
		t.Error("ferro-vbmc never received the power on")
	}
	ferrotest.AssertNoSecrets(t, "ferro serve", l.srv.Log(), v.Password)
	ferrotest.AssertNoSecrets(t, "ferro-vbmc", v.Log(), v.Password)
}

// TestInspection_IPMIBootFlagsRefused: a BMC that refuses the boot device
// (Debian's ipmi_sim set up as its documentation sets it up for QEMU
// answers Set System Boot Options parameter 5 with 0xcc). In BIOS mode the
// inspection goes on and inspects the machine, as Ironic's (`ipmitool
// chassis bootdev` prints the error and exits 0); in UEFI mode it fails at
// the boot device, as Ironic's raw command does, and tears down.
func TestInspection_IPMIBootFlagsRefused(t *testing.T) {
	waitPower := func(t *testing.T, sim *ipmisim.Sim, want bool) {
		deadline := time.Now().Add(60 * time.Second)
		for sim.PowerOn(t) != want {
			if time.Now().After(deadline) {
				t.Fatalf("ipmi_sim's machine is not powered %v after 60 s", map[bool]string{true: "on", false: "off"}[want])
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
	t.Run("bios", func(t *testing.T) {
		t.Parallel()
		sim := ipmisim.Start(t, ipmisim.WithQEMUChassis())
		l := startLab(t, append(ipmiEnv, "FERRO_DEPLOY_DEFAULT_BOOT_MODE=bios")...)
		n := l.enroll(nodeSpec{driver: "ipmi", boot: "ipxe", network: "noop",
			driverInfo: ipmiDriverInfo(sim, sim.Password), ports: []portSpec{{mac: newMAC()}}})
		l.inspect(n)
		waitPower(t, sim, true)
		bc := l.bootConfig(n, "ipxe")
		if code, body := l.post(bc.Callback, bc.Token, report(t, n)); code != http.StatusOK {
			t.Fatalf("report: HTTP %d %s", code, body)
		}
		got := l.waitState(n, "manageable")
		checkProperties(t, got)
		waitPower(t, sim, false)
		l.checkLeftClean(n, got)
		if !strings.Contains(l.srv.Log(), "the BMC refused the boot device; going on") {
			t.Errorf("ferro did not log the refused boot device:\n%s", l.srv.Log())
		}
	})
	t.Run("uefi", func(t *testing.T) {
		t.Parallel()
		sim := ipmisim.Start(t, ipmisim.WithQEMUChassis())
		l := startLab(t, append(ipmiEnv, "FERRO_DEPLOY_DEFAULT_BOOT_MODE=uefi")...)
		n := l.enroll(nodeSpec{driver: "ipmi", boot: "ipxe", network: "noop",
			driverInfo: ipmiDriverInfo(sim, sim.Password), ports: []portSpec{{mac: newMAC()}}})
		l.baremetal("node", "inspect", n.uuid)
		got := l.waitState(n, "inspect failed")
		le, _ := got["last_error"].(string)
		for _, want := range []string{"set boot device", "0xcc"} {
			if !strings.Contains(le, want) {
				t.Errorf("last_error %q does not name %q", le, want)
			}
		}
		if got["reservation"] != nil {
			t.Errorf("reservation = %v, want null", got["reservation"])
		}
		l.checkNoBootFiles(n)
		if sim.PowerOn(t) {
			t.Error("the machine was powered on although its boot device could not be set")
		}
	})
}

// TestManage_IPMIStoresVendor: managing an ipmi node stores the BMC's
// manufacturer in properties.vendor as Ironic 21.4 does (ipmitool's `mc
// info` "Manufacturer Name", lower-cased): compared with what Debian's
// ipmitool prints for the same BMC, for ipmi_sim and for ferro-vbmc. A
// vendor already set is kept.
func TestManage_IPMIStoresVendor(t *testing.T) {
	ipmitool := ferrotest.RequireTool(t, "ipmitool")
	mcInfoVendor := func(t *testing.T, host string, port int, user, password string) string {
		cmd := exec.Command(ipmitool, "-I", "lanplus", "-C", "3", "-H", host, "-p", strconv.Itoa(port), "-U", user, "-E", "mc", "info")
		cmd.Env = append(cmd.Environ(), "IPMI_PASSWORD="+password)
		out, err := cmd.CombinedOutput()
		m := regexp.MustCompile(`Manufacturer Name *: (.+)`).FindStringSubmatch(string(out))
		if err != nil || m == nil {
			t.Fatalf("ipmitool mc info: %v\n%s", err, out)
		}
		return strings.ToLower(m[1]) // Ironic's detect_vendor
	}
	t.Run("ipmi_sim", func(t *testing.T) {
		t.Parallel()
		sim := ipmisim.Start(t)
		l := startLab(t, ipmiEnv...)
		n := l.enroll(nodeSpec{driver: "ipmi", boot: "ipxe", network: "noop",
			driverInfo: ipmiDriverInfo(sim, sim.Password), ports: []portSpec{{mac: newMAC()}}})
		want := mcInfoVendor(t, sim.Address, sim.Port, sim.Username, sim.Password)
		if got := field(l.get(n), "properties", "vendor"); got != want {
			t.Errorf("properties.vendor = %v, ipmitool says %q", got, want)
		}
	})
	t.Run("ferro-vbmc", func(t *testing.T) {
		t.Parallel()
		machines := vbmctest.FakeMachines("vendor", 2)
		machines[0].IPMIManufacturerID = 10876 // Super Micro
		v := vbmctest.Start(t, vbmctest.Config{Machines: machines})
		l := startLab(t, ipmiEnv...)
		for i, m := range machines {
			e := v.IPMI[m.Name]
			di := map[string]any{"ipmi_address": e.Host, "ipmi_port": e.Port, "ipmi_username": v.Username,
				"ipmi_password": v.Password, "ipmi_cipher_suite": "3"}
			n := l.enroll(nodeSpec{driver: "ipmi", boot: "ipxe", network: "noop", driverInfo: di, ports: []portSpec{{mac: m.MACs[0]}}})
			want := mcInfoVendor(t, e.Host, e.Port, v.Username, v.Password)
			if got := field(l.get(n), "properties", "vendor"); got != want {
				t.Errorf("machine %d: properties.vendor = %v, ipmitool says %q", i, got, want)
			}
			if i == 0 && want != "super micro computer inc." {
				t.Errorf("ipmitool names manufacturer 10876 %q", want)
			}
		}
	})
	t.Run("kept when set", func(t *testing.T) {
		t.Parallel()
		sim := ipmisim.Start(t)
		l := startLab(t, ipmiEnv...)
		var created struct {
			UUID string `json:"uuid"`
		}
		l.must(http.MethodPost, "/v1/nodes", map[string]any{"driver": "ipmi", "driver_info": ipmiDriverInfo(sim, sim.Password),
			"properties": map[string]any{"vendor": "acme"}}, &created)
		n := &node{uuid: created.UUID}
		l.must(http.MethodPut, "/v1/nodes/"+n.uuid+"/states/provision", map[string]any{"target": "manage"}, nil)
		if got := field(l.waitState(n, "manageable"), "properties", "vendor"); got != "acme" {
			t.Errorf("properties.vendor = %v, want the one set (acme) kept", got)
		}
	})
}
