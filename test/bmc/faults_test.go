package bmc_test

import (
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ferrometal/ferro/internal/testing/ferrotest"
	"github.com/ferrometal/ferro/internal/testing/vbmctest"
	"github.com/ferrometal/ferro/internal/vbmc"
)

// faultEnv keeps retries and timeouts short: the faults are found in
// seconds, not Ironic's default minutes.
var faultEnv = []string{
	"FERRO_IPMI_MIN_COMMAND_INTERVAL=0",
	"FERRO_IPMI_COMMAND_RETRY_TIMEOUT=3",
	"FERRO_REDFISH_CONNECTION_ATTEMPTS=3",
	"FERRO_REDFISH_CONNECTION_RETRY_INTERVAL=1",
	"FERRO_CONDUCTOR_POWER_STATE_CHANGE_TIMEOUT=3",
}

// TestFaults_EndToEnd enrolls nodes whose BMCs misbehave and checks, for
// each, the error a client sees: last_error for the background work
// (verifying the credentials on manage, a power change), an API error for
// what is validated synchronously. Every error names the BMC and the
// step; no node keeps a lock or a target state; no password is logged.
func TestFaults_EndToEnd(t *testing.T) {
	machines := vbmctest.FakeMachines("f", 4)
	machines[1].Faults = &vbmc.Faults{Redfish500Count: 2}    // recovers within the attempts
	machines[2].Faults = &vbmc.Faults{Redfish500Count: 1000} // never recovers
	machines[3].Faults = &vbmc.Faults{NeverConfirmPower: true}
	l := startLab(t, machines, faultEnv...)
	const wrong = "Wr0ng-bmc-pass"
	l.secrets = append(l.secrets, wrong)

	// Nothing listens there: a TCP port just freed, and UDP on it too.
	deadPort := ferrotest.FreePort(t)
	deadURL := "http://127.0.0.1:" + strconv.Itoa(deadPort)
	ipmiDead := l.ipmiInfo("f0", bmcPassword)
	ipmiDead["ipmi_port"] = deadPort
	rfDead := l.redfishInfo("f0", bmcPassword)
	rfDead["redfish_address"] = deadURL
	rfNoSystem := l.redfishInfo("f0", bmcPassword)
	rfNoSystem["redfish_system_id"] = "/redfish/v1/Systems/no-such-system"
	ipmiAddr := func(m string) string { return l.v.IPMI[m].String() }

	// Manage verifies the credentials in the background: a fault sends the
	// node back to enroll with a last_error naming the BMC and the step.
	manageFails := []struct {
		name, driver string
		info         map[string]any
		want         []string
	}{
		{"ipmi-unreachable", "ipmi", ipmiDead, []string{"127.0.0.1:" + strconv.Itoa(deadPort), "open session"}},
		{"ipmi-wrong-password", "ipmi", l.ipmiInfo("f0", wrong), []string{ipmiAddr("f0"), "open session"}},
		{"redfish-unreachable", "redfish", rfDead, []string{deadURL}},
		{"redfish-wrong-password", "redfish", l.redfishInfo("f0", wrong), []string{l.v.RedfishURL, "401"}},
		{"redfish-no-such-system", "redfish", rfNoSystem, []string{l.v.RedfishURL, "no-such-system"}},
		{"redfish-500-forever", "redfish", l.redfishInfo("f2", bmcPassword), []string{l.v.RedfishURL, "500"}},
	}
	uuids := map[string]string{}
	for _, c := range manageFails {
		uuids[c.name] = l.create(c.name, c.driver, c.info).UUID
		if code, b := l.provision(uuids[c.name], "manage"); code != http.StatusAccepted {
			t.Fatalf("manage %s: HTTP %d %s", c.name, code, b)
		}
	}
	for _, c := range manageFails {
		t.Run("manage/"+c.name, func(t *testing.T) {
			n := l.waitStable(uuids[c.name], time.Minute)
			le := deref(n.LastError)
			t.Logf("last_error: %s", le)
			if n.ProvisionState != "enroll" || le == "" {
				t.Fatalf("provision_state %s, last_error %q: want enroll and an error", n.ProvisionState, le)
			}
			if !containsAll(le, c.want...) {
				t.Errorf("last_error %q does not name all of %q", le, c.want)
			}
			if strings.Contains(le, bmcPassword) || strings.Contains(le, wrong) {
				t.Errorf("last_error %q contains a password", le)
			}
		})
	}
	if got := l.v.State(t)["f2"].Requests; len(got) == 0 || got[0].Status != http.StatusInternalServerError {
		t.Errorf("ferro-vbmc's f2 did not answer 500: %+v", got)
	}

	t.Run("redfish-500-then-recovers", func(t *testing.T) {
		id := l.create("r500", "redfish", l.redfishInfo("f1", bmcPassword)).UUID
		if code, b := l.provision(id, "manage"); code != http.StatusAccepted {
			t.Fatalf("manage: HTTP %d %s", code, b)
		}
		n := l.waitStable(id, time.Minute)
		if n.ProvisionState != "manageable" || deref(n.LastError) != "" {
			t.Fatalf("provision_state %s, last_error %q: want manageable after the BMC recovered", n.ProvisionState, deref(n.LastError))
		}
		if code, b := l.power(id, "power on"); code != http.StatusAccepted {
			t.Fatalf("power on: HTTP %d %s", code, b)
		}
		if n := l.waitStable(id, time.Minute); deref(n.PowerState) != "power on" || deref(n.LastError) != "" {
			t.Errorf("power_state %s, last_error %q: want power on", deref(n.PowerState), deref(n.LastError))
		}
		st := l.v.State(t)["f1"]
		var fives int
		for _, r := range st.Requests {
			if r.Status == http.StatusInternalServerError {
				fives++
			}
		}
		if fives != 2 || st.Power != "On" {
			t.Errorf("ferro-vbmc's f1: %d answers 500 and power %s, want 2 and On", fives, st.Power)
		}
	})

	// A BMC that takes the command and never shows the new state: the
	// power change times out naming the BMC and the step; the node keeps
	// the power state the BMC reports, with no target and no lock.
	for _, c := range []struct {
		name, driver string
		info         map[string]any
		bmc          string
	}{
		{"ipmi-never-confirms", "ipmi", l.ipmiInfo("f3", bmcPassword), ipmiAddr("f3")},
		{"redfish-never-confirms", "redfish", l.redfishInfo("f3", bmcPassword), l.v.RedfishURL},
	} {
		t.Run(c.name, func(t *testing.T) {
			id := l.create(c.name, c.driver, c.info).UUID
			if code, b := l.provision(id, "manage"); code != http.StatusAccepted {
				t.Fatalf("manage: HTTP %d %s", code, b)
			}
			if n := l.waitStable(id, time.Minute); n.ProvisionState != "manageable" {
				t.Fatalf("manage: %s, %q", n.ProvisionState, deref(n.LastError))
			}
			if code, b := l.power(id, "power on"); code != http.StatusAccepted {
				t.Fatalf("power on: HTTP %d %s", code, b)
			}
			n := l.waitStable(id, time.Minute)
			le := deref(n.LastError)
			t.Logf("last_error: %s", le)
			if !containsAll(le, c.bmc, "power on") {
				t.Errorf("last_error %q: want the BMC %s and the step (power on) named", le, c.bmc)
			}
			if deref(n.PowerState) != "power off" {
				t.Errorf("power_state = %s, want power off (what the BMC reports)", deref(n.PowerState))
			}
		})
	}

	// What the API validates at once: a bad driver_info value is an API
	// error naming the key, and nothing changes.
	t.Run("sync-validation", func(t *testing.T) {
		bad := l.ipmiInfo("f0", bmcPassword)
		bad["ipmi_port"] = "not-a-port"
		id := l.create("ipmi-bad-port", "ipmi", bad).UUID
		code, b := l.power(id, "power on")
		msg := errorMessage(b)
		t.Logf("HTTP %d: %s", code, msg)
		if code != http.StatusBadRequest || !strings.Contains(msg, "ipmi_port") {
			t.Errorf("power on with ipmi_port %q: HTTP %d %q, want 400 naming ipmi_port", bad["ipmi_port"], code, msg)
		}
		rf := l.redfishInfo("f0", bmcPassword)
		rf["redfish_address"] = "ftp://bmc.example"
		rid := l.create("redfish-bad-address", "redfish", rf).UUID
		code, b = l.power(rid, "power on")
		msg = errorMessage(b)
		t.Logf("HTTP %d: %s", code, msg)
		if code != http.StatusBadRequest || !strings.Contains(msg, "redfish_address") {
			t.Errorf("power on with redfish_address ftp://: HTTP %d %q, want 400 naming redfish_address", code, msg)
		}
		for _, ident := range []string{id, rid} {
			if n := l.get(ident); n.TargetPowerState != nil || n.Reservation != nil || deref(n.LastError) != "" {
				t.Errorf("after a refused request: %+v, want nothing changed", n)
			}
		}
	})

	// Nothing was left locked or half-done anywhere.
	nodes, err := list(l.srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range nodes {
		if n.Reservation != nil || n.TargetPowerState != nil || n.TargetProvision != nil {
			t.Errorf("node %s left with reservation %v, target power %v, target provision %v", n.Name, deref(n.Reservation), deref(n.TargetPowerState), deref(n.TargetProvision))
		}
	}
}
