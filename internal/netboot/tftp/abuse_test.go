package tftp

import (
	"crypto/sha256"
	"encoding/binary"
	"fmt"
	"net"
	"os/exec"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// waitStats waits (30 s at most) until cond holds for the server's
// counters; every change it waits for is logged.
func (f *fixture) waitStats(t *testing.T, what string, cond func(Stats) bool) Stats {
	t.Helper()
	timeout := time.After(30 * time.Second)
	for {
		st := f.srv.Stats()
		if cond(st) {
			return st
		}
		select {
		case <-f.log.notify:
		case <-timeout:
			t.Fatalf("%s: never happened; stats %+v", what, st)
		}
	}
}

// drain reads what the server already sent to c (loopback delivers a
// datagram before the send returns) and returns its bytes and packets.
func drain(c *net.UDPConn) (bytes, packets int) {
	buf := make([]byte, 70000)
	for {
		c.SetReadDeadline(time.Now().Add(20 * time.Millisecond))
		n, _, err := c.ReadFromUDP(buf)
		if err != nil {
			return bytes, packets
		}
		bytes += n
		packets++
	}
}

// TestServe_AmplificationOfUnacknowledgedRequests sends read requests
// that are never acknowledged, as a forged source address would, and
// measures what the server sends back in all until it forgets each one:
// never more than MaxAmplification (10) times the request's bytes, UDP
// payload against UDP payload. The figures are logged.
func TestServe_AmplificationOfUnacknowledgedRequests(t *testing.T) {
	f := newFixture(t, Options{SinglePort: true, Limits: Limits{FirstACKTimeout: 400 * time.Millisecond}}, false)
	for i, tc := range []struct {
		name    string
		req     []byte
		repeats int // the same request sent again, as a client whose answer was lost
	}{
		{"no options, 100 kB file", rrq("odd"), 1},
		{"no options, 511-byte file", rrq("b511"), 1},
		{"no options, empty file", rrq("empty"), 1},
		{"only options out of range", rrq("odd", "blksize", "7", "windowsize", "0"), 1},
		{"tsize", rrq("odd", "tsize", "0"), 1},
		{"blksize 1468, windowsize 16, tsize", rrq("odd", "blksize", "1468", "windowsize", "16", "tsize", "0"), 1},
		{"timeout 255, blksize 65464, windowsize 65535, tsize", rrq("odd", "timeout", "255", "blksize", "65464", "windowsize", "65535", "tsize", "0"), 1},
		{"blksize 1468, tsize, sent 3 times", rrq("odd", "blksize", "1468", "tsize", "0"), 3},
		{"missing file", rrq("missing", "tsize", "0"), 1},
	} {
		c, srv := rawClientFrom(t, f.port, fmt.Sprintf("127.0.1.%d", i+1))
		before := f.srv.Stats()
		for range tc.repeats {
			c.WriteToUDP(tc.req, srv)
		}
		// The transfer is over once the server refused it or forgot it.
		f.waitStats(t, tc.name, func(st Stats) bool {
			return st.Refused+st.Unacknowledged > before.Refused+before.Unacknowledged
		})
		got, packets := drain(c)
		sent := len(tc.req) * tc.repeats
		ratio := float64(got) / float64(sent)
		t.Logf("%-55s request %3d B: %2d packets, %5d B back: %5.2f×", tc.name, sent, packets, got, ratio)
		if ratio > DefaultMaxAmplification {
			t.Errorf("%s: %d bytes back for %d: %.1f×, want at most %d×", tc.name, got, sent, ratio, DefaultMaxAmplification)
		}
	}
}

// TestServe_BlindAcknowledgementInSinglePortMode measures what a forged
// request gets when the forger also acknowledges the OACK blindly (in
// single-port mode the server's port is known): one window, then the
// first block alone on each retry, until the stall timeout. Logged, not
// bounded: per-transfer ports (tftp_single_port = false) close this.
func TestServe_BlindAcknowledgementInSinglePortMode(t *testing.T) {
	f := newFixture(t, Options{SinglePort: true, Timeout: 100 * time.Millisecond, Limits: Limits{StallTimeout: 1500 * time.Millisecond}}, false)
	c, srv := rawClientFrom(t, f.port, "127.0.2.1")
	req := rrq("odd", "blksize", "1468", "windowsize", "16", "tsize", "0")
	c.WriteToUDP(req, srv)
	c.WriteToUDP(ack(0), srv) // without having read the OACK
	f.waitStats(t, "the stalled transfer ends", func(st Stats) bool { return st.Failed > 0 })
	got, packets := drain(c)
	sent := len(req) + 4
	t.Logf("blind ACK of the OACK: %d B sent, %d packets / %d B back (one window of 16 × 1468, then block 1 on each retry): %.0f×",
		sent, packets, got, float64(got)/float64(sent))
	// One window and at most Retries single blocks, plus the error.
	if limit := 16*1472 + DefaultRetries*1472 + 64 + 64; got > limit {
		t.Errorf("%d bytes back, want at most one window and %d single blocks (%d)", got, DefaultRetries, limit)
	}
}

// TestServe_FloodOfUnacknowledgedRequestsStopsNoBoot replays item 5 of
// issue 17: read requests with timeout=255 from many addresses, never
// acknowledged, more than tftp_max_transfers of them. An independent
// client is served during and after the flood, and the server has
// forgotten every flood transfer within FirstACKTimeout of the last one.
func TestServe_FloodOfUnacknowledgedRequestsStopsNoBoot(t *testing.T) {
	f := newFixture(t, Options{SinglePort: true}, false)
	atftp := clients[3] // windowsize 8, blksize 1428
	const sources, rounds = 200, 3
	var sent atomic.Int64
	flood := func() {
		for range rounds {
			for i := range sources {
				c, srv := rawClientFrom(t, f.port, fmt.Sprintf("127.0.%d.%d", 10+i/250, 1+i%250))
				c.WriteToUDP(rrq("odd", "timeout", "255", "blksize", "1468", "tsize", "0"), srv)
				sent.Add(1)
				c.Close()
			}
		}
	}
	flood()
	got, out, err := atftp.get(t, f.port, "odd")
	if err != nil || sha256.Sum256(got) != f.sums["odd"] {
		t.Fatalf("atftp after a flood of %d unacknowledged requests: %v, %d bytes: %s", sent.Load(), err, len(got), out)
	}
	// And while another flood goes on.
	var wg sync.WaitGroup
	wg.Go(flood)
	got, out, err = atftp.get(t, f.port, "odd")
	wg.Wait()
	if err != nil || sha256.Sum256(got) != f.sums["odd"] {
		t.Fatalf("atftp during a flood: %v, %d bytes: %s", err, len(got), out)
	}
	stopped := time.Now()
	// The loopback socket may drop some of the flood when its buffer is
	// full: the ones that reached the server are those it counts.
	st := f.waitStats(t, "every flood transfer forgotten", func(Stats) bool { return f.srv.tablesEmpty() })
	t.Logf("%d unacknowledged requests sent from %d addresses, %d reached the server: all forgotten %v after the last (%d of them replaced by newer ones); stats %+v",
		sent.Load(), sources, st.Unacknowledged, time.Since(stopped).Round(100*time.Millisecond), st.Replaced, st)
	if st.Served != 2 || st.Refused != 0 {
		t.Errorf("stats %+v, want both atftp transfers served and nothing refused", st)
	}
}

// tablesEmpty reports whether no transfer is counted anywhere.
func (s *Server) tablesEmpty() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.transfers)+len(s.pending)+len(s.perClient)+s.active == 0
}

