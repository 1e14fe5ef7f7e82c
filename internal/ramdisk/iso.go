// Package ramdisk assembles what a node boots for inspection: the agent's
// initramfs and a bootable ISO image for virtual media.
package ramdisk

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/diskfs/go-diskfs/backend/file"
	"github.com/diskfs/go-diskfs/filesystem/fat16"
	"github.com/diskfs/go-diskfs/filesystem/iso9660"
)

// Boot loaders read from Debian's packages at run time (ferro ships none):
// isolinux for BIOS El Torito, GRUB's monolithic CD image for UEFI.
const (
	DebianISOLINUX = "/usr/lib/ISOLINUX/isolinux.bin"                 // package isolinux
	DebianLDLINUX  = "/usr/lib/syslinux/modules/bios/ldlinux.c32"     // package syslinux-common
	DebianGRUBEFI  = "/usr/lib/grub/x86_64-efi/monolithic/gcdx64.efi" // package grub-efi-amd64-bin
)

// ISOOptions describe a bootable ISO: the kernel and initramfs and the
// command line both boot loaders pass to the kernel.
type ISOOptions struct {
	Kernel    string // path of the kernel (bzImage)
	Initramfs string // path of the initramfs
	// Cmdline is the whole kernel command line. It goes verbatim into
	// isolinux.cfg and grub.cfg, so characters those would interpret are
	// refused.
	Cmdline string
	// VolumeID is the ISO volume label; default FERRO_RAMDISK.
	VolumeID string
	// ISOLINUX and LDLINUX are the BIOS loader files; "" means Debian's
	// paths. GRUBEFI is a GRUB EFI image that reads /boot/grub/grub.cfg
	// from the CD (Debian's gcdx64.efi does); "" means Debian's path.
	ISOLINUX, LDLINUX, GRUBEFI string
	// BIOS and UEFI choose the El Torito entries; both false means both.
	BIOS, UEFI bool
	// TempDir holds the work space; "" means next to the output.
	TempDir string
}

// espSize is the FAT16 image holding BOOTX64.EFI for UEFI El Torito: big
// enough for GRUB, small enough for an El Torito sector count. (OVMF
// rejects a FAT32 this small: too few clusters for FAT32.)
const espSize = 8 << 20

// cmdlineUnsafe are characters isolinux.cfg or grub.cfg would interpret.
const cmdlineUnsafe = "\"'`$;\\|&<>#{}"

// CheckCmdline says why cmdline cannot go into the boot configs, or nil.
func CheckCmdline(cmdline string) error {
	for i := 0; i < len(cmdline); i++ {
		c := cmdline[i]
		if c < ' ' || c >= 0x7f || strings.IndexByte(cmdlineUnsafe, c) >= 0 {
			return fmt.Errorf("kernel command line has a character %q that a boot loader config would interpret (control, non-ASCII or one of %s)", c, cmdlineUnsafe)
		}
	}
	if len(cmdline) > 2047 {
		return fmt.Errorf("kernel command line is %d bytes, more than the kernel's 2047", len(cmdline))
	}
	return nil
}

func (o ISOOptions) withDefaults() ISOOptions {
	if !o.BIOS && !o.UEFI {
		o.BIOS, o.UEFI = true, true
	}
	o.ISOLINUX = or(o.ISOLINUX, DebianISOLINUX)
	o.LDLINUX = or(o.LDLINUX, DebianLDLINUX)
	o.GRUBEFI = or(o.GRUBEFI, DebianGRUBEFI)
	o.VolumeID = or(o.VolumeID, "FERRO_RAMDISK")
	return o
}

// CheckLoaders says which boot loader file o needs and lacks, naming the
// Debian package that provides it, or returns nil.
func CheckLoaders(o ISOOptions) error {
	o = o.withDefaults()
	if o.BIOS {
		if err := checkFile(o.ISOLINUX, "isolinux.bin (Debian package isolinux)"); err != nil {
			return err
		}
		if err := checkFile(o.LDLINUX, "ldlinux.c32 (Debian package syslinux-common)"); err != nil {
			return err
		}
	}
	if o.UEFI {
		if err := checkFile(o.GRUBEFI, "GRUB EFI CD image (Debian package grub-efi-amd64-bin)"); err != nil {
			return err
		}
	}
	return nil
}

func checkFile(path, what string) error {
	if path == "" {
		return fmt.Errorf("build ISO: no %s given", what)
	}
	fi, err := os.Stat(path)
	if err != nil {
		return fmt.Errorf("build ISO: %s: %w", what, err)
	}
	if !fi.Mode().IsRegular() {
		return fmt.Errorf("build ISO: %s %s is not a regular file", what, path)
	}
	return nil
}

