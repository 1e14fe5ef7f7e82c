// Package lifecycle_test checks how `ferro serve` starts and stops as a
// whole: what refuses a start does so before anything begins, and SIGTERM
// drains the HTTP servers and the conductor in order.
package lifecycle_test

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/ferrometal/ferro/internal/baremetal"
	sqlstore "github.com/ferrometal/ferro/internal/store/sql"
	"github.com/ferrometal/ferro/internal/testing/ferrotest"
)

// TestServe_RefusesToStartBeforeAnythingBegins: a busy port, an unreadable
// certificate or a missing netboot interface ends ferro serve with exit 1
// and a message naming the cause, before the conductor has recovered or
// registered anything.
func TestServe_RefusesToStartBeforeAnythingBegins(t *testing.T) {
	busy, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer busy.Close()
	busyPort := strconv.Itoa(busy.Addr().(*net.TCPAddr).Port)
	port := func() string { return strconv.Itoa(ferrotest.FreePort(t)) }
	for _, tc := range []struct {
		name string
		env  []string
		want []string
	}{
		{"api port in use", []string{"FERRO_API_PORT=" + busyPort, "FERRO_INSPECTOR_LISTEN_PORT=" + port()},
			[]string{"listen for api on 127.0.0.1:" + busyPort, "address already in use"}},
		{"inspector port in use", []string{"FERRO_API_PORT=" + port(), "FERRO_INSPECTOR_LISTEN_PORT=" + busyPort},
			[]string{"listen for inspector on 127.0.0.1:" + busyPort, "address already in use"}},
		{"certificate missing", []string{"FERRO_API_PORT=" + port(), "FERRO_INSPECTOR_LISTEN_PORT=" + port(),
			"FERRO_API_ENABLE_SSL_API=true", "FERRO_SSL_CERT_FILE=/nonexistent/ferro.pem", "FERRO_SSL_KEY_FILE=/nonexistent/ferro.key"},
			[]string{"load [ssl]cert_file and key_file", "/nonexistent/ferro.pem"}},
		{"netboot interface missing", func() []string {
			api := port()
			return []string{"FERRO_API_PORT=" + api, "FERRO_INSPECTOR_LISTEN_PORT=" + port(),
				"FERRO_DHCP_DHCP_PROVIDER=builtin", "FERRO_NETBOOT_INTERFACE=ferro-nosuch0",
				"FERRO_NETBOOT_LISTEN_ADDRESS=127.0.0.1", "FERRO_NETBOOT_RANGE_START=127.0.0.100",
				"FERRO_NETBOOT_RANGE_END=127.0.0.110", "FERRO_NETBOOT_NETMASK=255.0.0.0",
				// Unprivileged ports, so that nothing else on the machine is touched.
				"FERRO_NETBOOT_DHCP_PORT=" + port(), "FERRO_NETBOOT_TFTP_PORT=" + port(),
				"FERRO_DEPLOY_HTTP_URL=http://127.0.0.1:" + api + "/httpboot"}
		}(), []string{"cannot bind to interface ferro-nosuch0: no such device"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
			defer cancel()
			dir := t.TempDir()
			cmd := exec.CommandContext(ctx, ferrotest.Binary(t), "serve", "--data-dir", dir)
			cmd.Env = append([]string{"PATH=" + os.Getenv("PATH"), "FERRO_API_HOST_IP=127.0.0.1",
				"FERRO_INSPECTOR_LISTEN_ADDRESS=127.0.0.1"}, tc.env...)
			out, err := cmd.CombinedOutput()
			if ctx.Err() != nil {
				t.Fatalf("ferro serve kept running; want a refusal\n%s", out)
			}
			if code := cmd.ProcessState.ExitCode(); err == nil || code != 1 {
				t.Errorf("ferro serve: %v (exit %d), want exit 1", err, code)
			}
			for _, w := range tc.want {
				if !bytes.Contains(out, []byte(w)) {
					t.Errorf("the refusal does not say %q:\n%s", w, out)
				}
			}
			for _, never := range []string{"conductor started", "ferro started"} {
				if bytes.Contains(out, []byte(never)) {
					t.Errorf("ferro serve logged %q before refusing to start:\n%s", never, out)
				}
			}
		})
	}
}

