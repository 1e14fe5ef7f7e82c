package main

import (
	"fmt"
	"io"
	"runtime"
	"slices"
	"text/tabwriter"
	"time"
)

// figure is one line of the table. Higher is better when atLeast is set
// (a rate), lower otherwise (a time or a size).
type figure struct {
	name    string
	value   float64
	target  float64
	atLeast bool
	ironic  float64 // Debian Ironic 21.4 on the same machine; 0 when unknown
	format  string
}

func report(w io.Writer, c probeConfig, r *results) {
	mib := func(b int64) float64 { return float64(b) / (1 << 20) }
	figs := []figure{
		{name: fmt.Sprintf("create %d nodes, %d clients (nodes/s)", c.nodes, c.workers),
			value: float64(c.nodes) / r.createWall.Seconds(), target: 2000, atLeast: true, ironic: 44, format: "%.0f"},
		{name: fmt.Sprintf("list detail, %d nodes, median (ms)", c.nodes),
			value: ms(percentile(r.listLat, 50)), target: 10, ironic: 218, format: "%.2f"},
		{name: fmt.Sprintf("list detail, %d nodes, p90 (ms)", c.nodes),
			value: ms(percentile(r.listLat, 90)), format: "%.2f"},
		{name: "get one node, median (ms)",
			value: ms(percentile(r.getLat, 50)), target: 0.3, ironic: 9.3, format: "%.3f"},
		{name: "get one node, p90 (ms)",
			value: ms(percentile(r.getLat, 90)), format: "%.3f"},
		{name: fmt.Sprintf("get one node, %d clients (requests/s)", c.workers),
			value: r.getRate, format: "%.0f"},
		{name: fmt.Sprintf("manage+inspect %d nodes (s)", c.cycle),
			value: r.cycleWall.Seconds(), target: 0.5, ironic: 11, format: "%.3f"},
		{name: "idle RSS (MiB)",
			value: mib(r.idleRSS), target: 32, ironic: 264, format: "%.1f"},
		{name: "RSS after load (MiB)",
			value: mib(r.loadRSS), format: "%.1f"},
	}
	if r.settledRSS > 0 {
		figs = append(figs, figure{name: fmt.Sprintf("RSS %s idle after load (MiB)", c.settle),
			value: mib(r.settledRSS), target: 32, format: "%.1f"})
	}

	// The targets are for 500 nodes listed and 100 cycled.
	if c.nodes != 500 {
		figs[1].target, figs[1].ironic = 0, 0
	}
	if c.cycle != 100 {
		figs[6].target, figs[6].ironic = 0, 0
	}

	fmt.Fprintf(w, "ferro load probe: %s, auth %s, %d nodes, %d clients, %d CPUs, load average %s\n\n",
		c.db, c.auth, c.nodes, c.workers, runtime.NumCPU(), loadAverage())
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "figure\tferro\ttarget\tferro/target\t\tIronic 21.4\tvs Ironic\t")
	for _, f := range figs {
		val := fmt.Sprintf(f.format, f.value)
		target, ratio, verdict, ironic, vs := "", "", "", "", ""
		if f.target > 0 {
			op := "≤ "
			if f.atLeast {
				op = "≥ "
			}
			target = op + trim(f.target)
			ratio = fmt.Sprintf("%.2f", f.value/f.target)
			met := f.value <= f.target
			if f.atLeast {
				met = f.value >= f.target
			}
			verdict = "met"
			if !met {
				verdict = "MISSED"
			}
		}
		if f.ironic > 0 {
			ironic = trim(f.ironic)
			better := f.ironic / f.value
			if f.atLeast {
				better = f.value / f.ironic
			}
			vs = fmt.Sprintf("%.0f× better", better)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t\n", f.name, val, target, ratio, verdict, ironic, vs)
	}
	tw.Flush()

	fmt.Fprintf(w, "\ncreate latency median %.2f ms, p90 %.2f ms; list body %d KiB; manage alone %.3f s; %d provision retries (409/503), %d state polls\n",
		ms(percentile(r.createLat, 50)), ms(percentile(r.createLat, 90)), r.listBytes>>10,
		r.manageWall.Seconds(), r.retries, r.polls)
	fmt.Fprintln(w, "\nCPU per phase (the probe must not be the bottleneck):")
	tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "phase\twall (s)\tserver CPU (s)\tprobe CPU (s)\t")
	for _, p := range r.phases {
		fmt.Fprintf(tw, "%s\t%.3f\t%.2f\t%.2f\t\n", p.name, p.wall.Seconds(), p.server.Seconds(), p.client.Seconds())
	}
	tw.Flush()
	fmt.Fprintln(w, "\nIronic 21.4 figures: Debian's packages on the same kind of machine, as given in the foundation issue.")
	fmt.Fprintln(w, "The probe reports; it asserts nothing about time.")
}

// percentile is the nearest-rank percentile p (0-100) of d.
func percentile(d []time.Duration, p int) time.Duration {
	if len(d) == 0 {
		return 0
	}
	s := slices.Clone(d)
	slices.Sort(s)
	i := (len(s)*p + 99) / 100
	return s[max(i-1, 0)]
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// trim formats a target without useless zeros: 2000, 0.3, 9.3.
func trim(v float64) string { return fmt.Sprintf("%g", v) }
