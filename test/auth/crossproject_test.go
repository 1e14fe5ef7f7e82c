package auth_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/ferrometal/ferro/internal/testing/keystonetest"
)

// TestIssue17_CrossProject replays issue 17's cross-project findings
// against a ferro serve with Keystone personas: a project reserving another
// project's node (item 2), a project admin moving its port onto another
// project's node (item 4), a lessee reading driver_info and switching the
// console and cleaning (item 6), and another project's node answering
// otherwise than a missing one.
func TestIssue17_CrossProject(t *testing.T) {
	ks := keystonetest.Start(t)
	p := ks.CreatePersonas(t, "xp")
	ferro := (&keystoneLane{ks: ks, p: p}).startFerro(t, 300)
	as := map[string]func(*http.Request){}
	for _, user := range []string{"system-admin", "system-reader", "a-admin", "a-member", "a-reader", "b-admin", "b-member", "b-reader"} {
		tk := ks.IssueToken(t, p.Users[user].Credentials()).ID
		as[user] = func(r *http.Request) { r.Header.Set("X-Auth-Token", tk) }
	}
	e := &tableEnv{t: t, base: ferro.URL, admin: as["system-admin"], projectA: p.ProjectA, projectB: p.ProjectB}

	// send asks persona, returning the answer and the body.
	send := func(persona, method, path string, body any) (answer, map[string]any) {
		t.Helper()
		var b string
		if body != nil {
			raw, _ := json.Marshal(body)
			b = string(raw)
		}
		var out map[string]any
		a, raw := e.sendRaw(as[persona], method, path, b)
		_ = json.Unmarshal(raw, &out)
		return a, out
	}
	// sameAsMissing checks that persona's request naming ident answers as
	// the same request naming an object that is not there.
	sameAsMissing := func(persona, method, path string, body any, ident string) answer {
		t.Helper()
		raw, _ := json.Marshal(body)
		if body == nil {
			raw = nil
		}
		got, _ := e.sendRaw(as[persona], method, path, string(raw))
		ghost := uuid.NewString()
		if !isUUID(ident) {
			ghost = "ghost-" + ghost[:8]
		}
		missing, _ := e.sendRaw(as[persona], method, strings.ReplaceAll(path, ident, ghost), strings.ReplaceAll(string(raw), ident, ghost))
		missing.msg = strings.ReplaceAll(missing.msg, ghost, ident)
		if got != missing {
			t.Errorf("%s %s %s %s: %v, but for an object that is not there %v", persona, method, path, raw, got, missing)
		}
		return got
	}
	nodeField := func(id, field string) any {
		t.Helper()
		var n map[string]any
		e.must("GET", "/v1/nodes/"+id, nil, &n)
		return n[field]
	}

	t.Run("allocation of another project's node (item 2)", func(t *testing.T) {
		bNode, bName := e.newNode(p.ProjectB, "")
		e.must("PATCH", "/v1/nodes/"+bNode, []any{map[string]any{"op": "add", "path": "/resource_class", "value": "class-of-b"}}, nil)
		e.makeAvailable(bNode)

		got := sameAsMissing("a-member", "POST", "/v1/allocations", map[string]any{"node": bNode}, bNode)
		if got.status/100 == 2 || nodeField(bNode, "allocation_uuid") != nil {
			t.Fatalf("a-member reserved project b's node: %v, allocation_uuid %v", got, nodeField(bNode, "allocation_uuid"))
		}
		got = sameAsMissing("a-member", "POST", "/v1/allocations", map[string]any{"resource_class": "class-of-b", "candidate_nodes": []string{bName}}, bName)
		if strings.Contains(got.msg, bNode) || got.status/100 == 2 {
			t.Errorf("candidate_nodes [%s]: %v names or takes project b's node %s", bName, got, bNode)
		}
		got = sameAsMissing("a-member", "POST", "/v1/allocations", map[string]any{"node": bNode, "resource_class": "other"}, bNode)
		if strings.Contains(got.msg, "class-of-b") {
			t.Errorf("a resource class mismatch names project b's class: %v", got)
		}
		// The node's own project may.
		if a, body := send("b-member", "POST", "/v1/allocations", map[string]any{"node": bNode}); a.status != http.StatusCreated || body["node_uuid"] != bNode {
			t.Errorf("b-member backfills its own node: %v %v", a, body)
		}
	})

	t.Run("port moved onto another project's node (item 4)", func(t *testing.T) {
		aNode, _ := e.newNode(p.ProjectA, "")
		aOther, _ := e.newNode(p.ProjectA, "")
		bNode, _ := e.newNode(p.ProjectB, "")
		port, pg := e.newPort(aNode), e.newPortgroup(aNode)
		connector, target := e.newConnector(aNode), e.newTarget(aNode)
		bPortgroup := e.newPortgroup(bNode)
		move := []any{map[string]any{"op": "replace", "path": "/node_uuid", "value": bNode}}
		for _, path := range []string{"/v1/ports/" + port, "/v1/portgroups/" + pg, "/v1/volume/connectors/" + connector, "/v1/volume/targets/" + target} {
			got := sameAsMissing("a-admin", "PATCH", path, move, bNode)
			if got.status != http.StatusBadRequest {
				t.Errorf("a-admin PATCH %s node_uuid to project b's node: %v, want 400", path, got)
			}
			var v map[string]any
			e.must("GET", path, nil, &v)
			if v["node_uuid"] != aNode {
				t.Errorf("%s moved to %v", path, v["node_uuid"])
			}
		}
		// Nor is it created there, nor joined to b's portgroup.
		mac := e.mac()
		if a, _ := send("a-admin", "POST", "/v1/ports", map[string]any{"node_uuid": bNode, "address": mac}); a.status != http.StatusForbidden {
			t.Errorf("a-admin creates a port on project b's node: %v, want 403", a)
		}
		var ports struct {
			Ports []any `json:"ports"`
		}
		e.must("GET", "/v1/ports?address="+mac, nil, &ports)
		if len(ports.Ports) != 0 {
			t.Errorf("a port with %s exists: %v", mac, ports.Ports)
		}
		sameAsMissing("a-admin", "PATCH", "/v1/ports/"+port, []any{map[string]any{"op": "replace", "path": "/portgroup_uuid", "value": bPortgroup}}, bPortgroup)
		// Within its project it may.
		if a, _ := send("a-admin", "PATCH", "/v1/ports/"+port, []any{map[string]any{"op": "replace", "path": "/node_uuid", "value": aOther}}); a.status != http.StatusOK {
			t.Errorf("a-admin moves its port to its other node: %v", a)
		}
	})

	t.Run("a lessee's driver_info, console and cleaning (item 6)", func(t *testing.T) {
		leased, _ := e.newNode(p.ProjectA, p.ProjectB)
		e.must("PATCH", "/v1/nodes/"+leased, []any{map[string]any{"op": "add", "path": "/driver_info", "value": map[string]any{
			"ipmi_address": "192.0.2.9", "ipmi_username": "root", "ipmi_password": "bmc-secret", "deploy_kernel": "http://boot.example/kernel"}}}, nil)
		redacted := map[string]any{"content": "** Redacted - requires baremetal:node:get:driver_info permission. **"}
		for _, path := range []string{"/v1/nodes/" + leased, "/v1/nodes/" + leased + "?fields=driver_info,driver_internal_info,last_error"} {
			for _, persona := range []string{"b-admin", "b-member", "b-reader"} {
				_, n := send(persona, "GET", path, nil)
				if fmt.Sprint(n["driver_info"]) != fmt.Sprint(redacted) {
					t.Errorf("%s GET %s: driver_info %v, want it redacted", persona, path, n["driver_info"])
				}
				if di, _ := n["driver_internal_info"].(map[string]any); !strings.Contains(fmt.Sprint(di["content"]), "Redacted") {
					t.Errorf("%s GET %s: driver_internal_info %v, want it redacted", persona, path, n["driver_internal_info"])
				}
				if le, _ := n["last_error"].(string); !strings.Contains(le, "Redacted") {
					t.Errorf("%s GET %s: last_error %v, want it redacted", persona, path, n["last_error"])
				}
			}
		}
		_, list := send("b-member", "GET", "/v1/nodes/detail", nil)
		if strings.Contains(fmt.Sprint(list), "192.0.2.9") {
			t.Errorf("b-member's node list shows the BMC address: %v", list)
		}
		for _, persona := range []string{"a-reader", "system-reader"} {
			_, n := send(persona, "GET", "/v1/nodes/"+leased, nil)
			di, _ := n["driver_info"].(map[string]any)
			if di["ipmi_address"] != "192.0.2.9" || di["ipmi_password"] != "******" {
				t.Errorf("%s sees driver_info %v, want the address with the password masked", persona, n["driver_info"])
			}
		}
		for _, tc := range []struct {
			persona, method, path string
			body                  any
			want                  int // 0: through the policy
		}{
			{"b-member", "PUT", "/states/console", map[string]any{"enabled": true}, http.StatusForbidden},
			{"b-admin", "PUT", "/states/console", map[string]any{"enabled": true}, http.StatusForbidden},
			{"a-member", "PUT", "/states/console", map[string]any{"enabled": false}, 0},
			{"b-admin", "PATCH", "", []any{map[string]any{"op": "replace", "path": "/automated_clean", "value": false}}, http.StatusForbidden},
			{"a-admin", "PATCH", "", []any{map[string]any{"op": "replace", "path": "/automated_clean", "value": false}}, http.StatusForbidden},
			{"system-admin", "PATCH", "", []any{map[string]any{"op": "replace", "path": "/automated_clean", "value": false}}, 0},
			{"b-admin", "PATCH", "", []any{map[string]any{"op": "replace", "path": "/driver_info/deploy_kernel", "value": "http://attacker/k"}}, http.StatusForbidden},
			{"b-member", "PATCH", "", []any{map[string]any{"op": "replace", "path": "/maintenance", "value": true}}, 0},
			{"b-admin", "PATCH", "", []any{map[string]any{"op": "replace", "path": "/lessee", "value": p.ProjectA}}, http.StatusForbidden},
			{"a-admin", "PATCH", "", []any{map[string]any{"op": "replace", "path": "/owner", "value": p.ProjectB}}, http.StatusForbidden},
			{"b-member", "PATCH", "", []any{map[string]any{"op": "replace", "path": "/retired", "value": true}}, http.StatusForbidden},
		} {
			a, _ := send(tc.persona, tc.method, "/v1/nodes/"+leased+tc.path, tc.body)
			denied := a.status == http.StatusForbidden && strings.HasPrefix(a.msg, "Access was denied")
			if (tc.want == http.StatusForbidden) != denied {
				t.Errorf("%s %s %s %v: %v, want %s", tc.persona, tc.method, tc.path, tc.body, a,
					map[bool]string{true: "403", false: "the policy to let it through"}[tc.want == http.StatusForbidden])
			}
		}
	})

	t.Run("another project's node answers as a missing one", func(t *testing.T) {
		aNode, aName := e.newNode(p.ProjectA, "")
		for _, persona := range []string{"b-admin", "b-member", "b-reader"} {
			for _, r := range []struct{ method, path string }{{"GET", "/v1/nodes/" + aNode}, {"PUT", "/v1/nodes/" + aNode + "/maintenance"},
				{"GET", "/v1/nodes/" + aName}, {"DELETE", "/v1/nodes/" + aNode}, {"GET", "/v1/nodes/" + aNode + "/ports"}} {
				ident := aNode
				if strings.HasSuffix(r.path, aName) {
					ident = aName
				}
				if got := sameAsMissing(persona, r.method, r.path, nil, ident); got.status != http.StatusNotFound {
					t.Errorf("%s %s %s: %v, want 404", persona, r.method, r.path, got)
				}
			}
		}
	})
}

func isUUID(s string) bool { _, err := uuid.Parse(s); return err == nil && len(s) == 36 }

// makeAvailable moves a fake-hardware node from enroll to available.
func (e *tableEnv) makeAvailable(node string) {
	e.t.Helper()
	for _, step := range []struct{ target, state string }{{"manage", "manageable"}, {"provide", "available"}} {
		e.must("PUT", "/v1/nodes/"+node+"/states/provision", map[string]any{"target": step.target}, nil)
		deadline := time.Now().Add(2 * time.Minute)
		for nodeState(e, node) != step.state {
			if time.Now().After(deadline) {
				e.t.Fatalf("node %s did not reach %s: %s", node, step.state, nodeState(e, node))
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
}

func nodeState(e *tableEnv, node string) string {
	var n struct {
		State string `json:"provision_state"`
	}
	e.must("GET", "/v1/nodes/"+node, nil, &n)
	return n.State
}
