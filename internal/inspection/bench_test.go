package inspection

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/ferrometal/ferro/internal/baremetal"
	"github.com/ferrometal/ferro/internal/inspection/rules"
)

// BenchmarkPipeline measures what the hooks and the rules cost per report,
// on the 40-NIC, 24-disk report (every NIC with a full LLDP frame, ports
// for all of them): Ironic's default hooks (+ LLDP, as metal3 runs them),
// every Ironic hook, and ironic-inspector's ferro default, each with 0, 10
// and 100 rules. The report is decoded once; decoding and storing are
// BenchmarkReport_EndToEnd's (internal/inventory). reports/s is per core.
//
//	go test ./internal/inspection -run='^$' -bench=Pipeline -benchmem
func BenchmarkPipeline(b *testing.B) {
	body, err := os.ReadFile(filepath.Join("..", "..", "testdata", "ipa", "large-40nic-24disk.json"))
	if err != nil {
		b.Fatal(err)
	}
	allIronic := []string{"ramdisk-error", "validate-interfaces", "ports", "architecture", "cpus", "memory", "root-device",
		"boot-mode", "cpu-capabilities", "pci-devices", "extra-hardware", "parse-lldp", "local-link-connection",
		"physical-network", "accelerators", "raid-device"}
	pipelines := []struct {
		name    string
		dialect Dialect
		hooks   []string
	}{
		{"ironic-default+lldp", Ironic, append(append([]string(nil), DefaultHooks...), "parse-lldp", "local-link-connection")},
		{"ironic-all", Ironic, allIronic},
		{"inspector-default", Inspector, append(append([]string(nil), InspectorDefaultHooks...), "lldp_basic", "local_link_connection")},
	}
	for _, pl := range pipelines {
		for _, n := range []int{0, 10, 100} {
			b.Run(fmt.Sprintf("%s/rules=%d", pl.name, n), func(b *testing.B) {
				o := DefaultOptions(pl.dialect)
				o.Hooks, o.AddPorts = pl.hooks, AddPortsAll
				o.PhysicalNetworkCIDRMap = []string{"10.0.0.0/8:physnet1"}
				o.PCIDeviceAliases = []string{`{"vendor_id":"10de","product_id":"20b5","name":"a100"}`}
				o.Rules = staticRules(benchRules(b, n))
				p, err := New(o)
				if err != nil {
					b.Fatal(err)
				}
				rep, err := Decode(body)
				if err != nil {
					b.Fatal(err)
				}
				node := &baremetal.Node{UUID: testNode, Driver: "ipmi", ProvisionState: "inspect wait",
					Properties: baremetal.JSON{}, DriverInfo: baremetal.JSON{"ipmi_address": "10.1.2.3"}}
				start := time.Now()
				for b.Loop() {
					if _, err := p.Process(context.Background(), rep, Target{Node: node}); err != nil {
						b.Fatal(err)
					}
				}
				b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "reports/s")
			})
		}
	}
}

// benchRules are n Ironic rules of the kinds operators write: half match
// (a condition on the inventory, one on plugin_data), half do not; those
// that match set an attribute, a capability and plugin data.
func benchRules(b *testing.B, n int) []*rules.Rule {
	var out []*rules.Rule
	for i := range n {
		vendor := "Supermicro"
		if i%2 == 1 {
			vendor = "Nobody"
		}
		r, err := rules.Parse(fmt.Appendf(nil, `{"priority":%d,"description":"rule %d",
			"conditions":[{"op":"contains","args":{"value":"{inventory[system_vendor][manufacturer]}","regex":"(?i)%s"}},
			              {"op":"!is-empty","args":{"value":"{plugin_data[all_interfaces]}"}},
			              {"op":"eq","args":{"values":["{inventory[cpu][architecture]}","x86_64"]}}],
			"actions":[{"op":"set-attribute","args":{"path":"/extra/rule%d","value":"{inventory[bmc_address]} {node.driver}"}},
			           {"op":"set-capability","args":{"name":"r%d","value":"{inventory[cpu][count]}"}},
			           {"op":"set-plugin-data","args":{"path":"rules.r%d","value":"{plugin_data[macs][0]}"}}]}`, i%100, i, vendor, i, i, i), false)
		if err != nil {
			b.Fatal(err)
		}
		r.UUID = fmt.Sprintf("00000000-0000-4000-8000-%012d", i)
		out = append(out, r)
	}
	return out
}
