// Command ferro is the ferro server (`ferro serve`) and its small operator CLI.
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"runtime/debug"
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
  ferro config [flags]    print the effective configuration, secrets masked
  ferro ramdisk build     build the inspection ramdisk (kernel + initramfs with ferro-agent)
  ferro lab up            a lab: ferro, ferro-vbmc and QEMU machines in a network namespace (root)
  ferro version           print the version

Run 'ferro serve -h' for the flags.
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
		fmt.Fprintln(stdout, "ferro", buildVersion())
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

func showConfig(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("config", flag.ContinueOnError)
	fs.SetOutput(stderr)
	cfgPath := fs.String("config", "", "INI configuration file")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	cfg, unknown, err := loadConfig(*cfgPath)
	if err != nil {
		fmt.Fprintln(stderr, "ferro:", err)
		return 1
	}
	for _, o := range cfg.Options() {
		fmt.Fprintf(stdout, "%s = %s\n", o[0], o[1])
	}
	for _, u := range unknown {
		fmt.Fprintf(stderr, "ferro: unknown option %s ignored\n", u)
	}
	return 0
}
