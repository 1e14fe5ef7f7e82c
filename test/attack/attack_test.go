// Package attack replays, against a real `ferro serve`, the resource attacks
// a client on loopback could make, and checks that each is bounded: huge
// concurrent reports, huge patches, deep nesting, slow bodies and
// connection floods. Every loop here is bounded in count and time.
package attack

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ferrometal/ferro/internal/testing/ferrotest"
)

// peakRSS is the process's peak resident set size (VmHWM), in bytes.
func peakRSS(t *testing.T, pid int) int64 {
	t.Helper()
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		t.Fatal(err)
	}
	for line := range strings.SplitSeq(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
			if err != nil {
				t.Fatal(err)
			}
			return kb << 10
		}
	}
	t.Fatal("no VmHWM in /proc/pid/status")
	return 0
}

// openFDs counts the process's open file descriptors (its sockets among them).
func openFDs(t *testing.T, pid int) int {
	t.Helper()
	ents, err := os.ReadDir(fmt.Sprintf("/proc/%d/fd", pid))
	if err != nil {
		t.Fatal(err)
	}
	return len(ents)
}

// hugeReports returns 16 MiB report bodies of the shapes that cost a JSON
// decoder the most memory: as many small values as the limit allows, padded
// with one big string; and far too many numbers.
func hugeReports() [][]byte {
	const size = 16<<20 - 64
	var maxed bytes.Buffer
	maxed.WriteString(`{"inventory":{"interfaces":[]},"x":[`)
	for i := range 500_000 {
		if i > 0 {
			maxed.WriteByte(',')
		}
		maxed.WriteString(`{}`)
	}
	maxed.WriteString(`],"logs":"`)
	maxed.WriteString(strings.Repeat("A", size-maxed.Len()-2))
	maxed.WriteString(`"}`)

	var numbers bytes.Buffer
	numbers.WriteString(`{"inventory":{"interfaces":[]},"x":[1`)
	for numbers.Len() < size-2 {
		numbers.WriteString(",1")
	}
	numbers.WriteString(`]}`)
	return [][]byte{maxed.Bytes(), numbers.Bytes()}
}

// 50 agents posting 16 MiB at once: at most a few reports are read and
// decoded at a time, so memory stays bounded and other clients are served.
func TestAttack_ConcurrentHugeReportsKeepMemoryBounded(t *testing.T) {
	s := ferrotest.Start(t, ferrotest.WithEnv("FERRO_PROCESSING_MAX_CONCURRENT_REPORTS=4"))
	bodies := hugeReports()
	const agents = 50
	var wg sync.WaitGroup
	codes := make([]int, agents)
	for i := range agents {
		wg.Go(func() {
			resp, err := http.Post(s.URL+"/v1/continue", "", bytes.NewReader(bodies[i%len(bodies)]))
			if err != nil {
				t.Errorf("agent %d: %v", i, err)
				return
			}
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			codes[i] = resp.StatusCode
		})
	}
	// Meanwhile the API answers.
	for range 5 {
		if code, b := ferrotest.Call(t, s.URL, "GET", "/v1/nodes", nil); code != 200 {
			t.Errorf("GET /v1/nodes during the attack: %d %s", code, b)
		}
	}
	wg.Wait()
	for i, c := range codes {
		// 400 (too many values / no node found) or 404; never a 5xx but the 503 "retry".
		if c/100 != 4 && c != http.StatusServiceUnavailable {
			t.Errorf("agent %d: HTTP %d", i, c)
		}
	}
	rss := peakRSS(t, s.Pid())
	t.Logf("peak RSS after %d concurrent 16 MiB reports: %.0f MiB", agents, float64(rss)/(1<<20))
	if rss > 1<<30 {
		t.Errorf("peak RSS %d MiB, want at most 1024 MiB", rss>>20)
	}
}

func patchOps(n int) []map[string]any {
	ops := make([]map[string]any, n)
	for i := range ops {
		ops[i] = map[string]any{"op": "add", "path": fmt.Sprintf("/extra/k%d", i), "value": strings.Repeat("v", 40)}
	}
	return ops
}

