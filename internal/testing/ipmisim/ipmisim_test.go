package ipmisim_test

import (
	"bytes"
	"os/exec"
	"strconv"
	"testing"

	"github.com/ferrometal/ferro/internal/testing/ferrotest"
	"github.com/ferrometal/ferro/internal/testing/ipmisim"
)

// The harness checked with Debian's ipmitool, so that what it reports
// does not depend on ferro's client.
func TestHarness_SeesIpmitool(t *testing.T) {
	tool := ferrotest.RequireTool(t, "ipmitool")
	sim := ipmisim.Start(t)
	run := func(args ...string) string {
		t.Helper()
		full := append([]string{"-I", "lanplus", "-C", "3", "-H", sim.Address, "-p", strconv.Itoa(sim.Port),
			"-U", sim.Username, "-P", sim.Password}, args...)
		out, err := exec.Command(tool, full...).CombinedOutput()
		if err != nil {
			t.Fatalf("ipmitool %v: %v\n%s", args, err, out)
		}
		return string(out)
	}
	if out := run("power", "status"); out != "Chassis Power is off\n" {
		t.Errorf("power status = %q", out)
	}
	run("power", "on")
	if !sim.PowerOn(t) {
		t.Error("PowerOn = false after ipmitool power on")
	}
	run("chassis", "bootdev", "pxe", "options=efiboot,persistent")
	if got := sim.BootDevice(t); got != "pxe" {
		t.Errorf("BootDevice = %q after ipmitool chassis bootdev pxe", got)
	}
	var flags []byte
	sim.Wait(t, "the boot flags", func() bool {
		for _, m := range sim.Messages() {
			if m.NetFn == ipmisim.NetFnChassis && m.Cmd == ipmisim.CmdSetSystemBootOptions && len(m.Data) > 0 && m.Data[0] == 5 {
				flags = m.Data
			}
		}
		return flags != nil && sim.Sessions() == 3
	})
	if !bytes.Equal(flags, []byte{0x05, 0xe0, 0x04, 0, 0, 0}) {
		t.Errorf("boot flags ipmitool sent = % x, want 05 e0 04 00 00 00", flags)
	}
	run("power", "off")
	if sim.PowerOn(t) {
		t.Error("PowerOn = true after ipmitool power off")
	}
}

// A start that finds the directory of an earlier one — what the retry
// after a port clash does — starts afresh instead of failing on the old
// state directory.
func TestRun_ReusesItsDirectory(t *testing.T) {
	ferrotest.RequireTool(t, "ipmi_sim", "/usr/bin")
	dir := t.TempDir()
	for i := range 2 {
		sim, err := ipmisim.Run(dir, ipmisim.WithQuiet())
		if err != nil {
			t.Fatalf("start %d: %v", i+1, err)
		}
		sim.Close()
	}
}
