package ipmi_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ferrometal/ferro/internal/baremetal"
	bmc "github.com/ferrometal/ferro/internal/bmc/ipmi"
	"github.com/ferrometal/ferro/internal/driver"
	"github.com/ferrometal/ferro/internal/driver/ipmi"
	"github.com/ferrometal/ferro/internal/testing/ferrotest"
	"github.com/ferrometal/ferro/internal/testing/ipmisim"
)

// syncBuffer is a bytes.Buffer safe for the client's goroutines.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// testPasswords are the passwords these tests give BMCs (ipmi_sim's and
// wrong ones); none may reach the client's log.
var testPasswords = []string{"ferrosimpassword", "notthepassword"}

func interfaces(t *testing.T) (driver.Power, driver.Management) {
	var buf syncBuffer
	log := slog.New(slog.NewTextHandler(&buf, &slog.HandlerOptions{Level: slog.LevelDebug}))
	c := bmc.New(bmc.Options{CommandRetryTimeout: 5 * time.Second, MinCommandInterval: 20 * time.Millisecond, Log: log})
	t.Cleanup(func() {
		c.Close()
		ferrotest.AssertNoSecrets(t, "the IPMI client", buf.String(), testPasswords...)
	})
	r := driver.NewRegistry([]driver.HardwareType{ipmi.HardwareType}, driver.EnableAll([]driver.HardwareType{ipmi.HardwareType}))
	ipmi.Register(r, ipmi.Options{Client: c, DisableBootTimeout: true, PollInterval: 50 * time.Millisecond})
	ifs := r.Resolve(map[string]string{"power": "ipmitool", "management": "ipmitool"})
	return ifs.Power, ifs.Management
}

func task(di baremetal.JSON, props baremetal.JSON) *driver.Task {
	return &driver.Task{Node: &baremetal.Node{UUID: "1be26c0b-03f2-4d2e-ae87-c02d7f33c123", DriverInfo: di, Properties: props},
		Log: slog.New(slog.DiscardHandler)}
}

func simInfo(s *ipmisim.Sim) baremetal.JSON {
	return baremetal.JSON{"ipmi_address": s.Address, "ipmi_port": float64(s.Port), "ipmi_username": s.Username,
		"ipmi_password": s.Password, "ipmi_cipher_suite": "3"}
}

func TestValidate_NamesTheBadKey(t *testing.T) {
	power, mgmt := interfaces(t)
	for _, tc := range []struct {
		di   baremetal.JSON
		want error
		key  string
	}{
		{baremetal.JSON{}, driver.ErrMissingParameter, "ipmi_address"},
		{baremetal.JSON{"ipmi_address": ""}, driver.ErrMissingParameter, "ipmi_address"},
		{baremetal.JSON{"ipmi_address": "10.0.0.1", "ipmi_port": "http"}, driver.ErrInvalidParameter, "ipmi_port"},
		{baremetal.JSON{"ipmi_address": "10.0.0.1", "ipmi_port": float64(70000)}, driver.ErrInvalidParameter, "ipmi_port"},
		{baremetal.JSON{"ipmi_address": "10.0.0.1", "ipmi_priv_level": "ROOT"}, driver.ErrInvalidParameter, "ipmi_priv_level"},
		{baremetal.JSON{"ipmi_address": "10.0.0.1", "ipmi_protocol_version": "3.0"}, driver.ErrInvalidParameter, "ipmi_protocol_version"},
		{baremetal.JSON{"ipmi_address": "10.0.0.1", "ipmi_cipher_suite": "x"}, driver.ErrInvalidParameter, "ipmi_cipher_suite"},
		{baremetal.JSON{"ipmi_address": "10.0.0.1", "ipmi_protocol_version": "1.5", "ipmi_cipher_suite": 3.0}, driver.ErrInvalidParameter, "ipmi_cipher_suite"},
		{baremetal.JSON{"ipmi_address": "10.0.0.1", "ipmi_bridging": "single"}, driver.ErrInvalidParameter, "ipmi_bridging"},
		{baremetal.JSON{"ipmi_address": "10.0.0.1", "ipmi_disable_boot_timeout": "maybe"}, driver.ErrInvalidParameter, "ipmi_disable_boot_timeout"},
	} {
		for _, v := range []driver.Validator{power, mgmt} {
			err := v.Validate(context.Background(), task(tc.di, nil))
			if !errors.Is(err, tc.want) || !strings.Contains(err.Error(), tc.key) {
				t.Errorf("Validate(%v) = %v, want %v naming %s", tc.di, err, tc.want, tc.key)
			}
		}
	}
	ok := baremetal.JSON{"ipmi_address": "10.0.0.1", "ipmi_port": json.Number("6230"), "ipmi_priv_level": "OPERATOR",
		"ipmi_protocol_version": 2.0, "ipmi_cipher_suite": 17.0, "ipmi_password": "x"}
	if err := power.Validate(context.Background(), task(ok, nil)); err != nil {
		t.Errorf("Validate(%v) = %v", ok, err)
	}
}

