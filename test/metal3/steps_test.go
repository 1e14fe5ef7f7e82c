package metal3_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gophercloud/gophercloud/v2"
	"github.com/gophercloud/gophercloud/v2/openstack/baremetal/v1/nodes"
)

// diagnoseEnv names the environment variable that turns the first failure
// into a recorded one: the walk goes on, with each barrier lowered as
// docs/metal3.md says, so that every later step shows what it needs.
const diagnoseEnv = "FERRO_METAL3_DIAGNOSE"

// transcriptEnv names a file to write the request transcript to (method,
// path, microversion, status of every request the provisioner made).
const transcriptEnv = "FERRO_METAL3_TRANSCRIPT"

// recorder judges the steps: by default the first failure stops the test,
// as BMO stops there; with FERRO_METAL3_DIAGNOSE=1 each failure is an
// error and the walk goes on.
type recorder struct {
	t          *testing.T
	diagnose   bool
	failures   []string
	transcript *transcript
}

func newRecorder(t *testing.T) *recorder {
	r := &recorder{t: t, diagnose: os.Getenv(diagnoseEnv) == "1", transcript: &transcript{}}
	t.Cleanup(func() {
		if path := os.Getenv(transcriptEnv); path != "" {
			if err := os.WriteFile(path, []byte(r.transcript.String()), 0o644); err != nil {
				t.Errorf("write the transcript: %v", err)
			}
		}
		if t.Failed() {
			t.Logf("requests made, in order:\n%s", r.transcript)
		}
		if len(r.failures) > 0 {
			t.Logf("%d steps failed:\n  %s", len(r.failures), strings.Join(r.failures, "\n  "))
		}
	})
	return r
}

// ok reports whether the step succeeded. A failure stops the test unless
// diagnosing.
func (r *recorder) ok(step string, err error) bool {
	r.t.Helper()
	if err == nil {
		r.t.Logf("step %s: ok", step)
		return true
	}
	msg := fmt.Sprintf("step %s: %v", step, err)
	if !r.diagnose {
		r.t.Fatalf("%s\n(BMO stops here. %s=1 records every failing step and goes on; docs/metal3.md lists them)", msg, diagnoseEnv)
	}
	r.failures = append(r.failures, msg)
	r.t.Errorf("%s", msg)
	return false
}

// must is ok for a step nothing after can do without.
func (r *recorder) must(step string, err error) {
	r.t.Helper()
	if !r.ok(step, err) {
		r.t.Fatalf("cannot go on after step %s", step)
	}
}

// lowered logs a barrier lowered by hand in diagnosis mode.
func (r *recorder) lowered(format string, args ...any) {
	r.t.Helper()
	r.t.Logf("diagnosis: "+format, args...)
}

