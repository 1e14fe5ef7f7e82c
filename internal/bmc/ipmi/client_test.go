package ipmi_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"os/exec"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ferrometal/ferro/internal/bmc/ipmi"
	"github.com/ferrometal/ferro/internal/testing/ferrotest"
	"github.com/ferrometal/ferro/internal/testing/ipmisim"
)

// These tests drive ferro's client against Debian's ipmi_sim and check
// what the simulator received and holds.

func target(s *ipmisim.Sim, proto ipmi.Protocol, cipher int) ipmi.Target {
	return ipmi.Target{Address: s.Address, Port: s.Port, Username: s.Username, Password: s.Password,
		Protocol: proto, CipherSuite: cipher}
}

func newClient(t *testing.T, o ipmi.Options) *ipmi.Client {
	if o.CommandRetryTimeout == 0 {
		o.CommandRetryTimeout = 5 * time.Second
	}
	c := ipmi.New(o)
	t.Cleanup(func() { c.Close() })
	return c
}

func ctx(t *testing.T) context.Context {
	c, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	t.Cleanup(cancel)
	return c
}

func TestPower(t *testing.T) {
	for _, tc := range []struct {
		name   string
		proto  ipmi.Protocol
		cipher int
	}{
		{"lanplus cipher 3", ipmi.Protocol20, 3},
		{"lanplus negotiated", ipmi.Protocol20, 0},
		{"lan 1.5", ipmi.Protocol15, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sim := ipmisim.Start(t)
			c := newClient(t, ipmi.Options{})
			tg := target(sim, tc.proto, tc.cipher)
			on, err := c.PowerStatus(ctx(t), tg)
			if err != nil || on {
				t.Fatalf("PowerStatus = %v, %v; want off", on, err)
			}
			if err := c.Power(ctx(t), tg, ipmi.PowerOn); err != nil {
				t.Fatal(err)
			}
			if !sim.PowerOn(t) {
				t.Fatal("ipmi_sim is not powered on after power on")
			}
			if on, err := c.PowerStatus(ctx(t), tg); err != nil || !on {
				t.Fatalf("PowerStatus = %v, %v; want on", on, err)
			}
			if err := c.Power(ctx(t), tg, ipmi.PowerReset); err != nil {
				t.Fatal(err)
			}
			if n := sim.Resets(t); n != 1 {
				t.Errorf("ipmi_sim saw %d resets, want 1", n)
			}
			if err := c.Power(ctx(t), tg, ipmi.PowerSoft); err != nil {
				t.Fatal(err)
			}
			if sim.PowerOn(t) {
				t.Fatal("ipmi_sim is still on after a soft power off")
			}
			if err := c.Power(ctx(t), tg, ipmi.PowerOn); err != nil {
				t.Fatal(err)
			}
			if err := c.Power(ctx(t), tg, ipmi.PowerOff); err != nil {
				t.Fatal(err)
			}
			if sim.PowerOn(t) {
				t.Fatal("ipmi_sim is still on after power off")
			}
			sim.Wait(t, "the session activation in ipmi_sim's log", func() bool { return sim.Sessions() > 0 })
			if n := sim.Sessions(); n != 1 {
				t.Errorf("ipmi_sim activated %d sessions for %d operations, want 1", n, 7)
			}
		})
	}
}

// bootOptionWrites returns the Set System Boot Options requests ipmi_sim received.
func bootOptionWrites(sim *ipmisim.Sim) [][]byte {
	var out [][]byte
	for _, m := range sim.Messages() {
		if m.NetFn == ipmisim.NetFnChassis && m.Cmd == ipmisim.CmdSetSystemBootOptions {
			out = append(out, m.Data)
		}
	}
	return out
}

