// Command scale is the scale probe: a throwaway PostgreSQL cluster
// (Debian's postgresql package), three `ferro serve` processes sharing it
// as production runs them (the hash ring; heartbeats every 2 s, dead
// after 10), 10,000 nodes with 20,000 ports, each with a simulated BMC
// (internal/vbmc fake machines in this process: half IPMI, half Redfish,
// answering after -bmc-latency), then
//
//   - the detailed list (limit=1000) and paging through every node;
//
//   - 1,000 inspections started at once, each answered by a simulated
//     agent with a realistic report (the callback and token from the boot
//     configuration the inspecting process wrote), with rounds of API
//     requests (the detailed list, GET, PATCH, a provision verb) beside;
//
//   - what the periodic tasks read from the database when nothing happens;
//
//   - one process SIGKILLed under load: time until every node is owned
//     by a live conductor again, and what it left locked or half done;
//
//   - one process added while inspections run (-join): time until every
//     ring has it, inspections that survive, tasks run twice;
//
//   - RSS per process, database size, CPU seconds per inspection;
//
//   - the periodic power-state sync at every node (all made manageable,
//     the processes restarted with the sync every -power-interval): cycle
//     time and the database's work per cycle when nothing changes, with
//     every node active, then only the IPMI ones, then only the Redfish
//     ones;
//
//   - as root, -netboot machines (200) booting at once against the
//     built-in netboot as their firmware does (bench/scale/firmware).
//
//     FERRO_BIN=bin/ferro go run ./bench/scale [-nodes 10000] [-inspections 1000] [-processes 3]
//
// `make bench` runs it so; -nodes 1000 -inspections 100 is the small
// profile test/scale runs in CI. It prints tables and fails when an
// inspection fails, a machine does not boot, or the take-over or the
// addition leaves anything behind; it asserts nothing about time.
package main

import (
	"context"
	"flag"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/ferrometal/ferro/bench/scale/firmware"
	"github.com/ferrometal/ferro/bench/scale/probe"
)

func main() {
	c := probe.Config{Log: os.Stderr, Kill: true}
	flag.BoolVar(&c.Join, "join", true, "after the kill, add a process while inspections run")
	flag.IntVar(&c.Nodes, "nodes", 10000, "nodes to enroll (two ports each)")
	flag.IntVar(&c.Inspections, "inspections", 1000, "inspections started at once")
	flag.IntVar(&c.Processes, "processes", 3, "ferro serve processes on the database")
	flag.IntVar(&c.Rounds, "rounds", 60, "rounds of API requests beside the inspections")
	flag.DurationVar(&c.Limit, "limit", 10*time.Minute, "give up after this long")
	flag.DurationVar(&c.PowerInterval, "power-interval", 15*time.Second, "[conductor]sync_power_state_interval of the power-sync phase at the end (0: no such phase)")
	flag.DurationVar(&c.BMCLatency, "bmc-latency", 20*time.Millisecond, "latency of every simulated BMC: each IPMI reply, each Redfish request for a System or Manager")
	flag.Func("ferro-env", "a FERRO_*=value setting of every ferro serve process, after the bench's (repeatable)", func(kv string) error {
		if !strings.HasPrefix(kv, "FERRO_") || !strings.Contains(kv, "=") {
			return fmt.Errorf("want FERRO_<SECTION>_<OPTION>=value, got %q", kv)
		}
		c.Env = append(c.Env, kv)
		return nil
	})
	netboot := flag.Int("netboot", 200, "simulated machines netbooting at once against the built-in netboot (root: network namespaces; 0: no such phase)")
	flag.StringVar(&c.Ferro, "ferro", os.Getenv("FERRO_BIN"), "ferro binary (default $FERRO_BIN, else build ./cmd/ferro)")
	flag.Parse()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if c.Ferro == "" {
		dir, err := os.MkdirTemp("", "ferro-scale-bin-")
		if err != nil {
			fail(err)
		}
		defer os.RemoveAll(dir)
		c.Ferro = filepath.Join(dir, "ferro")
		cmd := exec.Command("go", "build", "-trimpath", "-o", c.Ferro, "./cmd/ferro")
		cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
		if out, err := cmd.CombinedOutput(); err != nil {
			fail(fmt.Errorf("go build ./cmd/ferro (run from the module root, or set FERRO_BIN): %w\n%s", err, out))
		}
	}
	if *sideBySide {
		runSideBySide(ctx, c) // sidebyside.go
		return
	}
	began := time.Now()
	res, err := probe.Run(ctx, c)
	if res != nil {
		Print(res, time.Since(began))
	}
	if err != nil {
		fail(err)
	}
	var boot *firmware.Result
	switch {
	case *netboot <= 0:
	case os.Geteuid() != 0:
		fmt.Println("netboot phase skipped: it needs root (network namespaces)")
	default:
		nctx, cancel := context.WithTimeout(ctx, 3*time.Minute)
		boot, err = firmware.Run(nctx, firmware.Config{Ferro: c.Ferro, Machines: *netboot, KernelMB: 4})
		cancel()
		if err != nil {
			fail(fmt.Errorf("netboot: %w", err))
		}
		PrintNetboot(boot)
		fmt.Printf("\nbench/scale: %v in all\n", time.Since(began).Round(time.Second))
	}
	if res.InspectFailed > 0 || res.StuckNodes > 0 || res.LocksLeft > 0 || res.RunTwice > 0 {
		fail(fmt.Errorf("%d inspections failed, %d nodes left half done, %d locks left, %d tasks run twice",
			res.InspectFailed, res.StuckNodes, res.LocksLeft, res.RunTwice))
	}
	if boot != nil && boot.Failed > 0 {
		fail(fmt.Errorf("netboot: %d of %d machines did not boot: %s", boot.Failed, boot.Config.Machines, strings.Join(boot.Errors, "; ")))
	}
	if j := res.Join; j != nil && (j.Survived != j.Inspections || j.RunTwice > 0) {
		fail(fmt.Errorf("across the added process: %d of %d inspections ended manageable, %d run twice", j.Survived, j.Inspections, j.RunTwice))
	}
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "bench/scale:", err)
	os.Exit(1)
}

