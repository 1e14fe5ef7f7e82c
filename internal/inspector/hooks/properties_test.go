package hooks

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/ferrometal/ferro/internal/baremetal"
	"github.com/google/go-cmp/cmp"
)

func TestScheduler(t *testing.T) {
	tests := []struct {
		name  string
		body  string
		cfg   func(*Config)
		props baremetal.JSON
		want  []PatchOp
	}{
		{
			name: "writes strings",
			body: `{"inventory":{"interfaces":[],"cpu":{"count":32,"architecture":"x86_64"},"memory":{"physical_mb":131072}}}`,
			want: []PatchOp{add("/properties/cpus", "32"), add("/properties/cpu_arch", "x86_64"), add("/properties/memory_mb", "131072")},
		},
		{
			name:  "overwrites existing values",
			body:  `{"inventory":{"interfaces":[],"cpu":{"count":32,"architecture":"x86_64"},"memory":{"physical_mb":131072}}}`,
			props: baremetal.JSON{"cpus": "8", "memory_mb": 1024},
			want:  []PatchOp{add("/properties/cpus", "32"), add("/properties/cpu_arch", "x86_64"), add("/properties/memory_mb", "131072")},
		},
		{
			name:  "keeps existing values without overwrite_existing",
			body:  `{"inventory":{"interfaces":[],"cpu":{"count":32,"architecture":"x86_64"},"memory":{"physical_mb":131072}}}`,
			cfg:   func(c *Config) { c.OverwriteExisting = false },
			props: baremetal.JSON{"cpus": "8", "memory_mb": 0},
			want:  []PatchOp{add("/properties/cpu_arch", "x86_64"), add("/properties/memory_mb", "131072")},
		},
		{
			name: "missing memory",
			body: `{"inventory":{"interfaces":[],"cpu":{"count":4,"architecture":"aarch64"}}}`,
			want: []PatchOp{add("/properties/cpus", "4"), add("/properties/cpu_arch", "aarch64")},
		},
		{
			name: "missing CPU, null memory",
			body: `{"inventory":{"interfaces":[],"memory":{"physical_mb":null}}}`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := DefaultConfig()
			if tt.cfg != nil {
				tt.cfg(&cfg)
			}
			body := strings.Replace(tt.body, `"interfaces":[]`, `"interfaces":[{"name":"eth0"}]`, 1)
			d := decodeData(t, []byte(body))
			n := newNode(t, tt.props)
			run(t, build(t, cfg, "scheduler"), d, n)
			if diff := cmp.Diff(tt.want, n.Changes().NodePatch); diff != "" {
				t.Errorf("node patch (-want +got):\n%s", diff)
			}
		})
	}
}

func TestScheduler_ProcessedData(t *testing.T) {
	d := loadData(t, "example.json")
	run(t, build(t, DefaultConfig(), "scheduler"), d, newNode(t, nil))
	m := d.Map()
	got := []any{m["cpus"], m["cpu_arch"], m["memory_mb"]}
	if diff := cmp.Diff([]any{json.Number("32"), "x86_64", json.Number("131072")}, got); diff != "" {
		t.Errorf("processed data (-want +got):\n%s", diff)
	}
}

func TestCapabilities(t *testing.T) {
	// example.json: flags fpu pse svm aes pdpe1gb avx2, UEFI
	tests := []struct {
		name    string
		cfg     func(*Config)
		props   baremetal.JSON
		body    string
		want    string // properties/capabilities; "" for no patch
		wantErr string
	}{
		{name: "CPU flags in configuration order", want: "cpu_vt:true,cpu_aes:true,cpu_hugepages:true,cpu_hugepages_1g:true"},
		{name: "boot mode first", cfg: func(c *Config) { c.BootMode = true }, want: "boot_mode:uefi,cpu_vt:true,cpu_aes:true,cpu_hugepages:true,cpu_hugepages_1g:true"},
		{
			name:  "merged into existing capabilities",
			props: baremetal.JSON{"capabilities": "boot_option:local,cpu_aes:false"},
			want:  "boot_option:local,cpu_aes:true,cpu_vt:true,cpu_hugepages:true,cpu_hugepages_1g:true",
		},
		{name: "custom mapping", cfg: func(c *Config) { c.CPUFlags = []string{"avx2:cpu_avx2", "sse4_2:cpu_sse42"} }, want: "cpu_avx2:true"},
		{name: "no flags", body: `{"inventory":{"interfaces":[{"name":"eth0"}],"cpu":{"count":1}}}`},
		{name: "malformed capabilities", props: baremetal.JSON{"capabilities": "boot_option"}, wantErr: `entry "boot_option" has no colon`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := DefaultConfig()
			if tt.cfg != nil {
				tt.cfg(&cfg)
			}
			d := loadData(t, "example.json")
			if tt.body != "" {
				d = decodeData(t, []byte(tt.body))
			}
			n := newNode(t, tt.props)
			err := runErr(build(t, cfg, "capabilities"), d, n)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("got %v, want an error containing %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var want []PatchOp
			if tt.want != "" {
				want = []PatchOp{add("/properties/capabilities", tt.want)}
			}
			if diff := cmp.Diff(want, n.Changes().NodePatch); diff != "" {
				t.Errorf("node patch (-want +got):\n%s", diff)
			}
		})
	}
}

