package hooks

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/ferrometal/ferro/internal/baremetal"
	"github.com/google/go-cmp/cmp"
)

// The example payload has /dev/nvme0n1 (SAMSUNG MZQL2960HCJR, 960197124096
// bytes = 894.25 GiB, not rotational, no vendor or hctl; the ramdisk's root
// disk) and /dev/sda (ST4000NM0035, 4000787030016 bytes = 3726.02 GiB,
// rotational, vendor ATA, hctl 2:0:0:0).
func TestRootDiskSelection_Hints(t *testing.T) {
	tests := []struct {
		name    string
		hints   any
		want    string // disk chosen
		wantErr string
	}{
		{name: "no hints keeps the ramdisk's choice", hints: nil, want: "/dev/nvme0n1"},
		{name: "rotational", hints: map[string]any{"rotational": true}, want: "/dev/sda"},
		{name: "rotational as a string", hints: map[string]any{"rotational": "false"}, want: "/dev/nvme0n1"},
		{name: "size at least", hints: map[string]any{"size": ">= 1000"}, want: "/dev/sda"},
		{name: "size at most", hints: map[string]any{"size": "<= 1000"}, want: "/dev/nvme0n1"},
		{name: "size not equal", hints: map[string]any{"size": "!= 894"}, want: "/dev/nvme0n1"},
		{name: "size in a string without operator", hints: map[string]any{"size": "3726"}, wantErr: "No disks satisfied root device hints"},
		// sizes compare in GiB with a fraction, so equality rarely holds
		{name: "size equal to the truncated GiB", hints: map[string]any{"size": 894}, wantErr: "No disks satisfied root device hints"},
		{name: "size <or> never matches a number", hints: map[string]any{"size": "<or> 894 <or> 3726"}, wantErr: "No disks satisfied"},
		{name: "size <in> is a type error", hints: map[string]any{"size": "<in> 894"}, wantErr: "failed to validate"},
		{name: "size not an integer", hints: map[string]any{"size": "big"}, wantErr: `Root device hint "size" is not an integer value`},
		{name: "size not positive", hints: map[string]any{"size": 0}, wantErr: `Root device hint "size" should be a positive integer`},
		{name: "model, case-insensitive", hints: map[string]any{"model": "st4000nm0035"}, want: "/dev/sda"},
		{name: "model with a space", hints: map[string]any{"model": "SAMSUNG MZQL2960HCJR"}, want: "/dev/nvme0n1"},
		{name: "model contains", hints: map[string]any{"model": "<in> SAMSUNG MZQL"}, want: "/dev/nvme0n1"},
		{name: "serial or", hints: map[string]any{"serial": "<or> nope <or> ZC1ABCDE"}, want: "/dev/sda"},
		{name: "vendor", hints: map[string]any{"vendor": "ata"}, want: "/dev/sda"},
		{name: "a null vendor reads as none", hints: map[string]any{"vendor": "none"}, want: "/dev/nvme0n1"},
		{name: "wwn", hints: map[string]any{"wwn": "0x5000c500a1b2c3d4"}, want: "/dev/sda"},
		{name: "hctl", hints: map[string]any{"hctl": "2:0:0:0"}, want: "/dev/sda"},
		{name: "by_path", hints: map[string]any{"by_path": "/dev/disk/by-path/pci-0000:00:17.0-ata-1"}, want: "/dev/sda"},
		{name: "name", hints: map[string]any{"name": "/dev/sda"}, want: "/dev/sda"},
		{name: "name not equal", hints: map[string]any{"name": "s!= /dev/nvme0n1"}, want: "/dev/sda"},
		{name: "string less than", hints: map[string]any{"model": "s< t"}, want: "/dev/nvme0n1"},
		{name: "all hints must hold", hints: map[string]any{"size": ">= 1000", "rotational": false}, wantErr: "No disks satisfied root device hints"},
		{name: "unknown hint", hints: map[string]any{"colour": "red"}, wantErr: `The hints "colour" are invalid`},
		{name: "string hint of another type", hints: map[string]any{"model": 5}, wantErr: `Root device hint "model" is not a string value`},
		{name: "boolean hint", hints: map[string]any{"rotational": "maybe"}, wantErr: `Root device hint "rotational" is not a Boolean value`},
		{name: "empty expression", hints: map[string]any{"model": "  "}, wantErr: `Root device hint "model" expression is empty`},
		{name: "not an object", hints: "sda", wantErr: "failed to validate"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			props := baremetal.JSON{}
			if tt.hints != nil {
				props["root_device"] = tt.hints
			}
			d := loadData(t, "example.json")
			err := runErr(build(t, DefaultConfig(), "root_disk_selection"), d, newNode(t, props))
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("got %v, want an error containing %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if d.RootDisk == nil || d.RootDisk.Name != tt.want {
				t.Fatalf("root disk %+v, want %s", d.RootDisk, tt.want)
			}
			if got := d.Map()["root_disk"].(map[string]any)["name"]; got != tt.want {
				t.Errorf("processed root_disk %v, want %s", got, tt.want)
			}
		})
	}
}