func TestSetPowerState_ConfirmedByPolling(t *testing.T) {
	// The chassis takes 300 ms to change state, like a real server.
	sim := ipmisim.Start(t, ipmisim.WithPowerDelay(300*time.Millisecond))
	power, _ := interfaces(t)
	tk := task(simInfo(sim), nil)
	ctx := context.Background()
	if got, err := power.PowerState(ctx, tk); err != nil || got != baremetal.PowerOff {
		t.Fatalf("PowerState = %q, %v", got, err)
	}
	if err := power.SetPowerState(ctx, tk, baremetal.PowerOn, 10*time.Second); err != nil {
		t.Fatal(err)
	}
	if !sim.PowerOn(t) {
		t.Fatal("ipmi_sim is off after SetPowerState(power on) returned")
	}
	if err := power.SetPowerState(ctx, tk, baremetal.PowerReboot, 10*time.Second); err != nil {
		t.Fatal(err)
	}
	if !sim.PowerOn(t) {
		t.Fatal("ipmi_sim is off after a reboot")
	}
	// The reboot went off, then on: ipmi_sim saw power down then power up.
	var controls []byte
	sim.Wait(t, "the chassis controls", func() bool {
		controls = nil
		for _, m := range sim.Messages() {
			if m.NetFn == ipmisim.NetFnChassis && m.Cmd == ipmisim.CmdChassisControl && len(m.Data) > 0 {
				controls = append(controls, m.Data[0])
			}
		}
		return len(controls) >= 3
	})
	if !bytes.Equal(controls, []byte{1, 0, 1}) {
		t.Errorf("chassis controls = % x, want 01 00 01 (on; reboot = off, on)", controls)
	}
	if err := power.SetPowerState(ctx, tk, ipmi.PowerSoftOff, 10*time.Second); err != nil {
		t.Fatal(err)
	}
	if sim.PowerOn(t) {
		t.Fatal("ipmi_sim is on after a soft power off")
	}
}

func TestSetPowerState_BMCNeverConfirms(t *testing.T) {
	sim := ipmisim.Start(t, ipmisim.WithStuckPower())
	power, _ := interfaces(t)
	err := power.SetPowerState(context.Background(), task(simInfo(sim), nil), baremetal.PowerOn, time.Second)
	if err == nil || !strings.Contains(err.Error(), sim.Address) || !strings.Contains(err.Error(), "did not reach power on") {
		t.Fatalf("SetPowerState on a BMC that never changes = %v, want an error naming the BMC", err)
	}
}

