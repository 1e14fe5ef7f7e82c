package inspect

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/ferrometal/ferro/internal/baremetal"
	"github.com/ferrometal/ferro/internal/callback"
	"github.com/ferrometal/ferro/internal/driver"
	"github.com/ferrometal/ferro/internal/inspection"
	"github.com/ferrometal/ferro/internal/inspection/rules"
	"github.com/ferrometal/ferro/internal/states"
	"github.com/ferrometal/ferro/internal/store"
	sqlstore "github.com/ferrometal/ferro/internal/store/sql"
)

// fakeManagement records boot device changes and, as a MACLister, reads
// macs (or fails with macsErr).
type fakeManagement struct {
	c       *calls
	macs    []string
	macsErr error
}

func (m fakeManagement) Validate(context.Context, *driver.Task) error { return nil }
func (m fakeManagement) SetBootDevice(_ context.Context, _ *driver.Task, dev string, persistent bool) error {
	return m.c.do(fmt.Sprintf("boot %s persistent=%t", dev, persistent))
}
func (m fakeManagement) BootDevice(context.Context, *driver.Task) (string, bool, error) {
	return "", false, nil
}
func (m fakeManagement) SupportedBootDevices(context.Context, *driver.Task) ([]string, error) {
	return nil, nil
}
func (m fakeManagement) MACAddresses(context.Context, *driver.Task) ([]string, error) {
	m.c.do("read MACs")
	return m.macs, m.macsErr
}

// noMACs is a management interface without MACAddresses (ipmitool, fake).
type noMACs struct{ fakeManagement }

func (noMACs) MACAddresses() {} // shadows the method: not a MACLister

type agentRig struct {
	c     *calls
	boot  *fakeBoot
	mgmt  fakeManagement
	db    *sqlstore.DB
	task  *driver.Task
	agent *Agent
}