func TestRootDiskSelection_LocalGB(t *testing.T) {
	tests := []struct {
		name    string
		fixture string
		body    string
		cfg     func(*Config)
		props   baremetal.JSON
		want    int64
		patch   []PatchOp
	}{
		{name: "480103981056 bytes", fixture: "large-40nic-24disk.json", want: 446, patch: []PatchOp{add("/properties/local_gb", "446")}},
		{name: "960197124096 bytes", fixture: "example.json", want: 893, patch: []PatchOp{add("/properties/local_gb", "893")}},
		{name: "20 GiB", fixture: "small-2nic.json", want: 19, patch: []PatchOp{add("/properties/local_gb", "19")}},
		{
			name: "without disk_partitioning_spacing", fixture: "large-40nic-24disk.json",
			cfg:  func(c *Config) { c.DiskPartitioningSpacing = false },
			want: 447, patch: []PatchOp{add("/properties/local_gb", "447")},
		},
		{
			name: "a disk under 1 GiB", body: `{"inventory":{"interfaces":[{"name":"eth0"}]},"root_disk":{"name":"/dev/sda","size":536870912}}`,
			want: 0, patch: []PatchOp{add("/properties/local_gb", "0")},
		},
		{
			name: "diskless", body: `{"inventory":{"interfaces":[{"name":"eth0"}]}}`,
			want: 0, patch: []PatchOp{add("/properties/local_gb", "0")},
		},
		{
			name: "chosen by hints", fixture: "example.json", props: baremetal.JSON{"root_device": map[string]any{"name": "/dev/sda"}},
			want: 3725, patch: []PatchOp{add("/properties/local_gb", "3725")},
		},
		{
			name: "an existing value kept without overwrite_existing", fixture: "example.json",
			cfg: func(c *Config) { c.OverwriteExisting = false }, props: baremetal.JSON{"local_gb": "100"},
			want: 893,
		},
		{
			name: "a zero value replaced without overwrite_existing", fixture: "example.json",
			cfg: func(c *Config) { c.OverwriteExisting = false }, props: baremetal.JSON{"local_gb": 0},
			want: 893, patch: []PatchOp{add("/properties/local_gb", "893")},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := DefaultConfig()
			if tt.cfg != nil {
				tt.cfg(&cfg)
			}
			var d *Data
			if tt.fixture != "" {
				d = loadData(t, tt.fixture)
			} else {
				d = decodeData(t, []byte(tt.body))
			}
			n := newNode(t, tt.props)
			run(t, build(t, cfg, "root_disk_selection"), d, n)
			if d.LocalGB == nil || *d.LocalGB != tt.want {
				t.Errorf("local_gb %v, want %d", d.LocalGB, tt.want)
			}
			if got := d.Map()["local_gb"]; got != json.Number(itoa(tt.want)) {
				t.Errorf("processed local_gb %v, want %d", got, tt.want)
			}
			if diff := cmp.Diff(tt.patch, n.Changes().NodePatch); diff != "" {
				t.Errorf("node patch (-want +got):\n%s", diff)
			}
		})
	}
}

func itoa(i int64) string { b, _ := json.Marshal(i); return string(b) }

func TestRootDiskSelection_SkipBlockDevices(t *testing.T) {
	hints := map[string]any{"size": ">= 1"}
	tests := []struct {
		name  string
		props baremetal.JSON
		cfg   []string
		want  string
		disks []string // left in the processed inventory
	}{
		{
			name:  "by node property",
			props: baremetal.JSON{"root_device": hints, "skip_block_devices": []any{map[string]any{"name": "/dev/nvme0n1"}}},
			want:  "/dev/sda", disks: []string{"/dev/sda"},
		},
		{
			name:  "by hint expression",
			props: baremetal.JSON{"root_device": hints, "skip_block_devices": []any{map[string]any{"rotational": false}}},
			want:  "/dev/sda", disks: []string{"/dev/sda"},
		},
		{
			name:  "by [processing]skip_block_devices",
			props: baremetal.JSON{"root_device": hints},
			cfg:   []string{"/dev/nvme0n1"},
			want:  "/dev/sda", disks: []string{"/dev/sda"},
		},
		{
			name:  "only with root device hints",
			props: baremetal.JSON{"skip_block_devices": []any{map[string]any{"name": "/dev/nvme0n1"}}},
			want:  "/dev/nvme0n1", disks: []string{"/dev/nvme0n1", "/dev/sda"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := DefaultConfig()
			cfg.SkipBlockDevices = tt.cfg
			d := loadData(t, "example.json")
			run(t, build(t, cfg, "root_disk_selection"), d, newNode(t, tt.props))
			if d.RootDisk.Name != tt.want {
				t.Errorf("root disk %s, want %s", d.RootDisk.Name, tt.want)
			}
			var names []string
			for _, disk := range d.Map()["inventory"].(map[string]any)["disks"].([]any) {
				names = append(names, disk.(map[string]any)["name"].(string))
			}
			if diff := cmp.Diff(tt.disks, names); diff != "" {
				t.Errorf("processed disks (-want +got):\n%s", diff)
			}
			if len(d.Report.Inventory.Disks) != len(tt.disks) {
				t.Errorf("report keeps %d disks, want %d", len(d.Report.Inventory.Disks), len(tt.disks))
			}
		})
	}
}

func TestRootDiskSelection_LargePayload(t *testing.T) {
	d := loadData(t, "large-40nic-24disk.json")
	props := baremetal.JSON{"root_device": map[string]any{"rotational": true, "size": ">= 10000", "serial": "<in> zl2010"}}
	run(t, build(t, DefaultConfig(), "root_disk_selection"), d, newNode(t, props))
	if d.RootDisk.Name != "/dev/sdc" || *d.LocalGB != 14901 {
		t.Errorf("root disk %s, local_gb %d; want /dev/sdc, 14901", d.RootDisk.Name, *d.LocalGB)
	}
}
