package vmedia_test

import (
	"context"
	"crypto/rand"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ferrometal/ferro/internal/baremetal"
	bmc "github.com/ferrometal/ferro/internal/bmc/redfish"
	"github.com/ferrometal/ferro/internal/driver"
	"github.com/ferrometal/ferro/internal/driver/deployimage"
	rf "github.com/ferrometal/ferro/internal/driver/redfish"
	"github.com/ferrometal/ferro/internal/driver/redfish/vmedia"
	"github.com/ferrometal/ferro/internal/ramdisk"
	"github.com/ferrometal/ferro/internal/testing/boottest"
	"github.com/ferrometal/ferro/internal/testing/ferrotest"
	"github.com/ferrometal/ferro/internal/testing/vbmctest"
	"github.com/ferrometal/ferro/internal/vbmc"
)

// TestVirtualMedia_BootsInQEMU is the whole path on a QEMU machine behind
// ferro-vbmc, with SeaBIOS and with OVMF: ferro builds the ISO from Debian's
// kernel and a marker initramfs, the BMC fetches it and powers the VM on
// from the CD (one-time override), and the VM's console shows the kernel
// running /init with the inspection parameters from the ISO's boot config.
func TestVirtualMedia_BootsInQEMU(t *testing.T) {
	qemu := ferrotest.RequireTool(t, "qemu-system-x86_64")
	if err := ramdisk.CheckLoaders(ramdisk.ISOOptions{}); err != nil {
		ferrotest.SkipOrFail(t, "%v", err)
	}
	if _, err := os.Stat("/usr/share/OVMF/OVMF_CODE_4M.fd"); err != nil {
		ferrotest.SkipOrFail(t, "OVMF missing (Debian package ovmf): %v", err)
	}
	kernel := boottest.DebianKernel(t)
	images := t.TempDir()
	initrd := filepath.Join(images, "initrd")
	if err := os.WriteFile(initrd, boottest.MarkerInitramfs(t), 0o644); err != nil {
		t.Fatal(err)
	}
	var machines []vbmc.MachineConfig
	for i, fw := range []string{"bios", "uefi"} {
		q := &vbmc.QEMUConfig{Binary: qemu, Accel: "tcg", Firmware: fw, ExtraArgs: []string{"-cpu", "max"}}
		if fw == "uefi" {
			q.Machine = "q35"
		}
		machines = append(machines, vbmc.MachineConfig{Name: fw, Backend: vbmc.BackendQEMU, CPUs: 1, MemoryMB: 1024,
			MACs: []string{"52:54:00:77:00:0" + string(rune('1'+i))}, DisksGB: []int{1}, QEMU: q})
	}
	v := vbmctest.Start(t, vbmctest.Config{Machines: machines})

	httpRoot := t.TempDir()
	srv := httptest.NewServer(http.FileServer(http.Dir(httpRoot)))
	t.Cleanup(srv.Close)
	imgs := deployimage.New(deployimage.Options{AllowedPaths: []string{images, filepath.Dir(kernel)}})
	client := bmc.New(bmc.Options{ConnectionAttempts: 2, ConnectionRetryInterval: time.Millisecond})
	t.Cleanup(client.Close)
	opts := rf.Options{Client: client, PollInterval: 100 * time.Millisecond}
	power, mgmt := rf.NewPower(opts), rf.NewManagement(opts)
	boot := vmedia.New(vmedia.Options{Images: imgs, Client: client, HTTPRoot: httpRoot, HTTPURL: srv.URL,
		KernelAppendParams: "console=ttyS0 panic=-1"})

	for i, m := range machines {
		t.Run(m.Name, func(t *testing.T) {
			t.Parallel()
			n := &baremetal.Node{UUID: "0c2f7a0e-7d4b-4a55-9a77-00000000000" + string(rune('1'+i)), DriverInternalInfo: map[string]any{}, Properties: map[string]any{},
				DriverInfo: map[string]any{"redfish_address": v.RedfishURL, "redfish_username": v.Username, "redfish_password": v.Password,
					"redfish_system_id": "/redfish/v1/Systems/" + m.Name, "deploy_kernel": "file://" + kernel, "deploy_ramdisk": "file://" + initrd}}
			task := &driver.Task{Node: n, Store: nopStore{}, Driver: &driver.Interfaces{Power: power, Management: mgmt}, Log: slog.Default()}
			ctx := context.Background()
			marker := strings.ToLower(rand.Text()[:12])
			params := driver.RamdiskParams{{Key: "ferro.marker", Value: marker}, {Key: "ferro-inspection-token", Value: "tok-" + marker}}
			if err := boot.ValidateInspection(ctx, task); err != nil {
				t.Fatal(err)
			}
			if err := boot.PrepareRamdisk(ctx, task, params); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() {
				power.SetPowerState(context.Background(), task, baremetal.PowerOff, time.Minute)
				if err := boot.CleanUpRamdisk(context.Background(), task); err != nil {
					t.Error(err)
				}
			})
			if err := power.SetPowerState(ctx, task, baremetal.PowerOn, time.Minute); err != nil {
				t.Fatal(err)
			}
			console := filepath.Join(v.StateDir, m.Name, "console.log")
			log := waitFile(t, console, boottest.MarkerPrefix+marker, 4*time.Minute)
			if !strings.Contains(log, "ferro-inspection-token=tok-"+marker) {
				t.Errorf("the kernel command line lacks the token:\n%s", tail(log))
			}
		})
	}
}

// waitFile polls a console log the VM writes until it holds want.
func waitFile(t *testing.T, path, want string, timeout time.Duration) string {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		b, _ := os.ReadFile(path)
		if strings.Contains(string(b), want+"\n") || strings.Contains(string(b), want+"\r") {
			return string(b)
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s never showed %q within %v:\n%s", path, want, timeout, tail(string(b)))
		}
		time.Sleep(200 * time.Millisecond)
	}
}

func tail(s string) string {
	lines := strings.Split(s, "\n")
	if len(lines) > 30 {
		lines = lines[len(lines)-30:]
	}
	return strings.Join(lines, "\n")
}
