package attack

import (
	"bytes"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ferrometal/ferro/internal/testing/ferrotest"
)

// reportSize is just under the 16 MiB a report may have.
const reportSize = 16<<20 - 1024

// ipaReports returns n report bodies of reportSize bytes in the stock
// agent's shape (test/inspection/testdata/ipa-payload-example.json), each
// with MACs of its own.
func ipaReports(t *testing.T, n int) [][]byte {
	t.Helper()
	example, err := os.ReadFile("../inspection/testdata/ipa-payload-example.json")
	if err != nil {
		t.Fatal(err)
	}
	bodies := make([][]byte, n)
	for i := range bodies {
		var rep map[string]any
		if err := json.Unmarshal(example, &rep); err != nil {
			t.Fatal(err)
		}
		inv := rep["inventory"].(map[string]any)
		for j, ifc := range inv["interfaces"].([]any) {
			ifc.(map[string]any)["mac_address"] = fmt.Sprintf("3c:fd:fe:%02x:%02x:%02x", i>>8, i&0xff, j)
		}
		pxe := fmt.Sprintf("3c:fd:fe:%02x:%02x:00", i>>8, i&0xff)
		inv["boot"].(map[string]any)["pxe_interface"] = pxe
		rep["boot_interface"] = "01-" + strings.ReplaceAll(pxe, ":", "-")
		inv["bmc_address"] = fmt.Sprintf("198.51.100.%d", i%250+1)
		// The `logs` collector's base64 tarball fills what the rest
		// leaves; every other report also has the `pci-devices`
		// collector's list, as long as the value limit allows (many small
		// objects: a JSON decoder's worst case).
		if i%2 == 1 {
			var devs bytes.Buffer
			devs.WriteByte('[')
			for k := range 65_000 { // 7 values each: 455,000 of the 524,288 a report may have
				if k > 0 {
					devs.WriteByte(',')
				}
				fmt.Fprintf(&devs, `{"vendor_id":"8086","product_id":"%04x","class":"020000","revision":"02","bus":"0000:%02x:%02x.%d","numa_node_id":0}`,
					k&0xffff, k>>8&0xff, k&0xff, k&7)
			}
			devs.WriteByte(']')
			inv["pci_devices"] = json.RawMessage(devs.Bytes())
		}
		b, err := json.Marshal(rep)
		if err != nil {
			t.Fatal(err)
		}
		raw := make([]byte, base64.StdEncoding.DecodedLen(reportSize-len(b)-len(`"logs":"",`)-8))
		rand.Read(raw)
		b = append([]byte(`{"logs":"`+base64.StdEncoding.EncodeToString(raw)+`",`), b[1:]...)
		if len(b) > reportSize {
			t.Fatalf("report %d is %d bytes, more than %d", i, len(b), reportSize)
		}
		bodies[i] = b
	}
	return bodies
}

// TestAttack_FiftyIPAReportsStayUnder512MiB: 50 agents post 16 MiB
// reports at once to the inspector's /v1/continue on a default ferro
// serve. Its peak RSS (VmHWM) stays under 512 MiB, and the API answers
// meanwhile.
func TestAttack_FiftyIPAReportsStayUnder512MiB(t *testing.T) {
	const agents = 50
	bodies := ipaReports(t, agents)
	s := ferrotest.Start(t)
	// One node per report, waiting for it (the inspector API's start
	// without managed boot), found by its PXE MAC.
	for i := range agents {
		var n struct{ UUID string }
		ferrotest.Must(t, s.URL, "POST", "/v1/nodes", map[string]any{"driver": "fake-hardware", "name": fmt.Sprintf("flood-%d", i)}, &n)
		ferrotest.Must(t, s.URL, "POST", "/v1/ports", map[string]any{"node_uuid": n.UUID, "address": fmt.Sprintf("3c:fd:fe:%02x:%02x:00", i>>8, i&0xff)}, nil)
		ferrotest.Must(t, s.URL, "POST", "/v1/introspection/"+n.UUID+"?manage_boot=false", nil, nil)
	}
	base := peakRSS(t, s.Pid())
	began := time.Now()
	var wg sync.WaitGroup
	codes := make([]int, agents)
	var done atomic.Int32
	for i := range agents {
		wg.Go(func() {
			defer done.Add(1)
			resp, err := http.Post(s.URL+"/v1/continue", "", bytes.NewReader(bodies[i]))
			if err != nil {
				t.Errorf("agent %d: %v", i, err)
				return
			}
			msg, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
			resp.Body.Close()
			codes[i] = resp.StatusCode
			if resp.StatusCode != http.StatusOK && resp.StatusCode != http.StatusServiceUnavailable {
				t.Errorf("agent %d: HTTP %d: %s", i, resp.StatusCode, msg)
			}
		})
	}
	// Meanwhile the API answers, every time.
	var calls int
	var slowest time.Duration
	for done.Load() < agents {
		start := time.Now()
		if code, b := ferrotest.Call(t, s.URL, "GET", "/v1/nodes", nil); code != 200 {
			t.Errorf("GET /v1/nodes during the flood: %d %s", code, b)
		}
		slowest = max(slowest, time.Since(start))
		calls++
	}
	wg.Wait()
	count := map[int]int{}
	// Processed (200), or 503 "retry" from the queue; never anything else.
	for _, c := range codes {
		count[c]++
	}
	rss := peakRSS(t, s.Pid())
	t.Logf("%d concurrent 16 MiB IPA reports: answers %v in %v; %d API calls meanwhile, slowest %v; peak RSS %.0f MiB (%.0f MiB at start)",
		agents, count, time.Since(began).Round(time.Second), calls, slowest.Round(time.Millisecond), float64(rss)/(1<<20), float64(base)/(1<<20))
	if rss > 512<<20 {
		t.Errorf("peak RSS %d MiB, want under 512 MiB", rss>>20)
	}
}
