package pxe

import (
	"context"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/ferrometal/ferro/internal/baremetal"
	"github.com/ferrometal/ferro/internal/dhcpopt"
	"github.com/ferrometal/ferro/internal/driver"
	"github.com/ferrometal/ferro/internal/driver/deployimage"
)

const (
	nodeUUID  = "1be26c0b-03f2-4d2e-ae87-c02d7f33c123"
	otherUUID = "9f0c1a52-7d7e-4b7b-9a55-0a1e2f3d4c5b"
	mac1      = "52:54:00:12:34:56"
	mac2      = "52:54:00:AB:CD:EF"
	callback  = "http://10.0.0.1:5050/v1/continue"
)

type bootCall struct {
	Device     string
	Persistent bool
}

// fakeManagement records SetBootDevice calls.
type fakeManagement struct {
	calls []bootCall
	err   error
}

func (m *fakeManagement) Validate(context.Context, *driver.Task) error { return nil }
func (m *fakeManagement) SetBootDevice(_ context.Context, _ *driver.Task, device string, persistent bool) error {
	m.calls = append(m.calls, bootCall{device, persistent})
	return m.err
}
func (m *fakeManagement) BootDevice(context.Context, *driver.Task) (string, bool, error) {
	return "", false, nil
}
func (m *fakeManagement) SupportedBootDevices(context.Context, *driver.Task) ([]string, error) {
	return []string{baremetal.BootDevicePXE, baremetal.BootDeviceDisk}, nil
}

// fakeDHCP records the options of every update.
type fakeDHCP struct {
	mu      sync.Mutex
	updates [][]dhcpopt.Option
	err     error
}

func (d *fakeDHCP) UpdateDHCPOptions(_ context.Context, _ *driver.Task, opts []dhcpopt.Option) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.updates = append(d.updates, opts)
	return d.err
}

// env is a configuration with temporary roots and deploy images in an
// allowed directory.
type env struct {
	opts                  Options             // without Images
	img                   deployimage.Options // the deploy image Fetcher's
	tftp, http, images    string
	kernelURL, ramdiskURL string
	mgmt                  *fakeManagement
	dhcp                  *fakeDHCP
}

func newEnv(t *testing.T) *env {
	t.Helper()
	dir := t.TempDir()
	e := &env{
		tftp:   filepath.Join(dir, "tftpboot"),
		http:   filepath.Join(dir, "httpboot"),
		images: filepath.Join(dir, "images"),
		mgmt:   &fakeManagement{},
		dhcp:   &fakeDHCP{},
	}
	for _, d := range []string{e.tftp, e.http, e.images} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	writeFile(t, filepath.Join(e.images, "ipa.kernel"), "KERNEL")
	writeFile(t, filepath.Join(e.images, "ipa.initramfs"), "RAMDISK")
	e.kernelURL = "file://" + filepath.Join(e.images, "ipa.kernel")
	e.ramdiskURL = "file://" + filepath.Join(e.images, "ipa.initramfs")
	// [pxe]'s defaults, with the roots and the images of this test.
	e.opts = Options{TFTPRoot: e.tftp, TFTPServer: "10.0.0.1", HTTPRoot: e.http, HTTPURL: "http://10.0.0.1:8080/",
		PXEBootfile: "pxelinux.0", IPXEBootfile: "undionly.kpxe", KernelAppendParams: "nofb nomodeset vga=normal"}
	e.img = deployimage.Options{AllowedPaths: []string{e.images}}
	return e
}

