package pyjson

import (
	"bytes"
	"encoding/json"
	"os"
	"testing"
)

// Repr is not a JSON encoder (Python's repr: single quotes, True, None,
// floats as Python prints them), so encoding/json cannot take its place;
// its json.Marshal of the same value is the yardstick of what Repr costs:
//
//	go test ./internal/pyjson -run '^$' -bench . -benchtime 2s
func BenchmarkRepr(b *testing.B) {
	for _, c := range []struct {
		name string
		v    any
	}{
		{"driver_info", map[string]any{"ipmi_address": "10.0.0.1", "ipmi_username": "admin", "ipmi_port": json.Number("623"),
			"deploy_kernel": "http://images.example/ipa.kernel", "ratio": json.Number("1.5"), "ok": true, "none": nil}},
		{"ipa-report-40nic", loadReport(b, "../../testdata/ipa/large-40nic-24disk.json")},
	} {
		b.Run(c.name+"/pyjson.Repr", func(b *testing.B) {
			b.ReportAllocs()
			var n int
			for b.Loop() {
				n = len(Repr(c.v))
			}
			b.SetBytes(int64(n))
		})
		b.Run(c.name+"/json.Marshal", func(b *testing.B) {
			b.ReportAllocs()
			var n int
			for b.Loop() {
				out, err := json.Marshal(c.v)
				if err != nil {
					b.Fatal(err)
				}
				n = len(out)
			}
			b.SetBytes(int64(n))
		})
	}
}

func loadReport(b *testing.B, path string) any {
	raw, err := os.ReadFile(path)
	if err != nil {
		b.Fatal(err)
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		b.Fatal(err)
	}
	return v
}
