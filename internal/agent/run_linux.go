package agent

import (
	"context"
	"errors"
	"fmt"
	"io"
	stdlog "log"
	"log/slog"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/ferrometal/ferro/internal/callback"
	"github.com/ferrometal/ferro/internal/inventory"
)

// Options are Run's inputs besides the kernel command line.
type Options struct {
	Log *slog.Logger
	// Cmdline is /proc/cmdline's content; "" reads it.
	Cmdline string
	// PID1 makes Run act as init: mount the pseudo file systems first and
	// never return (power off, or wait forever with ipa-fast-track).
	PID1 bool
}

// Run is the whole agent: parse the command line, set the machine up,
// collect, post, power off. It returns only when not PID 1, with the
// posting error if any. Every failure before the post is put in the
// report's error field instead of stopping the agent.
func Run(ctx context.Context, o Options) error {
	start := time.Now()
	log := o.Log
	failures := &Failures{}
	if o.PID1 {
		failures.Add(MountPseudoFS())
	}
	line := o.Cmdline
	if line == "" {
		b, err := os.ReadFile("/proc/cmdline")
		failures.Add(err)
		line = string(b)
	}
	p, err := ParseCmdline(line)
	failures.Add(err)
	if p.Debug {
		log = slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelDebug}))
	} else {
		// u-root's dhclient prints whole DHCP packets with the standard
		// logger; the agent's own lines say what matters.
		stdlog.SetOutput(io.Discard)
	}
	// uptime: how long the firmware handover and the kernel took, for
	// power-on → report figures.
	uptime, _, _ := strings.Cut(readString("/proc/uptime"), " ")
	log.Info("ferro-agent starting", "uptime", uptime+"s", "callback", p.CallbackURL != "", "token", p.Token != "", "bootif", p.BootIF)

	// A NIC's link comes up as soon as its driver made it: carrier
	// negotiation, the kernel's link watch (up to 1 s) and DHCP on the
	// boot NIC then overlap the loading of the other modules.
	// LLDP listening starts there too: the wait for a frame overlaps the
	// rest.
	lldp := NewLLDPListener(ctx, log, p.LLDPTimeout)
	network := NewNetwork(ctx, log, NetworkOptions{BootMAC: p.BootMAC, All: p.DHCPAll, Timeout: p.DHCPTimeout})
	n, err := LoadModules(log, "/", callback.ModuleList, p.Modules, func(name string) {
		if err := LinkUp(name); err != nil {
			log.Debug("link not up", "interface", name, "err", err)
			return
		}
		log.Debug("link up", "interface", name, "elapsed", since(start))
		network.Start(name)
		if p.Collectors == nil || slices.Contains(p.Collectors, CollectorLLDP) {
			lldp.Start(name)
		}
	})
	failures.Add(err)
	log.Info("modules loaded", "count", n, "elapsed", since(start))

	host := Host{
		Root:  "/",
		Addrs: SystemAddrs,
		BMC:   ReadBMC,
		LLDP: func(_ context.Context, names []string, _ time.Duration) (map[string][]inventory.TLV, error) {
			return lldp.Results(names)
		},
		Network: func(ctx context.Context, names []string) error {
			err := network.Wait(names)
			log.Info("network up", "ok", err == nil, "elapsed", since(start))
			return err
		},
	}
	rep := Collect(ctx, log, host, p, failures)
	rep.Error = failures.Error()
	if rep.Error != nil {
		log.Warn("collected with errors", "error", *rep.Error)
	}
	log.Info("inventory collected", "interfaces", len(rep.Inventory.Interfaces), "disks", len(rep.Inventory.Disks), "elapsed", since(start))

	var postErr error
	if p.CallbackURL == "" {
		postErr = errors.New("no " + callback.URLParam + " on the kernel command line: nothing to post to")
	} else {
		poster := &Poster{URL: p.CallbackURL, Token: p.Token, Deadline: p.PostTimeout, Log: log}
		var answer []byte
		answer, postErr = poster.Post(ctx, rep)
		if postErr == nil {
			log.Info("report posted", "node", AcceptedNode(answer), "elapsed", since(start))
		}
	}
	if postErr != nil {
		log.Error("report not posted", "err", postErr, "elapsed", since(start))
	}
	if !o.PID1 {
		return postErr
	}
	if p.FastTrack {
		log.Info("fast track: staying up")
		<-ctx.Done()
		select {}
	}
	log.Info("powering off")
	err = PowerOff()
	log.Error("power off failed", "err", err)
	select {} // PID 1 must not exit: the kernel would panic
}

func since(t time.Time) string { return fmt.Sprintf("%.3fs", time.Since(t).Seconds()) }
