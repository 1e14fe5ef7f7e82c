package inspection

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
)

// Marshal writes what json.Marshal writes, byte for byte.
func TestMarshal_SameAsEncodingJSON(t *testing.T) {
	values := []any{
		nil, true, "plain", "esc\"ape\\ <html> & \u2028 \x01 café", "sw\xff01", json.Number("12"), json.Number("-0"), json.Number("1.50"),
		json.Number("1e3"), json.Number("007"), int64(5), 2.5, []any{}, []any(nil), map[string]any(nil), map[string]any{},
		map[string]any{"b": []any{json.Number("1"), "x", nil}, "a": map[string]any{"<": true}, "é": false},
		[]string{"typed", "too"},
	}
	for _, v := range values {
		want, werr := json.Marshal(v)
		got, gerr := Marshal(v)
		if (werr != nil) != (gerr != nil) || !bytes.Equal(want, got) {
			t.Errorf("Marshal(%#v) = %s, %v; json.Marshal %s, %v", v, got, gerr, want, werr)
		}
	}
	for _, name := range []string{"large-40nic-24disk.json", "example.json", "lldp-malformed.json"} {
		b, err := os.ReadFile(filepath.Join("..", "..", "testdata", "ipa", name))
		if err != nil {
			t.Fatal(err)
		}
		rep, err := Decode(b)
		if err != nil {
			t.Fatal(err)
		}
		checkMarshal(t, rep.Raw)
	}
}

func checkMarshal(t *testing.T, v any) {
	t.Helper()
	want, werr := json.Marshal(v)
	got, gerr := Marshal(v)
	if (werr != nil) != (gerr != nil) || !bytes.Equal(want, got) {
		t.Fatalf("Marshal differs from json.Marshal:\n%s\n%s", got, want)
	}
}

// FuzzMarshal: for any JSON document, Marshal of its generic values is
// json.Marshal's.
func FuzzMarshal(f *testing.F) {
	f.Add([]byte(`{"a":[1,"x",null,{"b":true}],"c":1.5e3,"d":"\u003c\u2028"}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		dec := json.NewDecoder(bytes.NewReader(b))
		dec.UseNumber()
		var v any
		if dec.Decode(&v) != nil {
			return
		}
		checkMarshal(t, v)
	})
}