// A patch of 8,000 operations is refused at once; 1,000 are applied.
func TestAttack_HugePatchIsRefusedAndABigOneIsCheap(t *testing.T) {
	s := ferrotest.Start(t)
	var n struct{ UUID string }
	ferrotest.Must(t, s.URL, "POST", "/v1/nodes", map[string]any{"driver": "fake-hardware"}, &n)
	if code, b := ferrotest.Call(t, s.URL, "PATCH", "/v1/nodes/"+n.UUID, patchOps(8000)); code != 400 || !strings.Contains(string(b), "at most 1000 operations") {
		t.Errorf("8,000 ops: %d %s", code, b)
	}
	if code, b := ferrotest.Call(t, s.URL, "PATCH", "/v1/nodes/"+n.UUID, patchOps(1000)); code != 200 {
		t.Errorf("1,000 ops: %d %s", code, b)
	}
}

// extra nested 9,999 levels deep is refused, so listing nodes keeps working.
func TestAttack_DeepNestingIsRefused(t *testing.T) {
	s := ferrotest.Start(t)
	deep := `{"driver":"fake-hardware","extra":{"a":` + strings.Repeat(`{"a":`, 9999) + "1" + strings.Repeat("}", 9999) + "}}"
	req, _ := http.NewRequest("POST", s.URL+"/v1/nodes", strings.NewReader(deep))
	req.Header.Set("X-OpenStack-Ironic-API-Version", "latest")
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 400 || !strings.Contains(string(b), "nesting too deep") {
		t.Errorf("deep extra: %d %s", resp.StatusCode, b)
	}
	if code, b := ferrotest.Call(t, s.URL, "GET", "/v1/nodes/detail", nil); code != 200 {
		t.Errorf("node list after: %d %s", code, b)
	}
}

// A client that trickles its body is cut off at the socket timeout, on the
// API and on the callback alike.
func TestAttack_SlowBodiesAreClosed(t *testing.T) {
	s := ferrotest.Start(t, ferrotest.WithEnv("FERRO_DEFAULT_CLIENT_SOCKET_TIMEOUT=2"))
	addr := strings.TrimPrefix(s.URL, "http://")
	const clients = 20
	closed := make(chan string, clients)
	for i := range clients {
		path := "/v1/nodes"
		if i%2 == 1 {
			path = "/v1/continue"
		}
		go func() {
			c, err := net.Dial("tcp", addr)
			if err != nil {
				closed <- err.Error()
				return
			}
			defer c.Close()
			fmt.Fprintf(c, "POST %s HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 100000\r\n\r\n{", path)
			// One byte per 200 ms, for at most 30 s: the server must close first.
			for range 150 {
				time.Sleep(200 * time.Millisecond)
				if _, err := c.Write([]byte(" ")); err != nil {
					closed <- ""
					return
				}
				c.SetReadDeadline(time.Now().Add(time.Millisecond))
				if _, err := bufio.NewReader(c).ReadByte(); err != nil && !isTimeout(err) {
					closed <- "" // closed (EOF or reset), possibly after an error answer
					return
				}
			}
			closed <- "still open after 30 s"
		}()
	}
	for range clients {
		if msg := <-closed; msg != "" {
			t.Errorf("slow client to %s: %s", s.URL, msg)
		}
	}
}

func isTimeout(err error) bool {
	ne, ok := err.(net.Error)
	return ok && ne.Timeout()
}

// A flood of idle connections holds at most [api]max_connections sockets;
// a real client is served once the idle ones time out.
func TestAttack_ConnectionFloodIsCapped(t *testing.T) {
	const limit = 20
	s := ferrotest.Start(t, ferrotest.WithEnv("FERRO_API_MAX_CONNECTIONS="+strconv.Itoa(limit), "FERRO_DEFAULT_CLIENT_SOCKET_TIMEOUT=2"))
	base := openFDs(t, s.Pid())
	addr := strings.TrimPrefix(s.URL, "http://")
	var conns []net.Conn
	for range 3 * limit {
		c, err := net.Dial("tcp", addr) // the kernel completes the handshake; ferro accepts at most limit
		if err != nil {
			t.Fatal(err)
		}
		conns = append(conns, c)
	}
	defer func() {
		for _, c := range conns {
			c.Close()
		}
	}()
	// A real request gets through: idle connections are dropped after the
	// header timeout, freeing their slots.
	client := &http.Client{Timeout: 60 * time.Second}
	resp, err := client.Get(s.URL + "/v1")
	if err != nil {
		t.Fatalf("GET /v1 during the flood: %v", err)
	}
	resp.Body.Close()
	if got := openFDs(t, s.Pid()) - base; got > limit+5 {
		t.Errorf("ferro holds %d more descriptors during a flood of %d connections, want at most about %d", got, 3*limit, limit)
	}
}
