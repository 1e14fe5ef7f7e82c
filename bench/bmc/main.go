// Command bmc is the BMC load probe. It reports power operations per
// second and their p50/p99 latency, asserting nothing about time:
//
//   - ferro's internal/bmc/ipmi client against Debian's ipmi_sim (one or
//     more, each a BMC on its own UDP port): power status and power on/off
//     over one reused lanplus session per BMC, [ipmi]min_command_interval 0;
//   - ferro's internal/bmc/ipmi and internal/bmc/redfish clients against
//     ferro-vbmc's fake machines (-vbmc-machines BMCs, all driven at once);
//   - the full API path: `ferro serve` with ipmi and redfish nodes on
//     ferro-vbmc, powered through PUT /v1/nodes/{node}/states/power;
//   - next to Debian's ipmitool, run once per command as Ironic's ipmitool
//     driver runs it (a new process and RMCP+ session per command, cipher
//     suite 3), against ipmi_sim and against ferro-vbmc.
//
// Run it from the repository root (the API part builds ./cmd/ferro unless
// -ferro names a binary):
//
//	go run ./bench/bmc [-n 200] [-bmcs 4] [-ipmitool-n 20] [-vbmc-machines 100] [-vbmc-n 50] [-api-nodes 50] [-api-rounds 5]
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
	toolN := flag.Int("ipmitool-n", 20, "ipmitool invocations per command")
	vbmcMachines := flag.Int("vbmc-machines", 100, "ferro-vbmc fake machines driven in parallel by ferro's clients (0: skip)")
	vbmcN := flag.Int("vbmc-n", 50, "operations per ferro-vbmc machine and kind")
	apiNodes := flag.Int("api-nodes", 50, "ipmi nodes, and as many redfish nodes, powered through the API (0: skip)")
	apiRounds := flag.Int("api-rounds", 5, "power on+off rounds per node through the API")
	ferroBin := flag.String("ferro", os.Getenv("FERRO_BIN"), "ferro binary for the API part (default $FERRO_BIN, else go build ./cmd/ferro)")
	simOn := flag.Bool("ipmisim", true, "run the ipmi_sim part")
	flag.Parse()
	fail := func(err error) {
		fmt.Fprintln(os.Stderr, "bench/bmc:", err)
		os.Exit(1)
	}
	if *simOn {
		if err := run(*n, *bmcs, *toolN); err != nil {
			fail(err)
		}
	}
	if *vbmcMachines > 0 {
		if err := benchVBMC(*vbmcMachines, *vbmcN, *toolN); err != nil {
			fail(err)
		}
	}
	if *apiNodes > 0 {
		if err := benchAPI(*ferroBin, *apiNodes, *apiRounds); err != nil {
			fail(err)
		}
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