func TestSetBootDevice(t *testing.T) {
	for _, tc := range []struct {
		name    string
		opts    ipmi.SetBootOptions
		simBoot string
		writes  [][]byte // what ipmi_sim must have received, in order
	}{
		{
			name:    "pxe persistent EFI",
			opts:    ipmi.SetBootOptions{Device: ipmi.BootPXE, Persistent: true, EFI: true, KeepValidBit: true},
			simBoot: "pxe",
			// Ironic: raw 0x00 0x08 0x03 0x08, then 0x00 0x08 0x05 0xe0 0x04 0x00 0x00 0x00.
			writes: [][]byte{{0x03, 0x08}, {0x05, 0xe0, 0x04, 0, 0, 0}},
		},
		{
			name:    "disk one-time EFI",
			opts:    ipmi.SetBootOptions{Device: ipmi.BootDisk, EFI: true, KeepValidBit: true},
			simBoot: "default",
			writes:  [][]byte{{0x03, 0x08}, {0x05, 0xa0, 0x08, 0, 0, 0}},
		},
		{
			name:    "pxe one-time legacy",
			opts:    ipmi.SetBootOptions{Device: ipmi.BootPXE, KeepValidBit: true},
			simBoot: "pxe",
			// ipmitool chassis bootdev pxe: set in progress (refused by
			// ipmi_sim, so no commit), boot info ack, boot flags, set complete
			// is skipped too.
			writes: [][]byte{{0x03, 0x08}, {0x00, 0x01}, {0x04, 0x01, 0x01}, {0x05, 0x80, 0x04, 0, 0, 0}},
		},
		{
			name:    "disk persistent legacy",
			opts:    ipmi.SetBootOptions{Device: ipmi.BootDisk, Persistent: true, KeepValidBit: true},
			simBoot: "default",
			writes:  [][]byte{{0x03, 0x08}, {0x00, 0x01}, {0x04, 0x01, 0x01}, {0x05, 0xc0, 0x08, 0, 0, 0}},
		},
		{
			name:    "cdrom without the boot timeout parameter",
			opts:    ipmi.SetBootOptions{Device: ipmi.BootCDROM, EFI: true},
			simBoot: "cdrom",
			writes:  [][]byte{{0x05, 0xa0, 0x14, 0, 0, 0}},
		},
		{
			name:    "bios",
			opts:    ipmi.SetBootOptions{Device: ipmi.BootBIOS, EFI: true, KeepValidBit: true},
			simBoot: "bios",
			writes:  [][]byte{{0x03, 0x08}, {0x05, 0xa0, 0x18, 0, 0, 0}},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sim := ipmisim.Start(t)
			c := newClient(t, ipmi.Options{})
			tg := target(sim, ipmi.Protocol20, 3)
			if err := c.SetBootDevice(ctx(t), tg, tc.opts); err != nil {
				t.Fatal(err)
			}
			if got := sim.BootDevice(t); got != tc.simBoot {
				t.Errorf("ipmi_sim boot device = %q, want %q", got, tc.simBoot)
			}
			var got [][]byte
			sim.Wait(t, "the boot option writes in ipmi_sim's log", func() bool {
				got = bootOptionWrites(sim)
				return len(got) >= len(tc.writes)
			})
			if len(got) != len(tc.writes) {
				t.Fatalf("ipmi_sim received Set System Boot Options %x, want %x", got, tc.writes)
			}
			for i := range got {
				if !bytes.Equal(got[i], tc.writes[i]) {
					t.Errorf("Set System Boot Options #%d = % x, want % x", i, got[i], tc.writes[i])
				}
			}
			f, err := c.BootDevice(ctx(t), tg)
			if err != nil {
				t.Fatal(err)
			}
			// ipmi_sim keeps only the device; data byte 1 reads back as 0.
			if f.Device != tc.opts.Device {
				t.Errorf("BootDevice = %+v, want device %s", f, tc.opts.Device)
			}
		})
	}
}

func TestCipherSuite17_RefusedByIPMISim(t *testing.T) {
	sim := ipmisim.Start(t)
	c := newClient(t, ipmi.Options{})
	_, err := c.PowerStatus(ctx(t), target(sim, ipmi.Protocol20, 17))
	var e *ipmi.Error
	if !errors.As(err, &e) {
		t.Fatalf("PowerStatus with cipher suite 17 = %v, want an *ipmi.Error", err)
	}
	// ipmi_sim does not implement RAKP-HMAC-SHA256: a clear, unretried refusal.
	if e.Step != "open session" || e.Attempts != 1 || !strings.Contains(err.Error(), "cipher suite") {
		t.Errorf("error = %v (step %q, %d attempts), want a single open-session failure naming the cipher suite", err, e.Step, e.Attempts)
	}
}

func TestWrongPassword(t *testing.T) {
	for _, proto := range []ipmi.Protocol{ipmi.Protocol20, ipmi.Protocol15} {
		t.Run(string(proto), func(t *testing.T) {
			sim := ipmisim.Start(t)
			c := newClient(t, ipmi.Options{CommandRetryTimeout: 3 * time.Second})
			tg := target(sim, proto, 0)
			tg.Password = "wrongpassword42"
			err := c.Power(ctx(t), tg, ipmi.PowerOn)
			if err == nil {
				t.Fatal("power on with a wrong password succeeded")
			}
			msg := err.Error()
			bmc := fmt.Sprintf("%s:%d", sim.Address, sim.Port)
			if !strings.Contains(msg, bmc) || !strings.Contains(msg, "open session") {
				t.Errorf("error %q does not name the BMC %s and the step", msg, bmc)
			}
			if strings.Contains(msg, tg.Password) || strings.Contains(msg, sim.Password) {
				t.Errorf("error %q contains a password", msg)
			}
			if proto == ipmi.Protocol20 && !errors.Is(err, ipmi.ErrAuthentication) {
				t.Errorf("error %q is not ErrAuthentication", msg)
			}
			if sim.PowerOn(t) {
				t.Error("ipmi_sim powered on despite the wrong password")
			}
		})
	}
}

