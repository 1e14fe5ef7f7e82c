package redfish_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/ferrometal/ferro/internal/baremetal"
	bmc "github.com/ferrometal/ferro/internal/bmc/redfish"
	"github.com/ferrometal/ferro/internal/bmc/redfish/redfishtest"
	"github.com/ferrometal/ferro/internal/driver"
	rf "github.com/ferrometal/ferro/internal/driver/redfish"
	"github.com/ferrometal/ferro/internal/inventory"
	"github.com/ferrometal/ferro/internal/states"
	"github.com/ferrometal/ferro/internal/store"
	"github.com/ferrometal/ferro/internal/testing/ferrotest"
	"github.com/ferrometal/ferro/internal/testing/vbmctest"
)

// memStore is the task, port and inventory store of these tests.
type memStore struct {
	mu        sync.Mutex
	ports     map[string]*baremetal.Port // by address
	inventory *baremetal.Inventory
}

func (s *memStore) UpdateNode(context.Context, *baremetal.Node) error { return nil }
func (s *memStore) UpdatePort(context.Context, *baremetal.Port) error { return nil }
func (s *memStore) CreatePort(_ context.Context, p *baremetal.Port) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.ports[p.Address]; ok {
		return store.ErrConflict
	}
	s.ports[p.Address] = p
	return nil
}
func (s *memStore) GetPortByAddress(_ context.Context, a string) (*baremetal.Port, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if p, ok := s.ports[a]; ok {
		return p, nil
	}
	return nil, store.ErrNotFound
}
func (s *memStore) SaveInventory(_ context.Context, inv *baremetal.Inventory) error {
	s.inventory = inv
	return nil
}

type env struct {
	opts  rf.Options
	log   *bytes.Buffer
	store *memStore
}

func newEnv(t *testing.T) *env {
	var buf bytes.Buffer
	log := slog.New(slog.NewTextHandler(&buf, &slog.HandlerOptions{Level: slog.LevelDebug}))
	c := bmc.New(bmc.Options{ConnectionAttempts: 3, ConnectionRetryInterval: time.Millisecond, Log: log})
	t.Cleanup(c.Close)
	return &env{opts: rf.Options{Client: c, PollInterval: time.Millisecond, Log: log}, log: &buf,
		store: &memStore{ports: map[string]*baremetal.Port{}}}
}

func (e *env) task(info map[string]any) *driver.Task {
	n := &baremetal.Node{UUID: "1be26c0b-03f2-4d2e-ae87-c02d7f33c123", DriverInfo: info,
		DriverInternalInfo: map[string]any{}, Properties: map[string]any{}}
	t := &driver.Task{Node: n, Store: e.store, Log: slog.New(slog.NewTextHandler(e.log, nil)).With("node", n.UUID)}
	m := rf.NewManagement(e.opts)
	t.Driver = &driver.Interfaces{Power: rf.NewPower(e.opts), Management: m}
	return t
}

func TestPower_WaitsForASlowPowerState(t *testing.T) {
	b := redfishtest.New(t)
	b.Set(func(b *redfishtest.Sloppy) { b.PowerLag = 5 })
	e := newEnv(t)
	task := e.task(b.DriverInfo())
	p := rf.NewPower(e.opts)
	ctx := context.Background()
	if err := p.SetPowerState(ctx, task, baremetal.PowerOn, time.Minute); err != nil {
		t.Fatal(err)
	}
	if st, err := p.PowerState(ctx, task); err != nil || st != baremetal.PowerOn {
		t.Fatalf("power state %q, %v", st, err)
	}
	if err := p.SetPowerState(ctx, task, baremetal.PowerOff, time.Minute); err != nil {
		t.Fatal(err)
	}
	if err := p.SetPowerState(ctx, task, rf.PowerSoftOff, time.Minute); err != nil {
		t.Fatal(err) // already off: nothing to do
	}
	var resets []string
	b.Get(func(b *redfishtest.Sloppy) { resets = slices.Clone(b.Resets) })
	if d := cmp.Diff([]string{"On", "ForceOff"}, resets); d != "" {
		t.Errorf("reset types (-want +got):\n%s", d)
	}
}

func TestPower_NeverConfirmingBMCTimesOut(t *testing.T) {
	b := redfishtest.New(t)
	b.Set(func(b *redfishtest.Sloppy) { b.NeverConfirm = true })
	e := newEnv(t)
	err := rf.NewPower(e.opts).SetPowerState(context.Background(), e.task(b.DriverInfo()), baremetal.PowerOn, 50*time.Millisecond)
	if err == nil || !strings.Contains(err.Error(), "redfish BMC "+b.URL) || !strings.Contains(err.Error(), "power on") ||
		!strings.Contains(err.Error(), `still reports PowerState "Off"`) {
		t.Fatalf("got %v", err)
	}
}

