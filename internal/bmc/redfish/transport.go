package redfish

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"mime"
	"net/http"
	"strconv"
	"strings"
	"sync/atomic"
)

// maxBody bounds one response read from a BMC.
const maxBody = 8 << 20

// numericKeys are DMTF properties that are numbers in the schema but that
// some BMCs send as JSON strings ("Count": "2"). gofish's typed decoding
// rejects those, so the transport turns them back into numbers.
var numericKeys = map[string]bool{
	"Count": true, "CoreCount": true, "LogicalProcessorCount": true,
	"TotalCores": true, "TotalThreads": true, "TotalEnabledCores": true,
	"MaxSpeedMHz": true, "OperatingSpeedMHz": true,
	"TotalSystemMemoryGiB": true, "TotalSystemPersistentMemoryGiB": true,
	"CapacityMiB": true, "CapacityBytes": true, "BlockSizeBytes": true,
	"SpeedMbps": true, "Members@odata.count": true,
}

// tolerantTransport repairs sloppy JSON from a BMC (numbers sent as
// strings) before gofish decodes it, and bounds what it reads.
type tolerantTransport struct {
	next http.RoundTripper
	st   *stats
}

// stats counts what the transport saw, so that do can classify an
// error gofish reports only as text.
type stats struct{ unauthorized, serverErrors, netErrors atomic.Int64 }

type statsSnapshot struct{ unauthorized, serverErrors, netErrors int64 }

func (s *stats) snapshot() statsSnapshot {
	return statsSnapshot{s.unauthorized.Load(), s.serverErrors.Load(), s.netErrors.Load()}
}

func (a statsSnapshot) since(b statsSnapshot) statsSnapshot {
	return statsSnapshot{a.unauthorized - b.unauthorized, a.serverErrors - b.serverErrors, a.netErrors - b.netErrors}
}

func (t tolerantTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := t.next.RoundTrip(req)
	if err != nil {
		if req.Context().Err() == nil {
			t.st.netErrors.Add(1)
		}
		return resp, err
	}
	switch {
	case resp.StatusCode == http.StatusUnauthorized:
		t.st.unauthorized.Add(1)
	case resp.StatusCode >= 500:
		t.st.serverErrors.Add(1)
	}
	if resp.Body == nil || req.Method == http.MethodHead {
		return resp, nil
	}
	mt, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type"))
	if mt != "application/json" && !strings.HasSuffix(mt, "+json") {
		return resp, nil
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxBody+1))
	resp.Body.Close()
	if err != nil {
		return nil, fmt.Errorf("read response of %s %s: %w", req.Method, req.URL.Path, err)
	}
	if len(body) > maxBody {
		return nil, fmt.Errorf("response of %s %s is larger than %d bytes", req.Method, req.URL.Path, maxBody)
	}
	if fixed, ok := fixNumbers(body); ok {
		body = fixed
	}
	resp.Body = io.NopCloser(bytes.NewReader(body))
	resp.ContentLength = int64(len(body))
	resp.Header.Del("Content-Length")
	return resp, nil
}

// fixNumbers rewrites string values of numericKeys that parse as numbers;
// it reports false when nothing changed (or the body is not JSON).
func fixNumbers(body []byte) ([]byte, bool) {
	if !bytes.Contains(body, []byte(`"`)) {
		return nil, false
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, false
	}
	if !walkNumbers(v, 0) {
		return nil, false
	}
	out, err := json.Marshal(v)
	if err != nil {
		return nil, false
	}
	return out, true
}

// walkNumbers fixes v in place, to a bounded depth.
func walkNumbers(v any, depth int) bool {
	if depth > 32 {
		return false
	}
	changed := false
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			if s, ok := e.(string); ok && numericKeys[k] {
				s = strings.TrimSpace(s)
				if _, err := strconv.ParseFloat(s, 64); err == nil {
					x[k] = json.Number(s)
					changed = true
				}
				continue
			}
			if walkNumbers(e, depth+1) {
				changed = true
			}
		}
	case []any:
		for _, e := range x {
			if walkNumbers(e, depth+1) {
				changed = true
			}
		}
	}
	return changed
}