// reconcile calls one provisioner method the way BMO's controller does,
// again while it answers "dirty" (BMO requeues after 3 or 10 s; this polls
// every 100 ms), until it completes, fails the host, or errs. between runs
// after each dirty answer (the agent uses it). A fresh provisioner per
// call: the node cache lives for one reconcile.
func reconcile(ctx context.Context, p *provisioner, timeout time.Duration, call func() (result, error), between func() error) error {
	end := time.Now().Add(timeout)
	for {
		p.cached = nil
		res, err := call()
		if err != nil {
			return err
		}
		if res.failure != "" {
			return fmt.Errorf("the host's error: %s", res.failure)
		}
		if !res.dirty {
			return nil
		}
		if between != nil {
			if err := between(); err != nil {
				return err
			}
		}
		if time.Now().After(end) {
			return fmt.Errorf("not done after %v (%s)", timeout, p.nodeSummary(ctx))
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// nodeSummary is the node's states for a message.
func (p *provisioner) nodeSummary(ctx context.Context) string {
	if p.nodeID == "" {
		return "no node"
	}
	n, err := nodes.Get(ctx, p.client, p.nodeID).Extract()
	if err != nil {
		return err.Error()
	}
	return fmt.Sprintf("node %s: provision state %q, target %q, power %q, last_error %q", n.UUID, n.ProvisionState, n.TargetProvisionState, n.PowerState, n.LastError)
}

// transcript is an http.RoundTripper that records every request and
// answer status, and keeps the body of the last inventory answer (its raw
// JSON is checked too).
type transcript struct {
	mu        sync.Mutex
	lines     []string
	inventory []byte
}

func (tr *transcript) RoundTrip(req *http.Request) (*http.Response, error) {
	var body []byte
	if req.Body != nil {
		body, _ = io.ReadAll(req.Body)
		req.Body = io.NopCloser(bytes.NewReader(body))
	}
	resp, err := http.DefaultTransport.RoundTrip(req)
	line := fmt.Sprintf("%s %s", req.Method, req.URL.RequestURI())
	if mv := req.Header.Get("X-OpenStack-Ironic-API-Version"); mv != "" {
		line += " [" + mv + "]"
	}
	if len(body) > 0 {
		line += " " + redact(string(body))
	}
	if err != nil {
		line += " → " + err.Error()
	} else {
		line += " → " + resp.Status
		if resp.StatusCode >= 400 || strings.HasSuffix(req.URL.Path, "/inventory") {
			answer, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			resp.Body = io.NopCloser(bytes.NewReader(answer))
			if resp.StatusCode >= 400 {
				line += " " + strings.TrimSpace(string(answer))
			} else {
				tr.mu.Lock()
				tr.inventory = answer
				tr.mu.Unlock()
			}
		}
	}
	tr.mu.Lock()
	tr.lines = append(tr.lines, line)
	tr.mu.Unlock()
	return resp, err
}

func (tr *transcript) String() string {
	tr.mu.Lock()
	defer tr.mu.Unlock()
	return strings.Join(tr.lines, "\n")
}

func (tr *transcript) lastInventory() []byte {
	tr.mu.Lock()
	defer tr.mu.Unlock()
	return tr.inventory
}

// redact hides the BMC password in a logged body.
func redact(body string) string {
	return strings.ReplaceAll(body, bmcPassword, "***")
}

// fallbacks are diagnosis mode's lowered barriers: a request today's ferro
// refuses is recorded as the step's failure and sent again without what
// ferro lacks, so that the walk can go on. Never used otherwise.
type fallbacks struct{ rec *recorder }

// create drops the fields a 1.82 server refuses (disable_power_off 1.95,
// firmware_interface 1.86), and the interface ferro has not: redfish RAID.
// inspect_interface=agent is kept: ferro has the agent interface.
func (f *fallbacks) create(ctx context.Context, client *gophercloud.ServiceClient, opts nodes.CreateOpts, cause error) (*nodes.Node, error) {
	f.rec.ok("register: POST /v1/nodes as BMO sends it", cause)
	lowered := []string{"without disable_power_off (1.95)"}
	opts.DisablePowerOff = nil
	if opts.FirmwareInterface != "" {
		lowered = append(lowered, "without firmware_interface="+opts.FirmwareInterface+" (1.86)")
		opts.FirmwareInterface = ""
	}
	if opts.RAIDInterface == "redfish" {
		// ferro answers 400 "could not find a suitable raid interface
		// \"redfish\"" for this one too, once the rest is accepted.
		lowered = append(lowered, "without raid_interface=redfish (ferro's redfish hardware type has no redfish RAID interface)")
		opts.RAIDInterface = ""
	}
	f.rec.lowered("node created %s", strings.Join(lowered, ", "))
	return nodes.Create(ctx, client, opts).Extract()
}

// update drops the operations on what create dropped.
func (f *fallbacks) update(ctx context.Context, client *gophercloud.ServiceClient, id string, ops nodes.UpdateOpts, cause error) (*nodes.Node, error) {
	if gophercloud.ResponseCodeIs(cause, http.StatusConflict) {
		return nil, cause
	}
	var kept nodes.UpdateOpts
	var dropped []string
	for _, op := range ops {
		o := op.(nodes.UpdateOperation)
		switch o.Path {
		case "/disable_power_off", "/firmware_interface":
			dropped = append(dropped, fmt.Sprintf("%s %s %v", o.Op, o.Path, o.Value))
			continue
		}
		kept = append(kept, o)
	}
	if len(dropped) == 0 {
		return nil, cause
	}
	f.rec.ok("PATCH /v1/nodes/"+id+" as BMO sends it", cause)
	f.rec.lowered("patch sent again without %s", strings.Join(dropped, ", "))
	if len(kept) == 0 {
		return nodes.Get(ctx, client, id).Extract()
	}
	return nodes.Update(ctx, client, id, kept).Extract()
}
