package inspectorapi_test

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/ferrometal/ferro/internal/testing/ferrotest"
)

// TestAbortWithinIntrospectionDelay_NodeIsNeverLeftOn is issue 18's abort
// race against a real ferro serve: two managed-boot introspections started
// together (the second one must wait [inspector]introspection_delay for
// its turn) and both aborted at once. Each abort answers 202 and ends its
// introspection "Canceled by operator"; the first node, booted at once,
// is powered off again; the second is never touched. Before the fix, the
// start slept the delay in every introspection and then set PXE and
// rebooted without looking at the state, so both nodes were powered on
// after the abort and stayed on.
func TestAbortWithinIntrospectionDelay_NodeIsNeverLeftOn(t *testing.T) {
	srv := ferrotest.Start(t, ferrotest.WithEnv("FERRO_INSPECTOR_INTROSPECTION_DELAY=30"))
	ir := ironic{t: t, url: srv.URL}
	first := ir.node("first", "52:54:00:18:00:01")
	second := ir.node("second", "52:54:00:18:00:02")
	insp := srv.InspectorURL

	for _, id := range []string{first, second} {
		if code, body := inspectorCall(t, insp, http.MethodPost, "/v1/introspection/"+id, nil); code != http.StatusAccepted {
			t.Fatalf("start %s: %d %v", id, code, body)
		}
	}
	for _, id := range []string{first, second} {
		if code, body := inspectorCall(t, insp, http.MethodPost, "/v1/introspection/"+id+"/abort", nil); code != http.StatusAccepted {
			t.Fatalf("abort %s: %d %v", id, code, body)
		}
		code, st := inspectorCall(t, insp, http.MethodGet, "/v1/introspection/"+id, nil)
		m, _ := st.(map[string]any)
		if code != http.StatusOK || m["state"] != "error" || m["error"] != "Canceled by operator" || m["finished"] != true {
			t.Errorf("status of %s after abort: %d %v", id, code, st)
		}
	}

	// Wait for what each node's boot did with the abort: the first one was
	// booted, so its abort powers it off (history); the second one's boot
	// gives up before it touches the node (log). A node that powers on
	// after its abort fails at once.
	deadline := time.Now().Add(2 * time.Minute)
	for {
		firstOff := hasEvent(ir.history(first), "powered off")
		secondGaveUp := strings.Contains(srv.Log(), "managed boot cancelled before it touched the node") &&
			strings.Contains(srv.Log(), second)
		for _, id := range []string{first, second} {
			if n := ir.get(id); n["power_state"] == "power on" && n["target_power_state"] == nil && (id == second || firstOff) {
				t.Fatalf("node %s is powered on after its introspection was aborted; history %q", id, ir.history(id))
			}
		}
		if firstOff && secondGaveUp {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("after the aborts: first node powered off again %v, second node's boot gave up %v; histories %q %q",
				firstOff, secondGaveUp, ir.history(first), ir.history(second))
		}
		time.Sleep(100 * time.Millisecond)
	}
	ir.wait(first, "power_state", "power off")
	// Fake power reports none until a power action (as Ironic's): none
	// means nothing ever switched the second node.
	if n := ir.get(second); n["power_state"] != nil {
		t.Errorf("second node is %v, want none: it was never booted", n["power_state"])
	}
	if h := ir.history(second); hasEvent(h, "powered on") || !hasEvent(h, "aborted") {
		t.Errorf("second node's history %q: want its abort and no power-on", h)
	}
	if h := ir.history(first); !hasEvent(h, "powered on") || !hasEvent(h, "aborted") {
		t.Errorf("first node's history %q: want its power-on and abort", h)
	}
}
