package inventory_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/ferrometal/ferro/internal/baremetal"
	"github.com/ferrometal/ferro/internal/inspection"
	"github.com/ferrometal/ferro/internal/inventory"
)

// BenchmarkReport_EndToEnd measures what the hand-written JSON codecs,
// this package's parser (parse.go) and inspection.Marshal, gain over
// encoding/json on the whole processing of the 40-NIC, 24-disk report:
// decode, the inspector's default hooks (LLDP and local_link_connection
// included) and the processed data encoded, as the inspector stores it.
// Each codec stays only while it is clearly ahead end to end.
//
//	go test ./internal/inventory -run='^$' -bench=EndToEnd -benchmem
func BenchmarkReport_EndToEnd(b *testing.B) {
	body, err := os.ReadFile(filepath.Join("..", "..", "testdata", "ipa", "large-40nic-24disk.json"))
	if err != nil {
		b.Fatal(err)
	}
	o := inspection.DefaultOptions(inspection.Inspector)
	o.Hooks = append(append([]string(nil), inspection.InspectorDefaultHooks...), "lldp_basic", "local_link_connection")
	o.AddPorts = inspection.AddPortsAll
	p, err := inspection.New(o)
	if err != nil {
		b.Fatal(err)
	}
	node := &baremetal.Node{UUID: "1be26c0b-03f2-4d2e-ae87-c02d7f33c123", ProvisionState: "inspect wait", Properties: baremetal.JSON{}}
	// The processed data's encoding: inspection.Marshal, the hand-written
	// encoder, against encoding/json.
	res := func(b *testing.B) *inspection.Result {
		typed, raw, _ := inventory.DecodeBytes(body, inventory.Limits{MaxDepth: 25})
		rep, _ := inspection.NewReport(typed, raw)
		r, err := p.Process(context.Background(), rep, inspection.Target{Node: node})
		if err != nil {
			b.Fatal(err)
		}
		return r
	}
	for _, enc := range []struct {
		name    string
		marshal func(any) ([]byte, error)
	}{{"encoder=fast", inspection.Marshal}, {"encoder=encoding-json", json.Marshal}} {
		b.Run(enc.name+"/encode", func(b *testing.B) {
			r := res(b)
			for b.Loop() {
				if _, err := enc.marshal(r.Processed()); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
	for _, tc := range []struct {
		name    string
		decode  func([]byte, inventory.Limits) (*inventory.Report, map[string]any, error)
		marshal func(any) ([]byte, error)
	}{
		{"codecs=fast", inventory.DecodeBytes, inspection.Marshal},
		{"parser=encoding-json", inventory.DecodeBytesStd, inspection.Marshal},
		{"encoder=encoding-json", inventory.DecodeBytes, json.Marshal},
		{"codecs=encoding-json", inventory.DecodeBytesStd, json.Marshal},
	} {
		b.Run(tc.name+"/decode", func(b *testing.B) {
			b.SetBytes(int64(len(body)))
			for b.Loop() {
				if _, _, err := tc.decode(body, inventory.Limits{MaxDepth: 25}); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(tc.name+"/end-to-end", func(b *testing.B) {
			b.SetBytes(int64(len(body)))
			for b.Loop() {
				typed, raw, err := tc.decode(body, inventory.Limits{MaxDepth: 25})
				if err != nil {
					b.Fatal(err)
				}
				rep, _ := inspection.NewReport(typed, raw)
				res, err := p.Process(context.Background(), rep, inspection.Target{Node: node})
				if err != nil {
					b.Fatal(err)
				}
				if _, err := tc.marshal(res.Processed()); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
