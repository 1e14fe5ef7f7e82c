package conductor

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/ferrometal/ferro/internal/baremetal"
)

// A new component starts at its version; a changed one keeps its initial
// version and records the new one as flashed; one not read is kept.
func TestMergeFirmware(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	t1 := t0.Add(time.Hour)
	cached := []baremetal.FirmwareComponent{
		{Component: "bios", InitialVersion: "1.0", CurrentVersion: "1.0", CreatedAt: t0},
		{Component: "nic", InitialVersion: "5", CurrentVersion: "5", CreatedAt: t0},
	}
	read := []baremetal.FirmwareComponent{
		{Component: "bios", CurrentVersion: "1.2"},
		{Component: "bmc", CurrentVersion: "2.0", Model: "iDRAC 9"},
	}
	got := mergeFirmware(cached, read, t1)
	want := []baremetal.FirmwareComponent{
		{Component: "bios", InitialVersion: "1.0", CurrentVersion: "1.2", LastVersionFlashed: "1.2", CreatedAt: t0, UpdatedAt: &t1},
		{Component: "nic", InitialVersion: "5", CurrentVersion: "5", CreatedAt: t0},
		{Component: "bmc", InitialVersion: "2.0", CurrentVersion: "2.0", Model: "iDRAC 9", CreatedAt: t1},
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("merge (-want +got):\n%s", d)
	}
	if cached[0].CurrentVersion != "1.0" {
		t.Error("the cached list was changed in place")
	}
}
