// Command ferro is the ferro server (`ferro serve`) and its small operator CLI.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"runtime/debug"
	"slices"
	"strings"

	"github.com/ferrometal/ferro/internal/config"
)

// version is set at build time with -ldflags "-X main.version=…".
var version = ""

func main() {
	os.Exit(run(context.Background(), os.Args[1:], os.Stdout, os.Stderr))
}

// command is one command of ferro: the words that name it, its synopsis
// and what runs it (with the arguments after its name).
type command struct {
	name     string // "serve", "ramdisk build"
	synopsis string // the flags, after the name
	summary  string
	run      func(ctx context.Context, c command, args []string, stdout, stderr io.Writer) int
}

// commands are every command, in the order the usage lists them.
var commands = []command{
	{"serve", "[--config FILE] [--data-dir DIR] [--role ROLES] [--log-format text|json]",
		"run the service (api, conductor and inspector roles)", serve},
	{"config", "[--config FILE] [--data-dir DIR]",
		"print the effective configuration as INI, secrets masked", showConfig},
	{"ramdisk build", "--out DIR [--kernel PATH | --kernel-version V] [--agent PATH] [flags]",
		"build the inspection ramdisk (kernel + initramfs with ferro-agent)", ramdiskCmd},
	{"rules convert", "[FILE]", "print ironic-inspector rules as Ironic inspection rules", rulesCmd},
	{"lab up", "[--machines N] [--boot ipxe|pxe|uefi|vmedia] [--netns NAME] [--dir DIR] [--keep] [flags]",
		"a lab: ferro, ferro-vbmc and QEMU machines in a network namespace (root)", labCmd},
	{"version", "", "print the version and commit", func(_ context.Context, c command, args []string, stdout, stderr io.Writer) int {
		if code, done := parseFlags(flag.NewFlagSet(c.name, flag.ContinueOnError), c, args, stdout, stderr); done {
			return code
		}
		fmt.Fprintln(stdout, versionString())
		return 0
	}},
	{"help", "[COMMAND]", "print this help, or a command's", nil}, // help, set in init: it lists commands
}

func init() { commands[len(commands)-1].run = help }

// help is `ferro help [COMMAND]`.
func help(ctx context.Context, c command, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet(c.name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			usage(stdout)
			return 0
		}
		fmt.Fprintln(stderr)
		usage(stderr)
		return 2
	}
	if fs.NArg() == 0 {
		usage(stdout)
		return 0
	}
	return run(ctx, append(fs.Args(), "--help"), stdout, stderr)
}

func usage(w io.Writer) {
	fmt.Fprint(w, "ferro: bare-metal hardware inspection service (Ironic and ironic-inspector compatible)\n\nUsage:\n")
	for _, c := range commands {
		fmt.Fprintf(w, "  ferro %-15s %s\n", c.name, c.summary)
	}
	fmt.Fprint(w, "\nRun 'ferro COMMAND --help' for a command's flags.\n")
}

// groupUsage lists the commands under the first word of a two-word command
// (ferro ramdisk, ferro lab).
func groupUsage(w io.Writer, group string) {
	fmt.Fprintf(w, "Usage:\n")
	for _, c := range commands {
		if strings.HasPrefix(c.name, group+" ") {
			fmt.Fprintf(w, "  ferro %s %s\n", c.name, c.synopsis)
		}
	}
	fmt.Fprintf(w, "\nRun 'ferro %s SUBCOMMAND --help' for its flags.\n", group)
}

func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		usage(stderr)
		return 2
	}
	switch args[0] {
	case "-h", "--help":
		usage(stdout)
		return 0
	case "--version", "-v":
		args = append([]string{"version"}, args[1:]...)
	}
	for _, c := range commands {
		words := strings.Fields(c.name)
		if len(args) >= len(words) && slices.Equal(args[:len(words)], words) {
			return c.run(ctx, c, args[len(words):], stdout, stderr)
		}
	}
	// A group word alone, with --help or with an unknown subcommand.
	for _, c := range commands {
		if group, _, ok := strings.Cut(c.name, " "); ok && group == args[0] {
			if len(args) == 2 && (args[1] == "-h" || args[1] == "--help") {
				groupUsage(stdout, group)
				return 0
			}
			if len(args) > 1 {
				fmt.Fprintf(stderr, "ferro %s: unknown subcommand %q\n\n", group, args[1])
			}
			groupUsage(stderr, group)
			return 2
		}
	}
	fmt.Fprintf(stderr, "ferro: unknown command %q\n\n", args[0])
	usage(stderr)
	return 2
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
func showConfig(_ context.Context, c command, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet(c.name, flag.ContinueOnError)
	cfgPath := fs.String("config", "", "INI configuration file, as given to ferro serve")
	dataDir := fs.String("data-dir", "ferro-data", "data directory, as given to ferro serve (resolves [database]connection, [pxe]tftp_root, [deploy]http_root)")
	if code, done := parseFlags(fs, c, args, stdout, stderr); done {
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
