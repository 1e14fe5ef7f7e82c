// Command bmc is the IPMI load probe: it starts Debian's ipmi_sim (one or
// more, each a BMC on its own UDP port, message debugging off) and measures
// ferro's internal/bmc/ipmi client — power status and power on/off
// operations per second and their p50/p99 latency, over one reused lanplus
// session per BMC with [ipmi]min_command_interval 0 — next to Debian's
// ipmitool, run once per command as Ironic's ipmitool driver runs it (a
// new process and RMCP+ session per command, cipher suite 3). It prints the
// figures and their ratio; it asserts nothing about time.
//
//	go run ./bench/bmc [-n 200] [-bmcs 4] [-ipmitool-n 20]
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/ferrometal/ferro/internal/bmc/ipmi"
	"github.com/ferrometal/ferro/internal/testing/ipmisim"
)

func main() {
	n := flag.Int("n", 200, "operations per BMC and kind through ferro's client")
	bmcs := flag.Int("bmcs", 4, "simulated BMCs driven in parallel")
	toolN := flag.Int("ipmitool-n", 20, "ipmitool invocations")
	flag.Parse()
	if err := run(*n, *bmcs, *toolN); err != nil {
		fmt.Fprintln(os.Stderr, "bench/bmc:", err)
		os.Exit(1)
	}
}

func run(n, nbmc, toolN int) error {
	dir, err := os.MkdirTemp("", "bench-bmc-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	var sims []*ipmisim.Sim
	defer func() {
		for _, s := range sims {
			s.Close()
		}
	}()
	for i := range nbmc {
		d := fmt.Sprintf("%s/sim%d", dir, i)
		if err := os.Mkdir(d, 0o700); err != nil {
			return err
		}
		s, err := ipmisim.Run(d, ipmisim.WithQuiet())
		if err != nil {
			return err
		}
		sims = append(sims, s)
	}
	targets := make([]ipmi.Target, len(sims))
	for i, s := range sims {
		targets[i] = ipmi.Target{Address: s.Address, Port: s.Port, Username: s.Username, Password: s.Password, CipherSuite: 3}
	}
	ctx := context.Background()
	c := ipmi.New(ipmi.Options{CommandRetryTimeout: 10 * time.Second})
	defer c.Close()

	fmt.Printf("ferro bmc/ipmi client, lanplus cipher 3, one session per BMC, min_command_interval 0\n")
	for _, kind := range []string{"power status", "power on/off"} {
		for _, par := range []int{1, nbmc} {
			lat, wall, err := measure(par, n, func(b, i int) error {
				t := targets[b]
				if kind == "power status" {
					_, err := c.PowerStatus(ctx, t)
					return err
				}
				a := ipmi.PowerOn
				if i%2 == 1 {
					a = ipmi.PowerOff
				}
				return c.Power(ctx, t, a)
			})
			if err != nil {
				return err
			}
			report(fmt.Sprintf("%-13s %d BMC(s)", kind, par), lat, wall)
		}
	}
	fmt.Printf("sessions opened: %d for %d operations\n", c.SessionsOpened(), 2*n*(1+nbmc))

	tool, err := exec.LookPath("ipmitool")
	if err != nil {
		fmt.Println("ipmitool not found (Debian package ipmitool): no comparison")
		return nil
	}
	s := sims[0]
	lat, wall, err := measure(1, toolN, func(_, _ int) error {
		out, err := exec.Command(tool, "-I", "lanplus", "-C", "3", "-H", s.Address, "-p", strconv.Itoa(s.Port),
			"-U", s.Username, "-P", s.Password, "-L", "ADMINISTRATOR", "power", "status").CombinedOutput()
		if err != nil {
			return fmt.Errorf("ipmitool: %w: %s", err, out)
		}
		return nil
	})
	if err != nil {
		return err
	}
	fmt.Printf("ipmitool, one process and session per command (as Ironic runs it), cipher 3\n")
	report("power status  1 BMC(s)", lat, wall)
	return nil
}

// measure runs n operations on each of par BMCs, the BMCs in parallel.
func measure(par, n int, op func(bmc, i int) error) ([]time.Duration, time.Duration, error) {
	var (
		mu   sync.Mutex
		lat  []time.Duration
		errs []error
		wg   sync.WaitGroup
	)
	start := time.Now()
	for b := range par {
		wg.Go(func() {
			for i := range n {
				t0 := time.Now()
				err := op(b, i)
				d := time.Since(t0)
				mu.Lock()
				lat = append(lat, d)
				if err != nil {
					errs = append(errs, err)
				}
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	if len(errs) > 0 {
		return nil, 0, errs[0]
	}
	return lat, time.Since(start), nil
}

func report(name string, lat []time.Duration, wall time.Duration) {
	slices.Sort(lat)
	p := func(q float64) time.Duration { return lat[min(len(lat)-1, int(q*float64(len(lat))))] }
	fmt.Printf("  %s: %6.0f ops/s  p50 %8v  p99 %8v  (%d ops in %v)\n", name,
		float64(len(lat))/wall.Seconds(), p(0.50).Round(time.Microsecond), p(0.99).Round(time.Microsecond), len(lat), wall.Round(time.Millisecond))
}
