package conductor

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/ferrometal/ferro/internal/baremetal"
	"github.com/ferrometal/ferro/internal/driver"
	"github.com/ferrometal/ferro/internal/driver/inspect"
	"github.com/ferrometal/ferro/internal/inspection"
	"github.com/ferrometal/ferro/internal/inspection/rules"
	"github.com/ferrometal/ferro/internal/states"
	"github.com/ferrometal/ferro/internal/store"
)

// The report of the small QEMU machine (testdata/ipa/small-2nic.json):
// NICs 52:54:00:12:34:56 (PXE) and …:57, bmc_address 0.0.0.0.
const (
	smallPXEMAC   = "52:54:00:12:34:56"
	smallOtherMAC = "52:54:00:12:34:57"
)

func smallReport(t *testing.T) *inspection.Report {
	t.Helper()
	_, file, _, _ := runtime.Caller(0)
	b, err := os.ReadFile(filepath.Join(filepath.Dir(file), "..", "..", "testdata", "ipa", "small-2nic.json"))
	if err != nil {
		t.Fatal(err)
	}
	rep, err := inspection.Decode(b)
	if err != nil {
		t.Fatal(err)
	}
	return rep
}

// withAgent registers the agent interface, unmanaged (fake boot cannot
// manage an inspection), with the Ironic pipeline and builtIn rules.
func (r *rig) withAgent(t *testing.T, builtIn ...*rules.Rule) {
	t.Helper()
	po := inspection.DefaultOptions(inspection.Ironic)
	po.BuiltInRules = builtIn
	p, err := inspection.New(po)
	if err != nil {
		t.Fatal(err)
	}
	reg := r.opts.Registry
	reg.RegisterInspect("agent", inspect.NewAgent(inspect.AgentOptions{Pipeline: p, Store: r.store, StoreInventory: true,
		PowerOff: true, PowerTimeout: time.Minute, Interfaces: reg.DefaultInterfaces}))
}

// inspecting enrolls a fake-hardware node with the agent interface and
// ports for macs, and starts its inspection: it waits in inspect wait.
func (r *rig) inspecting(t *testing.T, macs ...string) *baremetal.Node {
	t.Helper()
	n := r.node(t, states.Manageable, map[string]string{"inspect": "agent"})
	for _, mac := range macs {
		if err := r.store.CreatePort(context.Background(), &baremetal.Port{UUID: uuid.NewString(), NodeUUID: n.UUID, Address: mac, PXEEnabled: true}); err != nil {
			t.Fatal(err)
		}
	}
	if err := r.c.DoProvisionAction(context.Background(), n.UUID, VerbInspect); err != nil {
		t.Fatal(err)
	}
	return r.waitState(t, n.UUID, states.InspectWait)
}

// post hands a report to the conductor as the API does and waits until
// it was processed.
func (r *rig) post(t *testing.T, rep InspectionReport) (*Accepted, error) {
	t.Helper()
	done := make(chan struct{})
	rep.Done = func() { close(done) }
	acc, err := r.c.ContinueInspection(context.Background(), rep)
	if err == nil {
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			t.Fatal("the report was not processed within 10 s")
		}
	}
	return acc, err
}

func TestContinueInspection_ProcessesToManageableAndLeavesNothing(t *testing.T) {
	r := newRig(t)
	r.withAgent(t)
	n := r.inspecting(t, smallPXEMAC)
	if v := n.DriverInternalInfo[inspect.ManageBootKey]; v != false {
		t.Errorf("inspector_manage_boot = %v, want false (fake boot)", v)
	}
	acc, err := r.post(t, InspectionReport{Report: smallReport(t), MACs: []string{smallPXEMAC, smallOtherMAC}, BMCAddresses: []string{"0.0.0.0"}})
	if err != nil {
		t.Fatal(err)
	}
	if acc.Node.UUID != n.UUID || acc.AgentToken != "" {
		t.Errorf("accepted %s with token %q, want %s without", acc.Node.UUID, acc.AgentToken, n.UUID)
	}
	got := r.waitState(t, n.UUID, states.Manageable)
	for _, k := range []string{inspect.ManageBootKey, inspect.LookupBMCAddressesKey, inspect.TokenHashKey} {
		if v, ok := got.DriverInternalInfo[k]; ok {
			t.Errorf("driver_internal_info[%s] = %v left behind", k, v)
		}
	}
	if got.PowerState != baremetal.PowerOff || got.InspectionFinishedAt == nil || got.LastError != "" {
		t.Errorf("power %q, finished %v, last_error %q", got.PowerState, got.InspectionFinishedAt, got.LastError)
	}
	if got.Properties["cpu_arch"] != "x86_64" {
		t.Errorf("properties = %v, want cpu_arch from the architecture hook", got.Properties)
	}
	inv, err := r.store.GetInventory(context.Background(), n.UUID)
	if err != nil {
		t.Fatal(err)
	}
	all, _ := inv.PluginData["all_interfaces"].(map[string]any)
	eth0, _ := all["eth0"].(map[string]any)
	if eth0["pxe_enabled"] != true {
		t.Errorf("plugin_data.all_interfaces.eth0 = %v, want pxe_enabled", eth0)
	}
	if _, ok := inv.PluginData["logs"]; ok {
		t.Error("the ramdisk logs are in plugin_data")
	}
}

