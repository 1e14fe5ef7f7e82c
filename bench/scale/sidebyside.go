package main

import (
	"context"
	"flag"
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/ferrometal/ferro/bench/scale/probe"
)

// -ironic runs the side-by-side probe (probe.SideBySide) instead of the
// scale probe: the same API requests and the power-state sync against one
// ferro serve and one Debian Ironic 21.4, each on SQLite, at -nodes nodes:
//
//	FERRO_BIN=bin/ferro go run ./bench/scale -ironic [-nodes 10000]
var (
	sideBySide  = flag.Bool("ironic", false, "measure ferro and Debian's Ironic 21.4 side by side instead (needs python3-ironic)")
	sideSample  = flag.Int("ironic-sample", 100, "-ironic: Ironic nodes enrolled over its API (the others are copies inserted into its database)")
	sideGets    = flag.Int("ironic-requests", 100, "-ironic: GETs of one node, and PATCHes, per side")
	sideVerbs   = flag.Int("ironic-verbs", 50, "-ironic: nodes provided then managed again, per side")
	sidePowerTo = flag.Duration("ironic-power-wait", 10*time.Minute, "-ironic: how long to wait for Ironic's power sync cycle to end")
)

// runSideBySide runs the side-by-side probe for c's nodes, binary and
// power interval, and prints its table.
func runSideBySide(ctx context.Context, c probe.Config) {
	began := time.Now()
	res, err := probe.SideBySide(ctx, probe.SideConfig{Ferro: c.Ferro, Nodes: c.Nodes, Sample: *sideSample,
		Gets: *sideGets, Verbs: *sideVerbs, PowerInterval: c.PowerInterval, IronicPowerWait: *sidePowerTo,
		Limit: c.Limit + *sidePowerTo, Log: c.Log})
	if res != nil {
		printSide(res, time.Since(began))
	}
	if err != nil {
		fail(err)
	}
}

// printSide writes the side-by-side table: each figure for ferro, for
// Ironic, and Ironic's over ferro's.
func printSide(r *probe.SideResult, took time.Duration) {
	fmt.Printf("\nbench/scale -ironic: %d nodes, %d ports on each side (%v in all)\n  ferro:  %s\n  Ironic: %s\n\n",
		r.Config.Nodes, 2*r.Config.Nodes, took.Round(time.Second), r.Version["ferro"], r.Version["ironic"])
	fmt.Printf("%-62s %17s %17s %9s\n", "figure (p50 / p99 where a latency)", "ferro", "Ironic", "Ironic/ferro")
	row := func(name string, f, i time.Duration, fs, is string) {
		ratio := "-"
		if f > 0 && i > 0 {
			ratio = fmt.Sprintf("%.1f×", float64(i)/float64(f))
		}
		fmt.Printf("%-62s %17s %17s %9s\n", name, fs, is, ratio)
	}
	names := map[string]bool{}
	for _, side := range r.Latency {
		for name := range side {
			names[name] = true
		}
	}
	for _, name := range slices.Sorted(maps.Keys(names)) {
		f, i := r.Latency["ferro"][name], r.Latency["ironic"][name]
		f50, i50 := probe.Percentile(f, 50), probe.Percentile(i, 50)
		cell := func(ds []time.Duration) string {
			if len(ds) == 1 {
				return ms(ds[0])
			}
			return ms(probe.Percentile(ds, 50)) + " / " + ms(probe.Percentile(ds, 99))
		}
		row(fmt.Sprintf("%s (%d)", name, len(f)), f50, i50, cell(f), cell(i))
	}
	row("paging through every node, detailed, 1,000 a page", r.PageAll["ferro"], r.PageAll["ironic"],
		ms(r.PageAll["ferro"]), ms(r.PageAll["ironic"]))
	perNode := func(s string) time.Duration {
		if r.Enrolled[s] == 0 {
			return 0
		}
		return r.Enroll[s] / time.Duration(r.Enrolled[s])
	}
	row("enrolment over the API per node (+2 ports, manage)", perNode("ferro"), perNode("ironic"),
		fmt.Sprintf("%s (%d)", ms(perNode("ferro")), r.Enrolled["ferro"]), fmt.Sprintf("%s (%d)", ms(perNode("ironic")), r.Enrolled["ironic"]))
	if r.Config.PowerInterval > 0 {
		row(fmt.Sprintf("power-state sync cycle, fake power (interval %v)", r.Config.PowerInterval), r.PowerCycle["ferro"], r.PowerCycle["ironic"],
			fmt.Sprintf("%s (%d)", ms(r.PowerCycle["ferro"]), r.PowerNodes["ferro"]), fmt.Sprintf("%s (%d)", ms(r.PowerCycle["ironic"]), r.PowerNodes["ironic"]))
	}
	fmt.Printf("%-62s %17s %17s\n", "RSS after the API figures", fmt.Sprintf("%.0f MiB", float64(r.RSS["ferro"])/(1<<20)),
		fmt.Sprintf("%.0f MiB", float64(r.RSS["ironic"])/(1<<20)))
}
