package redfish

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stmcginnis/gofish/schemas"
)

// Whatever link a BMC sends, resolve either refuses it or returns a path
// that, appended to the BMC's address as gofish does, is a URL on the
// origin: the same scheme, host and port, no credentials.
func FuzzResolveLink(f *testing.F) {
	for _, s := range []string{
		"/redfish/v1/Systems/1", "/redfish/v1/Systems/1#/Oem", "/redfish/v1/Systems?$expand=.",
		"@127.0.0.1:6385/v1/nodes/x", "http://127.0.0.1:6385/v1/nodes", "//127.0.0.1:6385/x",
		"https://bmc.example:8443/redfish/v1/", "http://BMC.example:8443/redfish/v1", "/a@b:1/c", "\\\\evil\\x",
		"/%2e%2e/%2fx", "http://bmc.example:8443@evil/x", "redfish/v1", "/x y", ":", "?", "#",
	} {
		f.Add(s)
	}
	const address = "http://bmc.example:8443"
	o, err := newOrigin(address)
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, link string) {
		p, err := o.resolve(link)
		if err != nil {
			return
		}
		if !strings.HasPrefix(p, "/") {
			t.Fatalf("resolve(%q) = %q: not a path", link, p)
		}
		u, err := url.Parse(address + p)
		if err != nil {
			t.Fatalf("resolve(%q) = %q, which gofish's concatenation makes unparsable: %v", link, p, err)
		}
		if !o.allows(u) {
			t.Fatalf("resolve(%q) = %q leaves the origin: %s", link, p, u.Redacted())
		}
	})
}

// Whatever a BMC answers, the transport and the error rendering neither
// panic nor let more than maxBody through; a repaired body is still JSON
// when it was; an HTTPError quotes one short line.
func FuzzDecodeAnswer(f *testing.F) {
	f.Add([]byte(`{"Count": "2", "TotalThreads": " 16 ", "Name": "x"}`), 200, "application/json")
	f.Add([]byte(`{"error":{"code":"Base.1.8.GeneralError","message":"m","@Message.ExtendedInfo":[{"Message":"a\nb"}]}}`), 500, "application/json")
	f.Add([]byte(`{"a\"Count": "1", "Members@odata.count": "3e2"}`), 200, "application/json; charset=utf-8")
	f.Add([]byte("<html>oops</html>"), 502, "text/html")
	f.Add([]byte(`{"Count":"00","CoreCount":"-007","SpeedMbps":"010.50","CapacityMiB":"0.5"}`), 200, "application/json")
	f.Add([]byte(`{"ProcessorSummary": {"Count": "x"}, "MemorySummary": {"TotalSystemMemoryGiB": "1.5"}}`), 200, "application/json")
	f.Fuzz(func(t *testing.T, body []byte, code int, contentType string) {
		if code < 100 || code > 599 {
			code = 200
		}
		tr := tolerantTransport{st: &stats{}, next: roundTripFunc(func(*http.Request) (*http.Response, error) {
			h := http.Header{}
			h.Set("Content-Type", contentType)
			return &http.Response{StatusCode: code, Header: h, Body: io.NopCloser(bytes.NewReader(body))}, nil
		})}
		req, _ := http.NewRequest(http.MethodGet, "http://bmc/redfish/v1/Systems/1", nil)
		resp, err := tr.RoundTrip(req)
		if err != nil {
			return
		}
		got, err := io.ReadAll(resp.Body)
		if err != nil {
			return
		}
		if len(got) > maxBody {
			t.Fatalf("%d bytes passed the bound", len(got))
		}
		if json.Valid(body) && !json.Valid(got) {
			t.Fatalf("repair broke the JSON: %q → %q", body, got)
		}
		var sys schemas.ComputerSystem
		_ = json.Unmarshal(got, &sys)
		he, ok := httpError(http.MethodGet, "/x", schemas.ConstructError(code, got)).(*HTTPError)
		if !ok {
			return
		}
		if strings.ContainsAny(he.Message, "\n\r\t") || utf8.RuneCountInString(he.Message) > maxMessage+1 {
			t.Fatalf("message %q is not one short line", he.Message)
		}
	})
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// Numbers a BMC sends as strings come back as JSON numbers, without the
// leading zeros JSON forbids; other strings and other keys are left alone.
func TestFixNumbers(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{`{"Count": "2"}`, `{"Count": 2}`},
		{`{"TotalThreads":" 16 "}`, `{"TotalThreads":16}`},
		{`{"Count":"00"}`, `{"Count":0}`},
		{`{"CoreCount":"-007"}`, `{"CoreCount":-7}`},
		{`{"SpeedMbps":"010.50"}`, `{"SpeedMbps":10.50}`},
		{`{"CapacityMiB":"0.5","BlockSizeBytes":"5e2"}`, `{"CapacityMiB":0.5,"BlockSizeBytes":5e2}`},
		{`{"Count":"x"}`, `{"Count":"x"}`},
		{`{"Count":"1.","Name":"2"}`, `{"Count":"1.","Name":"2"}`},
		{`{"Name":"\"Count\": \"3\""}`, `{"Name":"\"Count\": \"3\""}`},
	} {
		got, ok := fixNumbers([]byte(c.in))
		if !ok {
			got = []byte(c.in)
		}
		if string(got) != c.want {
			t.Errorf("fixNumbers(%s) = %s, want %s", c.in, got, c.want)
		}
		if !json.Valid(got) {
			t.Errorf("fixNumbers(%s) = %s: not JSON", c.in, got)
		}
	}
}
