package vmedia_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"errors"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
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
	"github.com/ferrometal/ferro/internal/testing/ferrotest"
	"github.com/ferrometal/ferro/internal/testing/vbmctest"
)

type nopStore struct{}

func (nopStore) UpdateNode(context.Context, *baremetal.Node) error { return nil }
func (nopStore) UpdatePort(context.Context, *baremetal.Port) error { return nil }

type lab struct {
	v        *vbmctest.VBMC
	httpRoot string
	httpURL  string
	images   string
	client   *bmc.Client
	boot     *vmedia.Boot
	mgmt     *rf.Management
	log      *bytes.Buffer
}

func newLab(t *testing.T) *lab {
	if err := ramdisk.CheckLoaders(ramdisk.ISOOptions{}); err != nil {
		ferrotest.SkipOrFail(t, "%v", err)
	}
	l := &lab{log: &bytes.Buffer{}}
	l.v = vbmctest.Start(t, vbmctest.Config{Machines: vbmctest.FakeMachines("vm", 1)})
	dir := t.TempDir()
	l.httpRoot, l.images = filepath.Join(dir, "httpboot"), filepath.Join(dir, "images")
	os.MkdirAll(l.httpRoot, 0o755)
	os.MkdirAll(l.images, 0o755)
	os.WriteFile(filepath.Join(l.images, "k"), []byte("a deploy kernel"), 0o644)
	os.WriteFile(filepath.Join(l.images, "r"), []byte("a deploy ramdisk"), 0o644)
	// ferro's HTTP boot root, as the BMC sees it.
	srv := httptest.NewServer(http.FileServer(http.Dir(l.httpRoot)))
	t.Cleanup(srv.Close)
	l.httpURL = srv.URL + "/"
	images := deployimage.New(deployimage.Options{AllowedPaths: []string{l.images}})
	log := slog.New(slog.NewTextHandler(l.log, &slog.HandlerOptions{Level: slog.LevelDebug}))
	l.client = bmc.New(bmc.Options{ConnectionAttempts: 2, ConnectionRetryInterval: time.Millisecond, Log: log})
	t.Cleanup(l.client.Close)
	l.mgmt = rf.NewManagement(rf.Options{Client: l.client, Log: log})
	l.boot = vmedia.New(vmedia.Options{Images: images, Client: l.client, HTTPRoot: l.httpRoot, HTTPURL: l.httpURL,
		KernelAppendParams: "nofb console=ttyS0", Log: log})
	return l
}

func (l *lab) task(extra map[string]any) *driver.Task {
	info := map[string]any{"redfish_address": l.v.RedfishURL, "redfish_username": l.v.Username, "redfish_password": l.v.Password,
		"redfish_system_id": "/redfish/v1/Systems/vm0",
		"deploy_kernel":     "file://" + filepath.Join(l.images, "k"), "deploy_ramdisk": "file://" + filepath.Join(l.images, "r")}
	for k, v := range extra {
		if v == nil {
			delete(info, k)
		} else {
			info[k] = v
		}
	}
	n := &baremetal.Node{UUID: "6f1c1a52-58a5-4d4c-9d0e-3b3f6f0a0c11", DriverInfo: info, DriverInternalInfo: map[string]any{}, Properties: map[string]any{}}
	return &driver.Task{Node: n, Store: nopStore{}, Driver: &driver.Interfaces{Management: l.mgmt}, Log: slog.New(slog.NewTextHandler(l.log, nil))}
}

func (l *lab) ep(t *testing.T, task *driver.Task) bmc.Endpoint {
	ep, err := rf.Endpoint(task, "auto")
	if err != nil {
		t.Fatal(err)
	}
	return ep
}