func TestPower_ValidateNamesTheKey(t *testing.T) {
	e := newEnv(t)
	err := rf.NewPower(e.opts).Validate(context.Background(), e.task(map[string]any{"redfish_username": "u"}))
	if !errors.Is(err, driver.ErrMissingParameter) || !strings.Contains(err.Error(), "redfish_address") {
		t.Errorf("got %v", err)
	}
	err = rf.NewPower(e.opts).Validate(context.Background(), e.task(map[string]any{"redfish_address": "ftp://x"}))
	if !errors.Is(err, driver.ErrInvalidParameter) {
		t.Errorf("got %v", err)
	}
}

func TestManagement_OnceReadBackAsContinuousIsClearedAfterUse(t *testing.T) {
	b := redfishtest.New(t)
	b.Set(func(b *redfishtest.Sloppy) { b.KeepContinuous = true })
	e := newEnv(t)
	task := e.task(b.DriverInfo())
	task.Node.Properties["capabilities"] = "boot_mode:bios,other:x"
	m := rf.NewManagement(e.opts)
	ctx := context.Background()
	if err := m.SetBootDevice(ctx, task, baremetal.BootDeviceCDROM, false); err != nil {
		t.Fatal(err)
	}
	dev, persistent, err := m.BootDevice(ctx, task)
	if err != nil || dev != baremetal.BootDeviceCDROM || persistent {
		t.Errorf("boot device %q persistent %v, %v; want cdrom, one-time", dev, persistent, err)
	}
	var patches []map[string]any
	b.Get(func(b *redfishtest.Sloppy) { patches = slices.Clone(b.Patches) })
	want := map[string]any{"Boot": map[string]any{"BootSourceOverrideTarget": "Cd", "BootSourceOverrideEnabled": "Once", "BootSourceOverrideMode": "Legacy"}}
	if len(patches) != 1 || !cmp.Equal(want, patches[0]) {
		t.Fatalf("PATCHes %v, want %v", patches, want)
	}
	if err := m.ClearBootOverride(ctx, task); err != nil {
		t.Fatal(err)
	}
	var boot map[string]any
	b.Get(func(b *redfishtest.Sloppy) { boot = b.Boot })
	if boot["BootSourceOverrideEnabled"] != "Disabled" {
		t.Errorf("override left at %v", boot)
	}
	if _, ok := task.Node.DriverInternalInfo[rf.OnceReadsContinuousKey]; ok {
		t.Error("the workaround flag stayed")
	}
	if err := m.SetBootDevice(ctx, task, "floppy", true); !errors.Is(err, driver.ErrInvalidParameter) {
		t.Errorf("floppy: %v", err)
	}
}

func TestInspect_SloppyBMC(t *testing.T) {
	b := redfishtest.New(t)
	e := newEnv(t)
	task := e.task(b.DriverInfo())
	existing := &baremetal.Port{UUID: "p1", Address: "12:44:6a:3b:04:11", NodeUUID: task.Node.UUID}
	task.Ports = []*baremetal.Port{existing}
	e.store.ports[existing.Address] = existing
	in := rf.NewInspect(rf.InspectOptions{Options: e.opts, Inventory: e.store, Ports: e.store})
	next, err := in.InspectHardware(context.Background(), task)
	if err != nil || next != states.Manageable {
		t.Fatalf("next %q, %v", next, err)
	}
	// 200 GB is the smallest disk of at least 4 GiB: 186 GiB, minus one.
	want := map[string]any{"cpus": "16", "cpu_arch": "x86_64", "memory_mb": "98304", "local_gb": "185", "capabilities": "boot_mode:uefi"}
	if d := cmp.Diff(want, task.Node.Properties); d != "" {
		t.Errorf("properties (-want +got):\n%s", d)
	}
	var macs []string
	for _, p := range task.Ports {
		macs = append(macs, p.Address)
	}
	// The second NIC has no Status: as in Ironic, no port for it.
	if d := cmp.Diff([]string{"12:44:6a:3b:04:11"}, macs); d != "" {
		t.Errorf("ports (-want +got):\n%s", d)
	}
	// The stored inventory decodes with the agent's schema.
	raw, _ := json.Marshal(map[string]any{"inventory": e.store.inventory.Inventory})
	var rep inventory.Report
	if err := json.Unmarshal(raw, &rep); err != nil || rep.Inventory == nil {
		t.Fatalf("inventory does not decode as the agent's: %v", err)
	}
	if rep.Inventory.CPU.Count != 16 || rep.Inventory.Memory.PhysicalMB != 98304 || len(rep.Inventory.Disks) != 3 || len(rep.Inventory.Interfaces) != 2 {
		t.Errorf("inventory %+v", rep.Inventory)
	}
	if rd, _ := e.store.inventory.PluginData["root_disk"].(map[string]any); rd["name"] != "SATA Bay 2" {
		t.Errorf("root_disk %v", e.store.inventory.PluginData["root_disk"])
	}
	// Again: nothing is duplicated.
	if _, err := in.InspectHardware(context.Background(), task); err != nil || len(task.Ports) != 1 || len(e.store.ports) != 1 {
		t.Errorf("second inspection: %v, %d ports", err, len(task.Ports))
	}
}