func newAgentRig(t *testing.T, o AgentOptions) *agentRig {
	t.Helper()
	ctx := context.Background()
	db, err := sqlstore.Open(ctx, "sqlite://"+filepath.Join(t.TempDir(), "ferro.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	c := &calls{fail: map[string]error{}}
	n := &baremetal.Node{UUID: "1be26c0b-03f2-4d2e-ae87-c02d7f33c124", Driver: "fake-hardware", ProvisionState: states.Inspecting,
		DriverInternalInfo: baremetal.JSON{AgentTokenKey: "old", "agent_url": "http://old"}, Properties: baremetal.JSON{},
		DriverInfo: baremetal.JSON{"redfish_address": "https://192.0.2.20:8443", "ipmi_address": "127.0.0.1"}}
	if err := db.CreateNode(ctx, n); err != nil {
		t.Fatal(err)
	}
	if n, err = db.ReserveNode(ctx, n.UUID, "c1"); err != nil {
		t.Fatal(err)
	}
	r := &agentRig{c: c, boot: &fakeBoot{c: c}, mgmt: fakeManagement{c: c}, db: db}
	r.task = &driver.Task{
		Node:   n,
		Driver: &driver.Interfaces{Boot: r.boot, Network: fakeNetwork{c}, Power: fakePower{c}, Management: r.mgmt},
		Log:    slog.New(slog.NewTextHandler(io.Discard, nil)),
		Store:  db,
	}
	if o.Pipeline == nil {
		p, err := inspection.New(inspection.DefaultOptions(inspection.Ironic))
		if err != nil {
			t.Fatal(err)
		}
		o.Pipeline = p
	}
	o.Store, o.StoreInventory, o.PowerTimeout = db, true, time.Minute
	if o.Callback == (callback.APISettings{}) {
		o.Callback = callback.APISettings{EndpointOverride: "http://192.0.2.1:6385"}
	}
	r.agent = NewAgent(o)
	return r
}

func paramKeys(ps driver.RamdiskParams) []string {
	var keys []string
	for _, p := range ps {
		keys = append(keys, p.Key+"="+p.Value)
	}
	return keys
}

// Managed: Ironic's prepare_managed_inspection's parameters, ferro's
// token for ferro-agent, the callback last; the BMC addresses cached;
// Ironic's agent token wiped.
func TestAgent_ManagedStartParamsAndLookupCache(t *testing.T) {
	r := newAgentRig(t, AgentOptions{RequireManagedBoot: true, ExtraKernelParams: "ipa-debug=1", ForceDHCP: true, FastTrack: true, Agent: AgentFerro})
	next, err := r.agent.InspectHardware(context.Background(), r.task)
	if err != nil || next != states.InspectWait {
		t.Fatalf("InspectHardware = %q, %v", next, err)
	}
	if diff := cmp.Diff([]string{"power off", "add network", "prepare ramdisk", "power on"}, r.c.log); diff != "" {
		t.Errorf("calls (-want +got):\n%s", diff)
	}
	keys := paramKeys(r.boot.params)
	token := r.boot.params[1].Value
	want := []string{"ipa-debug=1", TokenParam + "=" + token, "ipa-collect-lldp=1", "ipa-api-url=http://192.0.2.1:6385",
		CallbackParam + "=http://192.0.2.1:6385/v1/continue_inspection"}
	if diff := cmp.Diff(want, keys); diff != "" {
		t.Errorf("kernel parameters (-want +got):\n%s", diff)
	}
	dii := r.task.Node.DriverInternalInfo
	if dii[ManageBootKey] != true || !TokenMatches(dii[TokenHashKey].(string), token) {
		t.Errorf("driver_internal_info = %v", dii)
	}
	if diff := cmp.Diff([]string{"192.0.2.20"}, dii[LookupBMCAddressesKey]); diff != "" {
		t.Errorf("lookup addresses (loopback ipmi_address left out) (-want +got):\n%s", diff)
	}
	if _, ok := dii[AgentTokenKey]; ok || dii["agent_url"] != nil {
		t.Errorf("Ironic's agent token and URL not wiped: %v", dii)
	}
}

// require_managed_boot (the default here) fails instead of falling back;
// without it the node PXE-boots whatever answers (power off, one-time
// PXE, power on).
func TestAgent_UnmanagedOnlyWithoutRequireManagedBoot(t *testing.T) {
	r := newAgentRig(t, AgentOptions{RequireManagedBoot: true})
	r.c.fail["boot.validate"] = fmt.Errorf("%w: no deploy images", driver.ErrUnsupported)
	if err := r.agent.Validate(context.Background(), r.task); !errors.Is(err, driver.ErrInvalidParameter) {
		t.Errorf("Validate = %v, want a refusal", err)
	}
	_, err := r.agent.InspectHardware(context.Background(), r.task)
	var pe *driver.PhaseError
	if !errors.As(err, &pe) || !strings.Contains(err.Error(), "no deploy images") {
		t.Fatalf("InspectHardware = %v", err)
	}

	r = newAgentRig(t, AgentOptions{})
	r.c.fail["boot.validate"] = fmt.Errorf("%w: no deploy images", driver.ErrUnsupported)
	if _, err := r.agent.InspectHardware(context.Background(), r.task); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"power off", "boot pxe persistent=false", "power on"}, r.c.log); diff != "" {
		t.Errorf("calls (-want +got):\n%s", diff)
	}
	if r.task.Node.DriverInternalInfo[ManageBootKey] != false {
		t.Error("unmanaged choice not recorded")
	}
}

// disable_power_off (1.95): reboot instead of off and on, at the start and
// at the end.
func TestAgent_DisablePowerOffReboots(t *testing.T) {
	r := newAgentRig(t, AgentOptions{RequireManagedBoot: true, PowerOff: true})
	r.task.Node.DisablePowerOff = true
	if _, err := r.agent.InspectHardware(context.Background(), r.task); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"add network", "prepare ramdisk", "rebooting"}, r.c.log); diff != "" {
		t.Errorf("start (-want +got):\n%s", diff)
	}
	r.c.log = nil
	if err := r.agent.Abort(context.Background(), r.task); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"clean up ramdisk", "remove network", "rebooting"}, r.c.log); diff != "" {
		t.Errorf("abort (-want +got):\n%s", diff)
	}
}

