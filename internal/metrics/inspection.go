package metrics

import (
	"context"
	"strings"
	"sync"
	"time"

	"github.com/ferrometal/ferro/internal/baremetal"
	"github.com/ferrometal/ferro/internal/driver"
	"github.com/ferrometal/ferro/internal/hardware"
	"github.com/ferrometal/ferro/internal/states"
)

// Conductor returns the conductor's Observer: inspections started, finished
// and failed, their durations, the hardware changes re-inspections found,
// and the periodic tasks' runs.
func (m *Metrics) Conductor() *ConductorObserver { return &ConductorObserver{m: m} }

// ConductorObserver implements conductor.Observer.
type ConductorObserver struct{ m *Metrics }

// ProvisionStateChanged counts an inspection's start and end.
func (o *ConductorObserver) ProvisionStateChanged(n *baremetal.Node, from string) {
	m := o.m
	iface, hw := labelValue(n.Interface("inspect")), labelValue(n.Driver)
	inspecting := from == states.Inspecting || from == states.InspectWait
	switch {
	case n.ProvisionState == states.Inspecting && !inspecting:
		m.inspectionsStarted.WithLabelValues(iface, hw).Inc()
		m.phases.start(n.UUID)
	case inspecting && n.ProvisionState == states.Manageable:
		m.inspectionsFinished.WithLabelValues(iface, hw).Inc()
		m.inspectionEnded(n, iface, hw, "finished")
	case inspecting && n.ProvisionState == states.InspectFailed:
		m.inspectionsFailed.WithLabelValues(iface, hw).Inc()
		m.inspectionEnded(n, iface, hw, "failed")
	}
}

func (m *Metrics) inspectionEnded(n *baremetal.Node, iface, hw, result string) {
	m.phases.end(n.UUID)
	if n.InspectionStartedAt != nil {
		m.inspectionDuration.WithLabelValues(iface, hw, result).Observe(time.Since(*n.InspectionStartedAt).Seconds())
	}
}

// HardwareChanged counts each change by component and kind.
func (o *ConductorObserver) HardwareChanged(_ *baremetal.Node, changes []hardware.Change) {
	for _, c := range changes {
		o.m.hardwareChanges.WithLabelValues(c.Component, c.Change).Inc()
	}
}

// PeriodicTaskRan times a run of a periodic task.
func (o *ConductorObserver) PeriodicTaskRan(task string, took time.Duration) {
	o.m.periodicDuration.WithLabelValues(task).Observe(took.Seconds())
}

// PeriodicTaskSkipped counts a run skipped because the last one was going.
func (o *ConductorObserver) PeriodicTaskSkipped(task string) {
	o.m.periodicSkipped.WithLabelValues(task).Inc()
}

// Progress wraps a recorder of inspection phases (the node history) to time
// each phase: the time from the phase before it, or from the start of the
// inspection for the first. Phases are observed where ferro already records
// them, so every part that records one is timed without a call of its own.
func (m *Metrics) Progress(next driver.ProgressRecorder) driver.ProgressRecorder {
	return progress{m: m, next: next}
}

type progress struct {
	m    *Metrics
	next driver.ProgressRecorder
}

func (p progress) Record(ctx context.Context, nodeUUID, phase, detail string) {
	p.next.Record(ctx, nodeUUID, phase, detail)
	name := phaseLabel(phase)
	if d, ok := p.m.phases.reached(nodeUUID, name); ok {
		p.m.phaseDuration.WithLabelValues(name).Observe(d.Seconds())
	}
}

// phaseNames are the phases' label values: driver's phases and the
// netboot's event ids, in snake case.
var phaseNames = map[string]string{
	driver.PhasePoweredOn:      "powered_on",
	driver.PhaseDHCPAnswered:   "dhcp_answered",
	"dhcp_offer_sent":          "dhcp_answered",
	driver.PhaseBootScript:     "boot_script_fetched",
	"boot_script_fetched":      "boot_script_fetched",
	driver.PhaseKernel:         "kernel_fetched",
	"kernel_fetched":           "kernel_fetched",
	driver.PhaseInitramfs:      "initramfs_fetched",
	"initramfs_fetched":        "initramfs_fetched",
	driver.PhaseReport:         "report_received",
	driver.PhaseProcessed:      "processed",
	driver.PhaseNetworkRemoved: "network_removed",
	driver.PhasePoweredOff:     "powered_off",
	driver.PhaseFallback:       "fell_back",
}

func phaseLabel(phase string) string {
	if n, ok := phaseNames[phase]; ok {
		return n
	}
	return "other"
}

// labelValue bounds a value taken from a node (an interface or hardware
// type name, which the registry bounds) to a sane label.
func labelValue(s string) string {
	if s == "" {
		return "none"
	}
	if len(s) > 64 || strings.ContainsAny(s, "\n\r") {
		return "other"
	}
	return s
}

// maxTimedNodes bounds phaseClock's memory; past it the clock starts over
// and the phases of inspections then running go untimed once.
const maxTimedNodes = 10000

// phaseClock remembers, per node being inspected, when its last phase (or
// its start) was reached.
type phaseClock struct {
	mu   sync.Mutex
	now  func() time.Time
	last map[string]phaseMark
}

type phaseMark struct {
	phase string
	at    time.Time
}

func newPhaseClock() *phaseClock {
	return &phaseClock{now: time.Now, last: map[string]phaseMark{}}
}

func (c *phaseClock) start(node string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.last) >= maxTimedNodes {
		clear(c.last)
	}
	c.last[node] = phaseMark{at: c.now()}
}

// reached records the phase and returns how long it took, false for a
// node whose start was not seen (another process started it) or a phase
// repeated right after itself.
func (c *phaseClock) reached(node, phase string) (time.Duration, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	prev, ok := c.last[node]
	if !ok || prev.phase == phase {
		return 0, false
	}
	now := c.now()
	c.last[node] = phaseMark{phase: phase, at: now}
	return now.Sub(prev.at), true
}

func (c *phaseClock) end(node string) {
	c.mu.Lock()
	delete(c.last, node)
	c.mu.Unlock()
}
