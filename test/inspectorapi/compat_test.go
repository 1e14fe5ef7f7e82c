package inspectorapi_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/uuid"
	"github.com/gophercloud/gophercloud/v2"
	"github.com/gophercloud/gophercloud/v2/openstack/baremetalintrospection/noauth"
	"github.com/gophercloud/gophercloud/v2/openstack/baremetalintrospection/v1/introspection"

	"github.com/ferrometal/ferro/internal/testing/ferrotest"
)

var record = flag.Bool("record", false, "run the scenario against Debian's ironic-inspector 11.1 and rewrite "+fixture)

// fixture holds what each client saw from ironic-inspector 11.1.
const fixture = "testdata/ironic-inspector-11.1/results.json"

// introspectionDelay is [DEFAULT]introspection_delay on both sides: long
// enough that an abort sent right after a second managed start comes
// while that start waits for its turn.
const introspectionDelay = "3"

// deliberate are the answers in which ferro differs from 11.1 on purpose
// (docs/inspector-api.md lists them): client/step → what ferro answers.
var deliberate = map[string]any{
	// 11.1 holds the node's lock while the start waits for its turn
	// (409), then boots the node anyway; in ferro the abort wins.
	"http/abort_pending_boot":        map[string]any{"status": 202.0, "body": map[string]any{}},
	"sdk/abort_pending_boot":         map[string]any{"ok": nil},
	"gophercloud/abort_pending_boot": "ok",
	// (openstacksdk retries a 409 until 11.1 has booted the node and lets
	// the abort through, so it sees no difference.)
	// A late or repeated report: 11.1 dropped the node's look-up
	// attributes when the introspection ended, so it says it knows no node;
	// ferro says which node and why.
	"http/continue_again": map[string]any{"status": 400.0, "body": map[string]any{"error": map[string]any{
		"message": `Node <n1> is not waiting for introspection (state "finished")`}}},
	// 11.1 names the marker "None" (it formats the row it did not find).
	"http/list_unknown_marker":        map[string]any{"status": 404.0, "body": map[string]any{"error": map[string]any{"message": "Node not found for marker: <uuid>"}}},
	"sdk/list_unknown_marker":         map[string]any{"error": map[string]any{"class": "ResourceNotFound", "status": 404.0, "details": "Node not found for marker: <uuid>"}},
	"gophercloud/list_unknown_marker": map[string]any{"status": 404.0, "body": map[string]any{"error": map[string]any{"message": "Node not found for marker: <uuid>"}}},
}

// TestInspectorAPI_AsIronicInspector111 runs one scenario of issue 18's
// differences with raw HTTP (as ironic-python-agent posts its report),
// openstacksdk's introspection proxy and gophercloud against ferro's
// inspector API and compares every answer, normalised, with the ones
// ironic-inspector 11.1 gave (-record makes them, against the same ferro
// as the bare metal API; testdata/ironic-inspector-11.1/README.md).
func TestInspectorAPI_AsIronicInspector111(t *testing.T) {
	python := ferrotest.RequireTool(t, "/usr/bin/python3")
	if out, err := exec.Command(python, "-c", "import openstack.baremetal_introspection").CombinedOutput(); err != nil {
		ferrotest.SkipOrFail(t, "openstacksdk (Debian's python3-openstacksdk) is needed: %v\n%s", err, out)
	}
	srv := ferrotest.Start(t, ferrotest.WithEnv("FERRO_INSPECTOR_INTROSPECTION_DELAY="+introspectionDelay))
	env := &scenario{t: t, ir: ironic{t: t, url: srv.URL}, inspector: srv.InspectorURL, python: python}
	if *record {
		env.inspector = startIronicInspector111(t, srv.URL)
	}
	got := map[string]any{
		"http":        env.runHTTP("h"),
		"sdk":         env.runSDK("s"),
		"gophercloud": env.runGophercloud("g"),
	}
	if *record {
		b, err := json.MarshalIndent(got, "", " ")
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(fixture, append(b, '\n'), 0o644); err != nil {
			t.Fatal(err)
		}
		t.Logf("wrote %s", fixture)
		return
	}
	b, err := os.ReadFile(fixture)
	if err != nil {
		t.Fatal(err)
	}
	var want map[string]any
	if err := json.Unmarshal(b, &want); err != nil {
		t.Fatal(err)
	}
	// Through JSON, as the fixture was written.
	gb, _ := json.Marshal(got)
	var gotJSON map[string]any
	_ = json.Unmarshal(gb, &gotJSON)
	for client, steps := range want {
		for step, w := range steps.(map[string]any) {
			if d, ok := deliberate[client+"/"+step]; ok {
				w = d
			}
			g := gotJSON[client].(map[string]any)[step]
			if diff := cmp.Diff(w, g); diff != "" {
				t.Errorf("%s %s: ferro differs from ironic-inspector 11.1 (-11.1 +ferro):\n%s", client, step, diff)
			}
		}
		for step := range gotJSON[client].(map[string]any) {
			if _, ok := steps.(map[string]any)[step]; !ok {
				t.Errorf("%s %s: not in %s (run with -record)", client, step, fixture)
			}
		}
	}
}