// TestServe_PerClientBoundsAndRate: one address's transfers are bounded
// (its oldest unacknowledged one gives way), and so is its request rate;
// another address is not affected by either.
func TestServe_PerClientBoundsAndRate(t *testing.T) {
	f := newFixture(t, Options{SinglePort: true, Limits: Limits{MaxTransfersPerClient: 2, ClientRequestRate: 5}}, false)
	// Three requests from three ports of one address: the first gives way.
	var conns []*net.UDPConn
	for range 3 {
		c, srv := rawClientFrom(t, f.port, "127.0.3.1")
		c.WriteToUDP(rrq("odd", "tsize", "0"), srv)
		if p, _ := read(t, c, 5*time.Second); len(p) < 2 || binary.BigEndian.Uint16(p) != opOACK {
			t.Fatalf("answer %q, want an OACK", p)
		}
		conns = append(conns, c)
	}
	f.waitStats(t, "the oldest gives way", func(st Stats) bool { return st.Replaced == 1 })
	// The two left are served; the first is forgotten (no answer to its ACK).
	for i, c := range conns {
		c.WriteToUDP(ack(0), f.srv.Addr().(*net.UDPAddr))
		var p []byte
		for {
			// The OACK may have been sent again meanwhile.
			if p, _ = read(t, c, time.Second); p == nil || binary.BigEndian.Uint16(p) != opOACK {
				break
			}
		}
		if got := p != nil && binary.BigEndian.Uint16(p) == opDATA; got != (i > 0) {
			t.Errorf("transfer %d after its ACK: %q", i, p)
		}
		c.WriteToUDP([]byte{0, opERROR, 0, 0, 0}, f.srv.Addr().(*net.UDPAddr)) // done with it
	}
	// A burst past the rate (10 = twice 5 a second) is dropped unanswered.
	c, srv := rawClientFrom(t, f.port, "127.0.3.2")
	for range 30 {
		c.WriteToUDP(rrq("missing"), srv)
	}
	// Another address is answered at once, after the burst was read.
	other, srv2 := rawClientFrom(t, f.port, "127.0.3.3")
	other.WriteToUDP(rrq("missing"), srv2)
	if p, _ := read(t, other, 5*time.Second); len(p) < 4 || binary.BigEndian.Uint16(p[2:]) != errNotFound {
		t.Errorf("another address during the burst: %q", p)
	}
	_, answered := drain(c)
	st := f.srv.Stats()
	t.Logf("a burst of 30 requests at 5 a second: %d answered, %d dropped", answered, st.Limited)
	if answered > 11 || st.Limited < 19 {
		t.Errorf("%d of the burst answered, %d dropped; want at most the burst of 10 (and one refilled)", answered, st.Limited)
	}
}