// Print writes the table.
func Print(r *probe.Result, took time.Duration) {
	c := r.Config
	fmt.Printf("\nbench/scale: %d nodes, %d ports, %d processes on PostgreSQL, %d inspections at once (%v in all)\n\n",
		c.Nodes, 2*c.Nodes, c.Processes, c.Inspections, took.Round(time.Second))
	fmt.Printf("%-55s %6s %10s %10s\n", "request", "count", "p50", "p99")
	for _, name := range slices.Sorted(maps.Keys(r.Latency)) {
		ds := r.Latency[name]
		fmt.Printf("%-55s %6d %10s %10s\n", name, len(ds), ms(probe.Percentile(ds, 50)), ms(probe.Percentile(ds, 99)))
	}
	fmt.Println()
	row := func(name, v string) { fmt.Printf("%-55s %s\n", name, v) }
	row("enrolment (nodes and ports over the API)", r.Enroll.Round(time.Millisecond).String())
	row("paging through all nodes, detailed, 1,000 a page", r.PageAll.Round(time.Millisecond).String())
	row("inspections: first request to all manageable", r.InspectAll.Round(time.Millisecond).String())
	row("inspections: reports/s", fmt.Sprintf("%.0f", r.ReportsPerSec))
	row("inspections: failed", fmt.Sprint(r.InspectFailed))
	row("requests retried meanwhile (409 locked, 503 no free worker)", fmt.Sprint(r.InspectRetries))
	row("CPU s per inspection (all processes, API load beside)", fmt.Sprintf("%.4f", r.CPUPerInspect))
	row("idle: rows read/s from the database (periodic tasks)", fmt.Sprintf("%.0f", r.IdleRowsPerSec))
	row("idle: transactions/s", fmt.Sprintf("%.1f", r.IdleXactPerSec))
	row("idle: sequential scans of the nodes table in 10 s", fmt.Sprint(r.IdleNodeScans))
	if c.Kill {
		row("SIGKILL of one process: every node owned again after", r.Takeover.Round(time.Millisecond).String())
		row("  locks of the dead process left / nodes left verifying", fmt.Sprintf("%d / %d", r.LocksLeft, r.StuckNodes))
		row("  tasks run twice (inspections, manage tasks of the kill)", fmt.Sprint(r.RunTwice))
	}
	if j := r.Join; j != nil {
		row("process added under load: every node owned in all views after", fmt.Sprintf("%v (%d nodes its share)", j.Owned.Round(time.Millisecond), j.Share))
		row("  inspections across the addition: manageable / run twice", fmt.Sprintf("%d of %d / %d", j.Survived, j.Inspections, j.RunTwice))
	}
	if len(r.Power) > 0 {
		fmt.Printf("\npower-state sync, nothing to change (interval %v, BMC latency %v, 8 workers a process; a round is a cycle of each process; the database's work as pg_stat_statements counted it, scaled to one cycle of each process from the cycles it saw)\n",
			c.PowerInterval, c.BMCLatency)
		fmt.Printf("%-30s %7s %8s %7s %9s %7s %8s %8s %7s %7s %7s %7s %6s\n", "active nodes", "active", "checked", "failed", "cycle",
			"queries", "refs", "rows", "written", "pages", "others", "CPU s", "cycles")
		for _, pr := range r.Power {
			d := pr.DB
			fmt.Printf("%-30s %7d %8d %7d %9s %7.0f %8.0f %8.0f %7.0f %7.0f %7.0f %7.2f %6.0f\n", pr.Name, pr.Active, pr.Checked, pr.Failed,
				pr.Cycle.Round(time.Millisecond), d.NodeQueries, d.RefRows, d.NodeRows, d.NodeWrites, d.NodePages, d.Other, pr.CPU, pr.Cycles)
		}
		fmt.Println("(queries: statements on the nodes table; refs: node references the sync lists from its index, uuid and group; rows: nodes read in full; others: statements on other tables)")
		fmt.Println()
	}
	for i, rss := range r.RSS {
		row(fmt.Sprintf("RSS of process %d", i), fmt.Sprintf("%.0f MiB", float64(rss)/(1<<20)))
	}
	row("database size", fmt.Sprintf("%.0f MiB", float64(r.DBSize)/(1<<20)))
}