// scenario runs the steps against one inspector API.
type scenario struct {
	t         *testing.T
	ir        ironic
	inspector string
	python    string
	// nodes maps node UUIDs to their names in the results.
	nodes map[string]string
}

// enrol makes the scenario's three nodes, named prefix1…3, with MACs of
// their own so that the clients' runs never match each other's reports.
func (s *scenario) enrol(prefix string) (n1, n2, n3 string) {
	if s.nodes == nil {
		s.nodes = map[string]string{}
	}
	var ids []string
	for i := 1; i <= 3; i++ {
		name := fmt.Sprintf("%s%d", prefix, i)
		id := s.ir.node(name, s.mac(prefix, i))
		s.nodes[id] = fmt.Sprintf("<n%d>", i)
		ids = append(ids, id)
	}
	return ids[0], ids[1], ids[2]
}

func (s *scenario) mac(prefix string, i int) string {
	return fmt.Sprintf("52:54:00:%02x:18:%02x", prefix[0], i)
}

// report is the reference QEMU report (testdata/ipa/small-2nic.json) with
// its first NIC's MAC replaced, and a ramdisk logs tarball.
func (s *scenario) report(mac string) []byte {
	s.t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", "testdata", "ipa", "small-2nic.json"))
	if err != nil {
		s.t.Fatal(err)
	}
	b = bytes.ReplaceAll(b, []byte("52:54:00:12:34:56"), []byte(mac))
	b = bytes.ReplaceAll(b, []byte("01-52-54-00-12-34-56"), []byte("01-"+strings.ReplaceAll(mac, ":", "-")))
	// Its second NIC is unique per report too.
	return bytes.ReplaceAll(b, []byte("52:54:00:12:34:57"), []byte(mac[:len(mac)-2]+"99"))
}

