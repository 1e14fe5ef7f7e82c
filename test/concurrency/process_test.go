package concurrency_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/ferrometal/ferro/internal/testing/ferrotest"
)

// TestProcess_ParallelProvisionRequests races provision requests against
// a real `ferro serve`. Its fake drivers finish in microseconds, so the
// winner may release the node before every other request has arrived and a
// later one may then win too: only what holds whatever the timing is checked.
//
//   - manage is accepted from enroll only, so exactly one request wins;
//     the others find the node locked (409 NodeLocked) or already
//     manageable (400 InvalidStateRequested).
//   - inspect is accepted again as soon as the node is back in manageable,
//     so at least one request wins and every other answer is 409 NodeLocked.
//
// In both cases the node ends manageable, with no target state, no
// last_error and no reservation.
func TestProcess_ParallelProvisionRequests(t *testing.T) {
	srv := ferrotest.Start(t, ferrotest.WithEnv("FERRO_DEFAULT_HOST="+host))
	c := newAPI(t, srv.URL)
	id := c.createNode(t).UUID

	answers := c.race(t, id, "manage")
	var accepted, locked, invalid int
	for _, a := range answers {
		switch a.status {
		case http.StatusAccepted:
			accepted++
		case http.StatusConflict:
			locked++
			checkNodeLocked(t, a, id, host)
		case http.StatusBadRequest:
			invalid++
			if _, msg := fault(t, a.body); !strings.Contains(msg, `while it is in state "manageable"`) {
				t.Errorf("400 for manage: %q, want InvalidStateRequested in manageable", msg)
			}
		default:
			t.Errorf("manage: %d %s", a.status, a.body)
		}
	}
	t.Logf("manage: %d accepted, %d NodeLocked, %d InvalidStateRequested", accepted, locked, invalid)
	if accepted != 1 {
		t.Errorf("manage: %d answers were 202, want exactly 1", accepted)
	}
	checkStable(t, c.waitStable(t, id, "manageable"))

	const rounds = 3
	for range rounds {
		accepted, locked = 0, 0
		for _, a := range c.race(t, id, "inspect") {
			switch a.status {
			case http.StatusAccepted:
				accepted++
			default:
				locked++
				checkNodeLocked(t, a, id, host)
			}
		}
		t.Logf("inspect: %d accepted, %d NodeLocked", accepted, locked)
		if accepted < 1 {
			t.Errorf("inspect: no answer was 202")
		}
		n := c.waitStable(t, id, "manageable")
		checkStable(t, n)
		if n.InspectionFinishedAt == nil {
			t.Error("inspection_finished_at not set")
		}
	}
}

// checkStable wants a node at rest: no target state and no last_error (the
// caller waited for the reservation to go).
func checkStable(t *testing.T, n node) {
	t.Helper()
	if n.TargetProvisionState != nil || n.LastError != nil || n.Reservation != nil {
		t.Errorf("node %s: target_provision_state %v, last_error %v, reservation %v; want all null",
			n.UUID, deref(n.TargetProvisionState), deref(n.LastError), deref(n.Reservation))
	}
}
