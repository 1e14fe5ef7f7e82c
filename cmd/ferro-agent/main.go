//go:build linux

// Command ferro-agent is ferro's in-RAM inspection agent: the /init of the
// ramdisk `ferro ramdisk build` makes (or a service in another ramdisk). It
// reads ironic-python-agent's kernel parameters, brings the network up,
// collects the hardware inventory and posts it to the inspection callback,
// then powers the machine off. See docs/ramdisk.md.
package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"runtime/debug"

	"github.com/ferrometal/ferro/internal/agent"
)

const usage = `Usage: ferro-agent

ferro's inspection agent: the /init of the ramdisk 'ferro ramdisk build' makes,
or a service in another ramdisk. It takes no flags: it reads
ironic-python-agent's kernel parameters (ipa-inspection-callback-url,
ipa-api-url, BOOTIF, ipa-debug, …) from /proc/cmdline, collects the
inventory, posts it and powers the machine off. See docs/ramdisk.md.
`

// checkArgs answers -h/--help (exit 0) and refuses any other argument (exit
// 2) before anything runs, so that ferro-agent started by hand on a
// workstation neither inspects nor powers it off. As PID 1 the arguments
// are the kernel's: the words of the command line it did not know.
func checkArgs(args []string, pid1 bool, stdout, stderr io.Writer) (code int, done bool) {
	if pid1 || len(args) == 0 {
		return 0, false
	}
	if len(args) == 1 && (args[0] == "-h" || args[0] == "--help" || args[0] == "-help" || args[0] == "help") {
		fmt.Fprint(stdout, usage)
		return 0, true
	}
	fmt.Fprintf(stderr, "ferro-agent: unexpected argument %q\n\n%s", args[0], usage)
	return 2, true
}

func main() {
	pid1 := os.Getpid() == 1
	if code, done := checkArgs(os.Args[1:], pid1, os.Stdout, os.Stderr); done {
		os.Exit(code)
	}
	log := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelInfo}))
	if pid1 {
		// A panic in PID 1 panics the kernel, and the machine would sit
		// there (or reboot into the ramdisk forever): say why, power off.
		defer func() {
			if r := recover(); r != nil {
				log.Error("ferro-agent crashed", "panic", r, "stack", string(debug.Stack()))
				agent.PowerOff()
				select {}
			}
		}()
	}
	err := agent.Run(context.Background(), agent.Options{Log: log, PID1: pid1})
	if err != nil {
		log.Error("ferro-agent failed", "err", err)
		os.Exit(1)
	}
}