func TestSetBootDevice(t *testing.T) {
	for _, tc := range []struct {
		name       string
		props      baremetal.JSON
		device     string
		persistent bool
		simBoot    string
		flags      []byte // the boot flags parameter ipmi_sim received
	}{
		{"uefi pxe persistent", baremetal.JSON{"capabilities": "boot_mode:uefi"}, "pxe", true, "pxe", []byte{0x05, 0xe0, 0x04, 0, 0, 0}},
		{"uefi disk one-time", baremetal.JSON{"capabilities": "boot_mode:uefi"}, "disk", false, "default", []byte{0x05, 0xa0, 0x08, 0, 0, 0}},
		{"bios pxe one-time", baremetal.JSON{"capabilities": "boot_mode:bios"}, "pxe", false, "pxe", []byte{0x05, 0x80, 0x04, 0, 0, 0}},
		{"bios disk persistent", baremetal.JSON{"capabilities": "boot_mode:bios"}, "disk", true, "default", []byte{0x05, 0xc0, 0x08, 0, 0, 0}},
		{"default mode is uefi", nil, "cdrom", false, "cdrom", []byte{0x05, 0xa0, 0x14, 0, 0, 0}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sim := ipmisim.Start(t)
			_, mgmt := interfaces(t)
			tk := task(simInfo(sim), tc.props)
			if err := mgmt.SetBootDevice(context.Background(), tk, tc.device, tc.persistent); err != nil {
				t.Fatal(err)
			}
			if got := sim.BootDevice(t); got != tc.simBoot {
				t.Errorf("ipmi_sim boot device = %q, want %q", got, tc.simBoot)
			}
			var got [][]byte
			sim.Wait(t, "the boot flags write", func() bool {
				got = nil
				for _, m := range sim.Messages() {
					if m.NetFn == ipmisim.NetFnChassis && m.Cmd == ipmisim.CmdSetSystemBootOptions {
						got = append(got, m.Data)
					}
				}
				return len(got) > 0 && got[len(got)-1][0] == 5
			})
			if !bytes.Equal(got[0], []byte{0x03, 0x08}) {
				t.Errorf("first write % x, want parameter 3 = 08 (boot timeout disabled)", got[0])
			}
			if last := got[len(got)-1]; !bytes.Equal(last, tc.flags) {
				t.Errorf("boot flags = % x, want % x", last, tc.flags)
			}
			dev, _, err := mgmt.BootDevice(context.Background(), tk)
			if err != nil || dev != tc.device {
				t.Errorf("BootDevice = %q, %v; want %q", dev, err, tc.device)
			}
		})
	}
	t.Run("invalid device", func(t *testing.T) {
		_, mgmt := interfaces(t)
		err := mgmt.SetBootDevice(context.Background(), task(baremetal.JSON{"ipmi_address": "127.0.0.1"}, nil), "floppy", false)
		if !errors.Is(err, driver.ErrInvalidParameter) {
			t.Errorf("SetBootDevice(floppy) = %v", err)
		}
	})
}

func TestWrongPassword_ErrorNamesBMCAndStepNotPassword(t *testing.T) {
	sim := ipmisim.Start(t)
	power, _ := interfaces(t)
	di := simInfo(sim)
	di["ipmi_password"] = "notthepassword"
	err := power.SetPowerState(context.Background(), task(di, nil), baremetal.PowerOn, 5*time.Second)
	if err == nil {
		t.Fatal("power on with a wrong password succeeded")
	}
	if !strings.Contains(err.Error(), sim.Address) || !strings.Contains(err.Error(), "open session") ||
		strings.Contains(err.Error(), "notthepassword") {
		t.Errorf("error %q: want the BMC and the step, and no password", err)
	}
}

// The schema's required keys are what validation requires.
func TestHardwareType_RequiredKeysAreValidated(t *testing.T) {
	power, _ := interfaces(t)
	for _, p := range ipmi.HardwareType.Properties {
		if !p.Required {
			continue
		}
		err := power.Validate(context.Background(), task(baremetal.JSON{"ipmi_username": "admin"}, nil))
		if !errors.Is(err, driver.ErrMissingParameter) || !strings.Contains(err.Error(), p.Name) {
			t.Errorf("without %s: %v, want a missing parameter naming it", p.Name, err)
		}
	}
}

// A BMC that refuses the boot flags (ipmi_sim set up for QEMU answers
// 0xcc): in BIOS mode, persistent or not, the boot goes on with a warning,
// as Ironic's `ipmitool chassis bootdev` (exit 0); in UEFI mode it fails,
// as Ironic's raw command; the boot timeout is disabled first either way.
func TestSetBootDevice_RefusedBootFlags(t *testing.T) {
	sim := ipmisim.Start(t, ipmisim.WithQEMUChassis())
	_, mgmt := interfaces(t)
	for _, tc := range []struct {
		mode       string
		persistent bool
		ok         bool
	}{{"bios", false, true}, {"bios", true, true}, {"uefi", false, false}, {"uefi", true, false}} {
		var log syncBuffer
		tk := task(simInfo(sim), baremetal.JSON{"capabilities": "boot_mode:" + tc.mode})
		tk.Log = slog.New(slog.NewTextHandler(&log, nil))
		err := mgmt.SetBootDevice(context.Background(), tk, "pxe", tc.persistent)
		if tc.ok && (err != nil || !strings.Contains(log.String(), "the BMC refused the boot device; going on")) {
			t.Errorf("%s persistent=%v: %v, log %q; want nil and a warning", tc.mode, tc.persistent, err, log.String())
		}
		if !tc.ok && (err == nil || !strings.Contains(err.Error(), "set boot device") || !strings.Contains(err.Error(), "0xcc")) {
			t.Errorf("%s persistent=%v: %v; want the failure naming the step and 0xcc", tc.mode, tc.persistent, err)
		}
	}
}