func TestPCIDevices(t *testing.T) {
	gpu := `{"vendor_id": "10de", "product_id": "20b5", "name": "a100_gpu"}`
	nic := `{"vendor_id": "8086", "product_id": "159b", "name": "e810"}`
	tests := []struct {
		name    string
		aliases []string
		fixture string
		want    []PatchOp
	}{
		{
			name: "counts aliased devices", aliases: []string{gpu, nic}, fixture: "large-40nic-24disk.json",
			want: []PatchOp{add("/properties/capabilities", "e810:1,a100_gpu:2")},
		},
		{name: "no alias matches", aliases: []string{`{"vendor_id": "1af4", "product_id": "1000", "name": "virtio"}`}, fixture: "large-40nic-24disk.json"},
		{name: "no PCI data", aliases: []string{gpu}, fixture: "example.json"},
		{name: "no aliases", fixture: "large-40nic-24disk.json"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := DefaultConfig()
			cfg.PCIAliases = tt.aliases
			n := newNode(t, nil)
			run(t, build(t, cfg, "pci_devices"), loadData(t, tt.fixture), n)
			if diff := cmp.Diff(tt.want, n.Changes().NodePatch); diff != "" {
				t.Errorf("node patch (-want +got):\n%s", diff)
			}
		})
	}
}

func TestCapabilitiesThenPCIDevices(t *testing.T) {
	cfg := DefaultConfig()
	cfg.PCIAliases = []string{`{"vendor_id": "10de", "product_id": "20b5", "name": "gpu"}`}
	n := newNode(t, baremetal.JSON{"capabilities": "boot_option:local"})
	run(t, build(t, cfg, "capabilities", "pci_devices"), loadData(t, "large-40nic-24disk.json"), n)
	// pci_devices sees what capabilities planned
	want := "boot_option:local,cpu_vt:true,cpu_aes:true,cpu_hugepages:true,cpu_hugepages_1g:true,cpu_txt:true,gpu:2"
	if got := n.Properties()["capabilities"]; got != want {
		t.Errorf("capabilities %q, want %q", got, want)
	}
}

func TestExtraHardware(t *testing.T) {
	tests := []struct {
		name      string
		strict    bool
		data      string // "" for none
		wantExtra any
		dropped   bool
	}{
		{
			name: "converts records",
			data: `[["cpu","logical","number","64"],["cpu","physical","number",2],["disk","sda","size","480"],["disk","sda","vendor","ATA"],["net","eth0","speed","1.5"]]`,
			wantExtra: map[string]any{
				"cpu":  map[string]any{"logical": map[string]any{"number": json.Number("64")}, "physical": map[string]any{"number": json.Number("2")}},
				"disk": map[string]any{"sda": map[string]any{"size": json.Number("480"), "vendor": "ATA"}},
				"net":  map[string]any{"eth0": map[string]any{"speed": "1.5"}},
			},
			dropped: true,
		},
		{
			name:      "a short record is skipped after creating its section",
			data:      `[["cpu","logical","number","64"],["disk","sda","size"],[]]`,
			wantExtra: map[string]any{"cpu": map[string]any{"logical": map[string]any{"number": json.Number("64")}}, "disk": map[string]any{"sda": map[string]any{}}},
			dropped:   true,
		},
		{
			name:    "strict refuses short records and drops the data",
			strict:  true,
			data:    `[["cpu","logical","number","64"],["disk","sda","size"]]`,
			dropped: true,
		},
		{name: "not a list is left alone", data: `{"cpu":1}`},
		{name: "no data"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := DefaultConfig()
			cfg.ExtraHardwareStrict = tt.strict
			body := `{"inventory":{"interfaces":[{"name":"eth0"}]}}`
			if tt.data != "" {
				body = `{"inventory":{"interfaces":[{"name":"eth0"}]},"data":` + tt.data + `}`
			}
			d := decodeData(t, []byte(body))
			n := newNode(t, nil)
			run(t, build(t, cfg, "extra_hardware"), d, n)
			m := d.Map()
			if diff := cmp.Diff(tt.wantExtra, m["extra"]); diff != "" {
				t.Errorf("extra (-want +got):\n%s", diff)
			}
			if _, kept := m["data"]; kept == tt.dropped && tt.data != "" {
				t.Errorf("data kept: %v, want %v", kept, !tt.dropped)
			}
			if !n.Changes().IsZero() {
				t.Errorf("changed the node: %+v", n.Changes())
			}
		})
	}
}