// http sends one request and returns its normalised status and body.
func (s *scenario) http(method, path string, body []byte) map[string]any {
	s.t.Helper()
	req, err := http.NewRequest(method, s.inspector+path, bytes.NewReader(body))
	if err != nil {
		s.t.Fatal(err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		s.t.Fatal(err)
	}
	defer resp.Body.Close()
	var v any
	if err := json.NewDecoder(resp.Body).Decode(&v); err != nil {
		v = "<not JSON>"
	}
	return map[string]any{"status": resp.StatusCode, "body": s.normalise(v)}
}

// settle waits until the introspection is in none of the states an
// abort, a start or a report passes through (11.1 aborts, boots and
// finishes in the background), so that the next step sees where it ends.
func (s *scenario) settle(node string) {
	s.t.Helper()
	deadline := time.Now().Add(time.Minute)
	for {
		code, v := inspectorCall(s.t, s.inspector, http.MethodGet, "/v1/introspection/"+node, nil)
		st, _ := v.(map[string]any)
		if code != http.StatusOK || !slices.Contains([]any{"aborting", "starting", "processing", "reapplying"}, st["state"]) {
			return
		}
		if time.Now().After(deadline) {
			s.t.Fatalf("introspection of %s still %v", node, st["state"])
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// runHTTP is the scenario as raw requests.
func (s *scenario) runHTTP(prefix string) map[string]any {
	n1, n2, n3 := s.enrol(prefix)
	out := map[string]any{}
	out["status_never_started"] = s.http("GET", "/v1/introspection/"+n1, nil)
	out["abort_never_started"] = s.http("POST", "/v1/introspection/"+n1+"/abort", nil)
	out["data_never_started"] = s.http("GET", "/v1/introspection/"+n1+"/data", nil)
	out["start_unmanaged"] = s.http("POST", "/v1/introspection/"+n1+"?manage_boot=false", nil)
	out["status_waiting"] = s.http("GET", "/v1/introspection/"+n1, nil)
	out["continue_unmatched"] = s.http("POST", "/v1/continue", s.report("52:54:00:ee:ee:ee"))
	out["continue"] = s.http("POST", "/v1/continue", s.report(s.mac(prefix, 1)))
	s.settle(n1)
	out["status_finished"] = s.http("GET", "/v1/introspection/"+n1, nil)
	out["unprocessed_data"] = s.dataKeys(n1, "/data/unprocessed")
	out["continue_again"] = s.http("POST", "/v1/continue", s.report(s.mac(prefix, 1)))
	out["abort_finished"] = s.http("POST", "/v1/introspection/"+n1+"/abort", nil)
	s.settle(n1)
	out["status_after_abort_finished"] = s.http("GET", "/v1/introspection/"+n1, nil)
	out["restart"] = s.http("POST", "/v1/introspection/"+n1+"?manage_boot=false", nil)
	out["data_after_restart"] = s.http("GET", "/v1/introspection/"+n1+"/data", nil)
	out["unprocessed_data_after_restart"] = s.http("GET", "/v1/introspection/"+n1+"/data/unprocessed", nil)
	out["abort_waiting"] = s.http("POST", "/v1/introspection/"+n1+"/abort", nil)
	s.settle(n1)
	out["status_aborted"] = s.http("GET", "/v1/introspection/"+n1, nil)
	out["list_error_newest"] = s.http("GET", "/v1/introspection?state=error&limit=1", nil)
	out["list_bogus_state"] = s.http("GET", "/v1/introspection?state=bogus", nil)
	out["list_bad_marker"] = s.http("GET", "/v1/introspection?marker=nope", nil)
	out["list_unknown_marker"] = s.http("GET", "/v1/introspection?marker="+uuid.NewString(), nil)
	out["list_negative_limit"] = s.http("GET", "/v1/introspection?limit=-1", nil)
	out["start_managed"] = s.http("POST", "/v1/introspection/"+n2, nil)
	out["start_managed_second"] = s.http("POST", "/v1/introspection/"+n3, nil)
	out["abort_pending_boot"] = s.http("POST", "/v1/introspection/"+n3+"/abort", nil)
	s.settle(n2)
	s.settle(n3)
	return out
}

// dataKeys fetches data and records whether it keeps the ramdisk logs.
func (s *scenario) dataKeys(node, path string) map[string]any {
	s.t.Helper()
	r := s.http("GET", "/v1/introspection/"+node+path, nil)
	if m, ok := r["body"].(map[string]any); ok && r["status"] == http.StatusOK {
		_, logs := m["logs"]
		_, inv := m["inventory"]
		r["body"] = map[string]any{"keys_include_logs": logs, "has_inventory": inv}
	}
	return r
}

// runSDK is the scenario through openstacksdk, one Python process per
// stretch of steps (the reports go in between, as the agent posts them).
func (s *scenario) runSDK(prefix string) map[string]any {
	n1, n2, n3 := s.enrol(prefix)
	out := map[string]any{}
	s.sdk(out,
		sdkStep{"status_never_started", "get_introspection", n1, nil},
		sdkStep{"abort_never_started", "abort_introspection", n1, map[string]any{"ignore_missing": false}},
		sdkStep{"abort_never_started_ignore_missing", "abort_introspection", n1, nil},
		sdkStep{"data_never_started", "get_introspection_data", n1, nil},
		sdkStep{"start_unmanaged", "start_introspection", n1, map[string]any{"manage_boot": false}},
		sdkStep{"status_waiting", "get_introspection", n1, nil},
	)
	inspectorCall(s.t, s.inspector, http.MethodPost, "/v1/continue", json.RawMessage(s.report(s.mac(prefix, 1))))
	s.settle(n1)
	s.sdk(out,
		sdkStep{"status_finished", "get_introspection", n1, nil},
		sdkStep{"data", "get_introspection_data", n1, nil},
		sdkStep{"unprocessed_data", "get_introspection_data", n1, map[string]any{"processed": false}},
		sdkStep{"abort_finished", "abort_introspection", n1, map[string]any{"ignore_missing": false}},
	)
	s.settle(n1)
	s.sdk(out,
		sdkStep{"status_after_abort_finished", "get_introspection", n1, nil},
		sdkStep{"restart", "start_introspection", n1, map[string]any{"manage_boot": false}},
		sdkStep{"data_after_restart", "get_introspection_data", n1, nil},
		sdkStep{"abort_waiting", "abort_introspection", n1, nil},
	)
	s.settle(n1)
	s.sdk(out,
		sdkStep{"status_aborted", "get_introspection", n1, nil},
		sdkStep{"list_newest", "introspections", "", map[string]any{"query": map[string]any{"limit": 1}, "first_only": true}},
		sdkStep{"list_state", "introspections", "", map[string]any{"query": map[string]any{"state": "error"}}},
		sdkStep{"list_unknown_marker", "introspections", "", map[string]any{"query": map[string]any{"marker": uuid.NewString()}}},
		sdkStep{"start_managed", "start_introspection", n2, nil},
		sdkStep{"start_managed_second", "start_introspection", n3, nil},
		sdkStep{"abort_pending_boot", "abort_introspection", n3, nil},
	)
	s.settle(n2)
	s.settle(n3)
	return out
}

type sdkStep struct {
	name, op, node string
	args           map[string]any
}

// sdk runs steps with testdata/sdk_steps.py and adds their normalised
// outcomes to out.
func (s *scenario) sdk(out map[string]any, steps ...sdkStep) {
	s.t.Helper()
	var spec []map[string]any
	for _, st := range steps {
		m := map[string]any{"name": st.name, "op": st.op, "node": st.node}
		for k, v := range st.args {
			m[k] = v
		}
		spec = append(spec, m)
	}
	in, _ := json.Marshal(map[string]any{"endpoint": s.inspector, "steps": spec})
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, s.python, "testdata/sdk_steps.py")
	cmd.Stdin = bytes.NewReader(in)
	cmd.Env = append(os.Environ(), "HOME="+s.t.TempDir())
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	b, err := cmd.Output()
	if err != nil {
		s.t.Fatalf("sdk_steps.py: %v\n%s", err, stderr.String())
	}
	var res map[string]any
	if err := json.Unmarshal(b, &res); err != nil {
		s.t.Fatalf("sdk_steps.py printed %s: %v", b, err)
	}
	for k, v := range res {
		out[k] = s.normalise(v)
	}
}

// runGophercloud is the scenario through gophercloud's
// baremetalintrospection client. Its StartIntrospection drops the
// manage_boot query (v2.16), so the unmanaged start is a raw request.
func (s *scenario) runGophercloud(prefix string) map[string]any {
	n1, n2, n3 := s.enrol(prefix)
	ctx := s.t.Context()
	c, err := noauth.NewBareMetalIntrospectionNoAuth(noauth.EndpointOpts{IronicInspectorEndpoint: s.inspector + "/v1"})
	if err != nil {
		s.t.Fatal(err)
	}
	out := map[string]any{}
	status := func(name, node string) {
		in, err := introspection.GetIntrospectionStatus(ctx, c, node).Extract()
		if err != nil {
			out[name] = s.gcError(err)
			return
		}
		out[name] = map[string]any{"uuid": s.normalise(in.UUID), "state": in.State, "finished": in.Finished, "error": in.Error,
			"started_at_set": !in.StartedAt.IsZero(), "finished_at_set": !in.FinishedAt.IsZero()}
	}
	result := func(name string, err error) {
		if err != nil {
			out[name] = s.gcError(err)
			return
		}
		out[name] = "ok"
	}
	status("status_never_started", n1)
	result("abort_never_started", introspection.AbortIntrospection(ctx, c, n1).ExtractErr())
	_, err = introspection.GetIntrospectionData(ctx, c, n1).Extract()
	result("data_never_started", err)
	inspectorCall(s.t, s.inspector, http.MethodPost, "/v1/introspection/"+n1+"?manage_boot=false", nil)
	status("status_waiting", n1)
	inspectorCall(s.t, s.inspector, http.MethodPost, "/v1/continue", json.RawMessage(s.report(s.mac(prefix, 1))))
	s.settle(n1)
	status("status_finished", n1)
	data, err := introspection.GetIntrospectionData(ctx, c, n1).Extract()
	if err == nil {
		out["data"] = map[string]any{"cpus": data.CPUs, "memory_mb": data.MemoryMB, "macs": data.MACs, "boot_interface": s.normalise(data.BootInterface)}
	} else {
		out["data"] = s.gcError(err)
	}
	result("abort_finished", introspection.AbortIntrospection(ctx, c, n1).ExtractErr())
	s.settle(n1)
	status("status_after_abort_finished", n1)
	inspectorCall(s.t, s.inspector, http.MethodPost, "/v1/introspection/"+n1+"?manage_boot=false", nil)
	_, err = introspection.GetIntrospectionData(ctx, c, n1).Extract()
	result("data_after_restart", err)
	result("abort_waiting", introspection.AbortIntrospection(ctx, c, n1).ExtractErr())
	s.settle(n1)
	status("status_aborted", n1)
	pages, err := introspection.ListIntrospections(c, introspection.ListIntrospectionsOpts{Limit: 1}).AllPages(ctx)
	if err == nil {
		var all []introspection.Introspection
		all, err = introspection.ExtractIntrospections(pages)
		if err == nil {
			out["list_limit_1"] = len(all) > 0
		}
	}
	if err != nil {
		out["list_limit_1"] = s.gcError(err)
	}
	_, err = introspection.ListIntrospections(c, introspection.ListIntrospectionsOpts{Marker: uuid.NewString()}).AllPages(ctx)
	result("list_unknown_marker", err)
	result("start_managed", introspection.StartIntrospection(ctx, c, n2, introspection.StartOpts{}).ExtractErr())
	result("start_managed_second", introspection.StartIntrospection(ctx, c, n3, introspection.StartOpts{}).ExtractErr())
	result("abort_pending_boot", introspection.AbortIntrospection(ctx, c, n3).ExtractErr())
	s.settle(n2)
	s.settle(n3)
	return out
}

// gcError is what a gophercloud caller can tell of an error: the status
// and the inspector's message.
func (s *scenario) gcError(err error) map[string]any {
	var e gophercloud.ErrUnexpectedResponseCode
	if errors.As(err, &e) {
		var body any
		if json.Unmarshal(e.Body, &body) != nil {
			body = string(e.Body)
		}
		return map[string]any{"status": e.Actual, "body": s.normalise(body)}
	}
	return map[string]any{"error": s.normalise(err.Error())}
}

var (
	uuidRE    = regexp.MustCompile(`[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}`)
	isoTimeRE = regexp.MustCompile(`^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}$`)
	macRE     = regexp.MustCompile(`52:54:00:[0-9a-f]{2}:(18|ee):[0-9a-f]{2}`)
)

// normalise replaces what differs between runs: node UUIDs by their
// names, other UUIDs, the inspector's address, MACs of the run and
// timestamps written as ironic-inspector writes them.
func (s *scenario) normalise(v any) any {
	switch x := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			out[k] = s.normalise(e)
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = s.normalise(e)
		}
		return out
	case string:
		if isoTimeRE.MatchString(x) {
			return "<isotime>"
		}
		x = strings.ReplaceAll(x, s.inspector, "<inspector>")
		x = uuidRE.ReplaceAllStringFunc(x, func(u string) string {
			if name, ok := s.nodes[u]; ok {
				return name
			}
			return "<uuid>"
		})
		return macRE.ReplaceAllStringFunc(x, func(m string) string { return "<mac " + m[len(m)-5:len(m)-3] + ":" + m[len(m)-2:] + ">" })
	}
	return v
}

// startIronicInspector111 runs Debian's ironic-inspector (standalone,
// noauth, SQLite) with ferro's bare metal API as its Ironic, and returns
// its URL.
func startIronicInspector111(t *testing.T, ironicURL string) string {
	bin := ferrotest.RequireTool(t, "ironic-inspector")
	dir := t.TempDir()
	port := ferrotest.FreePort(t)
	conf := filepath.Join(dir, "inspector.conf")
	err := os.WriteFile(conf, []byte(fmt.Sprintf(`[DEFAULT]
auth_strategy = noauth
listen_address = 127.0.0.1
listen_port = %d
introspection_delay = %s
transport_url = fake://
[ironic]
auth_type = none
endpoint_override = %s
[database]
connection = sqlite:///%s/inspector.sqlite
[processing]
store_data = database
[pxe_filter]
driver = noop
`, port, introspectionDelay, ironicURL, dir)), 0o600)
	if err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command("ironic-inspector-dbsync", "--config-file", conf, "upgrade").CombinedOutput(); err != nil {
		t.Fatalf("ironic-inspector-dbsync: %v\n%s", err, out)
	}
	logf, err := os.Create(filepath.Join(dir, "inspector.log"))
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "--config-file", conf)
	cmd.Stdout, cmd.Stderr = logf, logf
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		if t.Failed() {
			b, _ := os.ReadFile(logf.Name())
			t.Logf("ironic-inspector log:\n%s", b)
		}
	})
	url := fmt.Sprintf("http://127.0.0.1:%d", port)
	deadline := time.Now().Add(time.Minute)
	for {
		if code, _, err := ferrotest.Send(url, http.MethodGet, "/", nil); err == nil && code == http.StatusOK {
			return url
		}
		if time.Now().After(deadline) {
			t.Fatalf("ironic-inspector did not answer on %s", url)
		}
		time.Sleep(100 * time.Millisecond)
	}
}
