package ramdisk_test

import (
	"bytes"
	"context"
	"crypto/rand"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ferrometal/ferro/internal/ramdisk"
	"github.com/ferrometal/ferro/internal/testing/boottest"
	"github.com/ferrometal/ferro/internal/testing/ferrotest"
)

func TestBuildISO_RefusesUnsafeCmdline(t *testing.T) {
	dir := t.TempDir()
	for _, bad := range []string{"a=\"b\"", "x=$y", "a;b", "a\nb", "x={}", "é"} {
		err := ramdisk.BuildISO(context.Background(), filepath.Join(dir, "x.iso"), ramdisk.ISOOptions{Kernel: "/nonexistent", Initramfs: "/nonexistent", Cmdline: bad})
		if err == nil || !strings.Contains(err.Error(), "kernel command line") {
			t.Errorf("cmdline %q: got %v, want a command line error", bad, err)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "x.iso")); err == nil {
		t.Error("a refused ISO was written")
	}
}

func TestBuildISO_MissingLoaderNamesPackage(t *testing.T) {
	dir := t.TempDir()
	k := filepath.Join(dir, "k")
	os.WriteFile(k, []byte("kernel"), 0o644)
	err := ramdisk.BuildISO(context.Background(), filepath.Join(dir, "x.iso"), ramdisk.ISOOptions{Kernel: k, Initramfs: k, ISOLINUX: filepath.Join(dir, "none"), BIOS: true})
	if err == nil || !strings.Contains(err.Error(), "Debian package isolinux") {
		t.Fatalf("got %v, want an error naming the isolinux package", err)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 1 {
		t.Errorf("build left files behind: %v", entries)
	}
}

// TestBuildISO_Layout reads the image back with genisoimage's isoinfo:
// the files are there under their Rock Ridge names, the boot configs carry
// the command line and the El Torito catalog has a BIOS and an EFI entry.
func TestBuildISO_Layout(t *testing.T) {
	requireLoaders(t)
	isoinfo := ferrotest.RequireTool(t, "isoinfo")
	dir := t.TempDir()
	k, i := filepath.Join(dir, "k"), filepath.Join(dir, "i")
	os.WriteFile(k, bytes.Repeat([]byte("K"), 5000), 0o644)
	os.WriteFile(i, bytes.Repeat([]byte("I"), 7000), 0o644)
	out := filepath.Join(dir, "r.iso")
	cmdline := "console=ttyS0 ipa-inspection-callback-url=http://192.0.2.1:5050/v1/continue ferro-inspection-token=abc"
	if err := ramdisk.BuildISO(context.Background(), out, ramdisk.ISOOptions{Kernel: k, Initramfs: i, Cmdline: cmdline}); err != nil {
		t.Fatal(err)
	}
	run := func(args ...string) string {
		b, err := exec.Command(isoinfo, append([]string{"-i", out}, args...)...).CombinedOutput()
		if err != nil {
			t.Fatalf("isoinfo %v: %v\n%s", args, err, b)
		}
		return string(b)
	}
	for _, p := range []string{"/boot/grub/grub.cfg", "/isolinux/isolinux.cfg"} {
		if got := run("-R", "-x", p); !strings.Contains(got, cmdline) {
			t.Errorf("%s does not carry the command line:\n%s", p, got)
		}
	}
	if got := run("-R", "-x", "/initrd"); got != strings.Repeat("I", 7000) {
		t.Errorf("/initrd has %d bytes, not the initramfs", len(got))
	}
	listing := run("-R", "-f")
	for _, p := range []string{"/vmlinuz", "/initrd", "/isolinux/isolinux.bin", "/isolinux/ldlinux.c32", "/boot/efiboot.img", "/.disk/info"} {
		if !strings.Contains(listing, p+"\n") {
			t.Errorf("%s is not in the image:\n%s", p, listing)
		}
	}
	desc := run("-d")
	for _, want := range []string{"Arch 0 (x86)", "Volume id: FERRO_RAMDISK", "Rock Ridge signatures"} {
		if !strings.Contains(desc, want) {
			t.Errorf("isoinfo -d lacks %q:\n%s", want, desc)
		}
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 3 {
		t.Errorf("build left work files behind: %v", entries)
	}
}

// TestBuildISO_BootsInQEMU boots the ISO as a CD in QEMU, with SeaBIOS
// (isolinux) and with OVMF (GRUB): the Debian kernel must start with the
// command line from the boot config and run the initramfs's /init, which
// prints the marker it finds there.
func TestBuildISO_BootsInQEMU(t *testing.T) {
	requireLoaders(t)
	qemu := ferrotest.RequireTool(t, "qemu-system-x86_64")
	kernel := boottest.DebianKernel(t)
	dir := t.TempDir()
	initrd := filepath.Join(dir, "initrd")
	if err := os.WriteFile(initrd, boottest.MarkerInitramfs(t), 0o644); err != nil {
		t.Fatal(err)
	}
	marker := "ferro-iso-" + strings.ToLower(rand.Text()[:10])
	iso := filepath.Join(dir, "boot.iso")
	cmdline := "console=ttyS0 panic=-1 ferro.marker=" + marker
	if err := ramdisk.BuildISO(context.Background(), iso, ramdisk.ISOOptions{Kernel: kernel, Initramfs: initrd, Cmdline: cmdline}); err != nil {
		t.Fatal(err)
	}
	for _, fw := range []struct {
		name string
		args func(t *testing.T) []string
	}{
		{"bios", func(*testing.T) []string { return []string{"-machine", "pc"} }},
		{"uefi", func(t *testing.T) []string { return boottest.OVMF(t, t.TempDir()) }},
	} {
		t.Run(fw.name, func(t *testing.T) {
			t.Parallel()
			args := append(fw.args(t), "-accel", "tcg", "-cpu", "max", "-m", "512", "-smp", "1", "-nographic",
				"-monitor", "none", "-no-reboot", "-net", "none", "-cdrom", iso, "-boot", "d")
			line := boottest.Boot(t, qemu, args, boottest.MarkerPrefix+marker, 4*time.Minute)
			t.Logf("%s: %s", fw.name, line)
		})
	}
}

func requireLoaders(t *testing.T) {
	t.Helper()
	for _, p := range []string{ramdisk.DebianISOLINUX, ramdisk.DebianLDLINUX, ramdisk.DebianGRUBEFI} {
		if _, err := os.Stat(p); err != nil {
			ferrotest.SkipOrFail(t, "%s missing (Debian packages isolinux, syslinux-common, grub-efi-amd64-bin; .ci/run installs them)", p)
		}
	}
}
