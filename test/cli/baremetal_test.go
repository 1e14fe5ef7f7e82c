// Package cli_test is the `baremetal` CLI lane: Debian's python3-ironicclient
// drives a real `ferro serve` process, the way operators use it.
//
// Every command runs with --debug, so a failure shows the HTTP requests the
// CLI sent and the answers it got.
package cli_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ferrometal/ferro/internal/testing/ferrotest"
)

// commandTimeout bounds one CLI command; the --wait commands pass a shorter
// --wait so that the CLI's own error is what a slow transition shows.
const (
	commandTimeout = 2 * time.Minute
	waitSeconds    = "60"
)

// cli runs the baremetal command against one server.
type cli struct {
	t        *testing.T
	bin      string
	endpoint string
	env      []string
	dir      string
}

// start finds the CLI (skipping, or failing in CI, without it), starts a
// server and returns a CLI pointed at it.
func start(t *testing.T, opts ...ferrotest.Option) (*cli, *ferrotest.Server) {
	t.Helper()
	bin := ferrotest.RequireTool(t, "baremetal")
	srv := ferrotest.Start(t, opts...)
	// An empty home keeps the user's clouds.yaml and the client's cache of
	// negotiated versions (keyed by host:port, and ports are reused) out.
	home := t.TempDir()
	env := []string{"HOME=" + home, "XDG_CACHE_HOME=" + home + "/cache", "XDG_CONFIG_HOME=" + home + "/config"}
	for _, kv := range os.Environ() {
		switch {
		case strings.HasPrefix(kv, "OS_"), strings.HasPrefix(kv, "HOME="), strings.HasPrefix(kv, "XDG_"):
		default:
			env = append(env, kv)
		}
	}
	return &cli{t: t, bin: bin, endpoint: srv.URL, env: env, dir: home}, srv
}

// on returns the CLI bound to t, for use in a subtest.
func (c *cli) on(t *testing.T) *cli {
	cc := *c
	cc.t = t
	return &cc
}

// result is one finished CLI command.
type result struct {
	args           []string
	stdout, stderr string
	err            error
}

func (r result) String() string {
	return fmt.Sprintf("baremetal %s: %v\nstdout:\n%s\nstderr (--debug):\n%s",
		strings.Join(r.args, " "), r.err, r.stdout, r.stderr)
}

// exec runs `baremetal <global flags> args...` and returns whatever happened.
func (c *cli) exec(args ...string) result {
	c.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), commandTimeout)
	defer cancel()
	full := append([]string{"--debug", "--os-endpoint", c.endpoint, "--os-auth-type", "none"}, args...)
	cmd := exec.CommandContext(ctx, c.bin, full...)
	cmd.Env = c.env
	cmd.Dir = c.dir
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	return result{args: args, stdout: stdout.String(), stderr: stderr.String(), err: err}
}

// run runs a command that must succeed and returns its stdout.
func (c *cli) run(args ...string) string {
	c.t.Helper()
	r := c.exec(args...)
	if r.err != nil {
		c.t.Fatalf("%s", r)
	}
	return r.stdout
}

// object runs a command with -f json whose output is one JSON object.
func (c *cli) object(args ...string) map[string]any {
	c.t.Helper()
	var v map[string]any
	c.decode(&v, args...)
	return v
}

// rows runs a command with -f json whose output is a JSON list of rows.
func (c *cli) rows(args ...string) []map[string]any {
	c.t.Helper()
	var v []map[string]any
	c.decode(&v, args...)
	return v
}

func (c *cli) decode(v any, args ...string) {
	c.t.Helper()
	args = append(args, "-f", "json")
	out := c.run(args...)
	dec := json.NewDecoder(strings.NewReader(out))
	dec.UseNumber() // so that a number sent as a string shows up as a mismatch
	if err := dec.Decode(v); err != nil {
		c.t.Fatalf("baremetal %s: output is not the expected JSON: %v\n%s", strings.Join(args, " "), err, out)
	}
}

// field returns obj[path[0]][path[1]]…, or nil.
func field(obj map[string]any, path ...string) any {
	var v any = obj
	for _, k := range path {
		m, ok := v.(map[string]any)
		if !ok {
			return nil
		}
		v = m[k]
	}
	return v
}

