// Command iso measures how fast ferro builds a virtual media ISO
// (internal/ramdisk.BuildISO: kernel, initramfs, isolinux and a GRUB EFI
// System Partition) for an initramfs of -initramfs-mb MiB, the per-node
// cost of redfish-virtual-media's PrepareRamdisk besides fetching the
// images. It prints the build time per ISO and MiB/s of ISO written next
// to the disk's own sequential write speed (a plain copy of the same
// bytes), and the ISO's size.
//
//	go run ./bench/iso [-initramfs-mb 400] [-kernel-mb 8] [-rounds 3] [-dir DIR]
package main

import (
	"context"
	"crypto/rand"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/ferrometal/ferro/internal/ramdisk"
)

func main() {
	initMB := flag.Int("initramfs-mb", 400, "initramfs size (MiB); IPA's is 400-500")
	kernelMB := flag.Int("kernel-mb", 8, "kernel size (MiB)")
	rounds := flag.Int("rounds", 3, "ISOs to build")
	dir := flag.String("dir", "", "where to build (default a temporary directory)")
	flag.Parse()
	if err := run(*initMB, *kernelMB, *rounds, *dir); err != nil {
		fmt.Fprintln(os.Stderr, "iso:", err)
		os.Exit(1)
	}
}

func run(initMB, kernelMB, rounds int, dir string) error {
	if err := ramdisk.CheckLoaders(ramdisk.ISOOptions{}); err != nil {
		return err
	}
	if dir == "" {
		d, err := os.MkdirTemp("", "ferro-bench-iso-*")
		if err != nil {
			return err
		}
		defer os.RemoveAll(d)
		dir = d
	}
	kernel, initrd := filepath.Join(dir, "kernel"), filepath.Join(dir, "initrd")
	if err := randomFile(kernel, kernelMB); err != nil {
		return err
	}
	if err := randomFile(initrd, initMB); err != nil {
		return err
	}
	// The disk's own speed: copying the same bytes once.
	start := time.Now()
	if err := copyFile(initrd, filepath.Join(dir, "copy")); err != nil {
		return err
	}
	copyRate := float64(initMB) / time.Since(start).Seconds()
	os.Remove(filepath.Join(dir, "copy"))

	cmdline := "nofb nomodeset vga=normal ferro-inspection-token=0123456789abcdef ipa-inspection-callback-url=http://192.0.2.1:5050/v1/continue"
	var total time.Duration
	var size int64
	for i := range rounds {
		out := filepath.Join(dir, fmt.Sprintf("node%d.iso", i))
		start := time.Now()
		if err := ramdisk.BuildISO(context.Background(), out, ramdisk.ISOOptions{Kernel: kernel, Initramfs: initrd, Cmdline: cmdline}); err != nil {
			return err
		}
		d := time.Since(start)
		total += d
		fi, err := os.Stat(out)
		if err != nil {
			return err
		}
		size = fi.Size()
		os.Remove(out)
	}
	per := total / time.Duration(rounds)
	mib := float64(size) / (1 << 20)
	fmt.Printf("ISO of a %d MiB initramfs + %d MiB kernel: %.1f MiB, built in %v (%.0f MiB/s of ISO); plain copy of the initramfs: %.0f MiB/s; ratio %.2f\n",
		initMB, kernelMB, mib, per.Round(time.Millisecond), mib/per.Seconds(), copyRate, (mib/per.Seconds())/copyRate)
	return nil
}

func randomFile(path string, mb int) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if _, err := io.CopyN(f, rand.Reader, int64(mb)<<20); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

func copyFile(src, dst string) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.Create(dst)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	if err := out.Sync(); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}