func TestInspect_PortOfAnotherNodeIsLeftAlone(t *testing.T) {
	b := redfishtest.New(t)
	e := newEnv(t)
	task := e.task(b.DriverInfo())
	e.store.ports["12:44:6a:3b:04:11"] = &baremetal.Port{UUID: "other", Address: "12:44:6a:3b:04:11", NodeUUID: "someone-else"}
	in := rf.NewInspect(rf.InspectOptions{Options: e.opts, Ports: e.store})
	if _, err := in.InspectHardware(context.Background(), task); err != nil {
		t.Fatal(err)
	}
	if len(task.Ports) != 0 || e.store.ports["12:44:6a:3b:04:11"].NodeUUID != "someone-else" {
		t.Errorf("ports %v", task.Ports)
	}
}

// TestAgainstVBMC drives a ferro-vbmc fake machine over real HTTP: power,
// boot override and out-of-band inspection give the machine's config.
func TestAgainstVBMC(t *testing.T) {
	machines := vbmctest.FakeMachines("rf", 2)
	machines[1].CPUs, machines[1].MemoryMB, machines[1].DisksGB = 4, 3072, []int{2, 20, 50}
	machines[1].MACs = append(machines[1].MACs, "52:54:00:aa:bb:02")
	v := vbmctest.Start(t, vbmctest.Config{Machines: machines})
	e := newEnv(t)
	info := map[string]any{"redfish_address": v.RedfishURL, "redfish_username": v.Username, "redfish_password": v.Password,
		"redfish_system_id": "/redfish/v1/Systems/rf1"}
	task := e.task(info)
	ctx := context.Background()
	p, m := rf.NewPower(e.opts), rf.NewManagement(e.opts)
	for _, st := range []string{baremetal.PowerOn, baremetal.PowerReboot, baremetal.PowerOff, baremetal.PowerOn, rf.PowerSoftOff} {
		if err := p.SetPowerState(ctx, task, st, 30*time.Second); err != nil {
			t.Fatalf("%s: %v", st, err)
		}
	}
	if got, err := p.PowerState(ctx, task); err != nil || got != baremetal.PowerOff {
		t.Fatalf("power state %q, %v", got, err)
	}
	for _, c := range []struct {
		dev        string
		persistent bool
	}{{baremetal.BootDevicePXE, false}, {baremetal.BootDeviceDisk, true}, {baremetal.BootDeviceCDROM, false}} {
		if err := m.SetBootDevice(ctx, task, c.dev, c.persistent); err != nil {
			t.Fatal(err)
		}
		dev, pers, err := m.BootDevice(ctx, task)
		if err != nil || dev != c.dev || pers != c.persistent {
			t.Errorf("set %s/%v, read %s/%v (%v)", c.dev, c.persistent, dev, pers, err)
		}
	}
	in := rf.NewInspect(rf.InspectOptions{Options: e.opts, Inventory: e.store, Ports: e.store})
	if _, err := in.InspectHardware(ctx, task); err != nil {
		t.Fatal(err)
	}
	// 20 GiB is the smallest disk of at least 4 GiB.
	want := map[string]any{"cpus": "4", "cpu_arch": "x86_64", "memory_mb": "3072", "local_gb": "19"}
	for k, w := range want {
		if task.Node.Properties[k] != w {
			t.Errorf("%s = %v, want %v", k, task.Node.Properties[k], w)
		}
	}
	var macs []string
	for _, p := range task.Ports {
		macs = append(macs, p.Address)
	}
	if d := cmp.Diff(machines[1].MACs, macs); d != "" {
		t.Errorf("ports (-want +got):\n%s", d)
	}
	// A System that does not exist.
	bad := e.task(map[string]any{"redfish_address": v.RedfishURL, "redfish_username": v.Username, "redfish_password": v.Password,
		"redfish_system_id": "/redfish/v1/Systems/nope"})
	if _, err := p.PowerState(ctx, bad); !errors.Is(err, bmc.ErrNotFound) || !strings.Contains(err.Error(), "nope") {
		t.Errorf("nonexistent system: %v", err)
	}
	// Wrong password: a clear error, not in the logs.
	wrong := e.task(map[string]any{"redfish_address": v.RedfishURL, "redfish_username": v.Username, "redfish_password": "wrong-vbmc-pass-93",
		"redfish_system_id": "/redfish/v1/Systems/rf0"})
	if _, err := p.PowerState(ctx, wrong); !errors.Is(err, bmc.ErrUnauthorized) {
		t.Errorf("wrong password: %v", err)
	}
	ferrotest.AssertNoSecrets(t, "the driver", e.log.String(), v.Password, "wrong-vbmc-pass-93")
	ferrotest.AssertNoSecrets(t, "ferro-vbmc", v.Log(), v.Password, "wrong-vbmc-pass-93")
}