// TestServe_ClientTimeoutCappedAndStallsEnd: a client's timeout option
// past MaxClientTimeout is not granted, and an acknowledged transfer that
// stops making progress ends after StallTimeout however many retries are
// left.
func TestServe_ClientTimeoutCappedAndStallsEnd(t *testing.T) {
	f := newFixture(t, Options{SinglePort: true, Timeout: 200 * time.Millisecond, Retries: 1000, BlockSize: 65464, Limits: Limits{StallTimeout: time.Second}}, false)
	c, srv := rawClient(t, f.port)
	c.WriteToUDP(rrq("odd", "timeout", "255", "windowsize", "16", "blksize", "8192"), srv)
	p, _ := read(t, c, 5*time.Second)
	// timeout past the cap (5 s) is left out; the window holds 64 KiB.
	if want := "\x00\x06windowsize\x008\x00blksize\x008192\x00"; string(p) != want {
		t.Errorf("OACK %q, want %q", p, want)
	}
	c, srv = rawClient(t, f.port)
	c.WriteToUDP(rrq("b511", "timeout", "3"), srv)
	if p, _ := read(t, c, 5*time.Second); string(p) != "\x00\x06timeout\x003\x00" {
		t.Errorf("OACK %q, want timeout 3 granted", p)
	}
	c.WriteToUDP(ack(0), srv)
	began := time.Now()
	st := f.waitStats(t, "the stalled transfer ends", func(st Stats) bool { return st.Failed-st.Unacknowledged == 1 })
	t.Logf("stalled after its first ACK: ended after %v with %d retransmissions", time.Since(began).Round(100*time.Millisecond), st.Retransmits)
	for {
		p, _ := read(t, c, time.Second)
		if p == nil {
			t.Fatal("no error at the end")
		}
		if binary.BigEndian.Uint16(p) == opERROR {
			break
		}
	}
	if !strings.Contains(f.log.String(), "no progress") {
		t.Error("the end was not the stall timeout")
	}
}

// TestServe_RequestsWithoutOptionsForLargeFiles: independent RFC 1350
// clients (no option) get a short error for a file whose block 1 would be
// more than 10 times their request, and small files as usual.
func TestServe_RequestsWithoutOptionsForLargeFiles(t *testing.T) {
	f := newFixture(t, Options{SinglePort: true}, false)
	for _, c := range clients {
		if !c.rfc1350 {
			continue
		}
		// curl does not print the server's message: its status 71 says
		// it got an error of code 0.
		got, out, err := c.get(t, f.port, "odd")
		ee, _ := err.(*exec.ExitError)
		if err == nil || !strings.Contains(out, "ask tsize or blksize") && (c.tool != "curl" || ee == nil || ee.ExitCode() != 71) {
			t.Errorf("%s get odd: %v, %d bytes: %s; want the error asking for options", c.name, err, len(got), out)
		}
		if _, out, err := c.get(t, f.port, "empty"); err != nil {
			t.Errorf("%s get empty: %v: %s", c.name, err, out)
		}
	}
}
