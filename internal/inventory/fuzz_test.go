package inventory

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
)

// FuzzDecode checks that no input makes the decoder panic, that what it
// accepts re-encodes to a report it accepts again, unchanged, and that its
// fast JSON parser agrees with encoding/json.
//
//	go test ./internal/inventory -run='^$' -fuzz=FuzzDecode -fuzztime=10s
func FuzzDecode(f *testing.F) {
	for _, pattern := range []string{"*.json", "bad/*.json"} {
		files, err := filepath.Glob(filepath.Join(fixtures, pattern))
		if err != nil {
			f.Fatal(err)
		}
		for _, file := range files {
			b, err := os.ReadFile(file)
			if err != nil {
				f.Fatal(err)
			}
			f.Add(b)
		}
	}
	f.Add([]byte(`{"inventory":{"interfaces":[]}}`))

	f.Fuzz(func(t *testing.T, body []byte) {
		checkParseObject(t, body)
		rep, raw, err := DecodeBytes(body, Limits{})
		if err != nil {
			if rep != nil || raw != nil {
				t.Fatalf("error %v with a result", err)
			}
			return
		}
		if rep.Inventory == nil || raw == nil {
			t.Fatal("accepted a report without inventory")
		}
		first, err := json.Marshal(rep)
		if err != nil {
			t.Fatalf("re-encode: %v", err)
		}
		again, _, err := DecodeBytes(first, Limits{})
		if err != nil {
			t.Fatalf("re-decode of %s: %v", first, err)
		}
		second, err := json.Marshal(again)
		if err != nil {
			t.Fatalf("re-encode again: %v", err)
		}
		if !bytes.Equal(first, second) {
			t.Fatalf("not stable:\n%s\n%s", first, second)
		}
	})
}