// Every way a lookup fails is the same error and changes nothing.
func TestContinueInspection_LookupFailuresAreOneGenericError(t *testing.T) {
	r := newRig(t)
	r.withAgent(t)
	ctx := context.Background()
	waiting := r.inspecting(t, "52:54:00:aa:00:01")
	other := r.inspecting(t, "52:54:00:aa:00:02")
	manageable := r.node(t, states.Manageable, map[string]string{"inspect": "agent"})
	if err := r.store.CreatePort(ctx, &baremetal.Port{UUID: uuid.NewString(), NodeUUID: manageable.UUID, Address: "52:54:00:aa:00:03"}); err != nil {
		t.Fatal(err)
	}
	// Two nodes in inspect wait share a BMC address (Redfish on one BMC).
	for _, n := range []*baremetal.Node{waiting, other} {
		n, _ = r.store.GetNode(ctx, n.UUID)
		n.DriverInternalInfo[inspect.LookupBMCAddressesKey] = []any{"192.0.2.9"}
		if err := r.store.UpdateNode(ctx, n); err != nil {
			t.Fatal(err)
		}
	}
	rep := smallReport(t)
	for _, tc := range []struct {
		name string
		r    InspectionReport
		want error
	}{
		{"nothing to look up by", InspectionReport{}, ErrNoLookupInfo},
		{"unknown MAC", InspectionReport{MACs: []string{"52:54:00:ff:ff:ff"}}, ErrLookupFailed},
		{"node not waiting", InspectionReport{MACs: []string{"52:54:00:aa:00:03"}}, ErrLookupFailed},
		{"MACs of two nodes", InspectionReport{MACs: []string{"52:54:00:aa:00:01", "52:54:00:aa:00:02"}}, ErrLookupFailed},
		{"UUID of another node than the MACs'", InspectionReport{NodeUUID: other.UUID, MACs: []string{"52:54:00:aa:00:01"}}, ErrLookupFailed},
		{"unknown UUID", InspectionReport{NodeUUID: uuid.NewString()}, ErrLookupFailed},
		{"BMC address of two nodes, no MAC match", InspectionReport{MACs: []string{"52:54:00:ff:ff:ff"}, BMCAddresses: []string{"192.0.2.9"}}, ErrLookupFailed},
		{"unknown BMC address", InspectionReport{BMCAddresses: []string{"192.0.2.99"}}, ErrLookupFailed},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.r.Report = rep
			_, err := r.c.ContinueInspection(ctx, tc.r)
			if !errors.Is(err, tc.want) {
				t.Fatalf("err = %v, want %v", err, tc.want)
			}
			for _, n := range []*baremetal.Node{waiting, other} {
				r.waitState(t, n.UUID, states.InspectWait)
			}
			r.waitState(t, manageable.UUID, states.Manageable)
		})
	}
	// A node whose MAC matches and whose BMC address another node has too
	// is found: the MAC decides, the BMC agrees.
	if _, err := r.post(t, InspectionReport{Report: rep, MACs: []string{"52:54:00:aa:00:01"}, BMCAddresses: []string{"192.0.2.9"}}); err != nil {
		t.Fatal(err)
	}
	r.waitState(t, waiting.UUID, states.Manageable)
	// Now one node has the BMC address: found by it alone.
	if _, err := r.post(t, InspectionReport{Report: rep, BMCAddresses: []string{"192.0.2.9"}}); err != nil {
		t.Fatal(err)
	}
	r.waitState(t, other.UUID, states.Manageable)
	if nodes, _ := r.store.ListNodes(ctx, store.NodeFilter{}); len(nodes) != 3 {
		t.Errorf("%d nodes, want 3: a failed lookup enrolled one", len(nodes))
	}
}