// expect checks a node or port field against the wanted value; numbers are
// compared by their JSON text, so 4 matches only a JSON number 4.
func expect(t *testing.T, what string, obj map[string]any, want any, path ...string) {
	t.Helper()
	got := field(obj, path...)
	if n, ok := got.(json.Number); ok {
		if fmt.Sprint(want) != n.String() {
			t.Errorf("%s: %s = %v, want %v", what, strings.Join(path, "."), got, want)
		}
		return
	}
	if _, isNum := want.(int); isNum {
		t.Errorf("%s: %s = %#v (%T), want the JSON number %v", what, strings.Join(path, "."), got, got, want)
		return
	}
	if got != want {
		t.Errorf("%s: %s = %#v, want %#v", what, strings.Join(path, "."), got, want)
	}
}

// createNode creates the node n1 on fake-hardware and returns its UUID.
func createNode(t *testing.T, c *cli) string {
	t.Helper()
	node := c.object("node", "create", "--driver", "fake-hardware", "--name", "n1",
		"--property", "cpus=4",
		"--driver-info", "ipmi_username=admin", "--driver-info", "ipmi_password=secret")
	uuid, _ := node["uuid"].(string)
	if !uuidRE.MatchString(uuid) {
		t.Fatalf("node create: uuid = %#v, want a UUID; output: %v", node["uuid"], node)
	}
	return uuid
}

