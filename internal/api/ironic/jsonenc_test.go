package ironic

import (
	"bytes"
	"encoding/json"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// decodeAny decodes JSON keeping numbers as json.Number.
func decodeAny(t testing.TB, b []byte) any {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		t.Fatalf("invalid JSON %q: %v", b, err)
	}
	return v
}

func TestAppendValue_MatchesEncodingJSON(t *testing.T) {
	values := []any{
		nil, true, false, "", "plain", "quote\" back\\slash", "ctl\x00\x01\n\r\t\x1f", "<>&",
		"üñí€𝄞", "bad utf8 \xff\xfe", "line\u2028sep\u2029",
		json.Number("4"), json.Number("-1.50"), json.Number("1e300"),
		0.0, 1.5, -2.25, 1e21, 1e-7, 123456789.0, math.MaxFloat64,
		42, int64(-7),
		[]any{}, []any{1.0, "a", nil, []any{true}},
		map[string]any{}, map[string]any{"b": 1.0, "a": map[string]any{"z": []any{"q"}}, "": "empty key"},
		[]string{"x", "y"}, map[string]string{"k": "v"},
	}
	for _, v := range values {
		got := appendValue(nil, v, nil)
		want, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		if d := cmp.Diff(decodeAny(t, want), decodeAny(t, got)); d != "" {
			t.Errorf("%#v: (-encoding/json +appendValue):\n%s\n%s", v, d, got)
		}
	}
}

func TestAppendValue_NonFinitesAreNull(t *testing.T) {
	for _, f := range []float64{math.Inf(1), math.NaN()} {
		if got := string(appendValue(nil, f, nil)); got != "null" {
			t.Errorf("%v: %s", f, got)
		}
	}
	if got := string(appendValue(nil, json.Number("not-a-number"), nil)); got != `"not-a-number"` {
		t.Errorf("invalid json.Number: %s", got)
	}
}

func FuzzAppendString(f *testing.F) {
	for _, s := range []string{"", "a", "\"\\", "\x00", "\xff", "€", "\u2028"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got := appendString(nil, s)
		var back string
		if err := json.Unmarshal(got, &back); err != nil {
			t.Fatalf("%q encodes to invalid JSON %q: %v", s, got, err)
		}
		want, _ := json.Marshal(s)
		var wantBack string
		json.Unmarshal(want, &wantBack)
		if back != wantBack {
			t.Fatalf("%q round-trips to %q, encoding/json gives %q", s, back, wantBack)
		}
	})
}

func TestAppendTime_IsPythonIsoformat(t *testing.T) {
	tm := time.Date(2024, 3, 4, 5, 6, 7, 0, time.UTC)
	if got := string(appendTime(nil, tm)); got != `"2024-03-04T05:06:07+00:00"` {
		t.Errorf("whole seconds: %s", got)
	}
	tm = tm.Add(123456789 * time.Nanosecond)
	if got := string(appendTime(nil, tm)); got != `"2024-03-04T05:06:07.123456+00:00"` {
		t.Errorf("microseconds: %s", got)
	}
	local := time.Date(2024, 3, 4, 7, 6, 7, 0, time.FixedZone("x", 2*3600))
	if got := string(appendTime(nil, local)); got != `"2024-03-04T05:06:07+00:00"` {
		t.Errorf("converted to UTC: %s", got)
	}
	var parsed time.Time
	if err := json.Unmarshal(appendTime(nil, tm), &parsed); err != nil {
		t.Errorf("Go clients cannot parse it: %v", err)
	}
}

// appendTime writes its digits by hand; time.Format is the reference.
func TestAppendTime_MatchesTimeFormat(t *testing.T) {
	for _, tm := range []time.Time{
		time.Date(2024, 3, 4, 5, 6, 7, 0, time.UTC),
		time.Date(2024, 12, 31, 23, 59, 59, 999999999, time.UTC),
		time.Date(1999, 1, 1, 0, 0, 0, 1000, time.UTC),
		time.Date(2025, 6, 7, 8, 9, 10, 500, time.UTC), // under a microsecond: not shown
		time.Date(33, 2, 3, 4, 5, 6, 70000, time.UTC),
		time.Date(2024, 3, 4, 5, 6, 7, 0, time.FixedZone("CET", 3600)),
		time.Date(12345, 3, 4, 5, 6, 7, 8000, time.UTC),
	} {
		layout := "2006-01-02T15:04:05"
		if tm.Nanosecond()/1000 != 0 {
			layout += ".000000"
		}
		want := `"` + tm.UTC().Format(layout) + `+00:00"`
		if got := string(appendTime([]byte("x"), tm)); got != "x"+want {
			t.Errorf("appendTime(%v) = %s, want x%s", tm, got, want)
		}
	}
}

func TestMaskString(t *testing.T) {
	tests := map[string]string{
		"nothing here":                     "nothing here",
		"http://host:80/path":              "http://host:80/path",
		"password=abc other=1":             "password=****** other=1",
		"--password abc --user x":          "--password ****** --user x",
		`{"password": "abc", "user": "u"}`: `{"password": "******", "user": "u"}`,
		"<password>abc</password>":         "<password>******</password>",
		"ipmi_password = 'abc'":            "ipmi_password = '******'",
	}
	for in, want := range tests {
		if got := maskString(in); got != want {
			t.Errorf("maskString(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestIsSecretKey(t *testing.T) {
	for k, want := range map[string]bool{
		"ipmi_password": true, "redfish_password": true, "PASSWORD": true, "auth_token": true,
		"my_secret": true, "private_key": true, "ipmi_address": false, "ipmi_username": false,
		"deploy_kernel": false, "configdrive": true,
	} {
		if got := isSecretKey(k); got != want {
			t.Errorf("isSecretKey(%q) = %v", k, got)
		}
	}
}

func TestErrorBody(t *testing.T) {
	got := string(errorBody(500, `boom "quoted"`))
	want := `{"error_message": "{\"faultcode\": \"Server\", \"faultstring\": \"boom \\\"quoted\\\"\", \"debuginfo\": null}"}`
	if got != want {
		t.Errorf("\n got %s\nwant %s", got, want)
	}
	if !strings.Contains(string(errorBody(404, "x")), `\"faultcode\": \"Client\"`) {
		t.Errorf("4xx faultcode")
	}
}

func TestValidators(t *testing.T) {
	for s, want := range map[string]bool{
		"2d3f9a5e-7c53-4a3f-a9f5-1a2b3c4d5e6f": true, "2D3F9A5E7C534A3FA9F51A2B3C4D5E6F": true,
		"2d3f9a5e-7c53-4a3f-a9f5-1a2b3c4d5e6": false, "2d3f9a5e_7c53-4a3f-a9f5-1a2b3c4d5e6f": false, "": false,
	} {
		if isUUIDLike(s) != want {
			t.Errorf("isUUIDLike(%q) != %v", s, want)
		}
	}
	for s, want := range map[string]bool{
		"node-1": true, "Node_1.x~y": true, "": false, "a b": false, "a/b": false, strings.Repeat("a", 256): false, "ü": false,
	} {
		if isValidLogicalName(s) != want {
			t.Errorf("isValidLogicalName(%q) != %v", s, want)
		}
	}
	if validNodeName("Under_Score", 9) || !validNodeName("Under_Score", 10) || !validNodeName("host-1.example", 9) {
		t.Errorf("validNodeName by version")
	}
}
