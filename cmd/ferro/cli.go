package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"runtime/debug"
	"strings"
)

// commit is set at build time with -ldflags "-X main.commit=…" (make
// build does); else the VCS revision Go stamped into the binary is used.
var commit = ""

// parseFlags parses a subcommand's flags strictly: -h/--help prints the
// subcommand's usage and flags to stdout (exit 0); an unknown flag or a
// stray argument is an error (exit 2). done is true when the caller must
// return code.
func parseFlags(fs *flag.FlagSet, args []string, stdout, stderr io.Writer, synopsis string) (code int, done bool) {
	fs.SetOutput(stderr)
	usage := func(w io.Writer) {
		fmt.Fprintf(w, "Usage: ferro %s\n\nFlags:\n", synopsis)
		fs.SetOutput(w)
		fs.PrintDefaults()
		fs.SetOutput(stderr)
	}
	// Parse prints a bad flag's error itself; the usage is printed here,
	// to stdout for -h/--help.
	fs.Usage = func() {}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			usage(stdout)
			return 0, true
		}
		fmt.Fprintln(stderr)
		usage(stderr)
		return 2, true
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "ferro %s: unexpected argument %q\n\n", fs.Name(), fs.Arg(0))
		usage(stderr)
		return 2, true
	}
	return 0, false
}

// versionString is what `ferro version` prints: the version (-X
// main.version, else the module version), the commit and whether the tree
// was modified, the commit time and the Go version.
func versionString() string {
	out := "ferro " + buildVersion()
	rev, modified, when := commit, false, ""
	goVersion := ""
	if bi, ok := debug.ReadBuildInfo(); ok {
		goVersion = bi.GoVersion
		for _, s := range bi.Settings {
			switch s.Key {
			case "vcs.revision":
				if rev == "" {
					rev = s.Value
				}
			case "vcs.modified":
				modified = s.Value == "true"
			case "vcs.time":
				when = s.Value
			}
		}
	}
	var parts []string
	if rev != "" {
		if len(rev) > 12 {
			rev = rev[:12]
		}
		c := "commit " + rev
		if modified {
			c += " (modified)"
		}
		parts = append(parts, c)
	} else {
		parts = append(parts, "commit unknown (build with `make build`)")
	}
	if when != "" {
		parts = append(parts, when)
	}
	if goVersion != "" {
		parts = append(parts, goVersion)
	}
	return out + " " + strings.Join(parts, ", ")
}