func TestInspect_RootDeviceHints(t *testing.T) {
	b := redfishtest.New(t)
	e := newEnv(t)
	in := rf.NewInspect(rf.InspectOptions{Options: e.opts, Ports: e.store})
	task := e.task(b.DriverInfo())
	task.Node.Properties["root_device"] = map[string]any{"model": "3000GT8"}
	if _, err := in.InspectHardware(context.Background(), task); err != nil {
		t.Fatal(err)
	}
	// The 8 TB disk: 7450 GiB, minus one.
	if got := task.Node.Properties["local_gb"]; got != "7449" {
		t.Errorf("local_gb %v, want 7449 (the hinted disk)", got)
	}
	task = e.task(b.DriverInfo())
	task.Node.Properties["root_device"] = map[string]any{"serial": "none-such"}
	if _, err := in.InspectHardware(context.Background(), task); err == nil || !strings.Contains(err.Error(), "No disks satisfied root device hints") {
		t.Errorf("unmatched hints: %v", err)
	}
}

// The management interface's virtual media (API 1.89, 1.93): a CD is
// attached, listed and detached on the BMC; other device types are
// refused on attach and have nothing to detach.
func TestManagement_VirtualMedia(t *testing.T) {
	b := redfishtest.New(t)
	e := newEnv(t)
	task := e.task(b.DriverInfo())
	m := rf.NewManagement(e.opts)
	ctx := context.Background()
	if err := m.AttachVirtualMedia(ctx, task, driver.VMediaCDROM, "http://img.test/boot.iso"); err != nil {
		t.Fatal(err)
	}
	devs, err := m.VirtualMedia(ctx, task)
	if err != nil || len(devs) != 1 || devs[0].Image != "http://img.test/boot.iso" || !devs[0].Inserted {
		t.Fatalf("after attach: %+v, %v", devs, err)
	}
	if err := m.AttachVirtualMedia(ctx, task, driver.VMediaFloppy, "http://img.test/f.img"); !errors.Is(err, driver.ErrInvalidParameter) {
		t.Errorf("floppy: %v", err)
	}
	if err := m.DetachVirtualMedia(ctx, task, []string{driver.VMediaFloppy}); err != nil {
		t.Fatal(err)
	}
	if devs, _ := m.VirtualMedia(ctx, task); len(devs) != 1 || devs[0].Image == "" {
		t.Errorf("a floppy detach ejected the CD: %+v", devs)
	}
	if err := m.DetachVirtualMedia(ctx, task, nil); err != nil {
		t.Fatal(err)
	}
	if devs, _ := m.VirtualMedia(ctx, task); len(devs) != 1 || devs[0].Image != "" || devs[0].Inserted {
		t.Errorf("after detach: %+v", devs)
	}
}

// The redfish firmware interface reads the bios component from the
// System's BiosVersion (the mock's Manager names no FirmwareVersion).
func TestFirmware_ComponentsFromTheBMC(t *testing.T) {
	b := redfishtest.New(t)
	e := newEnv(t)
	task := e.task(b.DriverInfo())
	got, err := rf.NewFirmware(e.opts).FirmwareComponents(context.Background(), task)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 || got[0].Component != "bios" || got[0].CurrentVersion == "" {
		t.Errorf("components %+v", got)
	}
}