// PrintNetboot writes the netboot phase's table.
func PrintNetboot(r *firmware.Result) {
	fmt.Printf("\nnetboot: %d machines at once, each PXE ROM DHCP, TFTP of undionly.kpxe, iPXE DHCP, HTTP of script, %d MB kernel and ramdisk\n\n",
		r.Config.Machines, r.Config.KernelMB)
	row := func(name, v string) { fmt.Printf("%-55s %s\n", name, v) }
	row("first DISCOVER to every machine booted", r.AllBooted.Round(time.Millisecond).String())
	row("one machine's boot, p50 / p99", fmt.Sprintf("%s / %s", ms(probe.Percentile(r.Boot, 50)), ms(probe.Percentile(r.Boot, 99))))
	row("DHCP exchange (DISCOVER→OFFER, REQUEST→ACK), p50 / p99", fmt.Sprintf("%s / %s (%d exchanges, %d sent again)",
		ms(probe.Percentile(r.DHCP, 50)), ms(probe.Percentile(r.DHCP, 99)), len(r.DHCP), r.Retransmits))
	tftp := 0.0
	if r.TFTPSpan > 0 {
		tftp = float64(r.TFTPBytes) / 1e6 / r.TFTPSpan.Seconds()
	}
	row("TFTP, lock step: all transfers / one transfer p50, p99", fmt.Sprintf("%.1f MB/s (%.1f MB in %v) / %s, %s", tftp, float64(r.TFTPBytes)/1e6,
		r.TFTPSpan.Round(time.Millisecond), ms(probe.Percentile(r.TFTPEach, 50)), ms(probe.Percentile(r.TFTPEach, 99))))
	row("HTTP fetched", fmt.Sprintf("%.0f MB", float64(r.HTTPBytes)/1e6))
	row("machines that did not boot", fmt.Sprint(r.Failed))
	row("ferro serve: CPU s over the phase / peak RSS", fmt.Sprintf("%.2f / %.0f MiB", r.CPU, r.RSS))
}

func ms(d time.Duration) string { return fmt.Sprintf("%.1fms", float64(d)/float64(time.Millisecond)) }
