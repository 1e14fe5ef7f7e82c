// Command vbmc measures ferro-vbmc's virtual BMCs under parallel power
// operations: -machines fake machines, each powered on and off -rounds
// times by its own client, all at once, through Redfish (HTTP basic auth,
// keep-alive) and through IPMI (go-ipmi's lanplus client, one session per
// machine, cipher suite 3). It prints operations per second and the p50/p99
// latency of one operation, and, when ipmitool is installed, ipmitool's own
// time per command (a whole session per call) on this machine. The server
// runs in this process (internal/vbmc, as ferro-vbmc runs it). It asserts
// nothing about time.
//
//	go run ./bench/vbmc [-machines 100] [-rounds 20]
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/bougou/go-ipmi/pkg/client"
	"github.com/bougou/go-ipmi/pkg/command/chassis"

	"github.com/ferrometal/ferro/internal/vbmc"
)

func main() {
	machines := flag.Int("machines", 100, "fake machines, one client each")
	rounds := flag.Int("rounds", 20, "power on+off rounds per machine and protocol")
	ipmitoolRuns := flag.Int("ipmitool", 20, "sequential `ipmitool power status` runs timed (0: skip)")
	flag.Parse()
	if err := run(*machines, *rounds, *ipmitoolRuns); err != nil {
		fmt.Fprintln(os.Stderr, "bench/vbmc:", err)
		os.Exit(1)
	}
}

func run(n, rounds, ipmitoolRuns int) error {
	cfg := vbmc.Config{
		Username: "admin", Password: "bench-pass",
		Redfish: vbmc.RedfishConfig{Listen: "127.0.0.1:0"},
	}
	for i := range n {
		cfg.Machines = append(cfg.Machines, vbmc.MachineConfig{
			Name: "b" + strconv.Itoa(i), Backend: vbmc.BackendFake, IPMIListen: "127.0.0.1:0",
			CPUs: 2, MemoryMB: 2048, MACs: []string{fmt.Sprintf("52:54:00:be:%02x:%02x", i>>8, i&0xff)},
		})
	}
	data := mustJSON(cfg)
	cfg, err := vbmc.ParseConfig(data)
	if err != nil {
		return err
	}
	srv, err := vbmc.New(cfg, vbmc.Options{Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		return err
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	readyc := make(chan vbmc.Ready, 1)
	done := make(chan error, 1)
	go func() { done <- srv.Run(ctx, func(r vbmc.Ready) { readyc <- r }) }()
	var ready vbmc.Ready
	select {
	case ready = <-readyc:
	case err := <-done:
		return err
	}
	names := make([]string, n)
	for i := range names {
		names[i] = cfg.Machines[i].Name
	}
	fmt.Printf("ferro-vbmc bench: %d fake machines, %d on+off rounds each, all machines at once\n\n", n, rounds)
	fmt.Printf("%-28s %10s %10s %10s %10s\n", "", "ops", "ops/s", "p50", "p99")

	httpc := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: n}}
	rf, err := parallel(names, func(name string) (func(on bool) error, func(), error) {
		return func(on bool) error {
			rt := "ForceOff"
			if on {
				rt = "On"
			}
			req, _ := http.NewRequest("POST", ready.RedfishURL+"/redfish/v1/Systems/"+name+"/Actions/ComputerSystem.Reset", strings.NewReader(`{"ResetType":"`+rt+`"}`))
			req.SetBasicAuth("admin", "bench-pass")
			resp, err := httpc.Do(req)
			if err != nil {
				return err
			}
			resp.Body.Close()
			if resp.StatusCode != http.StatusNoContent {
				return fmt.Errorf("%s %s: HTTP %d", name, rt, resp.StatusCode)
			}
			return nil
		}, func() {}, nil
	}, rounds)
	if err != nil {
		return fmt.Errorf("redfish: %w", err)
	}
	rf.print("Redfish ComputerSystem.Reset")

	ip, err := parallel(names, func(name string) (func(on bool) error, func(), error) {
		host, port, _ := net.SplitHostPort(ready.IPMI[name])
		p, _ := strconv.Atoi(port)
		c, err := client.NewClient(host, p, "admin", "bench-pass")
		if err != nil {
			return nil, nil, err
		}
		c.WithInterface(client.InterfaceLanplus)
		if err := c.Connect(ctx); err != nil {
			return nil, nil, fmt.Errorf("%s: connect: %w", name, err)
		}
		return func(on bool) error {
			ctl := chassis.ChassisControlPowerDown
			if on {
				ctl = chassis.ChassisControlPowerUp
			}
			_, err := c.ChassisControl(ctx, ctl)
			return err
		}, func() { c.Close(ctx) }, nil
	}, rounds)
	if err != nil {
		return fmt.Errorf("ipmi: %w", err)
	}
	ip.print("IPMI chassis control")

	if bin, err := exec.LookPath("ipmitool"); err == nil && ipmitoolRuns > 0 {
		host, port, _ := net.SplitHostPort(ready.IPMI[names[0]])
		var lat []time.Duration
		for range ipmitoolRuns {
			start := time.Now()
			out, err := exec.Command(bin, "-I", "lanplus", "-C", "3", "-H", host, "-p", port, "-U", "admin", "-P", "bench-pass", "power", "status").CombinedOutput()
			if err != nil {
				return fmt.Errorf("ipmitool: %v: %s", err, out)
			}
			lat = append(lat, time.Since(start))
		}
		r := result{ops: len(lat), lat: lat}
		for _, l := range lat {
			r.wall += l
		}
		r.print("ipmitool power status (seq)")
	}
	cancel()
	return <-done
}

type result struct {
	ops  int
	wall time.Duration
	lat  []time.Duration
}

func (r result) print(name string) {
	slices.Sort(r.lat)
	pct := func(p float64) time.Duration { return r.lat[min(len(r.lat)-1, int(p*float64(len(r.lat))))] }
	fmt.Printf("%-28s %10d %10.0f %10s %10s\n", name, r.ops, float64(r.ops)/r.wall.Seconds(),
		pct(0.50).Round(10*time.Microsecond), pct(0.99).Round(10*time.Microsecond))
}

// parallel runs, for every machine at once, rounds of on then off with the
// client open builds, and collects every operation's latency.
func parallel(names []string, open func(name string) (func(on bool) error, func(), error), rounds int) (result, error) {
	type client struct {
		op    func(bool) error
		close func()
	}
	clients := make([]client, len(names))
	for i, name := range names {
		op, closeFn, err := open(name)
		if err != nil {
			for _, c := range clients[:i] {
				c.close()
			}
			return result{}, err
		}
		clients[i] = client{op, closeFn}
	}
	defer func() {
		for _, c := range clients {
			c.close()
		}
	}()
	var (
		mu   sync.Mutex
		all  []time.Duration
		errs []error
		wg   sync.WaitGroup
	)
	start := time.Now()
	for _, c := range clients {
		wg.Go(func() {
			lat := make([]time.Duration, 0, 2*rounds)
			for r := range 2 * rounds {
				t0 := time.Now()
				if err := c.op(r%2 == 0); err != nil {
					mu.Lock()
					errs = append(errs, err)
					mu.Unlock()
					return
				}
				lat = append(lat, time.Since(t0))
			}
			mu.Lock()
			all = append(all, lat...)
			mu.Unlock()
		})
	}
	wg.Wait()
	wall := time.Since(start)
	if len(errs) > 0 {
		return result{}, fmt.Errorf("%d clients failed, first: %w", len(errs), errs[0])
	}
	return result{ops: len(all), wall: wall, lat: all}, nil
}

func mustJSON(v any) []byte {
	data, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return data
}