// Ports from the BMC's MACs before anything boots, shown to the boot
// interface; an existing or invalid MAC is skipped; a management
// interface that cannot read MACs skips the step; a BMC error fails.
func TestAgent_PreCreatePorts(t *testing.T) {
	ctx := context.Background()
	r := newAgentRig(t, AgentOptions{PreCreatePorts: true})
	other := &baremetal.Node{UUID: "1be26c0b-03f2-4d2e-ae87-c02d7f33c125", Driver: "fake-hardware"}
	if err := r.db.CreateNode(ctx, other); err != nil {
		t.Fatal(err)
	}
	if err := r.db.CreatePort(ctx, &baremetal.Port{UUID: "1be26c0b-03f2-4d2e-ae87-c02d7f33c126", NodeUUID: other.UUID, Address: "52:54:00:00:00:02"}); err != nil {
		t.Fatal(err)
	}
	r.mgmt.macs = []string{"52:54:00:00:00:01", "52:54:00:00:00:02", "not-a-mac"}
	r.task.Driver.Management = r.mgmt
	if _, err := r.agent.InspectHardware(ctx, r.task); err != nil {
		t.Fatal(err)
	}
	ports, _ := r.db.ListPorts(ctx, store.PortFilter{NodeUUID: r.task.Node.UUID})
	if len(ports) != 1 || ports[0].Address != "52:54:00:00:00:01" || !ports[0].PXEEnabled || len(r.task.Ports) != 1 {
		t.Errorf("ports %v (task %v), want one for 52:54:00:00:00:01", ports, r.task.Ports)
	}

	r = newAgentRig(t, AgentOptions{PreCreatePorts: true})
	r.task.Driver.Management = noMACs{r.mgmt}
	if _, err := r.agent.InspectHardware(ctx, r.task); err != nil {
		t.Errorf("without MACAddresses: %v, want the step skipped", err)
	}

	r = newAgentRig(t, AgentOptions{PreCreatePorts: true})
	r.mgmt.macsErr = errors.New("BMC unreachable")
	r.task.Driver.Management = r.mgmt
	if _, err := r.agent.InspectHardware(ctx, r.task); err == nil || !strings.Contains(err.Error(), "BMC unreachable") {
		t.Errorf("BMC error: %v, want the inspection failed", err)
	}
}

func ipa12(t *testing.T) *inspection.Report {
	t.Helper()
	_, file, _, _ := runtime.Caller(0)
	b, err := os.ReadFile(filepath.Join(filepath.Dir(file), "..", "..", "..", "testdata", "ipa", "releases", "12.0.0.json"))
	if err != nil {
		t.Fatal(err)
	}
	rep, err := inspection.Decode(b)
	if err != nil {
		t.Fatal(err)
	}
	return rep
}

// A successful report: teardown first (with the ports as they were, so
// the inspection network's are found), then the plan and the inventory
// in one transaction; the inspection's keys go; logs by
// [agent]deploy_logs_collect.
func TestAgent_ContinueInspectionTearsDownThenApplies(t *testing.T) {
	logs := t.TempDir()
	r := newAgentRig(t, AgentOptions{RequireManagedBoot: true, PowerOff: true, Logs: &DeployLogs{Collect: LogsAlways, Dir: logs}})
	ctx := context.Background()
	if _, err := r.agent.InspectHardware(ctx, r.task); err != nil {
		t.Fatal(err)
	}
	r.c.log = nil
	if err := r.agent.ContinueInspection(ctx, r.task, ipa12(t), nil); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"clean up ramdisk", "remove network", "power off"}, r.c.log); diff != "" {
		t.Errorf("teardown (-want +got):\n%s", diff)
	}
	stored, _ := r.db.GetNode(ctx, r.task.Node.UUID)
	if stored.Properties["cpu_arch"] != "x86_64" {
		t.Errorf("stored properties %v", stored.Properties)
	}
	for _, k := range []string{ManageBootKey, LookupBMCAddressesKey, TokenHashKey} {
		if _, ok := stored.DriverInternalInfo[k]; ok {
			t.Errorf("driver_internal_info[%s] left behind", k)
		}
	}
	if _, ok := stored.DriverInternalInfo[LastHeartbeatKey]; !ok {
		t.Error("agent_last_heartbeat not stamped")
	}
	ports, _ := r.db.ListPorts(ctx, store.PortFilter{NodeUUID: r.task.Node.UUID})
	if len(ports) != 1 || ports[0].Address != "52:54:22:a0:00:01" {
		t.Errorf("ports %v, want the PXE NIC's", ports)
	}
	inv, err := r.db.GetInventory(ctx, r.task.Node.UUID)
	if err != nil {
		t.Fatal(err)
	}
	if inv.Inventory["bmc_address"] != nil || inv.Inventory["cpu"].(map[string]any)["socket_count"] == nil {
		t.Errorf("inventory not stored as sent (bmc_address null, socket_count): %v", inv.Inventory["cpu"])
	}
	entries, _ := os.ReadDir(logs)
	if len(entries) != 1 || !strings.HasPrefix(entries[0].Name(), r.task.Node.UUID+"_inspect_") || !strings.HasSuffix(entries[0].Name(), ".tar.gz") {
		t.Errorf("logs %v", entries)
	}
}

