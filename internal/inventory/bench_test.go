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

// BenchmarkReport_EndToEnd measures what the hand-written JSON parser
// (parse.go) gains over encoding/json on the whole processing of the
// 40-NIC, 24-disk report: decode, the inspector's default hooks (LLDP and
// local_link_connection included) and the processed data encoded, as the
// inspector stores it. The parser stays only while fast is clearly ahead.
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
	for _, tc := range []struct {
		name   string
		decode func([]byte, inventory.Limits) (*inventory.Report, map[string]any, error)
	}{{"parser=fast", inventory.DecodeBytes}, {"parser=encoding-json", inventory.DecodeBytesStd}} {
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
				if _, err := json.Marshal(res.Processed()); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
