package probe

import (
	"context"
	"errors"
	"fmt"
	"net"
	"path/filepath"
	"strconv"
	"sync"
	"time"

	"github.com/ferrometal/ferro/internal/vbmc"
)

// fleet is a BMC for every node, in the probe's own process: fake
// machines of internal/vbmc (ferro-vbmc's library) speaking real IPMI
// (RMCP+, one UDP port per machine) and real Redfish, each answering after
// the configured latency (vbmc's faults.latency_ms). Even nodes are ipmi
// nodes, odd ones redfish nodes. Every Redfish BMC has a listener of its
// own, as a real one has its own address, so that ferro keeps one session
// per BMC as in production; the IPMI endpoints share servers of up to
// ipmiPerServer machines (each still its own UDP port).
type fleet struct {
	ipmi    map[int]*net.UDPAddr // node index → its BMC's IPMI endpoint
	redfish map[int]string       // node index → its BMC's Redfish base URL
	cancel  context.CancelFunc
	wg      sync.WaitGroup
	mu      sync.Mutex
	errs    []error
}

const (
	bmcUser, bmcPassword = "admin", "scale-bmc-pass"
	// ipmiPerServer stays under vbmc's 4,096 machines per server.
	ipmiPerServer = 4000
)

// bmcName is node i's machine.
func bmcName(i int) string { return fmt.Sprintf("bmc-%05d", i) }

// isIPMI says which protocol node i's BMC speaks.
func isIPMI(i int) bool { return i%2 == 0 }

// startFleet starts the BMCs of n nodes and returns once every listener is
// bound (within a minute).
func startFleet(ctx context.Context, dir string, n int, latency time.Duration) (*fleet, error) {
	ctx, cancel := context.WithCancel(ctx)
	f := &fleet{ipmi: map[int]*net.UDPAddr{}, redfish: map[int]string{}, cancel: cancel}
	machine := func(i int) vbmc.MachineConfig {
		m := vbmc.MachineConfig{
			Name: bmcName(i), Backend: vbmc.BackendFake, CPUs: 4, MemoryMB: 8192,
			MACs: []string{mac(i, 0), mac(i, 1)}, DisksGB: []int{100},
			Manufacturer: "ferro", Product: "ferro-vbmc", Serial: bmcName(i),
		}
		if latency > 0 {
			m.Faults = &vbmc.Faults{LatencyMS: int(latency / time.Millisecond)}
		}
		if isIPMI(i) {
			m.IPMIListen = "127.0.0.1:0"
		}
		return m
	}
	// Each server: its machines (node indexes) and a config.
	var servers [][]int
	var chunk []int
	for i := 0; i < n; i += 2 {
		if chunk = append(chunk, i); len(chunk) == ipmiPerServer {
			servers, chunk = append(servers, chunk), nil
		}
	}
	if len(chunk) > 0 {
		servers = append(servers, chunk)
	}
	for i := 1; i < n; i += 2 {
		servers = append(servers, []int{i})
	}
	ready := make(chan error, len(servers))
	for s, idx := range servers {
		cfg := vbmc.Config{
			Username: bmcUser, Password: bmcPassword, MaxImageMB: 64,
			Redfish:  vbmc.RedfishConfig{Listen: "127.0.0.1:0"},
			StateDir: filepath.Join(dir, "bmcs", strconv.Itoa(s)),
		}
		for _, i := range idx {
			cfg.Machines = append(cfg.Machines, machine(i))
		}
		if err := cfg.Validate(); err != nil {
			cancel()
			return nil, fmt.Errorf("simulated BMCs: %w", err)
		}
		srv, err := vbmc.New(cfg, vbmc.Options{})
		if err != nil {
			cancel()
			f.wait()
			return nil, fmt.Errorf("simulated BMCs: %w", err)
		}
		f.wg.Go(func() {
			var once sync.Once
			err := srv.Run(ctx, func(rd vbmc.Ready) {
				f.mu.Lock()
				for _, i := range idx {
					if isIPMI(i) {
						f.ipmi[i], _ = net.ResolveUDPAddr("udp", rd.IPMI[bmcName(i)])
					} else {
						f.redfish[i] = rd.RedfishURL
					}
				}
				f.mu.Unlock()
				once.Do(func() { ready <- nil })
			})
			if err != nil && ctx.Err() == nil {
				f.mu.Lock()
				f.errs = append(f.errs, err)
				f.mu.Unlock()
			}
			once.Do(func() { ready <- fmt.Errorf("simulated BMC server %d: %w", s, err) })
		})
	}
	timeout := time.After(time.Minute)
	for range servers {
		select {
		case err := <-ready:
			if err != nil {
				f.stop()
				return nil, err
			}
		case <-timeout:
			f.stop()
			return nil, errors.New("simulated BMCs: not all listening after a minute")
		}
	}
	return f, nil
}

// node returns node i's driver and BMC driver_info.
func (f *fleet) node(i int) (string, map[string]any) {
	if isIPMI(i) {
		a := f.ipmi[i]
		return "ipmi", map[string]any{"ipmi_address": a.IP.String(), "ipmi_port": a.Port,
			"ipmi_username": bmcUser, "ipmi_password": bmcPassword, "ipmi_cipher_suite": "3"}
	}
	return "redfish", map[string]any{"redfish_address": f.redfish[i], "redfish_system_id": "/redfish/v1/Systems/" + bmcName(i),
		"redfish_username": bmcUser, "redfish_password": bmcPassword}
}

func (f *fleet) wait() { f.wg.Wait() }

// stop stops every BMC and returns what failed while they served.
func (f *fleet) stop() error {
	f.cancel()
	f.wg.Wait()
	f.mu.Lock()
	defer f.mu.Unlock()
	return errors.Join(f.errs...)
}
