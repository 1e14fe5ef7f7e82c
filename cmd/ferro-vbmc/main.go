// Command ferro-vbmc serves many virtual BMCs from one process: an IPMI
// endpoint per machine and one Redfish service, in front of fake machines or
// QEMU virtual machines. See docs/bmc.md.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"

	"github.com/ferrometal/ferro/internal/vbmc"
)

// ReadyPrefix starts the line ferro-vbmc prints on stdout once every
// listener is bound; the rest of the line is the JSON of vbmc.Ready.
const ReadyPrefix = "ferro-vbmc ready "

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	code := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

func usage(w io.Writer) {
	fmt.Fprint(w, `ferro-vbmc: virtual BMCs (IPMI and Redfish) for fake machines and QEMU VMs

Usage:
  ferro-vbmc serve --config FILE [flags]   serve the machines FILE describes

Run 'ferro-vbmc serve -h' for the flags; docs/bmc.md describes FILE.
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
	case "help", "-h", "--help":
		usage(stdout)
		return 0
	default:
		fmt.Fprintf(stderr, "ferro-vbmc: unknown command %q\n\n", args[0])
		usage(stderr)
		return 2
	}
}

func serve(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("serve", flag.ContinueOnError)
	fs.SetOutput(stderr)
	for _, a := range args {
		if a == "-h" || a == "-help" || a == "--help" {
			fs.SetOutput(stdout) // asked for: help is the output, not an error
		}
	}
	fs.Usage = func() {
		fmt.Fprint(fs.Output(), `Usage: ferro-vbmc serve --config FILE [flags]

Serves every machine of FILE (JSON; see docs/bmc.md) until SIGTERM or SIGINT,
then powers them off (killing their VMs) and exits 0. Once every listener is
bound it prints one line on stdout:
  ferro-vbmc ready {"redfish_url":"http://…","ipmi":{"<machine>":"host:port",…}}

Flags:
`)
		fs.PrintDefaults()
	}
	cfgPath := fs.String("config", "", "JSON configuration `file` (required)")
	readyFile := fs.String("ready-file", "", "also write the ready JSON to this `file` (atomically) once serving")
	logFormat := fs.String("log-format", "text", "log format on stderr: text or json")
	debug := fs.Bool("debug", false, "log every Redfish request and IPMI chassis command")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "ferro-vbmc serve: unexpected arguments %q\n", fs.Args())
		fs.Usage()
		return 2
	}
	if *cfgPath == "" {
		fmt.Fprintln(stderr, "ferro-vbmc serve: --config is required")
		fs.Usage()
		return 2
	}
	level := slog.LevelInfo
	if *debug {
		level = slog.LevelDebug
	}
	var handler slog.Handler
	switch *logFormat {
	case "text":
		handler = slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: level})
	case "json":
		handler = slog.NewJSONHandler(stderr, &slog.HandlerOptions{Level: level})
	default:
		fmt.Fprintf(stderr, "ferro-vbmc serve: --log-format %q is not text or json\n", *logFormat)
		return 2
	}
	log := slog.New(handler)

	cfg, err := vbmc.LoadConfig(*cfgPath)
	if err != nil {
		fmt.Fprintln(stderr, "ferro-vbmc:", err)
		return 1
	}
	srv, err := vbmc.New(cfg, vbmc.Options{Logger: log})
	if err != nil {
		fmt.Fprintln(stderr, "ferro-vbmc:", err)
		return 1
	}
	var readyErr error
	err = srv.Run(ctx, func(rd vbmc.Ready) {
		data, _ := json.Marshal(rd)
		if *readyFile != "" {
			if readyErr = writeAtomic(*readyFile, append(data, '\n')); readyErr != nil {
				log.Error("write the ready file", "error", readyErr)
			}
		}
		fmt.Fprintf(stdout, "%s%s\n", ReadyPrefix, data)
	})
	if err != nil {
		fmt.Fprintln(stderr, "ferro-vbmc:", err)
		return 1
	}
	log.Info("ferro-vbmc stopped")
	return 0
}

// writeAtomic writes data to path through a temporary file and a rename, so
// a harness polling for the file never reads half of it.
func writeAtomic(path string, data []byte) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), ".ready-*")
	if err != nil {
		return err
	}
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		os.Remove(tmp.Name())
		return err
	}
	if err := tmp.Close(); err != nil {
		os.Remove(tmp.Name())
		return err
	}
	return os.Rename(tmp.Name(), path)
}
