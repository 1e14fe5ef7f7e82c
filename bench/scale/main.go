// Command scale is the scale probe: a throwaway PostgreSQL cluster
// (Debian's postgresql package), three `ferro serve` processes sharing it
// as production runs them (the hash ring; heartbeats every 2 s, dead
// after 10), 10,000 fake-hardware nodes with 20,000 ports, then
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
//   - RSS per process, database size, CPU seconds per inspection;
//
//   - the periodic power-state sync at every node (all made manageable,
//     each fake BMC answering after -power-delay, the processes restarted
//     with the sync every -power-interval): cycle time, and the database's
//     work per cycle when nothing changes.
//
//     FERRO_BIN=bin/ferro go run ./bench/scale [-nodes 10000] [-inspections 1000] [-processes 3]
//
// `make bench` runs it so; -nodes 1000 -inspections 100 is the small
// profile test/scale runs in CI. It prints a table and fails when an
// inspection fails or the take-over leaves anything behind; it asserts
// nothing about time.
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
	"syscall"
	"time"

	"github.com/ferrometal/ferro/bench/scale/probe"
)

func main() {
	c := probe.Config{Log: os.Stderr, Kill: true}
	flag.IntVar(&c.Nodes, "nodes", 10000, "nodes to enroll (two ports each)")
	flag.IntVar(&c.Inspections, "inspections", 1000, "inspections started at once")
	flag.IntVar(&c.Processes, "processes", 3, "ferro serve processes on the database")
	flag.IntVar(&c.Rounds, "rounds", 60, "rounds of API requests beside the inspections")
	flag.DurationVar(&c.Limit, "limit", 10*time.Minute, "give up after this long")
	flag.DurationVar(&c.PowerInterval, "power-interval", 15*time.Second, "[conductor]sync_power_state_interval of the power-sync phase at the end (0: no such phase)")
	flag.DurationVar(&c.PowerDelay, "power-delay", 20*time.Millisecond, "simulated BMC latency of every power call in the power-sync phase")
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
	began := time.Now()
	res, err := probe.Run(ctx, c)
	if res != nil {
		Print(res, time.Since(began))
	}
	if err != nil {
		fail(err)
	}
	if res.InspectFailed > 0 || res.StuckNodes > 0 || res.LocksLeft > 0 || res.RunTwice > 0 {
		fail(fmt.Errorf("%d inspections failed, %d nodes left half done, %d locks left, %d tasks run twice",
			res.InspectFailed, res.StuckNodes, res.LocksLeft, res.RunTwice))
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
	if c.PowerInterval > 0 {
		row(fmt.Sprintf("power sync: cycle (interval %v, BMC latency %v, 8 workers)", c.PowerInterval, c.PowerDelay),
			fmt.Sprintf("%v, %d nodes checked", r.PowerCycle.Round(time.Millisecond), r.PowerChecked))
		row("power sync: database per round (a cycle of each process)", fmt.Sprintf("%.0f rows, %.0f transactions beyond idle (round %.1f s)",
			r.PowerRowsPerRound, r.PowerXactsPerRound, r.PowerRoundSeconds))
	}
	for i, rss := range r.RSS {
		row(fmt.Sprintf("RSS of process %d", i), fmt.Sprintf("%.0f MiB", float64(rss)/(1<<20)))
	}
	row("database size", fmt.Sprintf("%.0f MiB", float64(r.DBSize)/(1<<20)))
}

func ms(d time.Duration) string { return fmt.Sprintf("%.1fms", float64(d)/float64(time.Millisecond)) }
