package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ferrometal/ferro/internal/ramdisk"
)

func TestRamdiskBuild_FromGivenKernelAndAgent(t *testing.T) {
	dir := t.TempDir()
	kernel := filepath.Join(dir, "vmlinuz-6.1.0-test")
	agent := filepath.Join(dir, "ferro-agent")
	for p, s := range map[string]string{kernel: "bzImage\n", agent: "agent\n"} {
		if err := os.WriteFile(p, []byte(s), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	out := filepath.Join(dir, "out")
	var stdout, stderr bytes.Buffer
	code := run(context.Background(), []string{"ramdisk", "build", "--out", out, "--kernel", kernel,
		"--modules-dir", "../../internal/ramdisk/testdata/modules/6.1.0-test", "--modules", "virtio_net,virtio_pci",
		"--agent", agent, "--iso", "no"}, &stdout, &stderr)
	if code != 0 {
		t.Fatalf("exit %d\n%s", code, stderr.String())
	}
	if b, err := os.ReadFile(filepath.Join(out, ramdisk.KernelFile)); err != nil || string(b) != "bzImage\n" {
		t.Errorf("kernel = %q, %v", b, err)
	}
	f, err := os.Open(filepath.Join(out, ramdisk.InitramfsFile))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	recs, err := ramdisk.ReadInitramfs(f)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := recs["init"]; !ok {
		t.Error("no /init")
	}
	if _, ok := recs["lib/modules/6.1.0-test/kernel/drivers/virtio/virtio_pci.ko"]; !ok {
		t.Error("virtio_pci.ko not carried")
	}
	if _, err := os.Stat(filepath.Join(out, ramdisk.ISOFile)); err == nil {
		t.Error("an ISO was written with --iso no")
	}
	for _, want := range []string{"deploy_kernel = " + filepath.Join(out, ramdisk.KernelFile), "deploy_ramdisk = "} {
		if !strings.Contains(stdout.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, stdout.String())
		}
	}
}

func TestRamdiskBuild_BadArguments(t *testing.T) {
	for _, args := range [][]string{
		{"ramdisk"},
		{"ramdisk", "build"},
		{"ramdisk", "build", "--out", "x", "--kernel", "k", "--kernel-version", "v"},
		{"ramdisk", "build", "--out", "x", "--iso", "maybe"},
		{"ramdisk", "build", "--out", "x", "--iso-cmdline", "a;b"},
	} {
		var stdout, stderr bytes.Buffer
		if code := run(context.Background(), args, &stdout, &stderr); code != 2 {
			t.Errorf("%q: exit %d, want 2 (%s)", args, code, stderr.String())
		}
	}
}

func TestRamdiskBuild_UnknownModuleFails(t *testing.T) {
	dir := t.TempDir()
	kernel := filepath.Join(dir, "vmlinuz-6.1.0-test")
	os.WriteFile(kernel, []byte("k"), 0o644)
	os.WriteFile(filepath.Join(dir, "a"), []byte("a"), 0o755)
	var stdout, stderr bytes.Buffer
	code := run(context.Background(), []string{"ramdisk", "build", "--out", filepath.Join(dir, "out"), "--kernel", kernel,
		"--modules-dir", "../../internal/ramdisk/testdata/modules/6.1.0-test", "--modules", "no_such",
		"--agent", filepath.Join(dir, "a"), "--iso", "no"}, &stdout, &stderr)
	if code != 1 || !strings.Contains(stderr.String(), "no_such") {
		t.Errorf("exit %d: %s", code, stderr.String())
	}
	if _, err := os.Stat(filepath.Join(dir, "out", ramdisk.InitramfsFile)); err == nil {
		t.Error("an initramfs was left behind")
	}
}
