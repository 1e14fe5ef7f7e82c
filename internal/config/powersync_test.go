package config

import (
	"strings"
	"testing"
)

// The power-state sync's options have Ironic's defaults; a negative
// interval disables the sync as in Ironic (the only negative ferro
// takes besides [database]max_retries), and the workers are at least 1.
func TestLoad_PowerSyncOptions(t *testing.T) {
	cfg, _, err := Load("", nil, testHardware)
	if err != nil {
		t.Fatal(err)
	}
	c := cfg.Conductor
	if c.SyncPowerStateInterval != 60 || !c.ForcePowerStateDuringSync || c.PowerStateSyncMaxRetries != 3 || c.SyncPowerStateWorkers != 8 {
		t.Errorf("defaults: interval %d, force %v, retries %d, workers %d; want Ironic's 60, true, 3, 8",
			c.SyncPowerStateInterval, c.ForcePowerStateDuringSync, c.PowerStateSyncMaxRetries, c.SyncPowerStateWorkers)
	}
	if !c.EnableHealthMonitoring {
		t.Errorf("enable_health_monitoring defaults to false; Ironic's default is true")
	}
	cfg, _, err = Load("", []string{"FERRO_CONDUCTOR_SYNC_POWER_STATE_INTERVAL=-1", "FERRO_CONDUCTOR_FORCE_POWER_STATE_DURING_SYNC=false",
		"FERRO_CONDUCTOR_ENABLE_HEALTH_MONITORING=false"}, testHardware)
	if err != nil || cfg.Conductor.SyncPowerStateInterval != -1 || cfg.Conductor.ForcePowerStateDuringSync || cfg.Conductor.EnableHealthMonitoring {
		t.Errorf("interval -1, no force, no health: %v, %+v", err, cfg)
	}
	for env, want := range map[string]string{
		"FERRO_CONDUCTOR_SYNC_POWER_STATE_WORKERS=0":      "[conductor]sync_power_state_workers must be at least 1",
		"FERRO_CONDUCTOR_POWER_STATE_SYNC_MAX_RETRIES=-1": "[conductor]power_state_sync_max_retries is -1",
	} {
		if _, _, err := Load("", []string{env}, testHardware); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v, want %q", env, err, want)
		}
	}
}
