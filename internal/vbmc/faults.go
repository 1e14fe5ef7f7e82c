package vbmc

import (
	"context"
	"encoding/json"
	"net/http"
	"sync"
	"time"
)

// Faults make a machine's BMC misbehave the way real ones do, so that
// clients' error paths can be exercised against a real process. They are
// off by default.
type Faults struct {
	// Redfish500Count: the first N Redfish requests for this machine's
	// System and Manager resources answer 500 Internal Server Error; later
	// ones are served normally (a BMC that recovers).
	Redfish500Count int `json:"redfish_500_count,omitempty"`
	// NeverConfirmPower: power commands (IPMI Chassis Control, Redfish
	// ComputerSystem.Reset) are accepted but the power state never
	// changes.
	NeverConfirmPower bool `json:"never_confirm_power,omitempty"`
	// LatencyMS: every Redfish request for this machine's System and
	// Manager resources, and every IPMI message, is answered this many
	// milliseconds late (a slow BMC; bench/scale's simulated fleet).
	LatencyMS int `json:"latency_ms,omitempty"`
}

// maxLatencyMS bounds Faults.LatencyMS (a minute).
const maxLatencyMS = 60000

// latency is the machine's Faults.LatencyMS.
func (m *Machine) latency() time.Duration {
	if m.Config.Faults == nil {
		return 0
	}
	return time.Duration(m.Config.Faults.LatencyMS) * time.Millisecond
}

// wait sleeps the machine's latency, or until ctx ends.
func (m *Machine) wait(ctx context.Context) {
	if d := m.latency(); d > 0 {
		t := time.NewTimer(d)
		defer t.Stop()
		select {
		case <-t.C:
		case <-ctx.Done():
		}
	}
}

// Request is one BMC command a machine received, as recorded when the
// configuration's request_log is on.
type Request struct {
	Time time.Time `json:"time"`
	// Protocol is "ipmi" or "redfish".
	Protocol string `json:"protocol"`
	// Op is the IPMI command ("get chassis status", "chassis control on",
	// "set boot flags"…) or the Redfish method and path.
	Op string `json:"op"`
	// Status is the Redfish answer's HTTP status (0 for IPMI).
	Status int `json:"status,omitempty"`
}

// maxRequestLog bounds the requests kept per machine; older ones are
// dropped (and counted).
const maxRequestLog = 4096

// requestLog is a machine's bounded record of the commands it received.
type requestLog struct {
	mu      sync.Mutex
	on      bool
	entries []Request
	dropped int
}

func (l *requestLog) add(r Request) {
	if !l.on {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(l.entries) == maxRequestLog {
		copy(l.entries, l.entries[1:])
		l.entries = l.entries[:maxRequestLog-1]
		l.dropped++
	}
	l.entries = append(l.entries, r)
}

func (l *requestLog) snapshot() ([]Request, int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]Request(nil), l.entries...), l.dropped
}

// Requests returns the commands the machine received (oldest first) and
// how many older ones were dropped. Empty unless request_log is on.
func (m *Machine) Requests() ([]Request, int) { return m.reqs.snapshot() }

func (m *Machine) record(protocol, op string, status int) {
	m.reqs.add(Request{Time: time.Now(), Protocol: protocol, Op: op, Status: status})
}

// inject500 reports whether this Redfish request must fail with a 500
// (and uses one of the failures the faults allow).
func (m *Machine) inject500() bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.redfish500Left > 0 {
		m.redfish500Left--
		return true
	}
	return false
}

// MachineState is what GET /ferro-vbmc/v1/machines reports of a machine.
type MachineState struct {
	Power    string       `json:"power"`
	Boot     BootOverride `json:"boot"`
	Boots    int          `json:"boots"`
	Media    string       `json:"virtual_media,omitempty"`
	Requests []Request    `json:"requests,omitempty"`
	Dropped  int          `json:"requests_dropped,omitempty"`
}

// getMachines serves ferro-vbmc's own view of every machine, with the
// request log when it is on: tests read from it what the BMCs were told.
func (s *Server) getMachines(w http.ResponseWriter, r *http.Request) {
	out := make(map[string]MachineState, len(s.order))
	for _, m := range s.order {
		on, err := m.PowerState(r.Context())
		if err != nil {
			redfishError(w, http.StatusInternalServerError, "InternalError", "%v", err)
			return
		}
		st := MachineState{Power: "Off", Boot: m.Boot(), Boots: m.Boots(), Media: m.VirtualMedia().Image}
		if on {
			st.Power = "On"
		}
		st.Requests, st.Dropped = m.Requests()
		out[m.Name()] = st
	}
	data, err := json.Marshal(map[string]any{"machines": out})
	if err != nil {
		redfishError(w, http.StatusInternalServerError, "InternalError", "%v", err)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.Write(data)
}
