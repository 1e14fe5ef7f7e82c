package main

import (
	"reflect"
	"testing"
	"time"

	"github.com/ferrometal/ferro/internal/conductor"
	"github.com/ferrometal/ferro/internal/config"
)

// [conductor]'s power-sync options reach the conductor; a negative
// interval is a disabled sync.
func TestConductorOptions_PowerSync(t *testing.T) {
	cfg := config.Defaults(config.Hardware{})
	want := conductor.PowerSync{Interval: time.Minute, Force: true, MaxRetries: 3, Workers: 8, Health: true}
	if got := conductorOptions(cfg).PowerSync; got != want {
		t.Errorf("defaults: %+v, want %+v", got, want)
	}
	cfg.Conductor.SyncPowerStateInterval, cfg.Conductor.ForcePowerStateDuringSync = -5, false
	cfg.Conductor.EnableHealthMonitoring = false
	if got := conductorOptions(cfg).PowerSync; got.Interval != 0 || got.Force || got.Health {
		t.Errorf("interval -5, no force, no health: %+v, want a disabled sync", got)
	}
}

// [conductor]'s automated cleaning options reach the conductor.
func TestConductorOptions_AutomatedCleaning(t *testing.T) {
	cfg := config.Defaults(config.Hardware{})
	c := &cfg.Conductor
	c.AutomatedClean, c.AutomatedCleaningStepSource, c.AutomatedCleaningRunbook = false, "runbook", "CUSTOM_WIPE"
	c.AutomatedCleaningRunbookByResourceClass, c.AutomatedCleaningRunbookFromNode = "gpu:CUSTOM_GPU", true
	got := conductorOptions(cfg).AutomatedCleaning
	want := conductor.AutomatedCleaning{StepSource: conductor.StepSourceRunbook, Runbook: "CUSTOM_WIPE",
		ByResourceClass: map[string]string{"gpu": "CUSTOM_GPU"}, FromNode: true, ValidateTraits: true}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got %+v, want %+v", got, want)
	}
}
