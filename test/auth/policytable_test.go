package auth_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"regexp"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/google/uuid"

	"github.com/ferrometal/ferro/internal/api/ironic"
	"github.com/ferrometal/ferro/internal/testing/ferrotest"
	"github.com/ferrometal/ferro/internal/testing/keystonetest"
)

// The authorization table (testdata/policy-table.txt, whose header says
// how to read it): every route of the bare metal API for every persona,
// checked three ways — against Ironic's own policy engine, against a ferro
// serve with Keystone tokens, and with http_basic.

const policyTable = "testdata/policy-table.txt"

// tableColumns are the persona columns of the table, in order.
var tableColumns = []string{"an", "sa", "sr", "aA", "aM", "aR", "bA", "bM", "bR", "xA", "xM", "xR"}

// tableRow is one line of the table.
type tableRow struct {
	line                  int
	method, pattern, kind string
	rules                 []string // every rule named, fallbacks included
	cells                 map[string]string
	source, body          string
}

func (r tableRow) String() string {
	return fmt.Sprintf("%s:%d %s %s", policyTable, r.line, r.method, r.pattern)
}

func readPolicyTable(t *testing.T) []tableRow {
	t.Helper()
	f, err := os.Open(policyTable)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var rows []tableRow
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		text := sc.Text()
		if strings.TrimSpace(text) == "" || strings.HasPrefix(strings.TrimSpace(text), "#") {
			continue
		}
		head, body, _ := strings.Cut(text, " | ")
		fields := strings.Fields(head)
		if len(fields) != 5+len(tableColumns) {
			t.Fatalf("%s:%d: %d fields, want %d", policyTable, n, len(fields), 5+len(tableColumns))
		}
		r := tableRow{line: n, method: fields[0], pattern: fields[1], kind: fields[3],
			cells: map[string]string{}, source: fields[len(fields)-1], body: strings.TrimSpace(body)}
		for _, rule := range strings.Split(fields[2], ",") {
			r.rules = append(r.rules, strings.Split(rule, "||")...)
		}
		for i, c := range tableColumns {
			r.cells[c] = fields[4+i]
		}
		rows = append(rows, r)
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return rows
}

// TestPolicyTable_CoversEveryRoute: every route the API registers has a row
// (a route added later fails here until its row is written), and every row
// is a route.
func TestPolicyTable_CoversEveryRoute(t *testing.T) {
	rows := readPolicyTable(t)
	routes := ironic.Patterns()
	have := map[string]bool{}
	for _, r := range rows {
		p := r.method + " " + r.pattern
		have[p] = true
		if !slices.Contains(routes, p) {
			t.Errorf("%v: no such route in internal/api/ironic", r)
		}
	}
	for _, p := range routes {
		if !have[p] {
			t.Errorf("route %s has no row in %s: add one (the rule from ironic/common/policy.py, the answers from testdata/check_policy_table.py --fill)", p, policyTable)
		}
	}
	t.Logf("%d rows for %d routes, %d personas", len(rows), len(routes), len(tableColumns))
}

// TestPolicyTable_IsIronicsPolicy checks every answer of the table against
// Ironic's policy-in-code evaluated by oslo.policy (Debian's python3-ironic,
// 21.4), and against $FERRO_IRONIC_POLICY too when it names another Ironic's
// policy.py (e.g. master's: git -C ironic show HEAD:ironic/common/policy.py).
func TestPolicyTable_IsIronicsPolicy(t *testing.T) {
	python := "/usr/bin/python3"
	if err := exec.Command(python, "-c", "import oslo_policy, ironic.common.policy").Run(); err != nil {
		ferrotest.SkipOrFail(t, "%s cannot import Ironic's policy (Debian package python3-ironic; .ci/run installs it): %v", python, err)
	}
	run := func(args ...string) {
		t.Helper()
		out, err := exec.CommandContext(t.Context(), python, append([]string{"testdata/check_policy_table.py"}, args...)...).CombinedOutput()
		if err != nil {
			t.Errorf("check_policy_table.py %s: %v\n%s", strings.Join(args, " "), err, out)
			return
		}
		t.Logf("check_policy_table.py %s: %s", strings.Join(args, " "), bytes.TrimSpace(out))
	}
	run(policyTable)
	if p := os.Getenv("FERRO_IRONIC_POLICY"); p != "" {
		run("--policy", p, policyTable)
	}
}

// tableFixture is what the rows of one persona column are asked about: a
// node of project a (leased to project b, or not) and one of each resource
// that belongs to it.
type tableFixture struct {
	node, name, owner, lessee                 string
	port, portgroup, connector, target, trait string
	event                                     string
}

