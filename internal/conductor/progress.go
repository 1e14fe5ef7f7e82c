package conductor

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"time"

	"github.com/google/uuid"

	"github.com/ferrometal/ferro/internal/baremetal"
	"github.com/ferrometal/ferro/internal/driver"
)

// HistoryStore is what a Progress needs: the node history.
type HistoryStore interface {
	AddHistory(ctx context.Context, e *baremetal.HistoryEvent) error
	ListHistory(ctx context.Context, nodeUUID string) ([]*baremetal.HistoryEvent, error)
}

// maxProgressNodes bounds the de-duplication memory of a Progress; past
// it, the memory starts over (a repeat may then be recorded once more).
const maxProgressNodes = 10000

// Progress records inspection phases in the node history
// (driver.ProgressRecorder). It writes the history directly, without the
// node's lock, so the netboot service and the inspector can record while a
// task holds the node; a phase repeated right after itself (a PXE ROM's
// DHCP retries, an agent's second report) is recorded once.
type Progress struct {
	store HistoryStore
	host  string
	log   *slog.Logger
	now   func() time.Time

	mu   sync.Mutex
	last map[string]string // node UUID → last phase recorded
}

// NewProgress returns a recorder writing as conductor host.
func NewProgress(store HistoryStore, host string, log *slog.Logger) *Progress {
	if log == nil {
		log = slog.Default()
	}
	return &Progress{store: store, host: host, log: log, now: time.Now, last: map[string]string{}}
}

// netbootPhases names the built-in netboot's event ids (internal/netboot)
// as the history shows them.
var netbootPhases = map[string]string{
	"dhcp_offer_sent":     driver.PhaseDHCPAnswered,
	"boot_script_fetched": driver.PhaseBootScript,
	"kernel_fetched":      driver.PhaseKernel,
	"initramfs_fetched":   driver.PhaseInitramfs,
}

// Record implements driver.ProgressRecorder (and the netboot service's
// Events).
func (p *Progress) Record(ctx context.Context, nodeUUID, phase, detail string) {
	if name, ok := netbootPhases[phase]; ok {
		phase = name
	}
	p.mu.Lock()
	if p.last[nodeUUID] == phase {
		p.mu.Unlock()
		return
	}
	if len(p.last) >= maxProgressNodes {
		clear(p.last)
	}
	p.last[nodeUUID] = phase
	p.mu.Unlock()
	event := phase
	if detail != "" {
		event += ": " + detail
	}
	severity := baremetal.SeverityInfo
	switch phase {
	case driver.PhaseFallback:
		severity = "WARNING"
	case driver.PhaseFailed:
		severity = baremetal.SeverityError
	}
	err := p.store.AddHistory(context.WithoutCancel(ctx), &baremetal.HistoryEvent{
		UUID: uuid.NewString(), NodeUUID: nodeUUID, Conductor: p.host, EventType: driver.ProgressEventType,
		Event: event, Severity: severity, CreatedAt: p.now().UTC(),
	})
	if err != nil {
		p.log.Warn("cannot record inspection progress", "node", nodeUUID, "phase", phase, "error", err)
	}
}

// lastPhase returns the node's last progress event since since, or nil.
func lastPhase(ctx context.Context, store HistoryStore, nodeUUID string, since time.Time) *baremetal.HistoryEvent {
	events, err := store.ListHistory(ctx, nodeUUID)
	if err != nil {
		return nil
	}
	for i := len(events) - 1; i >= 0; i-- {
		e := events[i]
		if e.CreatedAt.Before(since.Truncate(time.Second)) {
			break
		}
		if e.EventType == driver.ProgressEventType {
			return e
		}
	}
	return nil
}

// timeoutMessage is the last_error of an inspection that timed out in
// inspect wait: the timeout, its option and the last phase reached.
func timeoutMessage(ctx context.Context, store HistoryStore, n *baremetal.Node, limit time.Duration) string {
	msg := fmt.Sprintf("Inspection timed out after %d s ([conductor]inspect_wait_timeout) waiting for the report", int(limit.Seconds()))
	if n.InspectionStartedAt == nil {
		return msg
	}
	if e := lastPhase(ctx, store, n.UUID, *n.InspectionStartedAt); e != nil {
		phase, _, _ := strings.Cut(e.Event, ": ")
		msg += fmt.Sprintf("; last seen: %s at %s", phase, e.CreatedAt.UTC().Format(time.RFC3339))
	} else {
		msg += "; no progress was recorded since it started"
	}
	return msg
}
