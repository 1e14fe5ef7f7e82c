package vbmc

import (
	"context"
	"net"
	"os/exec"
	"strings"
	"testing"

	"github.com/ferrometal/ferro/internal/testing/ferrotest"
)

// ipmitool runs Debian's ipmitool against a machine's endpoint.
type ipmitool struct {
	t    *testing.T
	bin  string
	args []string
}

func newIPMITool(t *testing.T, addr string, iface []string, password string) *ipmitool {
	bin := ferrotest.RequireTool(t, "ipmitool")
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		t.Fatal(err)
	}
	args := append(append([]string{}, iface...), "-H", host, "-p", port, "-U", "admin", "-P", password, "-R", "2", "-N", "2")
	return &ipmitool{t: t, bin: bin, args: args}
}

func (i *ipmitool) run(args ...string) (string, error) {
	out, err := exec.Command(i.bin, append(append([]string{}, i.args...), args...)...).CombinedOutput()
	return string(out), err
}

func (i *ipmitool) must(args ...string) string {
	i.t.Helper()
	out, err := i.run(args...)
	if err != nil {
		i.t.Fatalf("ipmitool %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return out
}

var ipmiInterfaces = []struct {
	name  string
	iface []string
}{
	{"lanplus-C3", []string{"-I", "lanplus", "-C", "3"}},
	{"lanplus-C17", []string{"-I", "lanplus", "-C", "17"}},
	{"lan", []string{"-I", "lan"}},
}

// TestIPMI_IPMIToolDrivesPowerAndBootDevice runs every chassis command
// ipmitool and Ironic send, over lanplus with cipher suites 3 and 17 and over
// IPMI 1.5, and checks the machine's state after each.
func TestIPMI_IPMIToolDrivesPowerAndBootDevice(t *testing.T) {
	ferrotest.RequireTool(t, "ipmitool")
	names := make([]string, len(ipmiInterfaces))
	for i, c := range ipmiInterfaces {
		names[i] = c.name
	}
	srv, ready := startServer(t, names...)
	for _, c := range ipmiInterfaces {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			m := srv.Machine(c.name)
			ipmi := newIPMITool(t, ready.IPMI[c.name], c.iface, "vbmc-pass")
			ctx := context.Background()
			power := func(want bool) {
				t.Helper()
				on, err := m.PowerState(ctx)
				if err != nil || on != want {
					t.Fatalf("machine power on = %v (%v), want %v", on, err, want)
				}
			}
			boot := func(want BootOverride) {
				t.Helper()
				if got := m.Boot(); got != want {
					t.Fatalf("boot override = %+v, want %+v", got, want)
				}
			}

			if out := ipmi.must("chassis", "power", "status"); !strings.Contains(out, "Chassis Power is off") {
				t.Fatalf("power status: %q", out)
			}
			ipmi.must("chassis", "power", "on")
			power(true)
			if out := ipmi.must("chassis", "power", "status"); !strings.Contains(out, "Chassis Power is on") {
				t.Fatalf("power status after on: %q", out)
			}
			ipmi.must("chassis", "power", "off")
			power(false)

			// One-time PXE, legacy: used by the next power-on, then cleared.
			ipmi.must("chassis", "bootdev", "pxe")
			boot(BootOverride{Target: BootPxe, Enabled: BootOnce, Mode: BootLegacy})
			if out := ipmi.must("chassis", "bootparam", "get", "5"); !strings.Contains(out, "Force PXE") || !strings.Contains(out, "Boot Flag Valid") {
				t.Fatalf("bootparam get 5 after bootdev pxe: %q", out)
			}
			ipmi.must("chassis", "power", "on")
			power(true)
			if lb := m.LastBoot(); lb.Device != BootPxe || lb.UEFI {
				t.Fatalf("power on booted %+v, want PXE legacy", lb)
			}
			boot(BootOverride{Target: BootNone, Enabled: BootDisabled, Mode: BootLegacy})
			if out := ipmi.must("chassis", "bootparam", "get", "5"); !strings.Contains(out, "Boot Flag Invalid") {
				t.Fatalf("bootparam get 5 after the one-time boot: %q", out)
			}

			// Persistent disk with the EFI flag survives resets.
			ipmi.must("chassis", "bootdev", "disk", "options=persistent,efiboot")
			boot(BootOverride{Target: BootHdd, Enabled: BootContinuous, Mode: BootUEFI})
			boots := m.Boots()
			ipmi.must("chassis", "power", "reset")
			power(true)
			if lb := m.LastBoot(); m.Boots() != boots+1 || lb.Device != BootHdd || !lb.UEFI {
				t.Fatalf("power reset: boots %d→%d, booted %+v; want one more boot from disk, UEFI", boots, m.Boots(), lb)
			}
			ipmi.must("chassis", "power", "cycle")
			power(true)
			if m.Boots() != boots+2 {
				t.Fatalf("power cycle: boots %d, want %d", m.Boots(), boots+2)
			}
			boot(BootOverride{Target: BootHdd, Enabled: BootContinuous, Mode: BootUEFI})
			ipmi.must("chassis", "power", "soft")
			power(false)

			ipmi.must("chassis", "bootdev", "cdrom", "options=efiboot")
			boot(BootOverride{Target: BootCd, Enabled: BootOnce, Mode: BootUEFI})
			ipmi.must("chassis", "bootdev", "bios")
			boot(BootOverride{Target: BootBiosSetup, Enabled: BootOnce, Mode: BootLegacy})

			// Ironic's raw commands: parameter 3 (do not clear the flags on
			// the 60 s timeout), then parameter 5 with valid, persistent and
			// EFI set and PXE selected; read back with Get parameter 5.
			ipmi.must("raw", "0x00", "0x08", "0x03", "0x08")
			ipmi.must("raw", "0x00", "0x08", "0x05", "0xe0", "0x04", "0x00", "0x00", "0x00")
			boot(BootOverride{Target: BootPxe, Enabled: BootContinuous, Mode: BootUEFI})
			if out := strings.TrimSpace(ipmi.must("raw", "0x00", "0x09", "0x05", "0x00", "0x00")); out != "01 05 e0 04 00 00 00" {
				t.Fatalf("raw get boot flags = %q, want \"01 05 e0 04 00 00 00\"", out)
			}
			ipmi.must("chassis", "bootdev", "none")
			boot(BootOverride{Target: BootNone, Enabled: BootDisabled, Mode: BootLegacy})

			bad := newIPMITool(t, ready.IPMI[c.name], c.iface, "wrong-pass")
			if out, err := bad.run("chassis", "power", "on"); err == nil {
				t.Fatalf("wrong password accepted: %q", out)
			}
			power(false)
		})
	}
}
