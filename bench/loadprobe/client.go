package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"sync"
	"syscall"
	"time"
)

// apiVersion is the microversion the probe asks for, as `baremetal` does
// after negotiation.
const apiVersion = "1.82"

// client is a keep-alive HTTP client for the Ironic API. It keeps one idle
// connection per worker so no request pays for a TCP handshake.
type client struct {
	base string
	http *http.Client
	cred credential
}

func newClient(base string, workers int) *client {
	tr := &http.Transport{
		MaxIdleConns:        workers + 4,
		MaxIdleConnsPerHost: workers + 4,
		IdleConnTimeout:     time.Minute,
		DisableCompression:  true,
		// A detailed list is over a megabyte: read it in large pieces.
		ReadBufferSize: 64 << 10,
	}
	return &client{base: base, http: &http.Client{Transport: tr, Timeout: time.Minute}}
}

// do sends a request and returns the status and the whole body.
func (c *client) do(method, path string, body []byte) (int, []byte, error) {
	resp, err := c.send(method, path, body)
	if err != nil {
		return 0, nil, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return resp.StatusCode, b, err
}

// discardBuf is what bodies the probe does not look at are read into.
var discardBuf = sync.Pool{New: func() any { return new([64 << 10]byte) }}

// doDiscard sends a request and reads the whole body without keeping it
// (but for an error status, whose body it returns), so that the time
// measured is the server's and the transfer's, not the probe's decoding.
func (c *client) doDiscard(method, path string) (int, int64, []byte, error) {
	resp, err := c.send(method, path, nil)
	if err != nil {
		return 0, 0, nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode >= 300 {
		b, err := io.ReadAll(resp.Body)
		return resp.StatusCode, int64(len(b)), b, err
	}
	buf := discardBuf.Get().(*[64 << 10]byte)
	defer discardBuf.Put(buf)
	n, err := io.CopyBuffer(struct{ io.Writer }{io.Discard}, resp.Body, buf[:])
	return resp.StatusCode, n, nil, err
}

// send sends a request with the probe's headers.
func (c *client) send(method, path string, body []byte) (*http.Response, error) {
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req, err := http.NewRequest(method, c.base+path, rd)
	if err != nil {
		return nil, err
	}
	req.Header.Set("X-OpenStack-Ironic-API-Version", apiVersion)
	c.cred.apply(req)
	req.Header.Set("Accept", "application/json")
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	return c.http.Do(req)
}

// nodeBody is a create request for node i: fake-hardware, with the
// properties and BMC credentials an enrolled machine has.
func nodeBody(i int) []byte {
	return fmt.Appendf(nil, `{"driver": "fake-hardware", "name": "probe-%05d", "resource_class": "baremetal",`+
		` "properties": {"cpus": 32, "memory_mb": 262144, "local_gb": 446, "cpu_arch": "x86_64"},`+
		` "driver_info": {"ipmi_address": "10.0.%d.%d", "ipmi_username": "admin", "ipmi_password": "secret"},`+
		` "extra": {"rack": "r%02d"}}`, i, i/250, i%250+1, i%40)
}

// createNodes creates n nodes from workers concurrent clients and returns
// their UUIDs in creation-index order and each request's latency.
func (c *client) createNodes(n, workers int) ([]string, []time.Duration, error) {
	uuids := make([]string, n)
	lat := make([]time.Duration, n)
	err := parallel(n, workers, func(i int) error {
		body := nodeBody(i)
		t0 := time.Now()
		st, b, err := c.do(http.MethodPost, "/v1/nodes", body)
		lat[i] = time.Since(t0)
		if err != nil {
			return err
		}
		if st != http.StatusCreated {
			return fmt.Errorf("create node %d: %d %s", i, st, b)
		}
		var node struct {
			UUID string `json:"uuid"`
		}
		if err := json.Unmarshal(b, &node); err != nil {
			return fmt.Errorf("create node %d: %w", i, err)
		}
		uuids[i] = node.UUID
		return nil
	})
	return uuids, lat, err
}

// listDetailTimed lists every node with details and returns the body's
// size without decoding it: listDetail, untimed, checks the content.
func (c *client) listDetailTimed() (int, error) {
	st, n, b, err := c.doDiscard(http.MethodGet, "/v1/nodes?detail=true")
	if err != nil {
		return 0, err
	}
	if st != http.StatusOK {
		return 0, fmt.Errorf("list nodes: %d %s", st, b)
	}
	return int(n), nil
}

// listDetail lists every node with details, checks it has want nodes, and
// returns the body's size.
func (c *client) listDetail(want int) (int, error) {
	st, b, err := c.do(http.MethodGet, "/v1/nodes?detail=true", nil)
	if err != nil {
		return 0, err
	}
	if st != http.StatusOK {
		return 0, fmt.Errorf("list nodes: %d %s", st, b)
	}
	var list struct {
		Nodes []struct {
			UUID string `json:"uuid"`
		} `json:"nodes"`
	}
	if err := json.Unmarshal(b, &list); err != nil {
		return 0, fmt.Errorf("list nodes: %w", err)
	}
	if len(list.Nodes) != want {
		return 0, fmt.Errorf("list nodes: got %d nodes, want %d", len(list.Nodes), want)
	}
	return len(b), nil
}

func (c *client) getNode(uuid string) error {
	st, _, b, err := c.doDiscard(http.MethodGet, "/v1/nodes/"+uuid)
	if err != nil {
		return err
	}
	if st != http.StatusOK {
		return fmt.Errorf("get node %s: %d %s", uuid, st, b)
	}
	return nil
}

// provisionAll sends a provision verb to every node from workers clients.
// A 409 (NodeLocked: the node's previous task is still releasing its lock)
// or a 503 (no free conductor worker) is retried, as the baremetal client
// does; the number of retries is returned.
func (c *client) provisionAll(uuids []string, verb string, workers int) (int, error) {
	var mu sync.Mutex
	retries := 0
	body := fmt.Appendf(nil, `{"target": %q}`, verb)
	err := parallel(len(uuids), workers, func(i int) error {
		for attempt := 0; ; attempt++ {
			st, b, err := c.do(http.MethodPut, "/v1/nodes/"+uuids[i]+"/states/provision", body)
			if err != nil {
				return err
			}
			switch {
			case st == http.StatusAccepted:
				return nil
			case (st == http.StatusConflict || st == http.StatusServiceUnavailable) && attempt < 1000:
				mu.Lock()
				retries++
				mu.Unlock()
				time.Sleep(time.Millisecond)
			default:
				return fmt.Errorf("%s node %s: %d %s", verb, uuids[i], st, b)
			}
		}
	})
	return retries, err
}

// waitManageable polls the node list filtered by provision state until
// every node of uuids is manageable (and, with inspected, has
// inspection_finished_at set). It returns the number of list calls.
func (c *client) waitManageable(uuids []string, inspected bool, pause time.Duration) (int, error) {
	want := make(map[string]bool, len(uuids))
	for _, u := range uuids {
		want[u] = true
	}
	deadline := time.Now().Add(2 * time.Minute)
	for polls := 1; ; polls++ {
		st, b, err := c.do(http.MethodGet, "/v1/nodes?provision_state=manageable&fields=uuid,inspection_finished_at&limit=1000", nil)
		if err != nil {
			return polls, err
		}
		if st != http.StatusOK {
			return polls, fmt.Errorf("list manageable nodes: %d %s", st, b)
		}
		var list struct {
			Nodes []struct {
				UUID       string  `json:"uuid"`
				InspectEnd *string `json:"inspection_finished_at"`
			} `json:"nodes"`
		}
		if err := json.Unmarshal(b, &list); err != nil {
			return polls, err
		}
		done := 0
		for _, n := range list.Nodes {
			if want[n.UUID] && (!inspected || n.InspectEnd != nil) {
				done++
			}
		}
		if done == len(want) {
			return polls, nil
		}
		if time.Now().After(deadline) {
			return polls, fmt.Errorf("only %d of %d nodes manageable after 2 minutes", done, len(want))
		}
		time.Sleep(pause)
	}
}

// parallel runs fn(0..n-1) on workers goroutines and returns the first error.
func parallel(n, workers int, fn func(i int) error) error {
	next := make(chan int)
	errs := make(chan error, workers)
	var wg sync.WaitGroup
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				if err := fn(i); err != nil {
					errs <- err
					for range next {
					}
					return
				}
			}
		}()
	}
	for i := range n {
		next <- i
	}
	close(next)
	wg.Wait()
	close(errs)
	return <-errs
}

// selfCPU is the CPU time (user + system) the probe has used so far.
func selfCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
