package main

import (
	"context"
	"debug/elf"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"syscall"

	"github.com/ferrometal/ferro/internal/lab"
	"github.com/ferrometal/ferro/internal/progress"
	"github.com/ferrometal/ferro/internal/ramdisk"
)

// labCmd is `ferro lab up`: ferro, ferro-vbmc and QEMU machines in a
// network namespace, machines enrolled, until interrupted.
func labCmd(ctx context.Context, c command, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet(c.name, flag.ContinueOnError)
	machines := fs.Int("machines", 1, "QEMU machines to create and enrol")
	memory := fs.Int("memory-mb", 1024, "memory of each machine (a multiple of 1024)")
	cpus := fs.Int("cpus", 1, "CPUs of each machine")
	boot := fs.String("boot", "ipxe", "how the machines boot the ramdisk: ipxe (ipmi, iPXE over HTTP), pxe (ipmi, PXELINUX over TFTP), uefi (ipmi, OVMF and iPXE) or vmedia (redfish, the ISO as a virtual CD)")
	netns := fs.String("netns", "ferro-lab", "network namespace to create (must not exist)")
	dir := fs.String("dir", "", "working directory: databases, boot roots, disks, logs (default: a new temporary directory)")
	keep := fs.Bool("keep", false, "keep the working directory when the lab stops")
	vbmcBin := fs.String("ferro-vbmc", "", "ferro-vbmc binary (default: next to this ferro, else PATH)")
	kernel := fs.String("kernel", "", "deploy kernel `file` (default: built as 'ferro ramdisk build' does, from Debian's kernel, cached)")
	initramfs := fs.String("initramfs", "", "deploy initramfs `file` (with --kernel)")
	if code, done := parseFlags(fs, c, args, stdout, stderr); done {
		return code
	}
	fail := func(err error) int {
		fmt.Fprintln(stderr, "ferro lab up:", err)
		return 1
	}
	if _, ok := lab.Boots[*boot]; !ok {
		return usageError(fs, c, stderr, "--boot %q: want ipxe, pxe, uefi or vmedia", *boot)
	}
	if (*kernel == "") != (*initramfs == "") {
		return usageError(fs, c, stderr, "--kernel and --initramfs go together")
	}
	exe, err := os.Executable()
	if err != nil {
		return fail(err)
	}
	if *vbmcBin == "" {
		if p := filepath.Join(filepath.Dir(exe), "ferro-vbmc"); isFile(p) {
			*vbmcBin = p
		} else if p, err := exec.LookPath("ferro-vbmc"); err == nil {
			*vbmcBin = p
		} else {
			return fail(fmt.Errorf("no ferro-vbmc next to %s nor in PATH (make build, or --ferro-vbmc)", exe))
		}
	}
	if *dir == "" {
		d, err := os.MkdirTemp("", "ferro-lab-")
		if err != nil {
			return fail(err)
		}
		*dir = d
	}
	*dir, _ = filepath.Abs(*dir)
	log := slog.New(slog.NewTextHandler(stderr, nil))
	ctx, stop := signal.NotifyContext(ctx, syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	if *kernel == "" {
		fmt.Fprintln(stdout, "ferro lab: building the deploy ramdisk (Debian's kernel, fetched once and cached)…")
		o := ramdisk.BuildOptions{OutDir: filepath.Join(*dir, "ramdisk"), CacheDir: ramdisk.DefaultKernelCache(),
			Progress: progress.NewPrinter(stdout, "ferro lab: ").Func()}
		if p := filepath.Join(filepath.Dir(exe), "ferro-agent"); isFile(p) {
			if err := checkStatic(p); err != nil {
				return fail(err)
			}
			o.Agent = p
		} else if wd, err := os.Getwd(); err == nil {
			o.AgentSource = ramdisk.FindSource(wd)
		}
		res, err := ramdisk.Build(ctx, o)
		if err != nil {
			return fail(err)
		}
		*kernel, *initramfs = res.Kernel, res.Initramfs
	}
	k, _ := filepath.Abs(*kernel)
	i, _ := filepath.Abs(*initramfs)
	l, err := lab.Up(ctx, lab.Options{Netns: *netns, Dir: *dir, Keep: *keep, Machines: *machines, MemoryMB: *memory, CPUs: *cpus,
		Ferro: exe, VBMC: *vbmcBin, Kernel: k, Initramfs: i, Log: log, Out: stdout, Boot: *boot,
		Progress: progress.NewPrinter(stdout, "ferro lab: ").Func()})
	if err != nil {
		return fail(err)
	}
	fmt.Fprint(stdout, l.Instructions())
	<-ctx.Done()
	fmt.Fprintln(stdout, "ferro lab: stopping")
	if err := l.Down(); err != nil {
		return fail(err)
	}
	return 0
}

// checkStatic refuses a dynamically linked agent: as the ramdisk's /init it
// would fail with ENOENT (no interpreter there) and the kernel would panic.
func checkStatic(path string) error {
	f, err := elf.Open(path)
	if err != nil {
		return fmt.Errorf("ferro-agent %s: %w", path, err)
	}
	defer f.Close()
	for _, p := range f.Progs {
		if p.Type == elf.PT_INTERP {
			return fmt.Errorf("ferro-agent %s is dynamically linked: build it with CGO_ENABLED=0 (make build)", path)
		}
	}
	return nil
}
