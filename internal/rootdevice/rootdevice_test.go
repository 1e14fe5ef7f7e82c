package rootdevice

import (
	"strings"
	"testing"

	"github.com/ferrometal/ferro/internal/inventory"
)

func TestMatch(t *testing.T) {
	disks := []inventory.Disk{
		{Name: "/dev/sda", Size: 500 << 30, Rotational: true, Model: "Big Disk"},
		{Name: "/dev/nvme0n1", Size: 100 << 30, Serial: "S123"},
	}
	for _, tc := range []struct {
		name    string
		hints   map[string]any
		want    int
		wantErr string
	}{
		{"by size in GiB", map[string]any{"size": ">= 200"}, 0, ""},
		{"by serial", map[string]any{"serial": "s123"}, 1, ""},
		{"not rotational", map[string]any{"rotational": false}, 1, ""},
		{"model with a space", map[string]any{"model": "big disk"}, 0, ""},
		{"none matches", map[string]any{"name": "/dev/sdz"}, -1, "No disks satisfied root device hints"},
		{"unknown hint", map[string]any{"colour": "red"}, -1, "failed to validate"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Match(disks, tc.hints)
			if got != tc.want || (tc.wantErr == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), tc.wantErr)) {
				t.Errorf("Match(%v) = %d, %v; want %d, %q", tc.hints, got, err, tc.want, tc.wantErr)
			}
		})
	}
}
