// Command boot measures in-band inspection of QEMU machines end to end:
// power-on → report received, per boot path (ipxe, pxe, uefi, vmedia),
// one machine alone and several at once, with where the time goes. Each
// scenario is a fresh `ferro lab up` (internal/lab: ferro serve with the
// built-in netboot, ferro-vbmc with QEMU machines, lldpd) and every node
// is inspected through the API at once. The phases come from the nodes'
// history (GET /v1/nodes/{node}/history, recorded by the netboot and the
// inspector), the kernel and agent times from the agent's own log lines
// on each machine's serial console.
//
// It needs root (network namespaces, taps) and QEMU, like the test/vm lane.
//
//	sudo go run ./bench/boot [-boots ipxe,pxe,uefi,vmedia] [-parallel 1,3] [-runs 5] [-memory-mb 1024]
//
// Under emulation on a shared host one boot varies by seconds from the
// next, so each scenario runs -runs times and the summary gives the
// median with the range.
package main

import (
	"context"
	"flag"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"text/tabwriter"
	"time"

	"github.com/ferrometal/ferro/internal/driver"
	"github.com/ferrometal/ferro/internal/lab"
	"github.com/ferrometal/ferro/internal/ramdisk"
)

func main() {
	boots := flag.String("boots", "ipxe,pxe,uefi,vmedia", "boot paths to measure (internal/lab's Boots)")
	parallel := flag.String("parallel", "1,3", "machines inspected at once, one scenario each")
	memory := flag.Int("memory-mb", 1024, "memory of each machine")
	runs := flag.Int("runs", 1, "times each scenario runs (the summary gives the median and range)")
	timeout := flag.Duration("timeout", 10*time.Minute, "limit per scenario")
	flag.Parse()
	if err := run(strings.Split(*boots, ","), *parallel, max(1, *runs), *memory, *timeout); err != nil {
		fmt.Fprintln(os.Stderr, "bench/boot:", err)
		os.Exit(1)
	}
}

// phases are the history's progress events, in boot order.
var phases = []string{driver.PhasePoweredOn, driver.PhaseDHCPAnswered, driver.PhaseBootScript, driver.PhaseKernel,
	driver.PhaseInitramfs, driver.PhaseReport, driver.PhaseProcessed, driver.PhasePoweredOff}

// result is one machine's inspection: each phase's offset from power-on,
// and the agent's own figures.
type result struct {
	name    string
	at      map[string]time.Duration
	uptime  float64 // kernel uptime when /init started (s)
	agent   float64 // /init → report posted, by the agent's clock (s)
	failure string
}

