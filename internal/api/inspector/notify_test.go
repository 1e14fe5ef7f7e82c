package inspector_test

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/ferrometal/ferro/internal/baremetal"
	"github.com/ferrometal/ferro/internal/conductor"
	"github.com/ferrometal/ferro/internal/driver"
	"github.com/ferrometal/ferro/internal/driver/fake"
	"github.com/ferrometal/ferro/internal/driver/inspect"
	"github.com/ferrometal/ferro/internal/inspector"
	"github.com/ferrometal/ferro/internal/states"
)

// notifyDeadline is how long a test waits for the conductor to act on the
// inspector's notification. It is generous (the notification takes
// milliseconds) and far below [inspector]status_check_period (a day in the
// rig), so only the notification can get the node there in time.
const notifyDeadline = 10 * time.Second

// inspectNode creates a manageable fake-hardware node with the inspector
// inspect interface and starts inspection through the conductor.
func (r *rig) inspectNode(t *testing.T, boot string, macs ...string) *baremetal.Node {
	t.Helper()
	if r.condOpts.StatusCheckPeriod < time.Hour {
		t.Fatalf("status_check_period %v would let a poll finish the inspection", r.condOpts.StatusCheckPeriod)
	}
	n := r.node(t, nodeSpec{macs: macs, interfaces: map[string]string{"inspect": "inspector", "boot": boot}})
	if err := r.cond.DoProvisionAction(context.Background(), n.UUID, conductor.VerbInspect); err != nil {
		t.Fatal(err)
	}
	return r.waitState(t, n.UUID, states.InspectWait, notifyDeadline)
}

func TestConductor_NotifiedOnContinueFinishesManagedInspection(t *testing.T) {
	r := newRig(t)
	ctx := context.Background()
	n := r.inspectNode(t, "capture", refMAC)

	// Managed path: the conductor prepared the ramdisk with the callback and
	// a token, and started the introspection with manage_boot=false.
	if managed, _ := n.DriverInternalInfo[inspect.ManageBootKey].(bool); !managed {
		t.Fatalf("driver_internal_info %v: inspection is not managed", n.DriverInternalInfo)
	}
	in := r.introspection(t, n.UUID)
	if in == nil || in.State != inspector.StateWaiting || in.ManageBoot || in.TokenHash == nil {
		t.Fatalf("introspection %+v", in)
	}
	token := r.capture.param(n.UUID, inspect.TokenParam)
	if cb := r.capture.param(n.UUID, inspect.CallbackParam); cb != "http://127.0.0.1:5050/v1/continue" || token == "" {
		t.Fatalf("ramdisk params: callback %q token %q", cb, token)
	}

	// The agent's report, with the token from its kernel command line.
	if resp := r.continueReport(t, referencePayload(t), token); resp.status != http.StatusOK {
		t.Fatalf("continue = %d %s", resp.status, resp.body)
	}
	got := r.waitState(t, n.UUID, states.Manageable, notifyDeadline)
	if got.LastError != "" || got.InspectionFinishedAt == nil {
		t.Errorf("last_error %q inspection_finished_at %v", got.LastError, got.InspectionFinishedAt)
	}
	if _, ok := got.DriverInternalInfo[inspect.ManageBootKey]; ok {
		t.Errorf("driver_internal_info keeps %s: %v", inspect.ManageBootKey, got.DriverInternalInfo)
	}
	if got.PowerState != baremetal.PowerOff {
		t.Errorf("power state %q after inspection, want power off ([inspector]power_off)", got.PowerState)
	}
	if got.Properties["cpus"] != "32" || got.Properties["local_gb"] != "893" {
		t.Errorf("properties %v", got.Properties)
	}

	inv, err := r.store.GetInventory(ctx, n.UUID)
	if err != nil {
		t.Fatalf("inventory not stored: %v", err)
	}
	cpu, _ := inv.Inventory["cpu"].(map[string]any)
	if cpu == nil || fmt.Sprint(cpu["count"]) != "32" || fmt.Sprint(cpu["architecture"]) != "x86_64" {
		t.Errorf("inventory cpu %v", inv.Inventory["cpu"])
	}
	if _, ok := inv.PluginData["inventory"]; ok {
		t.Error("plugin data repeats the inventory")
	}
	if _, ok := inv.PluginData["all_interfaces"]; !ok {
		t.Errorf("plugin data lacks the processed all_interfaces: %v", keys(inv.PluginData))
	}
}

func keys(m map[string]any) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}

// unmanagedBoot cannot boot a ramdisk for inspection, so the conductor
// falls back to the inspector managing boot.
type unmanagedBoot struct{ fake.Boot }

func (unmanagedBoot) ValidateInspection(context.Context, *driver.Task) error {
	return fmt.Errorf("%w: no deploy ramdisk", driver.ErrUnsupported)
}

func TestConductor_NotifiedOnContinueFinishesUnmanagedInspection(t *testing.T) {
	r := newRig(t)
	n := r.inspectNode(t, "unmanaged", refMAC)
	// The fallback: the inspector sets PXE and reboots through the conductor,
	// and no token is involved (the ramdisk is not ferro's).
	r.waitIntrospection(t, n.UUID, inspector.StateWaiting)
	r.waitPower(t, n.UUID, baremetal.PowerOn)
	if in := r.introspection(t, n.UUID); !in.ManageBoot || in.TokenHash != nil {
		t.Fatalf("introspection %+v", in)
	}
	if resp := r.continueReport(t, referencePayload(t), ""); resp.status != http.StatusOK {
		t.Fatalf("continue = %d %s", resp.status, resp.body)
	}
	got := r.waitState(t, n.UUID, states.Manageable, notifyDeadline)
	if got.Properties["cpus"] != "32" {
		t.Errorf("properties %v", got.Properties)
	}
	// The inspector powers off what it booted.
	r.waitPower(t, n.UUID, baremetal.PowerOff)
	if _, err := r.store.GetInventory(context.Background(), n.UUID); err != nil {
		t.Errorf("inventory not stored: %v", err)
	}
}

func TestConductor_NotifiedOnRamdiskErrorFailsInspection(t *testing.T) {
	r := newRig(t)
	n := r.inspectNode(t, "capture", "52:54:00:12:34:56")
	token := r.capture.param(n.UUID, inspect.TokenParam)
	resp := r.continueReport(t, fixture(t, "ramdisk-error.json"), token)
	if resp.status != http.StatusBadRequest {
		t.Fatalf("continue = %d %s", resp.status, resp.body)
	}
	got := r.waitState(t, n.UUID, states.InspectFailed, notifyDeadline)
	if !strings.Contains(got.LastError, "Ramdisk reported error: The following errors were encountered") {
		t.Errorf("last_error %q", got.LastError)
	}
	if _, err := r.store.GetInventory(context.Background(), n.UUID); err == nil {
		t.Error("inventory stored for a failed inspection")
	}
	if _, ok := got.DriverInternalInfo[inspect.ManageBootKey]; ok {
		t.Errorf("driver_internal_info keeps %s after the failure", inspect.ManageBootKey)
	}
}