var uuidRE = regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$`)

func TestBaremetalCLI_DriverList(t *testing.T) {
	c, _ := start(t)
	// An explicit "latest" makes the client negotiate with GET /v1 first
	// (without it the client sends its own latest version, 1.78, directly).
	rows := c.rows("--os-baremetal-api-version", "latest", "driver", "list")
	for _, r := range rows {
		if r["Supported driver(s)"] == "fake-hardware" {
			return
		}
	}
	t.Errorf("driver list has no fake-hardware: %v", rows)
}

func TestBaremetalCLI_NodeCreateShowSetUnsetDelete(t *testing.T) {
	c, _ := start(t)
	uuid := createNode(t, c)

	created := c.object("node", "show", "n1")
	for what, node := range map[string]map[string]any{"node show n1": created, "node show <uuid>": c.object("node", "show", uuid)} {
		expect(t, what, node, uuid, "uuid")
		expect(t, what, node, "n1", "name")
		expect(t, what, node, "fake-hardware", "driver")
		expect(t, what, node, "enroll", "provision_state")
		expect(t, what, node, 4, "properties", "cpus")
		expect(t, what, node, "admin", "driver_info", "ipmi_username")
		expect(t, what, node, "******", "driver_info", "ipmi_password")
	}

	list := c.rows("node", "list")
	if len(list) != 1 || list[0]["UUID"] != uuid || list[0]["Name"] != "n1" ||
		list[0]["Provisioning State"] != "enroll" || list[0]["Maintenance"] != false {
		t.Errorf("node list = %v, want one row: n1 %s enroll, not in maintenance", list, uuid)
	}

	c.run("node", "set", "n1", "--property", "memory_mb=1024", "--extra", "k=v")
	node := c.object("node", "show", "n1")
	expect(t, "after node set", node, 1024, "properties", "memory_mb")
	expect(t, "after node set", node, 4, "properties", "cpus")
	expect(t, "after node set", node, "v", "extra", "k")

	c.run("node", "unset", "n1", "--property", "memory_mb")
	node = c.object("node", "show", "n1")
	if props, _ := field(node, "properties").(map[string]any); props["memory_mb"] != nil {
		t.Errorf("after node unset: properties = %v, want no memory_mb", field(node, "properties"))
	}
	expect(t, "after node unset", node, 4, "properties", "cpus")
	expect(t, "after node unset", node, "v", "extra", "k")

	c.run("node", "delete", "n1")
	if r := c.exec("node", "show", "n1"); r.err == nil || !strings.Contains(r.stderr, "HTTP 404") {
		t.Errorf("node show after delete: want a failure with HTTP 404, got %s", r)
	}
	if list := c.rows("node", "list"); len(list) != 0 {
		t.Errorf("node list after delete = %v, want none", list)
	}
}

func TestBaremetalCLI_PortsAndPortgroups(t *testing.T) {
	c, _ := start(t)
	uuid := createNode(t, c)

	pg := c.object("port", "group", "create", "--node", uuid, "--name", "pg1")
	expect(t, "port group create", pg, "pg1", "name")
	expect(t, "port group create", pg, uuid, "node_uuid")

	// Upper case on the way in: the API stores addresses in lower case.
	port := c.object("port", "create", "52:54:00:AB:CD:EF", "--node", uuid)
	expect(t, "port create", port, "52:54:00:ab:cd:ef", "address")
	expect(t, "port create", port, uuid, "node_uuid")

	// Each listing on its own, so that one failing does not hide the others.
	t.Run("port list --node", func(t *testing.T) {
		ports := c.on(t).rows("port", "list", "--node", uuid)
		if len(ports) != 1 || ports[0]["UUID"] != port["uuid"] || ports[0]["Address"] != "52:54:00:ab:cd:ef" {
			t.Errorf("port list --node = %v, want the one port %v 52:54:00:ab:cd:ef", ports, port["uuid"])
		}
	})
	for name, args := range map[string][]string{
		"port group list":        {"port", "group", "list"},
		"port group list --node": {"port", "group", "list", "--node", uuid},
	} {
		t.Run(name, func(t *testing.T) {
			groups := c.on(t).rows(args...)
			if len(groups) != 1 || groups[0]["UUID"] != pg["uuid"] || groups[0]["Name"] != "pg1" {
				t.Errorf("%s = %v, want the one group pg1 %v", name, groups, pg["uuid"])
			}
		})
	}
}

func TestBaremetalCLI_ProvisionPowerValidate(t *testing.T) {
	c, srv := start(t)
	createNode(t, c)

	for _, step := range []struct{ verb, want string }{
		{"manage", "manageable"},
		{"inspect", "manageable"},
		{"provide", "available"},
	} {
		c.run("node", step.verb, "n1", "--wait", waitSeconds)
		node := c.object("node", "show", "n1")
		expect(t, "after node "+step.verb, node, step.want, "provision_state")
		expect(t, "after node "+step.verb, node, nil, "last_error")
		if step.verb == "inspect" && field(node, "inspection_finished_at") == nil {
			t.Errorf("after node inspect: inspection_finished_at is not set")
		}
	}

	for _, state := range []string{"on", "off"} {
		c.run("node", "power", state, "n1")
		// The power change is asynchronous (202); the CLI does not wait.
		waitPowerSettled(t, srv, "n1")
		got := c.object("node", "show", "n1", "-c", "power_state")
		if want := map[string]any{"power_state": "power " + state}; fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("node show -c power_state after power %s = %v, want %v", state, got, want)
		}
	}

	results := map[string]any{}
	for _, r := range c.rows("node", "validate", "n1") {
		results[fmt.Sprint(r["Interface"])] = r["Result"]
		if r["Result"] != true && r["Reason"] == "" {
			t.Errorf("node validate: %s failed without a reason: %v", r["Interface"], r)
		}
	}
	for _, iface := range []string{"boot", "deploy", "inspect", "management", "network", "power"} {
		if results[iface] != true {
			t.Errorf("node validate: %s result = %v, want true for fake-hardware (all: %v)", iface, results[iface], results)
		}
	}
}

func TestBaremetalCLI_DuplicateNodeNameFailsWithFaultstring(t *testing.T) {
	c, srv := start(t)
	createNode(t, c)

	// What the API says for the duplicate, straight from the wire.
	status, body := apiRequest(t, srv, http.MethodPost, "/v1/nodes", `{"driver": "fake-hardware", "name": "n1"}`)
	if status != http.StatusConflict {
		t.Fatalf("POST /v1/nodes with a duplicate name: status %d, want 409; body %s", status, body)
	}
	fault := faultstring(t, body)

	// --max-retries 0: the client retries 409s (for NodeLocked) 5 times, 2 s apart.
	r := c.exec("--max-retries", "0", "node", "create", "--driver", "fake-hardware", "--name", "n1", "-f", "json")
	if r.err == nil {
		t.Fatalf("node create with a duplicate name succeeded: %s", r)
	}
	if !strings.Contains(r.stderr, fault) || !strings.Contains(r.stderr, "HTTP 409") {
		t.Errorf("node create with a duplicate name: want stderr to contain %q and HTTP 409; got %s", fault, r)
	}
	if list := c.rows("node", "list"); len(list) != 1 {
		t.Errorf("node list after the failed create = %v, want only the first n1", list)
	}
}

// apiRequest sends one request to the API as the CLI would (version 1.78)
// and returns the status and body.
func apiRequest(t *testing.T, srv *ferrotest.Server, method, path, body string) (int, string) {
	t.Helper()
	return apiRequestAt(t, srv, "1.78", method, path, body)
}

// apiRequestAt is apiRequest at another API version, for what the CLI
// does not know (runbooks, 1.92).
func apiRequestAt(t *testing.T, srv *ferrotest.Server, version, method, path, body string) (int, string) {
	t.Helper()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequest(method, srv.URL+path, rd)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("X-OpenStack-Ironic-API-Version", version)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("%s %s: read body: %v", method, path, err)
	}
	return resp.StatusCode, string(b)
}

// faultstring digs the message out of Ironic's error body, whose
// error_message is itself a JSON document.
func faultstring(t *testing.T, body string) string {
	t.Helper()
	var outer struct {
		ErrorMessage string `json:"error_message"`
	}
	var inner struct {
		Faultstring string `json:"faultstring"`
	}
	if err := json.Unmarshal([]byte(body), &outer); err != nil {
		t.Fatalf("error body is not Ironic's shape: %v: %s", err, body)
	}
	if err := json.Unmarshal([]byte(outer.ErrorMessage), &inner); err != nil || inner.Faultstring == "" {
		t.Fatalf("error_message does not hold a faultstring (%v): %s", err, body)
	}
	return inner.Faultstring
}

// waitPowerSettled polls the node until no power change is pending.
func waitPowerSettled(t *testing.T, srv *ferrotest.Server, node string) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		status, body := apiRequest(t, srv, http.MethodGet, "/v1/nodes/"+node, "")
		var n struct {
			TargetPowerState *string `json:"target_power_state"`
		}
		if status == http.StatusOK && json.Unmarshal([]byte(body), &n) == nil &&
			(n.TargetPowerState == nil || *n.TargetPowerState == "") {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("node %s: power change still pending after 30 s: %d %s", node, status, body)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// Manual cleaning with `baremetal node clean --clean-steps`: done with the
// fake deploy and BIOS interfaces, clean failed with Ironic's last_error for
// a step the node does not offer, Ironic's 400 for a step with a priority.
func TestBaremetalCLI_ManualClean(t *testing.T) {
	c, _ := start(t)
	c.run("node", "create", "--driver", "fake-hardware", "--name", "n1",
		"--deploy-interface", "fake", "--bios-interface", "fake")
	c.run("node", "manage", "n1", "--wait", waitSeconds)
	c.run("node", "clean", "n1", "--wait", waitSeconds,
		"--clean-steps", `[{"interface": "bios", "step": "factory_reset"}]`)
	node := c.object("node", "show", "n1")
	expect(t, "after node clean", node, "manageable", "provision_state")
	expect(t, "after node clean", node, nil, "last_error")

	r := c.exec("node", "clean", "n1", "--clean-steps", `[{"interface": "bios", "step": "factory_reset", "priority": 1}]`)
	if r.err == nil || !strings.Contains(r.stdout+r.stderr, "Invalid clean_steps: Additional properties are not allowed ('priority' was unexpected)") {
		t.Errorf("clean step with a priority: want Ironic's schema error\n%s", r)
	}

	r = c.exec("node", "clean", "n1", "--wait", waitSeconds, "--clean-steps", `[{"interface": "deploy", "step": "erase_devices"}]`)
	if r.err == nil {
		t.Errorf("clean with an unsupported step succeeded\n%s", r)
	}
	node = c.object("node", "show", "n1")
	expect(t, "after a failed clean", node, "clean failed", "provision_state")
	expect(t, "after a failed clean", node, "Cannot clean node "+node["uuid"].(string)+
		": node does not support this clean step: {'interface': 'deploy', 'step': 'erase_devices'}", "last_error")
}

// Automated cleaning with a runbook ([conductor]automated_cleaning_step_source
// = runbook): `baremetal node provide` is refused with Ironic's errors while
// the runbook is missing or not approved for the node, and the node stays
// manageable; once the node has the runbook's trait, provide runs the
// runbook's steps (power_off, a fake BIOS step) on the way to available.
func TestBaremetalCLI_AutomatedCleaningRunbook(t *testing.T) {
	c, srv := start(t, ferrotest.WithEnv("FERRO_CONDUCTOR_AUTOMATED_CLEANING_STEP_SOURCE=runbook",
		"FERRO_CONDUCTOR_AUTOMATED_CLEANING_RUNBOOK=CUSTOM_WIPE"))
	c.run("node", "create", "--driver", "fake-hardware", "--name", "n1",
		"--deploy-interface", "fake", "--bios-interface", "fake")
	c.run("node", "manage", "n1", "--wait", waitSeconds)
	c.run("node", "power", "on", "n1")
	waitPowerSettled(t, srv, "n1")
	uuid := c.object("node", "show", "n1")["uuid"].(string)

	refused := func(what, wantHTTP, want string) {
		t.Helper()
		r := c.exec("--max-retries", "0", "node", "provide", "n1")
		if r.err == nil || !strings.Contains(r.stderr, want) || !strings.Contains(r.stderr, wantHTTP) {
			t.Errorf("provide %s: want %s and %q\n%s", what, wantHTTP, want, r)
		}
		node := c.object("node", "show", "n1")
		expect(t, "after provide "+what, node, "manageable", "provision_state")
		expect(t, "after provide "+what, node, "power on", "power_state")
	}
	refused("without the runbook", "HTTP 404", "Runbook CUSTOM_WIPE could not be found.")

	status, body := apiRequestAt(t, srv, "1.112", http.MethodPost, "/v1/runbooks", `{"name": "CUSTOM_WIPE",
		"steps": [{"interface": "power", "step": "power_off", "args": {}, "order": 1},
		          {"interface": "bios", "step": "factory_reset", "args": {}, "order": 2}]}`)
	if status != http.StatusCreated {
		t.Fatalf("POST /v1/runbooks: %d %s", status, body)
	}
	if status, body := apiRequestAt(t, srv, "1.112", http.MethodPut, "/v1/runbooks/CUSTOM_WIPE/traits/CUSTOM_WIPE", ""); status != http.StatusNoContent {
		t.Fatalf("PUT /v1/runbooks/CUSTOM_WIPE/traits/CUSTOM_WIPE: %d %s", status, body)
	}
	refused("on a node without the runbook's trait", "HTTP 500",
		"Automated cleaning runbook CUSTOM_WIPE is not valid for node "+uuid+". None of the runbook's traits ['CUSTOM_WIPE'] match a node trait.")

	c.run("node", "add", "trait", "n1", "CUSTOM_WIPE")
	c.run("node", "provide", "n1", "--wait", waitSeconds)
	node := c.object("node", "show", "n1")
	expect(t, "after provide", node, "available", "provision_state")
	expect(t, "after provide", node, nil, "last_error")
	expect(t, "after provide (the runbook's power_off ran)", node, "power off", "power_state")
}

// TestBaremetalCLI_ChassisListSortedByDescription sorts on a field ferro
// keeps only in the chassis' body, as the client asks for it (sort_key and
// sort_dir).
func TestBaremetalCLI_ChassisListSortedByDescription(t *testing.T) {
	c, _ := start(t)
	for _, d := range []string{"rack b", "rack a", "rack c"} {
		c.object("chassis", "create", "--description", d)
	}
	for sort, want := range map[string][]string{
		"description":      {"rack a", "rack b", "rack c"},
		"description:desc": {"rack c", "rack b", "rack a"},
	} {
		rows := c.rows("chassis", "list", "--sort", sort, "--limit", "0", "--long")
		var got []string
		for _, r := range rows {
			got = append(got, fmt.Sprint(r["Description"]))
		}
		if !slices.Equal(got, want) {
			t.Errorf("chassis list --sort %s = %v, want %v", sort, got, want)
		}
	}
}
