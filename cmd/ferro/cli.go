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

// parseFlags parses a command's flags strictly: -h/--help prints the
// command's usage and flags to stdout (exit 0); an unknown flag or a stray
// argument is an error, with the usage on stderr (exit 2). done is true
// when the caller must return code.
func parseFlags(fs *flag.FlagSet, c command, args []string, stdout, stderr io.Writer) (code int, done bool) {
	fs.SetOutput(stderr)
	// Parse prints a bad flag's error itself; the usage is printed here,
	// to stdout for -h/--help.
	fs.Usage = func() {}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			printUsage(fs, c, stdout)
			return 0, true
		}
		fmt.Fprintln(stderr)
		printUsage(fs, c, stderr)
		return 2, true
	}
	if fs.NArg() > 0 {
		return usageError(fs, c, stderr, "unexpected argument %q", fs.Arg(0)), true
	}
	return 0, false
}

// usageError is a bad use of a command's flags: the message, then the
// usage, on stderr; exit 2.
func usageError(fs *flag.FlagSet, c command, stderr io.Writer, format string, a ...any) int {
	fmt.Fprintf(stderr, "ferro %s: %s\n\n", c.name, fmt.Sprintf(format, a...))
	printUsage(fs, c, stderr)
	return 2
}

// printUsage writes the command's synopsis, summary and flags to w.
func printUsage(fs *flag.FlagSet, c command, w io.Writer) {
	fmt.Fprintf(w, "Usage: ferro %s %s\n\n%s\n", c.name, c.synopsis, c.summary)
	hasFlags := false
	fs.VisitAll(func(*flag.Flag) { hasFlags = true })
	if hasFlags {
		fmt.Fprint(w, "\nFlags:\n")
		out := fs.Output()
		fs.SetOutput(w)
		fs.PrintDefaults()
		fs.SetOutput(out)
	}
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