// TestPrepareRamdisk_AgainstVBMC builds the ISO, and ferro-vbmc fetches
// it from the HTTP root: the bytes it got are the ISO's, whose boot
// configs (read back with isoinfo) carry the parameters; the override is
// Cd, once. Clean-up ejects and removes it, twice over.
func TestPrepareRamdisk_AgainstVBMC(t *testing.T) {
	isoinfo := ferrotest.RequireTool(t, "isoinfo")
	l := newLab(t)
	task := l.task(nil)
	ctx := context.Background()
	if err := l.boot.ValidateInspection(ctx, task); err != nil {
		t.Fatal(err)
	}
	params := driver.RamdiskParams{{Key: "ferro-inspection-token", Value: "tok-0123456789"}, {Key: "ipa-inspection-callback-url", Value: "http://192.0.2.7:5050/v1/continue"}}
	if err := l.boot.PrepareRamdisk(ctx, task, params); err != nil {
		t.Fatal(err)
	}
	isos, _ := filepath.Glob(filepath.Join(l.httpRoot, "vmedia", task.Node.UUID, "*.iso"))
	if len(isos) != 1 || len(filepath.Base(isos[0])) < 20 {
		t.Fatalf("ISOs in the HTTP root: %v", isos)
	}
	// Its kernel line holds the token: ferro's user alone may read it.
	if fi, err := os.Stat(isos[0]); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("the ISO with a callback token: %v, %v; want mode 0600", fi.Mode(), err)
	}
	cfg, err := exec.Command(isoinfo, "-R", "-i", isos[0], "-x", "/boot/grub/grub.cfg").Output()
	if err != nil || !strings.Contains(string(cfg), "linux /vmlinuz nofb console=ttyS0 ferro-inspection-token=tok-0123456789 ipa-inspection-callback-url=http://192.0.2.7:5050/v1/continue") {
		t.Errorf("grub.cfg (%v):\n%s", err, cfg)
	}
	cds, err := l.client.CDs(ctx, l.ep(t, task))
	if err != nil || len(cds) != 1 || !cds[0].Inserted || cds[0].Image != l.httpURL+"vmedia/"+task.Node.UUID+"/"+filepath.Base(isos[0]) {
		t.Fatalf("virtual CD %+v, %v", cds, err)
	}
	want, _ := os.ReadFile(isos[0])
	fetched, _ := filepath.Glob(filepath.Join(l.v.StateDir, "*", "*.iso"))
	if len(fetched) != 1 {
		t.Fatalf("ferro-vbmc holds %v", fetched)
	}
	got, _ := os.ReadFile(fetched[0])
	if sha256.Sum256(got) != sha256.Sum256(want) {
		t.Errorf("ferro-vbmc fetched %d bytes that are not the ISO (%d bytes)", len(got), len(want))
	}
	sys, err := l.client.System(ctx, l.ep(t, task))
	if err != nil || sys.Boot.Target != "Cd" || sys.Boot.Enabled != "Once" {
		t.Errorf("boot override %+v, %v", sys.Boot, err)
	}
	// A listing of the directory shows nothing.
	resp, err := http.Get(l.httpURL + "vmedia/" + task.Node.UUID + "/")
	if err == nil {
		var b bytes.Buffer
		b.ReadFrom(resp.Body)
		resp.Body.Close()
		if strings.Contains(b.String(), ".iso") {
			t.Errorf("the directory listing shows the ISO name: %s", b.String())
		}
	}
	for range 2 {
		if err := l.boot.CleanUpRamdisk(ctx, task); err != nil {
			t.Fatal(err)
		}
	}
	cds, err = l.client.CDs(ctx, l.ep(t, task))
	if err != nil || cds[0].Inserted || cds[0].Image != "" {
		t.Errorf("after clean-up: %+v, %v", cds, err)
	}
	if _, err := os.Stat(filepath.Join(l.httpRoot, "vmedia", task.Node.UUID)); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("node directory left: %v", err)
	}
	ferrotest.AssertNoSecrets(t, "the driver", l.log.String(), l.v.Password)
	ferrotest.AssertNoSecrets(t, "ferro-vbmc", l.v.Log(), l.v.Password)
}

// TestValidateInspection_NeverFallsBack: whatever is missing is a
// validation error, not driver.ErrUnsupported.
func TestValidateInspection_NeverFallsBack(t *testing.T) {
	l := newLab(t)
	ctx := context.Background()
	for _, tc := range []struct {
		name  string
		extra map[string]any
		is    error
		msg   string
	}{
		{"no deploy images", map[string]any{"deploy_kernel": nil, "deploy_ramdisk": nil}, driver.ErrMissingParameter, "deploy_kernel"},
		{"deploy_iso", map[string]any{"deploy_iso": "http://x/ipa.iso"}, driver.ErrInvalidParameter, "cannot carry the inspection callback URL and token"},
		{"no BMC address", map[string]any{"redfish_address": nil}, driver.ErrMissingParameter, "redfish_address"},
		{"no such system", map[string]any{"redfish_system_id": "/redfish/v1/Systems/ghost"}, bmc.ErrNotFound, "ghost"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := l.boot.ValidateInspection(ctx, l.task(tc.extra))
			if errors.Is(err, driver.ErrUnsupported) || !errors.Is(err, tc.is) || !strings.Contains(err.Error(), tc.msg) {
				t.Errorf("got %v, want %v mentioning %q and never ErrUnsupported", err, tc.is, tc.msg)
			}
		})
	}
}

