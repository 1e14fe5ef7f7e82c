package inspector_test

import (
	"bufio"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	inspectorapi "github.com/ferrometal/ferro/internal/api/inspector"
)

// A client that sends its report's headers and then trickles the body is
// answered 408 and disconnected once the body-read deadline passes,
// instead of holding the connection for as long as it likes.
func TestContinue_SlowBodyIsCutOff(t *testing.T) {
	r := newRig(t)
	h := inspectorapi.New(inspectorapi.Options{Service: r.svc, Rules: r.store, Log: quietLog(), ReportReadTimeout: 300 * time.Millisecond})
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)

	conn, err := net.Dial("tcp", srv.Listener.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	fmt.Fprintf(conn, "POST /v1/continue HTTP/1.1\r\nHost: x\r\nContent-Length: 100000\r\n\r\n{\"inventory\"")
	// Wait for the answer; the client never sends the rest.
	conn.SetReadDeadline(time.Now().Add(30 * time.Second))
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatalf("no answer to a stalled report: %v", err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusRequestTimeout {
		t.Errorf("stalled report: HTTP %d, want 408", resp.StatusCode)
	}
	if !resp.Close {
		t.Errorf("the connection is kept open after a stalled report")
	}
}
