package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/ferrometal/ferro/internal/progress"
	"github.com/ferrometal/ferro/internal/ramdisk"
)

// ramdiskCmd is `ferro ramdisk build`: the inspection ramdisk (kernel and
// initramfs with ferro-agent) for [conductor]deploy_kernel/deploy_ramdisk.
func ramdiskCmd(ctx context.Context, c command, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet(c.name, flag.ContinueOnError)
	out := fs.String("out", "", "output directory (required): ferro-agent.kernel, ferro-agent.initramfs")
	kernel := fs.String("kernel", "", "kernel image (bzImage) to use instead of Debian's")
	modulesDir := fs.String("modules-dir", "", "the kernel's /lib/modules/<version> (default: found from --kernel's vmlinuz-<version> name)")
	kernelVersion := fs.String("kernel-version", "", "Debian kernel version to fetch, e.g. 6.1.0-57-amd64 (default: what linux-image-amd64 depends on)")
	agent := fs.String("agent", "", "ferro-agent binary (default: bin/ferro-agent next to this ferro, else built with go from the ferro checkout in the working directory)")
	modules := fs.String("modules", "", "comma-separated kernel modules to carry instead of the default set")
	extra := fs.String("extra-modules", "", "comma-separated kernel modules to carry besides the default set")
	iso := fs.String("iso", "auto", "also write ferro-agent.iso for virtual media: yes, no, or auto (when Debian's isolinux, syslinux-common and grub-efi-amd64-bin are installed)")
	isoCmdline := fs.String("iso-cmdline", ramdisk.DefaultISOCmdline, "kernel command line baked into the ISO")
	cacheDir := fs.String("cache-dir", "", "where fetched kernels are kept (default: the user cache directory's ferro/kernels)")
	if code, done := parseFlags(fs, c, args, stdout, stderr); done {
		return code
	}
	if *out == "" {
		return usageError(fs, c, stderr, "--out is required")
	}
	switch *iso {
	case "yes", "no", "auto":
	default:
		return usageError(fs, c, stderr, "--iso %q: expected yes, no or auto", *iso)
	}
	if *kernel != "" && *kernelVersion != "" {
		return usageError(fs, c, stderr, "--kernel and --kernel-version are exclusive")
	}
	o := ramdisk.BuildOptions{OutDir: *out, KernelVersion: *kernelVersion, CacheDir: *cacheDir, Agent: *agent, ISOCmdline: *isoCmdline}
	if err := ramdisk.CheckCmdline(*isoCmdline); err != nil {
		return usageError(fs, c, stderr, "--iso-cmdline: %v", err)
	}
	o.ISO = *iso == "yes"
	if *iso == "auto" {
		if err := ramdisk.CheckLoaders(ramdisk.ISOOptions{}); err != nil {
			fmt.Fprintln(stderr, "ferro ramdisk build: no ISO:", err)
		} else {
			o.ISO = true
		}
	}
	if *kernel != "" {
		k, err := ramdisk.KernelFromPath(*kernel, *modulesDir)
		if err != nil {
			fmt.Fprintln(stderr, "ferro ramdisk build:", err)
			return 1
		}
		if k.ModulesDir == "" {
			fmt.Fprintln(stderr, "ferro ramdisk build: warning: no module directory for this kernel (--modules-dir): the initramfs carries no drivers")
		}
		o.Kernel = k
	}
	if o.CacheDir == "" {
		o.CacheDir = ramdisk.DefaultKernelCache()
	}
	if *modules != "" {
		o.Modules = splitComma(*modules)
	}
	o.ExtraModules = splitComma(*extra)
	if o.Agent == "" {
		if exe, err := os.Executable(); err == nil {
			if p := filepath.Join(filepath.Dir(exe), "ferro-agent"); isFile(p) {
				o.Agent = p
			}
		}
	}
	if o.Agent == "" {
		if wd, err := os.Getwd(); err == nil {
			o.AgentSource = ramdisk.FindSource(wd)
		}
	}
	// Progress goes to stderr: stdout keeps only the result, for scripts.
	o.Progress = progress.NewPrinter(stderr, "ferro ramdisk build: ").Func()
	res, err := ramdisk.Build(ctx, o)
	if err != nil {
		fmt.Fprintln(stderr, "ferro ramdisk build:", err)
		return 1
	}
	mb := func(n int64) string { return fmt.Sprintf("%.1f MB", float64(n)/1e6) }
	fmt.Fprintf(stdout, "kernel     %s (%s)\n", res.Kernel, mb(res.KernelBytes))
	fmt.Fprintf(stdout, "initramfs  %s (%s; agent %s, %d modules)\n", res.Initramfs, mb(res.InitramfsBytes), mb(res.AgentBytes), len(res.Modules))
	fmt.Fprintf(stdout, "total      %s\n", mb(res.KernelBytes+res.InitramfsBytes))
	if res.ISO != "" {
		fmt.Fprintf(stdout, "iso        %s (%s)\n", res.ISO, mb(res.ISOBytes))
	}
	fmt.Fprintf(stdout, "\n[conductor]\ndeploy_kernel = %s\ndeploy_ramdisk = %s\n", abs(res.Kernel), abs(res.Initramfs))
	return 0
}

func splitComma(s string) []string {
	var out []string
	for _, f := range strings.Split(s, ",") {
		if f = strings.TrimSpace(f); f != "" {
			out = append(out, f)
		}
	}
	return out
}

func isFile(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && fi.Mode().IsRegular()
}

func abs(p string) string {
	if a, err := filepath.Abs(p); err == nil {
		return a
	}
	return p
}