func TestContinueInspection_IssuedTokenIsRequired(t *testing.T) {
	r := newRig(t)
	r.withAgent(t)
	ctx := context.Background()
	n := r.inspecting(t, smallPXEMAC)
	n, _ = r.store.GetNode(ctx, n.UUID)
	const token = "0123456789abcdef0123456789abcdef"
	n.DriverInternalInfo[inspect.TokenHashKey] = tokenHashForTest(token)
	if err := r.store.UpdateNode(ctx, n); err != nil {
		t.Fatal(err)
	}
	for _, presented := range []string{"", "wrong"} {
		if _, err := r.c.ContinueInspection(ctx, InspectionReport{Report: smallReport(t), MACs: []string{smallPXEMAC}, Token: presented}); !errors.Is(err, ErrLookupFailed) {
			t.Errorf("token %q: err = %v, want the generic lookup failure", presented, err)
		}
	}
	r.waitState(t, n.UUID, states.InspectWait)
	if _, err := r.post(t, InspectionReport{Report: smallReport(t), MACs: []string{smallPXEMAC}, Token: token}); err != nil {
		t.Fatal(err)
	}
	r.waitState(t, n.UUID, states.Manageable)
}

// tokenHashForTest is the hash the agent interface keeps of a token.
func tokenHashForTest(token string) string {
	h := sha256.Sum256([]byte(token))
	return hex.EncodeToString(h[:])
}

// A rule's fail fails the inspection with the rule's message; the hooks'
// changes are not applied and nothing is stored.
func TestContinueInspection_FailingRuleFailsWithItsMessageAndChangesNothing(t *testing.T) {
	r := newRig(t)
	rule, err := builtInRule(`{"priority": 10, "description": "no VMs", "conditions": [{"op": "eq", "args": {"values": ["{inventory[system_vendor][product_name]}", "{inventory[system_vendor][product_name]}"]}}],
		"actions": [{"op": "fail", "args": {"msg": "virtual machines are not allowed here"}}]}`)
	if err != nil {
		t.Fatal(err)
	}
	r.withAgent(t, rule)
	n := r.inspecting(t, smallPXEMAC)
	if _, err := r.post(t, InspectionReport{Report: smallReport(t), MACs: []string{smallPXEMAC}}); err != nil {
		t.Fatal(err)
	}
	got := r.waitState(t, n.UUID, states.InspectFailed)
	if !strings.Contains(got.LastError, "virtual machines are not allowed here") || !strings.HasPrefix(got.LastError, "Failed to finish inspection: ") {
		t.Errorf("last_error = %q", got.LastError)
	}
	if _, ok := got.Properties["cpu_arch"]; ok {
		t.Errorf("properties = %v: the hooks' changes were applied", got.Properties)
	}
	if _, err := r.store.GetInventory(context.Background(), n.UUID); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("inventory stored after a failed rule: %v", err)
	}
	if got.PowerState != baremetal.PowerOff {
		t.Errorf("power %q after a failure, want power off", got.PowerState)
	}
}

func TestContinueInspection_AgentTokenOnceAt184(t *testing.T) {
	r := newRig(t)
	r.withAgent(t)
	n := r.inspecting(t, smallPXEMAC)
	acc, err := r.post(t, InspectionReport{Report: smallReport(t), MACs: []string{smallPXEMAC}, AgentToken: true})
	if err != nil {
		t.Fatal(err)
	}
	if len(acc.AgentToken) < 40 || acc.Node.DriverInternalInfo[inspect.AgentTokenKey] != acc.AgentToken {
		t.Errorf("agent token %q, node's %v", acc.AgentToken, acc.Node.DriverInternalInfo[inspect.AgentTokenKey])
	}
	got := r.waitState(t, n.UUID, states.Manageable)
	if got.DriverInternalInfo[inspect.AgentTokenKey] != acc.AgentToken {
		t.Errorf("stored token %v, handed out %q", got.DriverInternalInfo[inspect.AgentTokenKey], acc.AgentToken)
	}
	// A second inspection wipes it at start, as Ironic's wipe_token_and_url.
	if err := r.c.DoProvisionAction(context.Background(), n.UUID, VerbInspect); err != nil {
		t.Fatal(err)
	}
	if got := r.waitState(t, n.UUID, states.InspectWait); got.DriverInternalInfo[inspect.AgentTokenKey] != nil {
		t.Errorf("agent token kept into the next inspection: %v", got.DriverInternalInfo[inspect.AgentTokenKey])
	}
}