func writeFile(t *testing.T, path, content string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

// boot returns the interface with the env's options; tweaks change the
// deploy image Fetcher's.
func (e *env) boot(t *testing.T, kind Kind, tweaks ...func(*deployimage.Options)) *Boot {
	t.Helper()
	img := e.img
	for _, tw := range tweaks {
		tw(&img)
	}
	o := e.opts
	o.Images, o.DHCP = deployimage.New(img), e.dhcp
	b, err := New(kind, o)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// task returns a node with driver_info deploy images and two PXE ports.
func (e *env) task() *driver.Task {
	n := &baremetal.Node{
		UUID: nodeUUID,
		DriverInfo: baremetal.JSON{
			"deploy_kernel":  e.kernelURL,
			"deploy_ramdisk": e.ramdiskURL,
		},
		DriverInternalInfo: baremetal.JSON{},
		InstanceInfo:       baremetal.JSON{},
	}
	return &driver.Task{
		Node: n,
		Ports: []*baremetal.Port{
			{UUID: "p1", Address: mac1, NodeUUID: nodeUUID, PXEEnabled: true},
			{UUID: "p2", Address: mac2, NodeUUID: nodeUUID, PXEEnabled: true},
		},
		Driver: &driver.Interfaces{Management: e.mgmt},
		Log:    slog.New(slog.DiscardHandler),
	}
}

func callbackParams() driver.RamdiskParams {
	return driver.RamdiskParams{{Key: "ipa-inspection-callback-url", Value: callback}}
}

func readFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func exists(path string) bool {
	_, err := os.Lstat(path)
	return err == nil
}

func TestPrepareRamdisk_PXEWritesConfigLinksImagesDHCPAndBootDevice(t *testing.T) {
	e := newEnv(t)
	b := e.boot(t, PXE)
	task := e.task()
	if err := b.PrepareRamdisk(context.Background(), task, callbackParams()); err != nil {
		t.Fatal(err)
	}

	want := `default deploy

label deploy
kernel ` + nodeUUID + `/deploy_kernel
append initrd=` + nodeUUID + `/deploy_ramdisk nofb nomodeset vga=normal ipa-inspection-callback-url=http://10.0.0.1:5050/v1/continue
ipappend 2
`
	nodeDir := filepath.Join(e.tftp, nodeUUID)
	if diff := cmp.Diff(want, readFile(t, filepath.Join(nodeDir, "config"))); diff != "" {
		t.Errorf("config (-want +got):\n%s", diff)
	}
	for _, name := range []string{"01-52-54-00-12-34-56", "01-52-54-00-ab-cd-ef"} {
		link := filepath.Join(e.tftp, "pxelinux.cfg", name)
		target, err := os.Readlink(link)
		if err != nil {
			t.Fatalf("per-MAC entry %s: %v", name, err)
		}
		if wantTarget := filepath.Join("..", nodeUUID, "config"); target != wantTarget {
			t.Errorf("%s -> %s, want %s", name, target, wantTarget)
		}
		if got := readFile(t, link); got != want {
			t.Errorf("per-MAC entry %s does not reach the config", name)
		}
	}
	if got := readFile(t, filepath.Join(nodeDir, "deploy_kernel")); got != "KERNEL" {
		t.Errorf("deploy_kernel = %q", got)
	}
	if got := readFile(t, filepath.Join(nodeDir, "deploy_ramdisk")); got != "RAMDISK" {
		t.Errorf("deploy_ramdisk = %q", got)
	}
	if exists(filepath.Join(e.tftp, "boot.ipxe")) {
		t.Error("pxe wrote boot.ipxe")
	}

	wantOpts := [][]dhcpopt.Option{{
		{Name: "67", Value: "pxelinux.0", IPVersion: 4},
		{Name: "66", Value: "10.0.0.1", IPVersion: 4},
		{Name: "150", Value: "10.0.0.1", IPVersion: 4},
		{Name: "255", Value: "10.0.0.1", IPVersion: 4},
	}}
	if diff := cmp.Diff(wantOpts, e.dhcp.updates); diff != "" {
		t.Errorf("DHCP options (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]bootCall{{"pxe", false}}, e.mgmt.calls); diff != "" {
		t.Errorf("boot device (-want +got):\n%s", diff)
	}
}

func TestPrepareRamdisk_IPXEWritesScriptBootIPXEAndDHCP(t *testing.T) {
	e := newEnv(t)
	b := e.boot(t, IPXE)
	task := e.task()
	if err := b.PrepareRamdisk(context.Background(), task, callbackParams()); err != nil {
		t.Fatal(err)
	}

	want := `#!ipxe

# Deploy ramdisk for node ` + nodeUUID + `, written by ferro.
set tries:int32 0

:ramdisk
imgfree
kernel http://10.0.0.1:8080/` + nodeUUID + `/deploy_kernel nofb nomodeset vga=normal ipa-inspection-callback-url=http://10.0.0.1:5050/v1/continue BOOTIF=${mac} initrd=deploy_ramdisk || goto failed
initrd http://10.0.0.1:8080/` + nodeUUID + `/deploy_ramdisk || goto failed
boot || goto failed

:failed
iseq ${tries} 10 && goto give_up ||
inc tries
echo Loading the deploy ramdisk failed, attempt ${tries} of 10, retrying in ${tries} seconds.
sleep ${tries}
goto ramdisk

:give_up
echo Could not load the deploy ramdisk, powering off in 30 seconds.
sleep 30
poweroff
`
	nodeDir := filepath.Join(e.http, nodeUUID)
	if diff := cmp.Diff(want, readFile(t, filepath.Join(nodeDir, "config"))); diff != "" {
		t.Errorf("config (-want +got):\n%s", diff)
	}
	for _, name := range []string{"52-54-00-12-34-56", "52-54-00-ab-cd-ef"} {
		if got := readFile(t, filepath.Join(e.http, "pxelinux.cfg", name)); got != want {
			t.Errorf("per-MAC entry %s does not reach the config", name)
		}
	}
	if exists(filepath.Join(e.tftp, nodeUUID)) {
		t.Error("ipxe wrote into tftp_root")
	}
	bootIPXE := readFile(t, filepath.Join(e.http, "boot.ipxe"))
	for _, line := range []string{"#!ipxe\n", "chain --autofree pxelinux.cfg/${mac:hexhyp} ||\n", "chain --autofree pxelinux.cfg/${net${idx}/mac:hexhyp} ||\n"} {
		if !strings.Contains(bootIPXE, line) {
			t.Errorf("boot.ipxe lacks %q:\n%s", line, bootIPXE)
		}
	}
	if !strings.HasPrefix(bootIPXE, "#!ipxe\n") {
		t.Error("boot.ipxe does not start with #!ipxe")
	}
	if got := readFile(t, filepath.Join(nodeDir, "deploy_kernel")); got != "KERNEL" {
		t.Errorf("deploy_kernel = %q", got)
	}

	wantOpts := [][]dhcpopt.Option{{
		{Name: "tag:!ipxe,67", Value: "undionly.kpxe", IPVersion: 4},
		{Name: "tag:ipxe,67", Value: "http://10.0.0.1:8080/boot.ipxe", IPVersion: 4},
		{Name: "66", Value: "10.0.0.1", IPVersion: 4},
		{Name: "150", Value: "10.0.0.1", IPVersion: 4},
		{Name: "255", Value: "10.0.0.1", IPVersion: 4},
	}}
	if diff := cmp.Diff(wantOpts, e.dhcp.updates); diff != "" {
		t.Errorf("DHCP options (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]bootCall{{"pxe", false}}, e.mgmt.calls); diff != "" {
		t.Errorf("boot device (-want +got):\n%s", diff)
	}
}

func TestDHCPOptions_NoTFTPServerOnlyBootfile(t *testing.T) {
	for _, tc := range []struct {
		kind Kind
		want []dhcpopt.Option
	}{
		{PXE, []dhcpopt.Option{{Name: "67", Value: "lpxelinux.0", IPVersion: 4}}},
		{IPXE, []dhcpopt.Option{
			{Name: "tag:!ipxe,67", Value: "snponly.efi", IPVersion: 4},
			{Name: "tag:ipxe,67", Value: "http://10.0.0.1:8080/custom.ipxe", IPVersion: 4},
		}},
	} {
		t.Run(string(tc.kind), func(t *testing.T) {
			e := newEnv(t)
			e.opts.TFTPServer = ""
			e.opts.PXEBootfile = "lpxelinux.0"
			e.opts.IPXEBootfile = "snponly.efi"
			script := filepath.Join(t.TempDir(), "custom.ipxe")
			writeFile(t, script, "#!ipxe\nchain pxelinux.cfg/${mac:hexhyp}\n")
			e.opts.IPXEBootScript = script
			if err := e.boot(t, tc.kind).PrepareRamdisk(context.Background(), e.task(), callbackParams()); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff([][]dhcpopt.Option{tc.want}, e.dhcp.updates); diff != "" {
				t.Errorf("DHCP options (-want +got):\n%s", diff)
			}
			if tc.kind == IPXE {
				if got := readFile(t, filepath.Join(e.http, "custom.ipxe")); got != "#!ipxe\nchain pxelinux.cfg/${mac:hexhyp}\n" {
					t.Errorf("custom boot script = %q", got)
				}
			}
		})
	}
}

func TestPrepareRamdisk_CommandLineOrder(t *testing.T) {
	e := newEnv(t)
	e.opts.Debug = true
	e.opts.KernelAppendParams = "nofb vga=normal"
	task := e.task()
	task.Node.DriverInfo["kernel_append_params"] = "%default% console=ttyS0,115200n8"
	params := driver.RamdiskParams{
		{Key: "ipa-inspection-collectors", Value: "default,logs"},
		{Key: "ipa-collect-lldp", Value: "1"},
		{Key: "rd.debug", Flag: true},
		{Key: "ipa-inspection-callback-url", Value: callback},
	}
	if err := e.boot(t, PXE).PrepareRamdisk(context.Background(), task, params); err != nil {
		t.Fatal(err)
	}
	conf := readFile(t, filepath.Join(e.tftp, nodeUUID, "config"))
	want := "append initrd=" + nodeUUID + "/deploy_ramdisk" +
		" nofb vga=normal console=ttyS0,115200n8" + // kernel_append_params (driver_info, %default% expanded)
		" ipa-debug=1" + // [DEFAULT]debug
		" ipa-inspection-collectors=default,logs ipa-collect-lldp=1 rd.debug" + // params in order, flag bare
		" ipa-inspection-callback-url=" + callback + "\n" + // callback last, as given
		"ipappend 2\n"
	if !strings.Contains(conf, want) {
		t.Errorf("config:\n%s\nwant it to contain:\n%s", conf, want)
	}
}

func TestKernelAppendParams_InstanceInfoThenDriverInfoThenConfig(t *testing.T) {
	for _, tc := range []struct {
		name                string
		instanceInfo, dInfo any
		want                string
	}{
		{"config", nil, nil, "nofb nomodeset vga=normal"},
		{"driver_info", nil, "console=ttyS0", "console=ttyS0"},
		{"instance_info wins", "quiet", "console=ttyS0", "quiet"},
		{"default expanded", nil, "%default% quiet", "nofb nomodeset vga=normal quiet"},
		{"empty string clears", nil, "", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t)
			task := e.task()
			if tc.instanceInfo != nil {
				task.Node.InstanceInfo["kernel_append_params"] = tc.instanceInfo
			}
			if tc.dInfo != nil {
				task.Node.DriverInfo["kernel_append_params"] = tc.dInfo
			}
			b := e.boot(t, IPXE)
			p, err := b.plan(task)
			if err != nil {
				t.Fatal(err)
			}
			got, err := b.cmdline(p, nil)
			if err != nil {
				t.Fatal(err)
			}
			if got != tc.want {
				t.Errorf("cmdline = %q, want %q", got, tc.want)
			}
		})
	}
}

func TestPrepareRamdisk_UsesConductorDefaultsOnlyWhenDriverInfoHasNeither(t *testing.T) {
	e := newEnv(t)
	writeFile(t, filepath.Join(e.images, "conf.kernel"), "CONF-KERNEL")
	writeFile(t, filepath.Join(e.images, "conf.initramfs"), "CONF-RAMDISK")
	e.img.DefaultKernel = "file://" + filepath.Join(e.images, "conf.kernel")
	e.img.DefaultRamdisk = "file://" + filepath.Join(e.images, "conf.initramfs")

	task := e.task()
	delete(task.Node.DriverInfo, "deploy_kernel")
	delete(task.Node.DriverInfo, "deploy_ramdisk")
	if err := e.boot(t, PXE).PrepareRamdisk(context.Background(), task, nil); err != nil {
		t.Fatal(err)
	}
	if got := readFile(t, filepath.Join(e.tftp, nodeUUID, "deploy_kernel")); got != "CONF-KERNEL" {
		t.Errorf("deploy_kernel = %q, want the [conductor] one", got)
	}

	// driver_info wins when it has both.
	task = e.task()
	if err := e.boot(t, PXE).PrepareRamdisk(context.Background(), task, nil); err != nil {
		t.Fatal(err)
	}
	if got := readFile(t, filepath.Join(e.tftp, nodeUUID, "deploy_kernel")); got != "KERNEL" {
		t.Errorf("deploy_kernel = %q, want the driver_info one", got)
	}
}

func TestPrepareRamdisk_RejectsInjection(t *testing.T) {
	for _, tc := range []struct {
		name   string
		params driver.RamdiskParams
		info   map[string]any // driver_info changes
	}{
		{"newline in value", driver.RamdiskParams{{Key: "a", Value: "1\nboot"}}, nil},
		{"carriage return", driver.RamdiskParams{{Key: "a", Value: "1\rx"}}, nil},
		{"newline then #!ipxe", driver.RamdiskParams{{Key: "a", Value: "x\n#!ipxe\nshell"}}, nil},
		{"ipxe variable", driver.RamdiskParams{{Key: "a", Value: "${net0/ip}"}}, nil},
		{"dollar", driver.RamdiskParams{{Key: "a", Value: "$x"}}, nil},
		{"hash", driver.RamdiskParams{{Key: "a", Value: "#!ipxe"}}, nil},
		{"space", driver.RamdiskParams{{Key: "a", Value: "1 initrd=evil"}}, nil},
		{"tab", driver.RamdiskParams{{Key: "a", Value: "1\tb"}}, nil},
		{"double quote", driver.RamdiskParams{{Key: "a", Value: `"x y"`}}, nil},
		{"single quote", driver.RamdiskParams{{Key: "a", Value: "'x'"}}, nil},
		{"backtick", driver.RamdiskParams{{Key: "a", Value: "`reboot`"}}, nil},
		{"semicolon", driver.RamdiskParams{{Key: "a", Value: "1;reboot"}}, nil},
		{"pipe", driver.RamdiskParams{{Key: "a", Value: "||"}}, nil},
		{"backslash", driver.RamdiskParams{{Key: "a", Value: `x\`}}, nil},
		{"NUL", driver.RamdiskParams{{Key: "a", Value: "x\x00"}}, nil},
		{"non-ASCII", driver.RamdiskParams{{Key: "a", Value: "é"}}, nil},
		{"bad key", driver.RamdiskParams{{Key: "a b", Value: "1"}}, nil},
		{"key with newline", driver.RamdiskParams{{Key: "a\nb", Flag: true}}, nil},
		{"empty key", driver.RamdiskParams{{Key: "", Value: "1"}}, nil},
		{"flag with value", driver.RamdiskParams{{Key: "a", Value: "1", Flag: true}}, nil},
		{"BOOTIF override", driver.RamdiskParams{{Key: "BOOTIF", Value: "01-00-00-00-00-00-00"}}, nil},
		{"initrd override", driver.RamdiskParams{{Key: "initrd", Value: "other"}}, nil},
		{"too long", driver.RamdiskParams{{Key: "a", Value: strings.Repeat("x", 2100)}}, nil},
		{"driver_info kernel_append_params newline", nil, map[string]any{"kernel_append_params": "quiet\n#!ipxe"}},
		{"driver_info kernel_append_params dollar", nil, map[string]any{"kernel_append_params": "x=${mac}"}},
		{"driver_info kernel_append_params quote", nil, map[string]any{"kernel_append_params": `console="ttyS0"`}},
		{"driver_info kernel_append_params not a string", nil, map[string]any{"kernel_append_params": 3.0}},
		{"space in kernel URL", nil, map[string]any{"deploy_kernel": "http://x/a b"}},
		{"newline in kernel URL", nil, map[string]any{"deploy_kernel": "http://x/a\nchain http://evil/"}},
	} {
		for _, kind := range []Kind{PXE, IPXE} {
			t.Run(string(kind)+"/"+tc.name, func(t *testing.T) {
				e := newEnv(t)
				task := e.task()
				for k, v := range tc.info {
					task.Node.DriverInfo[k] = v
				}
				params := append(tc.params, callbackParams()...)
				err := e.boot(t, kind).PrepareRamdisk(context.Background(), task, params)
				if !errors.Is(err, driver.ErrInvalidParameter) {
					t.Fatalf("err = %v, want ErrInvalidParameter", err)
				}
				for _, root := range []string{e.tftp, e.http} {
					if exists(filepath.Join(root, nodeUUID)) || exists(filepath.Join(root, "pxelinux.cfg")) {
						t.Errorf("files written under %s despite the invalid parameter", root)
					}
				}
				if len(e.dhcp.updates) != 0 || len(e.mgmt.calls) != 0 {
					t.Error("DHCP or boot device changed despite the invalid parameter")
				}
			})
		}
	}
}

func TestCleanUpRamdisk_RemovesEverythingAndIsIdempotent(t *testing.T) {
	for _, kind := range []Kind{PXE, IPXE} {
		t.Run(string(kind), func(t *testing.T) {
			e := newEnv(t)
			b := e.boot(t, kind)
			root, prefix := e.tftp, "01-"
			if kind == IPXE {
				root, prefix = e.http, ""
			}
			ctx := context.Background()

			// Another node's files must survive.
			other := e.task()
			other.Node.UUID = otherUUID
			other.Ports = []*baremetal.Port{{UUID: "o1", Address: "52:54:00:00:00:99", PXEEnabled: true}}
			if err := b.PrepareRamdisk(ctx, other, callbackParams()); err != nil {
				t.Fatal(err)
			}

			task := e.task()
			if err := b.PrepareRamdisk(ctx, task, callbackParams()); err != nil {
				t.Fatal(err)
			}
			entries := []string{prefix + "52-54-00-12-34-56", prefix + "52-54-00-ab-cd-ef"}
			for _, name := range entries {
				if !exists(filepath.Join(root, "pxelinux.cfg", name)) {
					t.Fatalf("%s missing after prepare", name)
				}
			}
			// The second port is deleted before cleanup: its entry still
			// points into the node's directory and must go too.
			task.Ports = task.Ports[:1]

			for range 2 {
				if err := b.CleanUpRamdisk(ctx, task); err != nil {
					t.Fatalf("clean up: %v", err)
				}
				if exists(filepath.Join(root, nodeUUID)) {
					t.Error("node directory left behind")
				}
				for _, name := range entries {
					if exists(filepath.Join(root, "pxelinux.cfg", name)) {
						t.Errorf("%s left behind", name)
					}
				}
			}
			if !exists(filepath.Join(root, otherUUID, "config")) || !exists(filepath.Join(root, "pxelinux.cfg", prefix+"52-54-00-00-00-99")) {
				t.Error("clean up removed another node's files")
			}
			if kind == IPXE && !exists(filepath.Join(root, "boot.ipxe")) {
				t.Error("boot.ipxe is shared and must stay")
			}
		})
	}
}

func TestCleanUpRamdisk_NothingPreparedIsFine(t *testing.T) {
	e := newEnv(t)
	for _, kind := range []Kind{PXE, IPXE} {
		if err := e.boot(t, kind).CleanUpRamdisk(context.Background(), e.task()); err != nil {
			t.Errorf("%s: %v", kind, err)
		}
	}
	e.opts.TFTPRoot = ""
	if err := e.boot(t, PXE).CleanUpRamdisk(context.Background(), e.task()); err != nil {
		t.Errorf("no tftp_root: %v", err)
	}
}

func TestPrepareRamdisk_TwiceRewritesAndDropsStaleEntries(t *testing.T) {
	e := newEnv(t)
	b := e.boot(t, PXE)
	ctx := context.Background()
	task := e.task()
	if err := b.PrepareRamdisk(ctx, task, callbackParams()); err != nil {
		t.Fatal(err)
	}
	task.Ports[1].PXEEnabled = false
	params := driver.RamdiskParams{{Key: "ipa-inspection-callback-url", Value: "http://10.0.0.2:5050/v1/continue"}}
	if err := b.PrepareRamdisk(ctx, task, params); err != nil {
		t.Fatal(err)
	}
	conf := readFile(t, filepath.Join(e.tftp, nodeUUID, "config"))
	if !strings.Contains(conf, "10.0.0.2") || strings.Contains(conf, "10.0.0.1:5050") {
		t.Errorf("config not rewritten:\n%s", conf)
	}
	if !exists(filepath.Join(e.tftp, "pxelinux.cfg", "01-52-54-00-12-34-56")) {
		t.Error("entry of the PXE port missing")
	}
	if exists(filepath.Join(e.tftp, "pxelinux.cfg", "01-52-54-00-ab-cd-ef")) {
		t.Error("entry of a port no longer PXE-enabled left behind")
	}
	if len(e.mgmt.calls) != 2 || len(e.dhcp.updates) != 2 {
		t.Errorf("boot device set %d times, DHCP updated %d times; want 2 each", len(e.mgmt.calls), len(e.dhcp.updates))
	}
	// No temporary files are left in the directories.
	for _, dir := range []string{e.tftp, filepath.Join(e.tftp, nodeUUID), filepath.Join(e.tftp, "pxelinux.cfg")} {
		ents, _ := os.ReadDir(dir)
		for _, ent := range ents {
			if strings.HasPrefix(ent.Name(), ".") {
				t.Errorf("temporary file %s left in %s", ent.Name(), dir)
			}
		}
	}
}

func TestPrepareRamdisk_FileModes(t *testing.T) {
	e := newEnv(t)
	if err := e.boot(t, IPXE).PrepareRamdisk(context.Background(), e.task(), callbackParams()); err != nil {
		t.Fatal(err)
	}
	for path, want := range map[string]os.FileMode{
		filepath.Join(e.http, nodeUUID):           os.ModeDir | 0o755,
		filepath.Join(e.http, "pxelinux.cfg"):     os.ModeDir | 0o755,
		filepath.Join(e.http, nodeUUID, "config"): 0o644,
		filepath.Join(e.http, "boot.ipxe"):        0o644,
	} {
		fi, err := os.Stat(path)
		if err != nil {
			t.Fatal(err)
		}
		if fi.Mode() != want {
			t.Errorf("%s mode %v, want %v", path, fi.Mode(), want)
		}
	}
}

// A config holding a callback token is readable by ferro's user only.
func TestPrepareRamdisk_ConfigWithTokenIs0600(t *testing.T) {
	for _, kind := range []Kind{PXE, IPXE} {
		e := newEnv(t)
		params := append(driver.RamdiskParams{{Key: "ferro-inspection-token", Value: "s3cret"}}, callbackParams()...)
		if err := e.boot(t, kind).PrepareRamdisk(context.Background(), e.task(), params); err != nil {
			t.Fatal(err)
		}
		root := e.tftp
		if kind == IPXE {
			root = e.http
		}
		fi, err := os.Stat(filepath.Join(root, nodeUUID, "config"))
		if err != nil {
			t.Fatal(err)
		}
		if fi.Mode() != 0o600 {
			t.Errorf("%s: config with a token has mode %v, want 0600", kind, fi.Mode())
		}
	}
}

func TestPrepareRamdisk_PropagatesDHCPAndManagementErrors(t *testing.T) {
	e := newEnv(t)
	e.dhcp.err = errors.New("neutron down")
	err := e.boot(t, PXE).PrepareRamdisk(context.Background(), e.task(), nil)
	if err == nil || !strings.Contains(err.Error(), "neutron down") {
		t.Errorf("err = %v, want the DHCP error", err)
	}
	if len(e.mgmt.calls) != 0 {
		t.Error("boot device set although DHCP failed")
	}

	e = newEnv(t)
	e.mgmt.err = errors.New("BMC unreachable")
	err = e.boot(t, PXE).PrepareRamdisk(context.Background(), e.task(), nil)
	if err == nil || !strings.Contains(err.Error(), "BMC unreachable") {
		t.Errorf("err = %v, want the management error", err)
	}
}

func TestNew_UnknownKind(t *testing.T) {
	if _, err := New("http", Options{}); !errors.Is(err, driver.ErrInvalidParameter) {
		t.Errorf("err = %v", err)
	}
}