// tableEnv is a ferro serve with the objects the table's rows name.
type tableEnv struct {
	t                  *testing.T
	base               string
	admin              func(*http.Request) // the system admin (or the http_basic user)
	projectA, projectB string
	leased, unleased   tableFixture
	other              string // a node of project b: where a move is refused
	allocation         string // an allocation of project a
	chassis, template  string
	rule               string // an inspection rule
	runbook            string // a runbook of project a, not public
	hostname           string
	seq                atomic.Int64
}

func (e *tableEnv) next() int64 { return e.seq.Add(1) }

// answer is one response: its status and Ironic's faultstring.
type answer struct {
	status int
	msg    string
}

func (a answer) String() string { return fmt.Sprintf("%d %q", a.status, a.msg) }

// send sends a request as the persona whose credentials as sets (nil:
// none) and returns the answer.
func (e *tableEnv) send(as func(*http.Request), method, path, body string) answer {
	e.t.Helper()
	a, _ := e.sendRaw(as, method, path, body)
	return a
}

// sendRaw is send that also returns the body of the answer.
func (e *tableEnv) sendRaw(as func(*http.Request), method, path, body string) (answer, []byte) {
	e.t.Helper()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequestWithContext(e.t.Context(), method, e.base+path, rd)
	if err != nil {
		e.t.Fatal(err)
	}
	req.Header.Set("X-OpenStack-Ironic-API-Version", "latest")
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	if as != nil {
		as(req)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		e.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return answer{resp.StatusCode, faultString(b)}, b
}

// faultString is the message of an Ironic error body ("" for others).
func faultString(b []byte) string {
	var doc struct {
		ErrorMessage string `json:"error_message"`
	}
	if json.Unmarshal(b, &doc) != nil || doc.ErrorMessage == "" {
		return ""
	}
	var fault struct {
		FaultString string `json:"faultstring"`
	}
	if json.Unmarshal([]byte(doc.ErrorMessage), &fault) != nil {
		return doc.ErrorMessage
	}
	return fault.FaultString
}

// must sends a request as the admin that must succeed, decoding the answer.
func (e *tableEnv) must(method, path string, body any, out any) {
	e.t.Helper()
	b, err := json.Marshal(body)
	if err != nil {
		e.t.Fatal(err)
	}
	if body == nil {
		b = nil
	}
	req, err := http.NewRequestWithContext(e.t.Context(), method, e.base+path, bytes.NewReader(b))
	if err != nil {
		e.t.Fatal(err)
	}
	req.Header.Set("X-OpenStack-Ironic-API-Version", "latest")
	req.Header.Set("Content-Type", "application/json")
	e.admin(req)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		e.t.Fatal(err)
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	if resp.StatusCode/100 != 2 {
		e.t.Fatalf("fixture: %s %s: HTTP %d: %s", method, path, resp.StatusCode, data)
	}
	if out != nil {
		if err := json.Unmarshal(data, out); err != nil {
			e.t.Fatalf("fixture: %s %s: %v", method, path, err)
		}
	}
}

type uuidOnly struct {
	UUID string `json:"uuid"`
}

// newNode creates a fake-hardware node of owner, leased to lessee.
func (e *tableEnv) newNode(owner, lessee string) (id, name string) {
	name = fmt.Sprintf("tbl-node-%d", e.next())
	doc := map[string]any{"driver": "fake-hardware", "name": name, "owner": owner}
	if lessee != "" {
		doc["lessee"] = lessee
	}
	var n uuidOnly
	e.must("POST", "/v1/nodes", doc, &n)
	return n.UUID, name
}

func (e *tableEnv) mac() string {
	i := e.next()
	return fmt.Sprintf("52:54:%02x:%02x:%02x:%02x", (i>>24)&0xff, (i>>16)&0xff, (i>>8)&0xff, i&0xff)
}

func (e *tableEnv) newPort(node string) string {
	var p uuidOnly
	e.must("POST", "/v1/ports", map[string]any{"node_uuid": node, "address": e.mac()}, &p)
	return p.UUID
}

func (e *tableEnv) newPortgroup(node string) string {
	var p uuidOnly
	e.must("POST", "/v1/portgroups", map[string]any{"node_uuid": node, "name": fmt.Sprintf("tbl-pg-%d", e.next())}, &p)
	return p.UUID
}

func (e *tableEnv) newConnector(node string) string {
	var v uuidOnly
	e.must("POST", "/v1/volume/connectors", map[string]any{"node_uuid": node, "type": "iqn",
		"connector_id": fmt.Sprintf("iqn.2026-01.table:%d", e.next())}, &v)
	return v.UUID
}

func (e *tableEnv) newTarget(node string) string {
	var v uuidOnly
	i := e.next()
	e.must("POST", "/v1/volume/targets", map[string]any{"node_uuid": node, "volume_type": "iscsi",
		"volume_id": fmt.Sprintf("table-volume-%d", i), "boot_index": i}, &v)
	return v.UUID
}

func (e *tableEnv) newAllocation() string {
	var a uuidOnly
	e.must("POST", "/v1/allocations", map[string]any{"resource_class": "table-none", "owner": e.projectA}, &a)
	return a.UUID
}

func (e *tableEnv) newChassis() string {
	var c uuidOnly
	e.must("POST", "/v1/chassis", map[string]any{"description": "table"}, &c)
	return c.UUID
}

func (e *tableEnv) newTemplate() string {
	var d uuidOnly
	e.must("POST", "/v1/deploy_templates", map[string]any{"name": fmt.Sprintf("CUSTOM_TABLE_%d", e.next()),
		"steps": []any{map[string]any{"interface": "bios", "step": "apply_configuration", "args": map[string]any{}, "priority": 10}}}, &d)
	return d.UUID
}

func (e *tableEnv) newRule() string {
	var r uuidOnly
	e.must("POST", "/v1/inspection_rules", map[string]any{"description": "table",
		"actions": []any{map[string]any{"op": "log", "args": map[string]any{"msg": "table"}}}}, &r)
	return r.UUID
}

// newRunbook creates a runbook that project a owns: created without an
// owner (an http_basic user may give none) and given one by a PATCH.
func (e *tableEnv) newRunbook() string {
	var r uuidOnly
	e.must("POST", "/v1/runbooks", map[string]any{"name": fmt.Sprintf("table-runbook-%d", e.next()),
		"steps": []any{map[string]any{"interface": "bios", "step": "apply_configuration", "order": 1}}}, &r)
	e.must("PATCH", "/v1/runbooks/"+r.UUID, []any{map[string]any{"op": "add", "path": "/owner", "value": e.projectA}}, nil)
	return r.UUID
}

func (e *tableEnv) newFixture(lessee string) tableFixture {
	f := tableFixture{owner: e.projectA, lessee: lessee, trait: "CUSTOM_TABLE"}
	f.node, f.name = e.newNode(e.projectA, lessee)
	f.port = e.newPort(f.node)
	f.portgroup = e.newPortgroup(f.node)
	f.connector = e.newConnector(f.node)
	f.target = e.newTarget(f.node)
	e.must("PUT", "/v1/nodes/"+f.node+"/traits/"+f.trait, nil, nil)
	var h struct {
		History []uuidOnly `json:"history"`
	}
	e.must("GET", "/v1/nodes/"+f.node+"/history", nil, &h)
	f.event = "no-such-event"
	if len(h.History) > 0 {
		f.event = h.History[0].UUID
	}
	return f
}

// newTableEnv creates the table's objects through admin.
func newTableEnv(t *testing.T, base, projectA, projectB string, admin func(*http.Request)) *tableEnv {
	e := &tableEnv{t: t, base: base, admin: admin, projectA: projectA, projectB: projectB}
	e.leased = e.newFixture(projectB)
	e.unleased = e.newFixture("")
	e.other, _ = e.newNode(projectB, "")
	e.allocation = e.newAllocation()
	e.chassis = e.newChassis()
	e.template = e.newTemplate()
	e.rule = e.newRule()
	e.runbook = e.newRunbook()
	var c struct {
		Conductors []struct {
			Hostname string `json:"hostname"`
		} `json:"conductors"`
	}
	e.must("GET", "/v1/conductors", nil, &c)
	e.hostname = "no-such-conductor"
	if len(c.Conductors) > 0 {
		e.hostname = c.Conductors[0].Hostname
	}
	return e
}

// objectWildcards are the path wildcards that name an object a row's
// rule may be checked against (the others name a part of one).
var objectWildcards = []string{"{node}", "{port}", "{portgroup}", "{volume}", "{allocation}", "{chassis}", "{template}", "{rule}", "{runbook}"}

var wildcardRE = regexp.MustCompile(`\{[a-z]+\}`)

// request is one cell's request, and the idents it names, for the
// requests that ask the same of objects that are not there.
type request struct {
	method, path, body string
	pathObject         string // the ident of the path's object, "" when none
	bodyRefs           []string
}

// build fills a row's path and body for a persona's column. A DELETE of
// an object removes a fresh one, made for the cell.
func (e *tableEnv) build(r tableRow, persona string) request {
	f := e.leased
	if persona[0] == 'x' {
		f = e.unleased
	}
	fresh := r.method == "DELETE"
	rq := request{method: r.method}
	rq.path = strings.ReplaceAll(r.pattern, "{$}", "")
	rq.path = wildcardRE.ReplaceAllStringFunc(rq.path, func(w string) string {
		var v string
		switch w {
		case "{node}":
			v = f.node
			if fresh && strings.HasSuffix(r.pattern, "/{node}") {
				v, _ = e.newNode(f.owner, f.lessee)
			}
		case "{port}":
			v = f.port
			if fresh {
				v = e.newPort(f.node)
			}
		case "{portgroup}":
			v = f.portgroup
			if fresh && strings.HasSuffix(r.pattern, "/{portgroup}") {
				v = e.newPortgroup(f.node)
			}
		case "{volume}":
			connectors := strings.Contains(r.pattern, "/connectors/")
			switch {
			case connectors && fresh:
				v = e.newConnector(f.node)
			case connectors:
				v = f.connector
			case fresh:
				v = e.newTarget(f.node)
			default:
				v = f.target
			}
		case "{allocation}":
			v = e.allocation
			if fresh {
				v = e.newAllocation()
			}
		case "{chassis}":
			v = e.chassis
			if fresh {
				v = e.newChassis()
			}
		case "{template}":
			v = e.template
			if fresh {
				v = e.newTemplate()
			}
		case "{rule}":
			v = e.rule
			if fresh {
				v = e.newRule()
			}
		case "{runbook}":
			v = e.runbook
			if fresh && strings.HasSuffix(r.pattern, "/{runbook}") {
				v = e.newRunbook()
			}
		case "{trait}":
			v = f.trait
		case "{event}":
			v = f.event
		case "{setting}":
			v = "table"
		case "{vif}":
			v = "8b8f3ec4-8f2a-4f3e-9c0d-1a2b3c4d5e6f"
		case "{driver}":
			v = "fake-hardware"
		case "{hostname}":
			v = e.hostname
		default:
			e.t.Fatalf("%v: no value for %s", r, w)
		}
		if slices.Contains(objectWildcards, w) {
			rq.pathObject = v
		}
		return v
	})
	if r.pattern == "/v1/nodes/validate" {
		rq.path += "?node=" + f.node
		rq.pathObject = f.node
	}
	js := func(v any) string {
		b, _ := json.Marshal(v)
		return string(b)
	}
	nullable := func(s string) any {
		if s == "" {
			return nil
		}
		return s
	}
	i := e.next()
	refs := map[string]string{"{node_uuid}": f.node, "{name}": f.name, "{other_node}": e.other}
	rq.body = r.body
	for k, v := range refs {
		if strings.Contains(rq.body, k) {
			rq.bodyRefs = append(rq.bodyRefs, v)
		}
		rq.body = strings.ReplaceAll(rq.body, k, js(v))
	}
	rq.body = strings.NewReplacer("{mac}", js(e.mac()), "{unique}", js(fmt.Sprintf("table-%d", i)),
		"{index}", fmt.Sprint(i), "{lessee}", js(nullable(f.lessee)), "{owner}", js(f.owner)).Replace(rq.body)
	return rq
}

// missing are the answers to rq with one of the objects it names replaced
// by one that does not exist: what a concealed object must answer.
func (e *tableEnv) missing(as func(*http.Request), rq request) []answer {
	var out []answer
	for _, ident := range rq.idents() {
		ghost := uuid.NewString()
		a := e.send(as, rq.method, strings.ReplaceAll(rq.path, ident, ghost), strings.ReplaceAll(rq.body, ident, ghost))
		a.msg = strings.ReplaceAll(a.msg, ghost, ident)
		out = append(out, rq.normal(a))
	}
	return out
}

// idents are the objects rq names.
func (rq request) idents() []string {
	var ids []string
	if rq.pathObject != "" {
		ids = append(ids, rq.pathObject)
	}
	return append(ids, rq.bodyRefs...)
}

// normal is a with every ident rq names written <ident>, so that the
// answers for an object and for one that is not there compare.
func (rq request) normal(a answer) answer {
	for _, id := range rq.idents() {
		a.msg = strings.ReplaceAll(a.msg, id, "<ident>")
	}
	return a
}

// concealed reports whether a answers as one of the missing answers.
func concealed(a answer, rq request, missing []answer) bool {
	return slices.Contains(missing, rq.normal(a))
}

// checkCell asks one cell and compares the answer with want (a table
// answer, its star dropped).
func (e *tableEnv) checkCell(r tableRow, persona string, as func(*http.Request), want string) {
	e.t.Helper()
	rq := e.build(r, persona)
	a := e.send(as, rq.method, rq.path, rq.body)
	where := fmt.Sprintf("%v as %s (%s %s %s)", r, persona, rq.method, rq.path, rq.body)
	policyDenial := a.status == http.StatusForbidden && strings.HasPrefix(a.msg, "Access was denied to the following resource: ")
	switch want {
	case "401":
		if a.status != http.StatusUnauthorized {
			e.t.Errorf("%s: %v, want 401", where, a)
		}
	case "403":
		rule := strings.TrimPrefix(a.msg, "Access was denied to the following resource: ")
		// Ironic's refusal of a runbook that is not public leaves its
		// message's placeholder unformatted (check_and_retrieve_public_runbook).
		if rule == "%(resource)s" && r.kind == "runbook" && r.method == http.MethodGet {
			rule = r.rules[0]
		}
		if !policyDenial || !slices.Contains(r.rules, rule) {
			e.t.Errorf("%s: %v, want 403 naming %s", where, a, strings.Join(r.rules, " or "))
		}
	case "nf":
		if m := e.missing(as, rq); !concealed(a, rq, m) {
			e.t.Errorf("%s: %v, want the answer for an object that is not there: %v", where, a, m)
		}
	case "y":
		if a.status == http.StatusUnauthorized || policyDenial {
			e.t.Errorf("%s: %v, want the policy to let it through", where, a)
		} else if m := e.missing(as, rq); concealed(a, rq, m) {
			e.t.Errorf("%s: %v is the answer for an object that is not there, want the object's", where, a)
		}
	default:
		e.t.Fatalf("%v: unknown answer %q", r, want)
	}
}

// TestPolicyTable_Keystone asks a ferro serve with auth_strategy keystone
// every cell of the table, as each persona with a token from a real
// Keystone.
func TestPolicyTable_Keystone(t *testing.T) {
	rows := readPolicyTable(t)
	ks := keystonetest.Start(t)
	p := ks.CreatePersonas(t, "tbl")
	ferro := (&keystoneLane{ks: ks, p: p}).startFerro(t, 300)
	tokens := map[string]func(*http.Request){}
	users := map[string]string{"sa": "system-admin", "sr": "system-reader", "aA": "a-admin", "aM": "a-member",
		"aR": "a-reader", "bA": "b-admin", "bM": "b-member", "bR": "b-reader"}
	for col, user := range users {
		tk := ks.IssueToken(t, p.Users[user].Credentials()).ID
		tokens[col] = func(r *http.Request) { r.Header.Set("X-Auth-Token", tk) }
	}
	for _, c := range []string{"xA", "xM", "xR"} {
		tokens[c] = tokens["b"+c[1:]]
	}
	e := newTableEnv(t, ferro.URL, p.ProjectA, p.ProjectB, tokens["sa"])
	cells := 0
	for _, r := range rows {
		for _, col := range tableColumns {
			e.checkCell(r, col, tokens[col], strings.TrimSuffix(r.cells[col], "*"))
			cells++
		}
	}
	t.Logf("%d rows × %d personas: %d cells asked", len(rows), len(tableColumns), cells)
}

// TestPolicyTable_HTTPBasic asks every row of the table of a ferro serve
// with auth_strategy http_basic, anonymously and as a user of the file. An
// http_basic user has no project and no role, and Ironic enforces no policy
// but for keystone, so this is the table's subset: the anonymous column,
// and one user to whom every route answers as to the system admin
// without policy — through, but for moves to a node of another owner,
// which Ironic refuses whatever the strategy (nf).
func TestPolicyTable_HTTPBasic(t *testing.T) {
	rows := readPolicyTable(t)
	users := ferrotest.Htpasswd(t, nil, "operator", "operator pass")
	conf := writeConfig(t, "[DEFAULT]\nauth_strategy = http_basic\nhttp_basic_auth_user_file = "+users+"\n")
	ferro := ferrotest.Start(t, ferrotest.WithConfig(conf))
	user := func(r *http.Request) { r.SetBasicAuth("operator", "operator pass") }
	e := newTableEnv(t, ferro.URL, "project-a", "project-b", user)
	for _, r := range rows {
		anonymous, authed := "401", "y"
		switch r.kind {
		case "public":
			anonymous = "y"
		case "move":
			authed = "nf"
		}
		e.checkCell(r, "an", nil, anonymous)
		e.checkCell(r, "sa", user, authed)
	}
	t.Logf("%d rows × 2 (anonymous, a user)", len(rows))
}