// BuildISO writes a bootable ISO 9660 image to out (atomically: a
// temporary file renamed onto it). It holds /vmlinuz, /initrd, isolinux
// with its config for BIOS and an EFI System Partition image with GRUB
// for UEFI, both booting the kernel with o.Cmdline.
func BuildISO(ctx context.Context, out string, o ISOOptions) (err error) {
	if err := CheckCmdline(o.Cmdline); err != nil {
		return err
	}
	o = o.withDefaults()
	if err := checkFile(o.Kernel, "kernel"); err != nil {
		return err
	}
	if err := checkFile(o.Initramfs, "initramfs"); err != nil {
		return err
	}
	if err := CheckLoaders(o); err != nil {
		return err
	}

	tmpDir := or(o.TempDir, filepath.Dir(out))
	work, err := os.MkdirTemp(tmpDir, ".iso-work-*")
	if err != nil {
		return fmt.Errorf("build ISO: %w", err)
	}
	defer os.RemoveAll(work)
	tree := filepath.Join(work, "tree")

	files := map[string]string{"vmlinuz": o.Kernel, "initrd": o.Initramfs}
	if o.BIOS {
		files["isolinux/isolinux.bin"] = o.ISOLINUX
		files["isolinux/ldlinux.c32"] = o.LDLINUX
	}
	for dst, src := range files {
		if err := placeFile(src, filepath.Join(tree, dst)); err != nil {
			return fmt.Errorf("build ISO: %w", err)
		}
	}
	configs := map[string]string{
		// gcdx64.efi finds its CD by this file.
		".disk/info": "ferro inspection ramdisk\n",
		"boot/grub/grub.cfg": "set timeout=0\nset default=0\nmenuentry \"ferro\" {\n\tlinux /vmlinuz " + o.Cmdline +
			"\n\tinitrd /initrd\n}\n",
		"isolinux/isolinux.cfg": "DEFAULT ferro\nPROMPT 0\nTIMEOUT 0\nLABEL ferro\n  KERNEL /vmlinuz\n  INITRD /initrd\n  APPEND " +
			o.Cmdline + "\n",
	}
	for dst, content := range configs {
		if err := writeFile(filepath.Join(tree, dst), []byte(content)); err != nil {
			return fmt.Errorf("build ISO: %w", err)
		}
	}
	if o.UEFI {
		if err := buildESP(filepath.Join(tree, "boot/efiboot.img"), o.GRUBEFI); err != nil {
			return fmt.Errorf("build ISO: EFI system partition: %w", err)
		}
	}
	if err := ctx.Err(); err != nil {
		return err
	}

	f, err := os.CreateTemp(filepath.Dir(out), "."+filepath.Base(out)+".tmp-*")
	if err != nil {
		return fmt.Errorf("build ISO: %w", err)
	}
	defer func() {
		if err != nil {
			f.Close()
			os.Remove(f.Name())
		}
	}()
	fs, err := iso9660.Create(file.New(f, false), 0, 0, 2048, tree)
	if err != nil {
		return fmt.Errorf("build ISO: %w", err)
	}
	et := &iso9660.ElTorito{BootCatalog: "/boot/boot.cat", HideBootCatalog: false}
	if o.BIOS {
		bios := &iso9660.ElToritoEntry{Platform: iso9660.BIOS, Emulation: iso9660.NoEmulation,
			BootFile: "/isolinux/isolinux.bin", BootTable: true, LoadSegment: 0}
		bios.SetLoadSize(4)
		et.Entries = append(et.Entries, bios)
	}
	if o.UEFI {
		efi := &iso9660.ElToritoEntry{Platform: iso9660.EFI, Emulation: iso9660.NoEmulation, BootFile: "/boot/efiboot.img"}
		efi.SetLoadSize(espSize / 512)
		et.Entries = append(et.Entries, efi)
	}
	if err := fs.Finalize(iso9660.FinalizeOptions{RockRidge: true, VolumeIdentifier: o.VolumeID, ElTorito: et}); err != nil {
		return fmt.Errorf("build ISO: finalize: %w", err)
	}
	if err := f.Chmod(0o644); err != nil {
		return fmt.Errorf("build ISO: %w", err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("build ISO: %w", err)
	}
	if err := os.Rename(f.Name(), out); err != nil {
		return fmt.Errorf("build ISO: %w", err)
	}
	return nil
}

// buildESP writes a FAT image with GRUB as the removable-media loader.
func buildESP(path, grub string) error {
	img, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return err
	}
	defer img.Close()
	if err := img.Truncate(espSize); err != nil {
		return err
	}
	fs, err := fat16.Create(file.New(img, false), espSize, 0, 512, "FERRO_ESP", true)
	if err != nil {
		return err
	}
	if err := fs.Mkdir("/EFI/BOOT"); err != nil {
		return err
	}
	dst, err := fs.OpenFile("/EFI/BOOT/BOOTX64.EFI", os.O_CREATE|os.O_RDWR)
	if err != nil {
		return err
	}
	src, err := os.Open(grub)
	if err != nil {
		return err
	}
	defer src.Close()
	if _, err := io.Copy(dst, src); err != nil {
		return fmt.Errorf("copy %s: %w", grub, err)
	}
	return dst.Close()
}

// placeFile puts src at dst: a hard link when possible, else a copy.
func placeFile(src, dst string) error {
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		return err
	}
	if err := os.Link(src, dst); err == nil {
		return nil
	}
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return err
	}
	_, err = io.Copy(out, in)
	return errors.Join(err, out.Close())
}

func writeFile(path string, data []byte) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	return os.WriteFile(path, data, 0o644)
}

func or(s, def string) string {
	if s == "" {
		return def
	}
	return s
}
