package bmc_test

import (
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/ferrometal/ferro/internal/testing/vbmctest"
	"github.com/ferrometal/ferro/internal/vbmc"
)

// scaleInterval is [ipmi]min_command_interval for the scale test: short,
// so the test is quick, and long enough to be told from back-to-back
// commands on loopback.
const scaleInterval = 200 * time.Millisecond

// TestScale_HundredBMCsPowerThroughTheAPI enrolls 100 fake machines of one
// ferro-vbmc, 50 as ipmi nodes (each BMC on its own UDP port) and 50 as
// redfish nodes, and powers them all on, then all off, in parallel through
// PUT /v1/nodes/{node}/states/power. ferro-vbmc's own state says every
// machine ended where the API said, and its request log says no two IPMI
// commands reached one BMC closer than [ipmi]min_command_interval.
func TestScale_HundredBMCsPowerThroughTheAPI(t *testing.T) {
	const half = 50
	machines := vbmctest.FakeMachines("ipmi", half)
	machines = append(machines, vbmctest.FakeMachines("rf", half)...)
	l := startLab(t, machines,
		"FERRO_IPMI_MIN_COMMAND_INTERVAL="+strconv.FormatFloat(scaleInterval.Seconds(), 'f', -1, 64),
		"FERRO_IPMI_COMMAND_RETRY_TIMEOUT=20",
		"FERRO_CONDUCTOR_WORKERS_POOL_SIZE=200",
	)
	names := map[string]bool{}
	for _, m := range machines {
		names[m.Name] = true
	}

	// Enroll and manage every node (manage reads each BMC's power state).
	start := time.Now()
	uuids := map[string]string{}
	for i, m := range machines {
		var n node
		if i < half {
			n = l.create(m.Name, "ipmi", l.ipmiInfo(m.Name, bmcPassword))
		} else {
			n = l.create(m.Name, "redfish", l.redfishInfo(m.Name, bmcPassword))
		}
		uuids[m.Name] = n.UUID
	}
	parallel(t, machines, func(m vbmc.MachineConfig) error {
		if code, b := l.provision(uuids[m.Name], "manage"); code != http.StatusAccepted {
			return fmt.Errorf("manage %s: HTTP %d: %s", m.Name, code, b)
		}
		return nil
	})
	l.waitNodes(names, "manage", 2*time.Minute, func(n node) bool {
		if deref(n.LastError) != "" {
			t.Fatalf("manage %s: %s", n.Name, deref(n.LastError))
		}
		return n.ProvisionState == "manageable" && n.TargetProvision == nil && n.Reservation == nil
	})
	t.Logf("100 nodes enrolled and managed in %v", time.Since(start).Round(time.Millisecond))

	for _, target := range []struct{ api, vbmc string }{{"power on", "On"}, {"power off", "Off"}} {
		start := time.Now()
		parallel(t, machines, func(m vbmc.MachineConfig) error {
			if code, b := l.power(uuids[m.Name], target.api); code != http.StatusAccepted {
				return fmt.Errorf("%s %s: HTTP %d: %s", target.api, m.Name, code, b)
			}
			return nil
		})
		// The conductor's answer: target_power_state cleared, power_state
		// what the BMC reported, the lock released.
		l.waitNodes(names, target.api, 2*time.Minute, func(n node) bool {
			if deref(n.LastError) != "" {
				t.Fatalf("%s %s: last_error %s", target.api, n.Name, deref(n.LastError))
			}
			return n.TargetPowerState == nil && n.Reservation == nil && deref(n.PowerState) == target.api
		})
		t.Logf("%s of 100 nodes through the API in %v", target.api, time.Since(start).Round(time.Millisecond))
		st := l.v.State(t)
		for _, m := range machines {
			if got := st[m.Name].Power; got != target.vbmc {
				t.Errorf("after %s through the API, ferro-vbmc has %s %s", target.api, m.Name, got)
			}
		}
	}

	// From ferro-vbmc's side: what every BMC received.
	st := l.v.State(t)
	minGap := time.Hour
	for i, m := range machines {
		reqs := st[m.Name].Requests
		if st[m.Name].Dropped > 0 {
			t.Fatalf("%s: request log dropped %d entries", m.Name, st[m.Name].Dropped)
		}
		var ipmiTimes []time.Time
		ops := map[string]int{}
		for _, r := range reqs {
			ops[r.Protocol+": "+r.Op]++
			if r.Protocol == "ipmi" {
				ipmiTimes = append(ipmiTimes, r.Time)
			}
		}
		if i < half {
			if ops["ipmi: chassis control on"] != 1 || ops["ipmi: chassis control off"] != 1 {
				t.Errorf("%s received %v, want one chassis control on and one off", m.Name, ops)
			}
			slices.SortFunc(ipmiTimes, func(a, b time.Time) int { return a.Compare(b) })
			for k := 1; k < len(ipmiTimes); k++ {
				gap := ipmiTimes[k].Sub(ipmiTimes[k-1])
				minGap = min(minGap, gap)
				if gap < scaleInterval {
					t.Errorf("%s: IPMI commands %d and %d arrived %v apart, want at least [ipmi]min_command_interval %v", m.Name, k-1, k, gap, scaleInterval)
				}
			}
			if len(ipmiTimes) < 4 {
				t.Errorf("%s: only %d IPMI commands recorded (%v)", m.Name, len(ipmiTimes), ops)
			}
		} else {
			reset := "redfish: POST /redfish/v1/Systems/" + m.Name + "/Actions/ComputerSystem.Reset"
			if ops[reset] != 2 || len(ipmiTimes) != 0 {
				t.Errorf("%s received %v, want two resets over Redfish and no IPMI", m.Name, ops)
			}
		}
	}
	t.Logf("smallest gap between two IPMI commands to one BMC: %v (interval %v)", minGap, scaleInterval)
	for name := range names {
		if n := l.get(uuids[name]); n.Reservation != nil || deref(n.LastError) != "" {
			t.Errorf("%s: reservation %v, last_error %q after the test", name, deref(n.Reservation), deref(n.LastError))
		}
	}
}

// parallel runs f for every machine at once and fails t with every error.
func parallel(t *testing.T, machines []vbmc.MachineConfig, f func(vbmc.MachineConfig) error) {
	t.Helper()
	var wg sync.WaitGroup
	errs := make(chan error, len(machines))
	for _, m := range machines {
		wg.Go(func() {
			if err := f(m); err != nil {
				errs <- err
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if t.Failed() {
		t.FailNow()
	}
}
