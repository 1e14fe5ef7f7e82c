package redfish

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"regexp"
	"sync/atomic"
)

// maxBody bounds one response read from a BMC, whatever its type: a
// Redfish resource is kilobytes; an endless body ends here.
const maxBody = 4 << 20

// errBodyTooLarge ends the reading of a body past maxBody.
var errBodyTooLarge = fmt.Errorf("the answer is larger than %d bytes", maxBody)

// numericKeys are DMTF properties that are numbers in the schema but that
// some BMCs send as JSON strings ("Count": "2"). gofish's typed decoding
// rejects those, so the transport turns them back into numbers.
var numericKeys = []string{
	"Count", "CoreCount", "LogicalProcessorCount",
	"TotalCores", "TotalThreads", "TotalEnabledCores",
	"MaxSpeedMHz", "OperatingSpeedMHz",
	"TotalSystemMemoryGiB", "TotalSystemPersistentMemoryGiB",
	"CapacityMiB", "CapacityBytes", "BlockSizeBytes",
	"SpeedMbps", "Members@odata.count",
}

// quotedNumber matches such a key with a string value that is a number. A
// key's opening quote cannot be escaped, so the pattern never matches
// inside a string value; the body is rewritten without being decoded.
// Leading zeros ("007") are dropped, since JSON numbers have none.
var quotedNumber = regexp.MustCompile(`"(` + alternatives(numericKeys) + `)"(\s*:\s*)"\s*(-?)0*((?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][-+]?[0-9]+)?)\s*"`)

func alternatives(keys []string) string {
	var b bytes.Buffer
	for i, k := range keys {
		if i > 0 {
			b.WriteByte('|')
		}
		b.WriteString(regexp.QuoteMeta(k))
	}
	return b.String()
}

// fixNumbers rewrites string values of numericKeys that are numbers; it
// reports false when nothing changed.
func fixNumbers(body []byte) ([]byte, bool) {
	if !quotedNumber.Match(body) {
		return nil, false
	}
	return quotedNumber.ReplaceAll(body, []byte(`"$1"$2$3$4`)), true
}

// tolerantTransport bounds every answer of a BMC and repairs sloppy JSON
// (numbers sent as strings) before gofish decodes it.
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
		if req.Context().Err() == nil && !certError(err) && !errors.Is(err, ErrOffOrigin) {
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
	if mt != "application/json" && !(len(mt) > 5 && mt[len(mt)-5:] == "+json") {
		// gofish reads error answers whole, whatever their type.
		resp.Body = &cappedBody{r: io.LimitReader(resp.Body, maxBody+1), c: resp.Body}
		return resp, nil
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxBody+1))
	resp.Body.Close()
	if err != nil {
		return nil, fmt.Errorf("read the answer to %s %s: %w", req.Method, req.URL.Path, err)
	}
	if len(body) > maxBody {
		return nil, fmt.Errorf("%s %s: %w", req.Method, req.URL.Path, errBodyTooLarge)
	}
	if fixed, ok := fixNumbers(body); ok {
		body = fixed
	}
	resp.Body = io.NopCloser(bytes.NewReader(body))
	resp.ContentLength = int64(len(body))
	resp.Header.Del("Content-Length")
	return resp, nil
}

// cappedBody fails the read that passes maxBody.
type cappedBody struct {
	r io.Reader
	c io.Closer
	n int64
}

func (b *cappedBody) Read(p []byte) (int, error) {
	n, err := b.r.Read(p)
	b.n += int64(n)
	if b.n > maxBody {
		return 0, errBodyTooLarge
	}
	return n, err
}

func (b *cappedBody) Close() error { return b.c.Close() }
