package hooks

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/ferrometal/ferro/internal/baremetal"
)

// MarshalMap must write exactly what json.Marshal writes for Map less the
// ramdisk's logs, on the
// fixtures after the whole default pipeline.
func TestMarshalMap_SameAsEncodingJSON(t *testing.T) {
	for _, name := range []string{"example.json", "small-2nic.json", "large-40nic-24disk.json", "lldp-malformed.json", "ramdisk-error.json"} {
		t.Run(name, func(t *testing.T) {
			d := loadData(t, name)
			n := newNode(t, baremetal.JSON{"root_device": map[string]any{"size": json.Number("447")}})
			_ = runErr(build(t, DefaultConfig(), Default...), d, n) // ramdisk-error fails; its data still encodes
			m := d.Map()
			if m["logs"] == nil && name == "example.json" {
				t.Fatal("the fixture has no logs to leave out")
			}
			delete(m, "logs") // stored data never has the ramdisk's logs
			want, err := json.Marshal(m)
			if err != nil {
				t.Fatal(err)
			}
			got, err := d.MarshalMap()
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got, want) {
				t.Errorf("MarshalMap differs from json.Marshal:\n%s\n%s", got, want)
			}
		})
	}
}

func TestAppendJSON_SameAsEncodingJSON(t *testing.T) {
	values := map[string]any{
		"plain":         "eth0",
		"html":          "<a href='x'>&amp;</a>",
		"escapes":       "quote \" backslash \\ tab \t newline \n bell \a del \x7f",
		"non-ASCII":     "café ☃ \u2028 \u2029",
		"invalid UTF-8": "sw\xff\xfe01",
		"numbers": []any{json.Number("0"), json.Number("-0"), json.Number("42"), json.Number("-17"),
			json.Number("1.5"), json.Number("1e30"), json.Number("99999999999999999999"), json.Number("")},
		"bools and null": []any{true, false, nil},
		"nil map":        map[string]any(nil),
		"nil slice":      []any(nil),
		"empty":          []any{map[string]any{}, []any{}, ""},
		"other types":    []any{3, 2.5, 1e21, []string{"a"}, map[string]string{"<": ">"}, baremetal.JSON{"k": json.Number("1")}},
		"keys in byte order": map[string]any{
			"b": 1, "a": 2, "B": 3, "é": 4, "<key>": 5, "": 6, "a\x00": 7,
		},
	}
	for name, v := range values {
		t.Run(name, func(t *testing.T) {
			want, err := json.Marshal(v)
			if err != nil {
				t.Fatal(err)
			}
			got, err := appendJSON(nil, v)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got, want) {
				t.Errorf("got  %s\nwant %s", got, want)
			}
		})
	}
	// An invalid number fails as it does in json.Marshal.
	if _, err := appendJSON(nil, []any{json.Number("01")}); err == nil {
		t.Error("invalid number 01 encoded")
	}
}

// lldp_processed written from the struct is what encoding its generic form
// writes (and what lldp.Processed.MarshalJSON writes).
func TestAppendJSON_LLDPProcessed(t *testing.T) {
	for name, p := range processedCases(t) {
		t.Run(name, func(t *testing.T) {
			want, err := json.Marshal(lldpProcessedValue(&p))
			if err != nil {
				t.Fatal(err)
			}
			got, err := appendJSON([]byte("prefix "), &p)
			if err != nil {
				t.Fatal(err)
			}
			if got := string(got); got != "prefix "+string(want) {
				t.Errorf("got  %s\nwant prefix %s", got, want)
			}
			if _, direct := appendProcessed(nil, &p); direct != (name != "invalid UTF-8" && name != "escaped text") {
				t.Errorf("written from the struct: %v", direct)
			}
			if name == "invalid UTF-8" {
				return // MarshalJSON escapes the bad bytes; the round trip stored U+FFFD
			}
			if direct, err := json.Marshal(p); err != nil || string(direct) != string(want) {
				t.Errorf("lldp.Processed.MarshalJSON: %s, %v", direct, err)
			}
		})
	}
}