// TestServe_SIGTERMDrainsInOrder: on SIGTERM ferro serve stops accepting
// connections at once, finishes the request in flight (its body arrives
// after the signal), gives the conductor's running task
// [conductor]graceful_shutdown_timeout and then cancels it (a power check
// against a BMC that never answers), releases the node's lock, unregisters
// the conductor and exits 0 — a second SIGTERM while it drains changes
// nothing.
func TestServe_SIGTERMDrainsInOrder(t *testing.T) {
	// A BMC that never answers: a bound UDP socket nobody reads.
	bmc, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer bmc.Close()
	srv := ferrotest.Start(t, ferrotest.WithEnv("FERRO_CONDUCTOR_GRACEFUL_SHUTDOWN_TIMEOUT=2",
		"FERRO_IPMI_COMMAND_RETRY_TIMEOUT=600", "FERRO_IPMI_MIN_COMMAND_INTERVAL=0"))

	var n baremetal.Node
	ferrotest.Must(t, srv.URL, http.MethodPost, "/v1/nodes", map[string]any{"driver": "ipmi", "driver_info": map[string]any{
		"ipmi_address": "127.0.0.1", "ipmi_port": bmc.LocalAddr().(*net.UDPAddr).Port, "ipmi_username": "admin", "ipmi_password": "secret",
	}}, &n)
	if code, b := ferrotest.Call(t, srv.URL, http.MethodPut, "/v1/nodes/"+n.UUID+"/states/provision", map[string]any{"target": "manage"}); code != http.StatusAccepted {
		t.Fatalf("manage: %d %s", code, b)
	}
	var got map[string]any
	ferrotest.Must(t, srv.URL, http.MethodGet, "/v1/nodes/"+n.UUID, nil, &got)
	if got["provision_state"] != "verifying" || got["reservation"] == nil {
		t.Fatalf("node %v reserved by %v, want verifying and locked by its running task", got["provision_state"], got["reservation"])
	}

	// A request in flight: its handler has started (Go's server answers
	// "100 Continue" when it first reads the body), its body not sent yet.
	body := []byte(`{"driver": "fake-hardware", "name": "created-while-draining"}`)
	conn, err := net.Dial("tcp", "127.0.0.1:"+strconv.Itoa(srv.Port))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	fmt.Fprintf(conn, "POST /v1/nodes HTTP/1.1\r\nHost: ferro\r\nContent-Type: application/json\r\nX-OpenStack-Ironic-API-Version: latest\r\n"+
		"Expect: 100-continue\r\nContent-Length: %d\r\n\r\n", len(body))
	rd := bufio.NewReader(conn)
	conn.SetReadDeadline(time.Now().Add(30 * time.Second))
	if line, err := rd.ReadString('\n'); err != nil || !strings.HasPrefix(line, "HTTP/1.1 100 ") {
		t.Fatalf("no 100 Continue for the request: %q, %v", line, err)
	}
	if line, err := rd.ReadString('\n'); err != nil || line != "\r\n" {
		t.Fatalf("after 100 Continue: %q, %v", line, err)
	}

	if err := srv.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	// New connections are refused once the API server shut its listener.
	deadline := time.Now().Add(30 * time.Second)
	for {
		c, err := net.Dial("tcp", "127.0.0.1:"+strconv.Itoa(srv.Port))
		if err != nil {
			break
		}
		c.Close()
		if time.Now().After(deadline) {
			t.Fatalf("the API still accepts connections 30 s after SIGTERM:\n%s", srv.Log())
		}
		time.Sleep(20 * time.Millisecond)
	}
	if err := srv.Signal(syscall.SIGTERM); err != nil { // absorbed while draining
		t.Fatal(err)
	}
	conn.Write(body)
	resp, err := http.ReadResponse(rd, nil)
	if err != nil {
		t.Fatalf("the request in flight got no answer: %v\n%s", err, srv.Log())
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusCreated {
		t.Errorf("the request in flight: %s, want 201 Created", resp.Status)
	}

	srv.Stop(t) // waits for the exit and fails the test unless it is 0
	log := srv.Log()
	for _, want := range []string{"graceful stop timed out; cancelling running tasks", "conductor stopped"} {
		if !strings.Contains(log, want) {
			t.Errorf("ferro did not log %q:\n%s", want, log)
		}
	}
	db, err := sqlstore.Open(t.Context(), "sqlite://"+filepath.Join(srv.DataDir, "ferro.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	after, err := db.GetNode(t.Context(), n.UUID)
	if err != nil {
		t.Fatal(err)
	}
	if after.Reservation != "" {
		t.Errorf("node still reserved by %q after the stop", after.Reservation)
	}
	if _, err := db.GetNode(t.Context(), "created-while-draining"); err != nil {
		t.Errorf("the node created by the request in flight: %v", err)
	}
	if cs, err := db.ListConductors(t.Context(), time.Time{}); err != nil || len(cs) != 0 {
		t.Errorf("conductors registered after the stop: %v, %v", cs, err)
	}
}
