//go:build linux

// Command ferro-agent is ferro's in-RAM inspection agent: the /init of the
// ramdisk `ferro ramdisk build` makes (or a service in another ramdisk). It
// reads ironic-python-agent's kernel parameters, brings the network up,
// collects the hardware inventory and posts it to the inspection callback,
// then powers the machine off. See docs/ramdisk.md.
package main

import (
	"context"
	"log/slog"
	"os"

	"github.com/ferrometal/ferro/internal/agent"
)

func main() {
	log := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelInfo}))
	err := agent.Run(context.Background(), agent.Options{Log: log, PID1: os.Getpid() == 1})
	if err != nil {
		log.Error("ferro-agent failed", "err", err)
		os.Exit(1)
	}
}
