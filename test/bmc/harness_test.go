// Package bmc_test drives ferro's ipmi and redfish hardware types end to
// end: a real `ferro serve` enrolling the machines of a real ferro-vbmc
// process, through the Ironic API, with what the BMCs were told read back
// from ferro-vbmc's own state and request log.
package bmc_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/ferrometal/ferro/internal/testing/ferrotest"
	"github.com/ferrometal/ferro/internal/testing/vbmctest"
	"github.com/ferrometal/ferro/internal/vbmc"
)

// bmcPassword is every test BMC's password: long and unlikely, so that
// AssertNoSecrets finds it wherever it leaks.
const bmcPassword = "Vb-7q2sK9-pw"

// lab is a ferro serve and a ferro-vbmc serving its machines.
type lab struct {
	t   *testing.T
	srv *ferrotest.Server
	v   *vbmctest.VBMC
	// secrets are grepped for in both processes' logs when the test ends.
	secrets []string
}

// startLab starts ferro-vbmc with machines (request log on) and ferro serve
// with env. When the test ends, both logs must be free of every password
// the test used.
func startLab(t *testing.T, machines []vbmc.MachineConfig, env ...string) *lab {
	t.Helper()
	v := vbmctest.Start(t, vbmctest.Config{Password: bmcPassword, Machines: machines, RequestLog: true})
	srv := ferrotest.Start(t, ferrotest.WithEnv(env...))
	l := &lab{t: t, srv: srv, v: v, secrets: []string{bmcPassword}}
	t.Cleanup(func() {
		ferrotest.AssertNoSecrets(t, "ferro serve", srv.Log(), l.secrets...)
		ferrotest.AssertNoSecrets(t, "ferro-vbmc", v.Log(), l.secrets...)
	})
	return l
}

func (l *lab) ipmiInfo(machine, password string) map[string]any {
	e := l.v.IPMI[machine]
	return map[string]any{"ipmi_address": e.Host, "ipmi_port": e.Port, "ipmi_username": l.v.Username,
		"ipmi_password": password, "ipmi_cipher_suite": "3"}
}

func (l *lab) redfishInfo(machine, password string) map[string]any {
	return map[string]any{"redfish_address": l.v.RedfishURL, "redfish_system_id": "/redfish/v1/Systems/" + machine,
		"redfish_username": l.v.Username, "redfish_password": password}
}

// node is the part of an Ironic node these tests read.
type node struct {
	UUID             string         `json:"uuid"`
	Name             string         `json:"name"`
	ProvisionState   string         `json:"provision_state"`
	TargetProvision  *string        `json:"target_provision_state"`
	PowerState       *string        `json:"power_state"`
	TargetPowerState *string        `json:"target_power_state"`
	LastError        *string        `json:"last_error"`
	Reservation      *string        `json:"reservation"`
	DriverInfo       map[string]any `json:"driver_info"`
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

// create enrolls a node and returns it (still in enroll).
func (l *lab) create(name, driver string, info map[string]any) node {
	l.t.Helper()
	var n node
	ferrotest.Must(l.t, l.srv.URL, http.MethodPost, "/v1/nodes",
		map[string]any{"name": name, "driver": driver, "driver_info": info}, &n)
	return n
}

// get reads a node.
func (l *lab) get(ident string) node {
	l.t.Helper()
	var n node
	ferrotest.Must(l.t, l.srv.URL, http.MethodGet, "/v1/nodes/"+ident, nil, &n)
	return n
}

// list reads every node (the fields these tests use) in one request.
func list(base string) ([]node, error) {
	q := url.Values{"fields": {"uuid,name,provision_state,target_provision_state,power_state,target_power_state,last_error,reservation"}, "limit": {"1000"}}
	code, b, err := ferrotest.Send(base, http.MethodGet, "/v1/nodes?"+q.Encode(), nil)
	if err != nil {
		return nil, err
	}
	if code != http.StatusOK {
		return nil, fmt.Errorf("list nodes: HTTP %d: %s", code, b)
	}
	var body struct {
		Nodes []node `json:"nodes"`
	}
	if err := json.Unmarshal(b, &body); err != nil {
		return nil, fmt.Errorf("list nodes: %w", err)
	}
	return body.Nodes, nil
}

// waitNodes polls the node list until done holds for every node named in
// names (or the timeout, which fails the test with the nodes still
// pending). done also sees nodes that failed, so it can stop on last_error.
func (l *lab) waitNodes(names map[string]bool, what string, timeout time.Duration, done func(node) bool) map[string]node {
	l.t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		nodes, err := list(l.srv.URL)
		if err != nil {
			l.t.Fatal(err)
		}
		out := map[string]node{}
		var pending []string
		for _, n := range nodes {
			if !names[n.Name] {
				continue
			}
			out[n.Name] = n
			if !done(n) {
				pending = append(pending, n.Name)
			}
		}
		if len(pending) == 0 && len(out) == len(names) {
			return out
		}
		if time.Now().After(deadline) {
			l.t.Fatalf("%s: after %v, %d node(s) still pending: %v", what, timeout, len(pending), head(pending, 10))
		}
		time.Sleep(200 * time.Millisecond) // no event to wait on: the API is polled, as a client would
	}
}

func head(s []string, n int) []string { return s[:min(n, len(s))] }

// provision sends a provision verb and returns the HTTP status and body.
func (l *lab) provision(ident, target string) (int, []byte) {
	return ferrotest.Call(l.t, l.srv.URL, http.MethodPut, "/v1/nodes/"+ident+"/states/provision", map[string]any{"target": target})
}

// power sends a power target and returns the HTTP status and body.
func (l *lab) power(ident, target string) (int, []byte) {
	return ferrotest.Call(l.t, l.srv.URL, http.MethodPut, "/v1/nodes/"+ident+"/states/power", map[string]any{"target": target})
}

// waitStable waits until ident has no target states and no reservation.
func (l *lab) waitStable(ident string, timeout time.Duration) node {
	l.t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		n := l.get(ident)
		if n.TargetProvision == nil && n.TargetPowerState == nil && n.Reservation == nil {
			return n
		}
		if time.Now().After(deadline) {
			l.t.Fatalf("node %s not at rest after %v: %+v", ident, timeout, n)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// errorMessage is the faultstring of an Ironic error body.
func errorMessage(b []byte) string {
	var body struct {
		ErrorMessage string `json:"error_message"`
	}
	if json.Unmarshal(b, &body) != nil {
		return string(b)
	}
	var inner struct {
		Faultstring string `json:"faultstring"`
	}
	if json.Unmarshal([]byte(body.ErrorMessage), &inner) != nil || inner.Faultstring == "" {
		return body.ErrorMessage
	}
	return inner.Faultstring
}

func containsAll(s string, subs ...string) bool {
	for _, sub := range subs {
		if !strings.Contains(s, sub) {
			return false
		}
	}
	return true
}