func run(boots []string, parallel string, runs, memoryMB int, timeout time.Duration) error {
	if os.Geteuid() != 0 {
		return fmt.Errorf("needs root (network namespaces, taps, DHCP on port 67)")
	}
	var counts []int
	for _, p := range strings.Split(parallel, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(p))
		if err != nil || n < 1 {
			return fmt.Errorf("-parallel %q: want counts like 1,3", parallel)
		}
		counts = append(counts, n)
	}
	for _, b := range boots {
		if _, ok := lab.Boots[b]; !ok {
			return fmt.Errorf("unknown boot %q", b)
		}
	}
	work, err := os.MkdirTemp("", "ferro-bench-boot-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(work)
	src, _ := os.Getwd()
	src = ramdisk.FindSource(src)
	bins := filepath.Join(work, "bin")
	for _, c := range []string{"ferro", "ferro-vbmc"} {
		cmd := exec.Command("go", "build", "-trimpath", "-o", filepath.Join(bins, c), "./cmd/"+c)
		cmd.Dir, cmd.Env = src, append(os.Environ(), "CGO_ENABLED=0")
		if out, err := cmd.CombinedOutput(); err != nil {
			return fmt.Errorf("go build ./cmd/%s: %w\n%s", c, err, out)
		}
	}
	cache, err := os.UserCacheDir()
	if err != nil {
		cache = os.TempDir()
	}
	ctx := context.Background()
	rd, err := ramdisk.Build(ctx, ramdisk.BuildOptions{CacheDir: filepath.Join(cache, "ferro", "kernels"), AgentSource: src,
		OutDir: filepath.Join(work, "ramdisk"), ISO: true})
	if err != nil {
		return fmt.Errorf("ramdisk build: %w", err)
	}
	fmt.Printf("ramdisk: kernel %.1f MB + initramfs %.1f MB = %.1f MB; ferro-agent %.1f MB; ISO %.1f MB\n",
		mb(rd.KernelBytes), mb(rd.InitramfsBytes), mb(rd.KernelBytes+rd.InitramfsBytes), mb(rd.AgentBytes), mb(rd.ISOBytes))
	fmt.Printf("machines: %d MB, 1 CPU, TCG unless KVM works; load average before: %s\n\n", memoryMB, loadavg())

	tw := tabwriter.NewWriter(os.Stdout, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "boot\tVMs\tmachine\tpower-on→report\tDHCP\tscript\tkernel\tinitramfs\t/init (uptime)\tagent\tprocessed\tpowered off\t")
	type summary struct {
		boot    string
		n       int
		reports []float64 // power-on → report of every machine of every run
		failed  int
	}
	var sums []summary
	for _, b := range boots {
		for _, n := range counts {
			sum := summary{boot: b, n: n}
			for range runs {
				sctx, cancel := context.WithTimeout(ctx, timeout)
				results, err := scenario(sctx, work, bins, rd, b, n, memoryMB)
				cancel()
				if err != nil {
					return fmt.Errorf("%s × %d: %w", b, n, err)
				}
				for _, r := range results {
					if r.failure != "" {
						sum.failed++
						fmt.Fprintf(tw, "%s\t%d\t%s\tFAILED: %s\t\n", b, n, r.name, r.failure)
						continue
					}
					if d, ok := r.at[driver.PhaseReport]; ok {
						sum.reports = append(sum.reports, d.Seconds())
					}
					fmt.Fprintf(tw, "%s\t%d\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t\n", b, n, r.name,
						sec(r.at, driver.PhaseReport), sec(r.at, driver.PhaseDHCPAnswered), sec(r.at, driver.PhaseBootScript),
						sec(r.at, driver.PhaseKernel), sec(r.at, driver.PhaseInitramfs), secs(r.uptime), secs(r.agent),
						sec(r.at, driver.PhaseProcessed), sec(r.at, driver.PhasePoweredOff))
				}
				tw.Flush()
			}
			sums = append(sums, sum)
		}
	}
	fmt.Printf("\npower-on → report, over %d run(s) per scenario:\n", runs)
	tw = tabwriter.NewWriter(os.Stdout, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "boot\tVMs\tmachines\tmedian\tmin\tmax\tfailed\t")
	for _, s := range sums {
		if len(s.reports) == 0 {
			fmt.Fprintf(tw, "%s\t%d\t0\t-\t-\t-\t%d\t\n", s.boot, s.n, s.failed)
			continue
		}
		slices.Sort(s.reports)
		fmt.Fprintf(tw, "%s\t%d\t%d\t%.1f\t%.1f\t%.1f\t%d\t\n", s.boot, s.n, len(s.reports), median(s.reports),
			s.reports[0], s.reports[len(s.reports)-1], s.failed)
	}
	tw.Flush()
	fmt.Println("\nColumns are seconds after the \"powered on\" history event; \"/init (uptime)\" is the kernel's uptime when")
	fmt.Println("ferro-agent started (the kernel's own boot, after the firmware and its decompression), \"agent\" is /init → report posted.")
	return nil
}

// scenario runs one lab with n machines booting b and inspects them all at once.
func scenario(ctx context.Context, work, bins string, rd *ramdisk.Result, b string, n, memoryMB int) ([]result, error) {
	l, err := lab.Up(ctx, lab.Options{Netns: "ferro-bench-boot", Dir: filepath.Join(work, "lab-"+b+"-"+strconv.Itoa(n)),
		Machines: n, MemoryMB: memoryMB, CPUs: 1, Ferro: filepath.Join(bins, "ferro"), VBMC: filepath.Join(bins, "ferro-vbmc"),
		Kernel: rd.Kernel, Initramfs: rd.Initramfs, Boot: b, Log: slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))})
	if err != nil {
		return nil, err
	}
	defer l.Down()
	results := make([]result, len(l.Nodes))
	var wg sync.WaitGroup
	for i, name := range l.Nodes {
		wg.Go(func() { results[i] = inspect(ctx, l, name) })
	}
	wg.Wait()
	return results, nil
}