// A hook that fails: Ironic's words, teardown and power off, nothing
// applied, the logs kept with on_failure.
func TestAgent_ContinueInspectionHookFailureChangesNothing(t *testing.T) {
	logs := t.TempDir()
	r := newAgentRig(t, AgentOptions{RequireManagedBoot: true, Logs: &DeployLogs{Collect: LogsOnFailure, Dir: logs}})
	ctx := context.Background()
	if _, err := r.agent.InspectHardware(ctx, r.task); err != nil {
		t.Fatal(err)
	}
	r.c.log = nil
	rep := ipa12(t)
	rep.Raw["error"] = "collector pci-devices failed"
	rep.Typed.Error = ptr("collector pci-devices failed")
	err := r.agent.ContinueInspection(ctx, r.task, rep, nil)
	if err == nil || !strings.HasPrefix(err.Error(), "Failed to inspect hardware. Reason: failed to run inspection hooks: ") ||
		!strings.Contains(err.Error(), "collector pci-devices failed") {
		t.Fatalf("err = %v", err)
	}
	if diff := cmp.Diff([]string{"clean up ramdisk", "remove network", "power off"}, r.c.log); diff != "" {
		t.Errorf("teardown (-want +got):\n%s", diff)
	}
	stored, _ := r.db.GetNode(ctx, r.task.Node.UUID)
	if len(stored.Properties) != 0 {
		t.Errorf("properties %v changed", stored.Properties)
	}
	if _, err := r.db.GetInventory(ctx, r.task.Node.UUID); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("inventory stored: %v", err)
	}
	if entries, _ := os.ReadDir(logs); len(entries) != 1 {
		t.Errorf("logs on failure: %v", entries)
	}
}

// A rule that fails: its message, and nothing applied.
func TestAgent_ContinueInspectionRuleFailure(t *testing.T) {
	rs, err := rules.ParseBuiltIn([]byte(`[{"priority": 1, "conditions": [], "actions": [{"op": "set-attribute", "args": {"path": "/extra/x", "value": 1}}, {"op": "fail", "args": {"msg": "no"}}]}]`), "t")
	if err != nil {
		t.Fatal(err)
	}
	po := inspection.DefaultOptions(inspection.Ironic)
	po.BuiltInRules = rs
	p, err := inspection.New(po)
	if err != nil {
		t.Fatal(err)
	}
	r := newAgentRig(t, AgentOptions{Pipeline: p})
	ctx := context.Background()
	r.task.Node.DriverInternalInfo[ManageBootKey] = false
	err = r.agent.ContinueInspection(ctx, r.task, ipa12(t), nil)
	if err == nil || err.Error() != "Failed to inspect hardware. Reason: no" {
		t.Fatalf("err = %v, want the rule's message", err)
	}
	stored, _ := r.db.GetNode(ctx, r.task.Node.UUID)
	if len(stored.Extra) != 0 || len(stored.Properties) != 0 {
		t.Errorf("node changed: extra %v, properties %v", stored.Extra, stored.Properties)
	}
	if r.c.log[len(r.c.log)-1] != "power off" {
		t.Errorf("calls %v: a failed unmanaged inspection powers off", r.c.log)
	}
}

func TestLookupAddresses(t *testing.T) {
	n := &baremetal.Node{DriverInfo: baremetal.JSON{
		"redfish_address": "https://[2001:db8::5]:8443/redfish/v1", "drac_address": "192.0.2.7", "ipmi_address": "192.0.2.8",
		"ilo_address": "127.0.0.1", "irmc_address": "localhost", "deploy_kernel": "192.0.2.9", "snmp_address": 5,
	}}
	want := []string{"192.0.2.7", "192.0.2.8", "2001:db8::5"}
	if diff := cmp.Diff(want, LookupAddresses(context.Background(), n)); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	n.DriverInfo["ipmi_bridging"] = "single"
	if got := LookupAddresses(context.Background(), n); strings.Contains(strings.Join(got, ","), "192.0.2.8") {
		t.Errorf("with IPMI bridging: %v, want the ipmi_address left out", got)
	}
}

func ptr[T any](v T) *T { return &v }