// TestPrepareRamdisk_PrebuiltISOForTheAgentInterface: a node inspected
// with the agent interface boots its deploy_iso as is, as Ironic's: the
// BMC fetches it from its URL; clean-up ejects it. The inspector
// interface still refuses it (TestValidateInspection_NeverFallsBack).
func TestPrepareRamdisk_PrebuiltISOForTheAgentInterface(t *testing.T) {
	l := newLab(t)
	ctx := context.Background()
	iso := filepath.Join(l.httpRoot, "prebuilt.iso")
	os.WriteFile(iso, []byte("a prebuilt ISO"), 0o644)
	task := l.task(map[string]any{"deploy_kernel": nil, "deploy_ramdisk": nil, "deploy_iso": l.httpURL + "prebuilt.iso"})
	task.Node.Interfaces = map[string]string{"inspect": "agent"}
	if err := l.boot.ValidateInspection(ctx, task); err != nil {
		t.Fatalf("ValidateInspection: %v", err)
	}
	if err := l.boot.PrepareRamdisk(ctx, task, driver.RamdiskParams{{Key: "ipa-inspection-callback-url", Value: "http://192.0.2.1:6385/v1/continue_inspection"}}); err != nil {
		t.Fatal(err)
	}
	cds, err := l.client.CDs(ctx, l.ep(t, task))
	if err != nil || len(cds) != 1 || !cds[0].Inserted || cds[0].Image != l.httpURL+"prebuilt.iso" {
		t.Fatalf("virtual CD %+v, %v; want the prebuilt ISO's URL", cds, err)
	}
	if !strings.Contains(l.log.String(), "per-node kernel parameters") {
		t.Error("no warning that the per-node parameters are lost")
	}
	if err := l.boot.CleanUpRamdisk(ctx, task); err != nil {
		t.Fatal(err)
	}
	if cds, _ := l.client.CDs(ctx, l.ep(t, task)); cds[0].Inserted {
		t.Errorf("after clean-up: %+v", cds)
	}
	task.Node.DriverInfo["deploy_iso"] = "file:///srv/ipa.iso"
	if err := l.boot.ValidateInspection(ctx, task); !errors.Is(err, driver.ErrInvalidParameter) {
		t.Errorf("a file:// ISO: %v, want refused (the BMC fetches it)", err)
	}
}

// TestPrepareRamdisk_FailureLeavesNothingAfterCleanUp: an image the BMC
// cannot fetch fails the insertion; clean-up leaves nothing inserted or on disk.
func TestPrepareRamdisk_FailureLeavesNothingAfterCleanUp(t *testing.T) {
	l := newLab(t)
	task := l.task(nil)
	ctx := context.Background()
	bad := vmedia.New(vmedia.Options{Images: mustImages(l), Client: l.client, HTTPRoot: l.httpRoot,
		HTTPURL: "http://127.0.0.1:1/", KernelAppendParams: "nofb"})
	err := bad.PrepareRamdisk(ctx, task, nil)
	if err == nil || !strings.Contains(err.Error(), "insert virtual media") || !strings.Contains(err.Error(), l.v.RedfishURL) {
		t.Fatalf("got %v, want an insert error naming the BMC", err)
	}
	if err := bad.CleanUpRamdisk(ctx, task); err != nil {
		t.Fatal(err)
	}
	cds, _ := l.client.CDs(ctx, l.ep(t, task))
	if len(cds) != 1 || cds[0].Inserted {
		t.Errorf("after clean-up: %+v", cds)
	}
	if entries, _ := os.ReadDir(filepath.Join(l.httpRoot, "vmedia")); len(entries) != 1 { // index.html
		t.Errorf("left in vmedia/: %v", entries)
	}
}

func mustImages(l *lab) *deployimage.Fetcher {
	return deployimage.New(deployimage.Options{AllowedPaths: []string{l.images}})
}

func TestSweepBootFiles_RemovesNodesNotInspecting(t *testing.T) {
	root := t.TempDir()
	keep, gone := "11111111-1111-4111-8111-111111111111", "22222222-2222-4222-8222-222222222222"
	for _, u := range []string{keep, gone} {
		os.MkdirAll(filepath.Join(root, "vmedia", u), 0o755)
		os.WriteFile(filepath.Join(root, "vmedia", u, "x.iso"), []byte("iso"), 0o644)
	}
	os.WriteFile(filepath.Join(root, "vmedia", "index.html"), nil, 0o644)
	b := vmedia.New(vmedia.Options{HTTPRoot: root})
	swept, err := b.SweepBootFiles(context.Background(), func(_ context.Context, u string) bool { return u == keep })
	if err != nil || len(swept) != 1 || swept[0] != gone {
		t.Fatalf("swept %v, %v", swept, err)
	}
	if _, err := os.Stat(filepath.Join(root, "vmedia", keep, "x.iso")); err != nil {
		t.Error(err)
	}
	if _, err := os.Stat(filepath.Join(root, "vmedia", gone)); !os.IsNotExist(err) {
		t.Errorf("%s left: %v", gone, err)
	}
}