// inspect starts the node's inspection, waits for its end and reads its
// history and console.
func inspect(ctx context.Context, l *lab.Lab, name string) result {
	r := result{name: name, at: map[string]time.Duration{}}
	if err := l.API(ctx, http.MethodPut, "/v1/nodes/"+name+"/states/provision", map[string]any{"target": "inspect"}, nil); err != nil {
		r.failure = err.Error()
		return r
	}
	for {
		var n struct {
			ProvisionState string  `json:"provision_state"`
			LastError      *string `json:"last_error"`
		}
		if err := l.API(ctx, http.MethodGet, "/v1/nodes/"+name, nil, &n); err != nil {
			r.failure = err.Error()
			return r
		}
		if n.ProvisionState == "manageable" {
			break
		}
		if n.ProvisionState == "inspect failed" {
			r.failure = "inspect failed"
			if n.LastError != nil {
				r.failure += ": " + *n.LastError
			}
			return r
		}
		select {
		case <-ctx.Done():
			r.failure = "timed out in " + n.ProvisionState
			return r
		case <-time.After(250 * time.Millisecond): // the API has no change feed
		}
	}
	var h struct {
		History []struct {
			CreatedAt string `json:"created_at"`
			Event     string `json:"event"`
		} `json:"history"`
	}
	if err := l.API(ctx, http.MethodGet, "/v1/nodes/"+name+"/history", nil, &h); err != nil {
		r.failure = err.Error()
		return r
	}
	// The last inspection's events: from its last "powered on".
	var start time.Time
	for _, e := range h.History {
		at, err := time.Parse("2006-01-02T15:04:05.999999Z07:00", e.CreatedAt)
		if err != nil {
			continue
		}
		phase, _, _ := strings.Cut(e.Event, ": ")
		if phase == driver.PhasePoweredOn {
			start, r.at = at, map[string]time.Duration{}
		}
		if start.IsZero() {
			continue
		}
		for _, p := range phases {
			if p == phase {
				if _, seen := r.at[p]; !seen {
					r.at[p] = at.Sub(start)
				}
			}
		}
	}
	r.uptime, r.agent = agentTimes(l.ConsoleLog(name))
	return r
}

var (
	startRE = regexp.MustCompile(`msg="ferro-agent starting".*? uptime=([0-9.]+)s`)
	// The machine may be powered off before "report posted" reaches the
	// console; "inventory collected" is logged just before the post.
	postedRE = regexp.MustCompile(`msg="(?:report posted|inventory collected)".*? elapsed=([0-9.]+)s`)
)

// agentTimes reads the agent's log lines on the console: the kernel's
// uptime at /init and /init → report posted, of the last boot.
func agentTimes(console string) (uptime, agent float64) {
	b, _ := os.ReadFile(console)
	s := string(b)
	if m := startRE.FindAllStringSubmatch(s, -1); len(m) > 0 {
		uptime, _ = strconv.ParseFloat(m[len(m)-1][1], 64)
	}
	if m := postedRE.FindAllStringSubmatch(s, -1); len(m) > 0 {
		agent, _ = strconv.ParseFloat(m[len(m)-1][1], 64)
	}
	return uptime, agent
}

func sec(at map[string]time.Duration, phase string) string {
	d, ok := at[phase]
	if !ok {
		return "-"
	}
	return fmt.Sprintf("%.1f", d.Seconds())
}

func secs(s float64) string {
	if s == 0 {
		return "-"
	}
	return fmt.Sprintf("%.1f", s)
}

// median of sorted values.
func median(v []float64) float64 {
	if len(v)%2 == 1 {
		return v[len(v)/2]
	}
	return (v[len(v)/2-1] + v[len(v)/2]) / 2
}

func mb(n int64) float64 { return float64(n) / 1e6 }

func loadavg() string {
	b, _ := os.ReadFile("/proc/loadavg")
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return "?"
	}
	return strings.Join(f[:3], " ")
}
