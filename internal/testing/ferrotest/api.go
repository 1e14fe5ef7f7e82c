package ferrotest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"testing"
)

// Send sends one request to the ferro API at base (a Server's URL) at the
// latest microversion, body as JSON unless nil, and returns the status and
// the answer. It does not need a test, so goroutines can use it.
func Send(base, method, path string, body any) (int, []byte, error) {
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return 0, nil, err
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequest(method, base+path, rd)
	if err != nil {
		return 0, nil, err
	}
	req.Header.Set("X-OpenStack-Ironic-API-Version", "latest")
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, nil, fmt.Errorf("%s %s: %w", method, path, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return 0, nil, fmt.Errorf("%s %s: read the answer: %w", method, path, err)
	}
	return resp.StatusCode, b, nil
}

// Call is Send that fails t when the request cannot be made.
func Call(t testing.TB, base, method, path string, body any) (int, []byte) {
	t.Helper()
	code, b, err := Send(base, method, path, body)
	if err != nil {
		t.Fatal(err)
	}
	return code, b
}

// Must is Call for a request that must succeed (2xx); it decodes the JSON
// answer into out unless out is nil.
func Must(t testing.TB, base, method, path string, body, out any) {
	t.Helper()
	code, b := Call(t, base, method, path, body)
	if code/100 != 2 {
		t.Fatalf("%s %s: HTTP %d: %s", method, path, code, b)
	}
	if out != nil && len(b) > 0 {
		if err := json.Unmarshal(b, out); err != nil {
			t.Fatalf("%s %s: decode %s: %v", method, path, b, err)
		}
	}
}
