// Command ferro is the ferro server (`ferro serve`) and its small operator CLI.
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"runtime/debug"
	"strings"

	"github.com/ferrometal/ferro/internal/config"
)

// version is set at build time with -ldflags "-X main.version=…".
var version = ""

func main() {
	os.Exit(run(context.Background(), os.Args[1:], os.Stdout, os.Stderr))
}

func usage(w io.Writer) {
	fmt.Fprint(w, `ferro: bare-metal hardware inspection service (Ironic and ironic-inspector compatible)

Usage:
  ferro serve [flags]     run the service (api, conductor and inspector roles)
  ferro config [flags]    print the effective configuration as INI, secrets masked
  ferro ramdisk build     build the inspection ramdisk (kernel + initramfs with ferro-agent)
  ferro lab up            a lab: ferro, ferro-vbmc and QEMU machines in a network namespace (root)
  ferro version           print the version and commit
  ferro help              print this help

Run 'ferro serve --help' or 'ferro config --help' for the flags.
`)
}

func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		usage(stderr)
		return 2
	}
	switch args[0] {
	case "serve":
		return serve(ctx, args[1:], stdout, stderr)
	case "config":
		return showConfig(args[1:], stdout, stderr)
	case "ramdisk":
		return ramdiskCmd(ctx, args[1:], stdout, stderr)
	case "lab":
		return labCmd(ctx, args[1:], stdout, stderr)
	case "version", "--version", "-v":
		if len(args) > 1 {
			fmt.Fprintf(stderr, "ferro version: unexpected argument %q\n", args[1])
			return 2
		}
		fmt.Fprintln(stdout, versionString())
		return 0
	case "help", "-h", "--help":
		usage(stdout)
		return 0
	default:
		fmt.Fprintf(stderr, "ferro: unknown command %q\n\n", args[0])
		usage(stderr)
		return 2
	}
}

// buildVersion is the -X version, else the module version Go recorded.
func buildVersion() string {
	if version != "" {
		return version
	}
	if bi, ok := debug.ReadBuildInfo(); ok && bi.Main.Version != "" && bi.Main.Version != "(devel)" {
		return bi.Main.Version
	}
	return "dev"
}

// showConfig is `ferro config`: the configuration `ferro serve` would run
// with, as an INI file that can be pasted back, with the data directory's
// paths resolved, secrets masked and, as comments, where each value came
// from.
func showConfig(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("config", flag.ContinueOnError)
	cfgPath := fs.String("config", "", "INI configuration file, as given to ferro serve")
	dataDir := fs.String("data-dir", "ferro-data", "data directory, as given to ferro serve (resolves [database]connection, [pxe]tftp_root, [deploy]http_root)")
	if code, done := parseFlags(fs, args, stdout, stderr, "config [--config FILE] [--data-dir DIR]"); done {
		return code
	}
	cfg, ignored, err := loadConfig(*cfgPath)
	if err != nil {
		fmt.Fprintln(stderr, "ferro:", err)
		return 1
	}
	src, err := config.LoadSources(*cfgPath, os.Environ())
	if err != nil {
		fmt.Fprintln(stderr, "ferro:", err)
		return 1
	}
	unresolved := *cfg
	if err := cfg.ResolvePaths(*dataDir); err != nil {
		fmt.Fprintln(stderr, "ferro:", err)
		return 1
	}
	for k, v := range map[string][2]string{
		"database.connection": {unresolved.Database.Connection, cfg.Database.Connection},
		"pxe.tftp_root":       {unresolved.PXE.TFTPRoot, cfg.PXE.TFTPRoot},
		"deploy.http_root":    {unresolved.Deploy.HTTPRoot, cfg.Deploy.HTTPRoot},
	} {
		if v[0] != v[1] {
			src[k] = "default, under --data-dir " + *dataDir
		}
	}
	from := "defaults"
	if *cfgPath != "" {
		from = "defaults, then " + *cfgPath
	}
	fmt.Fprintf(stdout, "# ferro %s: effective configuration (%s, then FERRO_* environment variables).\n", buildVersion(), from)
	fmt.Fprintln(stdout, "# Each value is preceded by where it came from. Masked secrets (******) must be filled in again.")
	if err := cfg.WriteINI(stdout, src); err != nil {
		fmt.Fprintln(stderr, "ferro:", err)
		return 1
	}
	if len(ignored) > 0 {
		fmt.Fprintf(stderr, "ferro: ignored as [DEFAULT]ignored_options says: %s\n", strings.Join(ignored, ", "))
	}
	return 0
}