func TestUnreachableBMC(t *testing.T) {
	// A UDP port nobody listens on: the kernel answers port unreachable.
	l, err := net.ListenPacket("udp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := l.LocalAddr().(*net.UDPAddr).Port
	l.Close()
	retry := 1500 * time.Millisecond
	c := newClient(t, ipmi.Options{CommandRetryTimeout: retry, MinCommandInterval: 100 * time.Millisecond, ExchangeTimeout: 200 * time.Millisecond})
	// The caller's deadline is far beyond the retry timeout: the client
	// must give up on its own.
	cctx, cancel := context.WithTimeout(context.Background(), 30*retry)
	defer cancel()
	_, err = c.PowerStatus(cctx, ipmi.Target{Address: "127.0.0.1", Port: port, Username: "u", Password: "p"})
	var e *ipmi.Error
	if !errors.As(err, &e) {
		t.Fatalf("PowerStatus of a closed port = %v, want *ipmi.Error", err)
	}
	if cctx.Err() != nil {
		t.Fatalf("the client did not give up by itself: %v", err)
	}
	if e.Attempts < 2 || !strings.Contains(err.Error(), fmt.Sprintf("127.0.0.1:%d", port)) {
		t.Errorf("error %v: want several attempts and the BMC address", err)
	}
}

func TestMinCommandInterval_ConcurrentOperationsOneSession(t *testing.T) {
	sim := ipmisim.Start(t)
	const interval = 150 * time.Millisecond
	c := newClient(t, ipmi.Options{MinCommandInterval: interval})
	tg := target(sim, ipmi.Protocol20, 3)
	const n = 6
	var wg sync.WaitGroup
	errs := make(chan error, n)
	for range n {
		wg.Go(func() {
			if _, err := c.PowerStatus(ctx(t), tg); err != nil {
				errs <- err
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	var times []time.Time
	sim.Wait(t, "every Get Chassis Status in ipmi_sim's log", func() bool {
		times = nil
		for _, m := range sim.Messages() {
			if m.NetFn == ipmisim.NetFnChassis && m.Cmd == ipmisim.CmdGetChassisStatus {
				times = append(times, m.RespondedAt)
			}
		}
		return len(times) >= n
	})
	if len(times) != n {
		t.Fatalf("ipmi_sim answered %d Get Chassis Status, want %d", len(times), n)
	}
	// The client starts an operation no sooner than interval after the
	// previous one ended, so ipmi_sim's response times are that far apart.
	for i := 1; i < len(times); i++ {
		if gap := times[i].Sub(times[i-1]); gap < interval {
			t.Errorf("operations %d and %d reached ipmi_sim %v apart, want at least %v", i-1, i, gap, interval)
		}
	}
	if s := sim.Sessions(); s != 1 {
		t.Errorf("ipmi_sim activated %d sessions, want 1", s)
	}
	if s := c.SessionsOpened(); s != 1 {
		t.Errorf("client opened %d sessions, want 1", s)
	}
}

func TestIdleSessionClosed(t *testing.T) {
	sim := ipmisim.Start(t)
	c := newClient(t, ipmi.Options{IdleTimeout: 200 * time.Millisecond})
	tg := target(sim, ipmi.Protocol20, 3)
	if _, err := c.PowerStatus(ctx(t), tg); err != nil {
		t.Fatal(err)
	}
	sim.Wait(t, "the Close Session the idle timer sends", func() bool { return hasClose(sim) })
	if _, err := c.PowerStatus(ctx(t), tg); err != nil {
		t.Fatal(err)
	}
	if s := sim.Sessions(); s != 2 {
		t.Errorf("ipmi_sim activated %d sessions, want 2 (one closed when idle)", s)
	}
}

func hasClose(sim *ipmisim.Sim) bool { return sim.SessionsClosed() > 0 }

func TestClose_EndsSessions(t *testing.T) {
	sim := ipmisim.Start(t)
	c := ipmi.New(ipmi.Options{})
	if _, err := c.PowerStatus(ctx(t), target(sim, ipmi.Protocol20, 3)); err != nil {
		t.Fatal(err)
	}
	c.Close()
	sim.Wait(t, "the Close Session that Close sends", func() bool { return hasClose(sim) })
}

// ipmi_sim set up for QEMU answers the boot flags with 0xcc. Without EFI
// (ipmitool's chassis bootdev) that is ErrBootFlagsRefused, for the
// caller to decide; with EFI (Ironic's raw command) a plain failure. Each
// is sent once, not retried. Power works through the QEMU stand-in.
func TestSetBootDevice_BootFlagsRefused(t *testing.T) {
	sim := ipmisim.Start(t, ipmisim.WithQEMUChassis())
	c := newClient(t, ipmi.Options{})
	tg := target(sim, ipmi.Protocol20, 3)
	err := c.SetBootDevice(ctx(t), tg, ipmi.SetBootOptions{Device: ipmi.BootPXE, KeepValidBit: true})
	if !errors.Is(err, ipmi.ErrBootFlagsRefused) || !strings.Contains(err.Error(), "0xcc") {
		t.Errorf("legacy bootdev = %v, want ErrBootFlagsRefused naming 0xcc", err)
	}
	err = c.SetBootDevice(ctx(t), tg, ipmi.SetBootOptions{Device: ipmi.BootPXE, EFI: true, KeepValidBit: true})
	if err == nil || errors.Is(err, ipmi.ErrBootFlagsRefused) || !strings.Contains(err.Error(), "0xcc") {
		t.Errorf("EFI boot flags = %v, want a failure naming 0xcc", err)
	}
	refused := func() (n int) {
		for _, m := range sim.Messages() {
			if m.NetFn == ipmisim.NetFnChassis && m.Cmd == ipmisim.CmdSetSystemBootOptions && len(m.Data) > 0 && m.Data[0] == 5 &&
				len(m.Response) > 0 && m.Response[0] == 0xcc {
				n++
			}
		}
		return n
	}
	sim.Wait(t, "two refused boot flags writes", func() bool { return refused() >= 2 })

	// ipmi_sim reports on once it started the stand-in, off once it is gone.
	waitFor := func(what string, cond func() bool) {
		deadline := time.Now().Add(30 * time.Second)
		for !cond() {
			if time.Now().After(deadline) {
				t.Fatalf("waited 30 s for %s", what)
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	if err := c.Power(ctx(t), tg, ipmi.PowerOn); err != nil {
		t.Fatal(err)
	}
	waitFor("the QEMU stand-in to run", func() bool { return sim.PowerOn(t) })
	if err := c.Power(ctx(t), tg, ipmi.PowerOff); err != nil {
		t.Fatal(err)
	}
	waitFor("the power to read off", func() bool { on, err := c.PowerStatus(ctx(t), tg); return err == nil && !on })
	if sim.PowerOn(t) {
		t.Error("the BMC says off, the QEMU stand-in still runs")
	}
	if n := refused(); n != 2 {
		t.Errorf("ipmi_sim refused %d boot flags writes, want 2", n)
	}
}

// Get Device ID's manufacturer ID, named as ipmitool's `mc info` names it:
// compared with Debian's ipmitool against the same ipmi_sim (OpenIPMI's
// default 4753).
func TestDeviceID_ManufacturerNamedAsIpmitool(t *testing.T) {
	ipmitool := ferrotest.RequireTool(t, "ipmitool")
	sim := ipmisim.Start(t)
	c := newClient(t, ipmi.Options{})
	d, err := c.DeviceID(ctx(t), target(sim, ipmi.Protocol20, 3))
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(ipmitool, "-I", "lanplus", "-C", "3", "-H", sim.Address, "-p", fmt.Sprint(sim.Port), "-U", sim.Username, "-E", "mc", "info")
	cmd.Env = append(cmd.Environ(), "IPMI_PASSWORD="+sim.Password)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("ipmitool mc info: %v\n%s", err, out)
	}
	m := regexp.MustCompile(`Manufacturer ID *: (\d+)\n.*Manufacturer Name *: (.+)`).FindStringSubmatch(string(out))
	if m == nil {
		t.Fatalf("ipmitool mc info printed no manufacturer:\n%s", out)
	}
	if fmt.Sprint(d.ManufacturerID) != m[1] || ipmi.ManufacturerName(d.ManufacturerID) != m[2] {
		t.Errorf("ferro: %d %q; ipmitool: %s %q", d.ManufacturerID, ipmi.ManufacturerName(d.ManufacturerID), m[1], m[2])
	}
}
