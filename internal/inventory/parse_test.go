package inventory

import (
	"bytes"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// checkParseObject fails t if parseObject accepts body and encoding/json
// (as DecodeBytes used it) does not, or decodes it to other values.
func checkParseObject(t *testing.T, body []byte) (fast bool) {
	t.Helper()
	got, ok := parseObject(string(body), DefaultMaxDepth, DefaultMaxValues)
	if !ok {
		return false
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	var want any
	if err := dec.Decode(&want); err != nil {
		t.Fatalf("parseObject accepted %q, encoding/json: %v", body, err)
	}
	if _, err := dec.Token(); err != io.EOF {
		t.Fatalf("parseObject accepted %q, which has data after the object", body)
	}
	// cmp.Diff takes exponential time on deeply nested arrays: only for
	// the message.
	if !reflect.DeepEqual(want, any(got)) {
		t.Fatalf("parseObject(%q) (-encoding/json +parseObject):\n%s", body, cmp.Diff(want, any(got)))
	}
	return true
}

func TestParseObject_SameAsEncodingJSON(t *testing.T) {
	tests := []struct {
		body string
		fast bool // parseObject decodes it rather than leaving it to encoding/json
	}{
		{`{}`, true},
		{" \t\r\n{ \"a\" : [ 1 , -0 , 0.5 , 1e5 , -1E-5 , 2e+3 , true , false , null , { } , [ ] ] } \n", true},
		{`{"a":1,"a":{"b":2}}`, true}, // the last duplicate wins
		{`{"s":"plain","u":"café ☃","e":"","k":"x"}`, true},
		{`{"esc":"tab\tquote\"slash\/back\\\\u\u00e9 pair\ud83d\ude00 lone\ud800 end\\"}`, true},
		{"{\"bad\":\"sw\xff01\"}", true}, // encoding/json replaces the byte
		{"{\"bad\xfekey\":1}", true},
		{`{"n":[0,10,-3,1.25,1E+2,99999999999999999999]}`, true},
		{`{"a":01}`, false},
		{`{"a":1.}`, false},
		{`{"a":.5}`, false},
		{`{"a":-}`, false},
		{`{"a":1e}`, false},
		{`{"a":tru}`, false},
		{`{"a":"ctl` + "\x01" + `"}`, false},
		{`{"a":"bad escape \q"}`, false},
		{`{"a":"unterminated \"}`, false},
		{`{"a":1,}`, false},
		{`{"a" 1}`, false},
		{`{a:1}`, false},
		{`{"a":[1,]}`, false},
		{`{"a":1}{}`, false},
		{`{"a":1} x`, false},
		{`[{"a":1}]`, false},
		{`"x"`, false},
		{"\ufeff{}", false},
		{``, false},
	}
	for _, tt := range tests {
		t.Run(tt.body, func(t *testing.T) {
			if fast := checkParseObject(t, []byte(tt.body)); fast != tt.fast {
				t.Errorf("parsed by parseObject: %v, want %v", fast, tt.fast)
			}
		})
	}
}

// The fixtures, real payload shapes, take the fast path.
func TestParseObject_Fixtures(t *testing.T) {
	files, err := filepath.Glob(filepath.Join(fixtures, "*.json"))
	if err != nil || len(files) == 0 {
		t.Fatal(files, err)
	}
	for _, file := range files {
		b, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		if !checkParseObject(t, b) {
			t.Errorf("%s: left to encoding/json", filepath.Base(file))
		}
	}
}

// Nesting deeper than the limit is left to DecodeBytes' checkDepth, which
// words the error.
func TestParseObject_RefusesDeepNesting(t *testing.T) {
	nest := func(n int) string { // n levels: the object and n-1 arrays
		return `{"a":` + strings.Repeat("[", n-1) + strings.Repeat("]", n-1) + "}"
	}
	for _, tt := range []struct {
		body string
		max  int
		ok   bool
	}{
		{nest(5), 5, true},
		{nest(6), 5, false},
		{`{"a":{"b":{}},"c":[[]]}`, 3, true},
		{`{"a":{"b":{"c":{}}}}`, 3, false},
		{`{"a":"[[[[[[{{{{"}`, 1, true},
	} {
		if _, ok := parseObject(tt.body, tt.max, DefaultMaxValues); ok != tt.ok {
			t.Errorf("parseObject(%s, %d): ok %v, want %v", tt.body, tt.max, ok, tt.ok)
		}
	}
}