// Discovery off: an unknown machine is the generic 404 and nothing is
// created. On: it is enrolled, processed with plugin_data.auto_discovered
// (a rule keyed on it fills in the BMC, even the driver), and left in enroll.
func TestContinueInspection_Discovery(t *testing.T) {
	r := newRig(t)
	r.withAgent(t)
	ctx := context.Background()
	if _, err := r.c.ContinueInspection(ctx, InspectionReport{Report: smallReport(t), MACs: []string{smallPXEMAC}}); !errors.Is(err, ErrLookupFailed) {
		t.Fatalf("discovery off: err = %v", err)
	}
	if nodes, _ := r.store.ListNodes(ctx, store.NodeFilter{}); len(nodes) != 0 {
		t.Fatalf("discovery off enrolled %d node(s)", len(nodes))
	}

	rule, err := builtInRule(`{"priority": 50, "conditions": [{"op": "is-true", "args": {"value": "{plugin_data[auto_discovered]}"}}],
		"actions": [{"op": "set-attribute", "args": {"path": "/driver_info/ipmi_address", "value": "{inventory[bmc_address]}"}},
		            {"op": "set-attribute", "args": {"path": "/name", "value": "discovered-{inventory[system_vendor][serial_number]}"}}]}`)
	if err != nil {
		t.Fatal(err)
	}
	r2 := newRigWith(t, func(o *Options, e *driver.Enabled) {
		o.Discovery = Discovery{Enabled: true, Driver: "fake-hardware", InspectionScope: "rack-1", ResourceClass: "baremetal"}
		e.Defaults = map[string]string{"inspect": "agent"}
	})
	r2.withAgent(t, rule)
	acc, err := r2.post(t, InspectionReport{Report: smallReport(t), MACs: []string{smallPXEMAC, smallOtherMAC}})
	if err != nil {
		t.Fatal(err)
	}
	got := r2.waitState(t, acc.Node.UUID, states.Enroll)
	if got.Driver != "fake-hardware" || got.ResourceClass != "baremetal" || got.Interface("inspect") != "agent" {
		t.Errorf("discovered node: driver %q, resource class %q, interfaces %v", got.Driver, got.ResourceClass, got.Interfaces)
	}
	if got.DriverInfo["ipmi_address"] != "0.0.0.0" || !strings.HasPrefix(got.Name, "discovered-") || got.Properties["inspection_scope"] != "rack-1" {
		t.Errorf("discovered node: driver_info %v, name %q, properties %v", got.DriverInfo, got.Name, got.Properties)
	}
	inv, err := r2.store.GetInventory(ctx, got.UUID)
	if err != nil {
		t.Fatal(err)
	}
	if inv.PluginData[AutoDiscoveredKey] != true {
		t.Errorf("plugin_data.auto_discovered = %v", inv.PluginData[AutoDiscoveredKey])
	}
	ports, _ := r2.store.ListPorts(ctx, store.PortFilter{NodeUUID: got.UUID})
	if len(ports) != 1 || ports[0].Address != smallPXEMAC {
		t.Errorf("ports %v, want the PXE NIC's (add_ports = pxe)", ports)
	}
	// The machine is known now: its next report is no new node.
	if _, err := r2.c.ContinueInspection(ctx, InspectionReport{Report: smallReport(t), MACs: []string{smallPXEMAC}}); !errors.Is(err, ErrLookupFailed) {
		t.Errorf("second report of a discovered node in enroll: %v, want the generic lookup failure", err)
	}
	if nodes, _ := r2.store.ListNodes(ctx, store.NodeFilter{}); len(nodes) != 1 {
		t.Errorf("%d nodes after the second report, want 1", len(nodes))
	}
}

// builtInRule loads one rule as [inspection_rules]built_in_rules does.
func builtInRule(body string) (*rules.Rule, error) {
	rs, err := rules.ParseBuiltIn([]byte("["+body+"]"), "test")
	if err != nil {
		return nil, err
	}
	return rs[0], nil
}

// The conductor's PXE filter sync allows an agent node's ports while it
// waits for its report and denies them once it is done.
func TestSyncPXEFilter_FollowsTheInspection(t *testing.T) {
	dir := t.TempDir()
	r := newRigWith(t, func(o *Options, _ *driver.Enabled) {
		o.PXEFilter = PXEFilter{Dir: dir, SupportedInspectInterfaces: []string{"agent"}, Period: time.Hour}
	})
	r.withAgent(t)
	read := func() (string, string) {
		mac, _ := os.ReadFile(filepath.Join(dir, smallPXEMAC))
		unknown, _ := os.ReadFile(filepath.Join(dir, "unknown_hosts_filter"))
		return string(mac), string(unknown)
	}
	n := r.inspecting(t, smallPXEMAC)
	r.c.SyncPXEFilter(context.Background())
	if mac, unknown := read(); mac != smallPXEMAC+"\n" || unknown != "*:*:*:*:*:*\n" {
		t.Errorf("in inspect wait: %q, unknown %q", mac, unknown)
	}
	if _, err := r.post(t, InspectionReport{Report: smallReport(t), MACs: []string{smallPXEMAC}}); err != nil {
		t.Fatal(err)
	}
	r.waitState(t, n.UUID, states.Manageable)
	r.c.SyncPXEFilter(context.Background())
	if mac, unknown := read(); mac != smallPXEMAC+",ignore\n" || unknown != "*:*:*:*:*:*,ignore\n" {
		t.Errorf("after the inspection: %q, unknown %q", mac, unknown)
	}
}
