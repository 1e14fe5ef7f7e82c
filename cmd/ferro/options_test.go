package main

import (
	"testing"
	"time"

	"github.com/ferrometal/ferro/internal/conductor"
	"github.com/ferrometal/ferro/internal/config"
)

// [conductor]'s power-sync options reach the conductor; a negative
// interval is a disabled sync.
func TestConductorOptions_PowerSync(t *testing.T) {
	cfg := config.Defaults(config.Hardware{})
	want := conductor.PowerSync{Interval: time.Minute, Force: true, MaxRetries: 3, Workers: 8}
	if got := conductorOptions(cfg).PowerSync; got != want {
		t.Errorf("defaults: %+v, want %+v", got, want)
	}
	cfg.Conductor.SyncPowerStateInterval, cfg.Conductor.ForcePowerStateDuringSync = -5, false
	if got := conductorOptions(cfg).PowerSync; got.Interval != 0 || got.Force {
		t.Errorf("interval -5, no force: %+v, want a disabled sync", got)
	}
}
