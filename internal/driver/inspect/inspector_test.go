package inspect

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/ferrometal/ferro/internal/baremetal"
	"github.com/ferrometal/ferro/internal/callback"
	"github.com/ferrometal/ferro/internal/driver"
	"github.com/ferrometal/ferro/internal/states"
)

// calls records what the fakes were asked to do, in order.
type calls struct {
	log  []string
	fail map[string]error
}

func (c *calls) do(name string) error {
	c.log = append(c.log, name)
	return c.fail[name]
}

type fakeBoot struct {
	c      *calls
	params driver.RamdiskParams
}

func (b *fakeBoot) Validate(context.Context, *driver.Task) error { return nil }
func (b *fakeBoot) ValidateInspection(context.Context, *driver.Task) error {
	return b.c.fail["boot.validate"]
}
func (b *fakeBoot) PrepareRamdisk(_ context.Context, _ *driver.Task, p driver.RamdiskParams) error {
	b.params = p
	return b.c.do("prepare ramdisk")
}
func (b *fakeBoot) CleanUpRamdisk(context.Context, *driver.Task) error {
	return b.c.do("clean up ramdisk")
}

type fakeNetwork struct{ c *calls }

func (n fakeNetwork) Validate(context.Context, *driver.Task) error { return nil }
func (n fakeNetwork) ValidateInspection(context.Context, *driver.Task) error {
	return n.c.fail["network.validate"]
}
func (n fakeNetwork) AddInspectionNetwork(context.Context, *driver.Task) error {
	return n.c.do("add network")
}
func (n fakeNetwork) RemoveInspectionNetwork(context.Context, *driver.Task) error {
	return n.c.do("remove network")
}

type fakePower struct{ c *calls }

func (p fakePower) Validate(context.Context, *driver.Task) error { return nil }
func (p fakePower) PowerState(_ context.Context, t *driver.Task) (string, error) {
	return t.Node.PowerState, nil
}
func (p fakePower) SetPowerState(_ context.Context, t *driver.Task, s string, _ time.Duration) error {
	if err := p.c.do(s); err != nil {
		return err
	}
	t.Node.PowerState = s
	return nil
}

type fakeClient struct {
	c          *calls
	manageBoot bool
	token      string
	status     driver.InspectStatus
	data       map[string]any
}

func (f *fakeClient) Start(_ context.Context, _ string, manageBoot bool, token string) error {
	f.manageBoot, f.token = manageBoot, token
	return f.c.do(fmt.Sprintf("start introspection manage_boot=%t", manageBoot))
}
func (f *fakeClient) Status(context.Context, string) (driver.InspectStatus, error) {
	return f.status, nil
}
func (f *fakeClient) Abort(context.Context, string) error { return f.c.do("abort introspection") }
func (f *fakeClient) Data(context.Context, string) (map[string]any, error) {
	return f.data, f.c.do("get data")
}

// fakeLeases records releases in the same call log.
type fakeLeases struct{ c *calls }

func (l fakeLeases) ReleaseLeases(_ context.Context, nodeUUID string) error {
	return l.c.do("release leases of " + nodeUUID)
}

type fakeStore struct{ inv *baremetal.Inventory }

func (s *fakeStore) UpdateNode(context.Context, *baremetal.Node) error { return nil }
func (s *fakeStore) UpdatePort(context.Context, *baremetal.Port) error { return nil }
func (s *fakeStore) SaveInventory(_ context.Context, inv *baremetal.Inventory) error {
	s.inv = inv
	return nil
}

type rig struct {
	c      *calls
	boot   *fakeBoot
	client *fakeClient
	store  *fakeStore
	task   *driver.Task
	insp   *Inspector
}

func newRig(t *testing.T) *rig {
	c := &calls{fail: map[string]error{}}
	r := &rig{c: c, boot: &fakeBoot{c: c}, client: &fakeClient{c: c}, store: &fakeStore{}}
	r.task = &driver.Task{
		Node: &baremetal.Node{UUID: "1be26c0b-03f2-4d2e-ae87-c02d7f33c123", DriverInternalInfo: baremetal.JSON{},
			DriverInfo: baremetal.JSON{ExtraKernelParamsKey: "console=ttyS0 ipa-collect-lldp=1"}},
		Driver: &driver.Interfaces{Boot: r.boot, Network: fakeNetwork{c}, Power: fakePower{c}},
		Log:    slog.New(slog.NewTextHandler(io.Discard, nil)),
		Store:  r.store,
	}
	r.insp = New(Options{Client: r.client, Inventory: r.store,
		Callback:          callback.Settings{CallbackEndpointOverride: "http://192.0.2.1:5050", ListenAddress: "127.0.0.1", ListenPort: 5050},
		ExtraKernelParams: "ipa-debug=1 nofb", PowerOff: true, Agent: AgentAuto, PowerTimeout: time.Minute})
	return r
}

func TestInspect_ManagedStartsInOrderWithParamsLast(t *testing.T) {
	r := newRig(t)
	r.task.Node.DriverInfo[AgentKey] = AgentFerro
	next, err := r.insp.InspectHardware(context.Background(), r.task)
	if err != nil || next != states.InspectWait {
		t.Fatalf("InspectHardware = %q, %v", next, err)
	}
	want := []string{"power off", "add network", "prepare ramdisk", "start introspection manage_boot=false", "power on"}
	if diff := cmp.Diff(want, r.c.log); diff != "" {
		t.Errorf("calls (-want +got):\n%s", diff)
	}
	var keys []string
	for _, p := range r.boot.params {
		keys = append(keys, p.Key)
	}
	if diff := cmp.Diff([]string{"ipa-debug", "nofb", "console", "ipa-collect-lldp", TokenParam, CallbackParam}, keys); diff != "" {
		t.Errorf("param order (-want +got):\n%s", diff)
	}
	last := r.boot.params[len(r.boot.params)-1]
	if last.Value != "http://192.0.2.1:5050/v1/continue" {
		t.Errorf("callback = %q", last.Value)
	}
	if tok := r.boot.params[len(r.boot.params)-2].Value; tok == "" || tok != r.client.token {
		t.Errorf("token on cmdline %q, given to inspector %q", tok, r.client.token)
	}
	if r.task.Node.DriverInternalInfo[ManageBootKey] != true {
		t.Error("manage boot choice not recorded")
	}
}

// The agent decides the callback token: none for the stock
// ironic-python-agent (the default), issued and passed to the inspector
// for ferro-agent, which auto recognises by the deploy image's name.
func TestInspect_AgentDecidesTheToken(t *testing.T) {
	for _, tc := range []struct {
		name      string
		cfgAgent  string
		info      baremetal.JSON
		confRD    string
		wantToken bool
	}{
		{name: "default is the stock agent", info: baremetal.JSON{"deploy_kernel": "file:///img/ipa.kernel", "deploy_ramdisk": "file:///img/ipa.initramfs"}},
		{name: "auto recognises ferro ramdisk build's initramfs", info: baremetal.JSON{"deploy_kernel": "http://192.0.2.1/ferro-agent.kernel", "deploy_ramdisk": "http://192.0.2.1/ferro-agent.initramfs?x=1"}, wantToken: true},
		{name: "auto recognises the ISO", info: baremetal.JSON{"deploy_iso": "file:///img/ferro-agent.iso"}, wantToken: true},
		{name: "auto reads [conductor]deploy_ramdisk when driver_info has no images", confRD: "/srv/ferro-agent.initramfs", wantToken: true},
		{name: "driver_info's images win over [conductor]'s", info: baremetal.JSON{"deploy_kernel": "/img/ipa.kernel", "deploy_ramdisk": "/img/ipa.initramfs"}, confRD: "/srv/ferro-agent.initramfs"},
		{name: "[inspector]agent=ferro-agent", cfgAgent: AgentFerro, info: baremetal.JSON{"deploy_ramdisk": "/img/ipa.initramfs"}, wantToken: true},
		{name: "driver_info overrides the option", cfgAgent: AgentFerro, info: baremetal.JSON{AgentKey: AgentIPA}},
		{name: "driver_info names ferro-agent", info: baremetal.JSON{AgentKey: AgentFerro, "deploy_ramdisk": "/img/ipa.initramfs"}, wantToken: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := newRig(t)
			if tc.cfgAgent != "" {
				r.insp.o.Agent = tc.cfgAgent
			}
			r.insp.o.DeployRamdisk = tc.confRD
			for k, v := range tc.info {
				r.task.Node.DriverInfo[k] = v
			}
			if _, err := r.insp.InspectHardware(context.Background(), r.task); err != nil {
				t.Fatal(err)
			}
			var cmdline string
			for _, p := range r.boot.params {
				if p.Key == TokenParam {
					cmdline = p.Value
				}
			}
			if tc.wantToken && (cmdline == "" || cmdline != r.client.token) {
				t.Errorf("token on the command line %q, given to the inspector %q; want one, the same", cmdline, r.client.token)
			}
			if !tc.wantToken && (cmdline != "" || r.client.token != "") {
				t.Errorf("token on the command line %q, given to the inspector %q; want none", cmdline, r.client.token)
			}
			if last := r.boot.params[len(r.boot.params)-1]; last.Key != CallbackParam {
				t.Errorf("last parameter %s, want the callback URL", last.Key)
			}
		})
	}
}

func TestInspect_ValidateRejectsUnknownAgent(t *testing.T) {
	r := newRig(t)
	r.task.Node.DriverInfo[AgentKey] = "ipa"
	if err := r.insp.Validate(context.Background(), r.task); !errors.Is(err, driver.ErrInvalidParameter) || !strings.Contains(err.Error(), AgentKey) {
		t.Errorf("Validate = %v, want an invalid driver_info[%s]", err, AgentKey)
	}
}

func TestInspect_FallsBackWhenBootOrNetworkUnsupported(t *testing.T) {
	for _, which := range []string{"boot.validate", "network.validate"} {
		t.Run(which, func(t *testing.T) {
			r := newRig(t)
			r.c.fail[which] = fmt.Errorf("%w: no deploy kernel", driver.ErrUnsupported)
			if _, err := r.insp.InspectHardware(context.Background(), r.task); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff([]string{"start introspection manage_boot=true"}, r.c.log); diff != "" {
				t.Errorf("calls (-want +got):\n%s", diff)
			}
			if r.task.Node.DriverInternalInfo[ManageBootKey] != false || r.client.token != "" {
				t.Error("unmanaged choice not recorded or token sent")
			}
		})
	}
}

func TestInspect_InvalidBootFailsInsteadOfFallingBack(t *testing.T) {
	r := newRig(t)
	r.c.fail["boot.validate"] = fmt.Errorf("%w: deploy_kernel is not a URL", driver.ErrInvalidParameter)
	_, err := r.insp.InspectHardware(context.Background(), r.task)
	var pe *driver.PhaseError
	if !errors.As(err, &pe) || !errors.Is(err, driver.ErrInvalidParameter) {
		t.Fatalf("err = %v", err)
	}
	if len(r.c.log) != 0 {
		t.Errorf("calls = %v, want none", r.c.log)
	}
}

func TestInspect_RequireManagedBootRejectsFallback(t *testing.T) {
	r := newRig(t)
	r.insp.o.RequireManagedBoot = true
	r.c.fail["network.validate"] = fmt.Errorf("%w: no inspection network", driver.ErrUnsupported)
	err := r.insp.Validate(context.Background(), r.task)
	if !errors.Is(err, driver.ErrInvalidParameter) || !strings.Contains(err.Error(), "no inspection network") {
		t.Fatalf("Validate = %v", err)
	}
}

func TestInspect_EveryStartFailureTearsDownAndNamesPhase(t *testing.T) {
	for _, tc := range []struct {
		step, phase string
		aborts      bool
	}{
		{"power off", "powering off the node", false},
		{"add network", "adding the inspection network", false},
		{"prepare ramdisk", "preparing the ramdisk", false},
		{"start introspection manage_boot=false", "starting the introspection", false},
		{"power on", "powering on the node", true},
	} {
		t.Run(tc.phase, func(t *testing.T) {
			r := newRig(t)
			r.c.fail[tc.step] = errors.New("boom")
			_, err := r.insp.InspectHardware(context.Background(), r.task)
			var pe *driver.PhaseError
			if !errors.As(err, &pe) || pe.Phase != tc.phase {
				t.Fatalf("err = %v, want phase %q", err, tc.phase)
			}
			if !strings.HasPrefix(err.Error(), "inspection failed while "+tc.phase+": boom") {
				t.Errorf("message = %q", err.Error())
			}
			tail := r.c.log[indexOf(r.c.log, tc.step)+1:]
			want := []string{"clean up ramdisk", "remove network", "power off"}
			if tc.aborts {
				want = append([]string{"abort introspection"}, want...)
			}
			if diff := cmp.Diff(want, tail); diff != "" {
				t.Errorf("teardown after %s (-want +got):\n%s", tc.step, diff)
			}
			if v, ok := r.task.Node.DriverInternalInfo[ManageBootKey]; ok {
				t.Errorf("driver_internal_info[%s] = %v after the failed start, want it removed", ManageBootKey, v)
			}
		})
	}
}

func indexOf(s []string, v string) int {
	for i, x := range s {
		if x == v {
			return i
		}
	}
	return -1
}

func TestInspect_TeardownErrorsAreCollected(t *testing.T) {
	r := newRig(t)
	r.c.fail["prepare ramdisk"] = errors.New("disk full")
	r.c.fail["remove network"] = errors.New("neutron down")
	_, err := r.insp.InspectHardware(context.Background(), r.task)
	if err == nil || !strings.Contains(err.Error(), "disk full") || !strings.Contains(err.Error(), "neutron down") {
		t.Fatalf("err = %v", err)
	}
	if r.c.log[len(r.c.log)-1] != "power off" {
		t.Errorf("power off not attempted after a failed step: %v", r.c.log)
	}
}

func TestFinish_TearsDownAndStoresInventory(t *testing.T) {
	r := newRig(t)
	r.task.Node.DriverInternalInfo[ManageBootKey] = true
	r.client.data = map[string]any{"inventory": map[string]any{"cpu": map[string]any{"count": 4}}, "root_disk": "sda"}
	if err := r.insp.Finish(context.Background(), r.task, driver.InspectStatus{Finished: true}); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"clean up ramdisk", "remove network", "power off", "get data"}, r.c.log); diff != "" {
		t.Errorf("calls (-want +got):\n%s", diff)
	}
	if r.store.inv == nil || r.store.inv.Inventory["cpu"] == nil || r.store.inv.PluginData["root_disk"] != "sda" {
		t.Errorf("inventory = %+v", r.store.inv)
	}
	if _, ok := r.task.Node.DriverInternalInfo[ManageBootKey]; ok {
		t.Error("manage boot flag left behind")
	}
}

func TestFinish_CleanupErrorIsReturnedAfterAllSteps(t *testing.T) {
	r := newRig(t)
	r.task.Node.DriverInternalInfo[ManageBootKey] = true
	r.c.fail["clean up ramdisk"] = errors.New("busy")
	err := r.insp.Finish(context.Background(), r.task, driver.InspectStatus{Finished: true})
	if err == nil || !strings.Contains(err.Error(), "cleaning up the ramdisk: busy") {
		t.Fatalf("err = %v", err)
	}
	if diff := cmp.Diff([]string{"clean up ramdisk", "remove network", "power off"}, r.c.log); diff != "" {
		t.Errorf("calls (-want +got):\n%s", diff)
	}
}

func TestFinish_UnmanagedDoesNoTeardown(t *testing.T) {
	r := newRig(t)
	r.task.Node.DriverInternalInfo[ManageBootKey] = false
	if err := r.insp.Finish(context.Background(), r.task, driver.InspectStatus{Finished: true, Error: "x"}); err != nil {
		t.Fatal(err)
	}
	if len(r.c.log) != 0 {
		t.Errorf("calls = %v", r.c.log)
	}
}

// With the built-in netboot, every end of an inspection releases the
// node's DHCP leases at once: the managed teardown (before the power-off)
// and, on the unmanaged path, the end of the introspection whose boot the
// inspector managed (finished, failed or timed out, and aborted).
func TestEnd_ReleasesLeasesOnBothPaths(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		name    string
		managed bool
		end     func(r *rig) error
		want    []string
	}{
		{"managed finish", true, func(r *rig) error { return r.insp.Finish(ctx, r.task, driver.InspectStatus{Finished: true}) },
			[]string{"clean up ramdisk", "remove network", "release leases", "power off", "get data"}},
		{"managed abort", true, func(r *rig) error { return r.insp.Abort(ctx, r.task) },
			[]string{"abort introspection", "clean up ramdisk", "remove network", "release leases", "power off"}},
		{"unmanaged finish", false, func(r *rig) error { return r.insp.Finish(ctx, r.task, driver.InspectStatus{Finished: true}) },
			[]string{"release leases", "get data"}},
		{"unmanaged error or timeout", false, func(r *rig) error {
			return r.insp.Finish(ctx, r.task, driver.InspectStatus{Finished: true, Error: "Introspection timeout"})
		}, []string{"release leases"}},
		{"unmanaged abort", false, func(r *rig) error { return r.insp.Abort(ctx, r.task) },
			[]string{"abort introspection", "release leases"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := newRig(t)
			r.insp.o.Leases = fakeLeases{r.c}
			r.task.Node.DriverInternalInfo[ManageBootKey] = tc.managed
			if err := tc.end(r); err != nil {
				t.Fatal(err)
			}
			for i, c := range r.c.log {
				if c == "release leases of "+r.task.Node.UUID {
					r.c.log[i] = "release leases"
				}
			}
			if diff := cmp.Diff(tc.want, r.c.log); diff != "" {
				t.Errorf("calls (-want +got):\n%s", diff)
			}
		})
	}
}

// A release that fails is not the inspection's failure: the netboot's
// sweep releases the leases later.
func TestEnd_LeaseReleaseFailureOnlyLogged(t *testing.T) {
	r := newRig(t)
	r.insp.o.Leases = fakeLeases{r.c}
	r.c.fail["release leases of "+r.task.Node.UUID] = errors.New("database locked")
	r.task.Node.DriverInternalInfo[ManageBootKey] = false
	if err := r.insp.Finish(context.Background(), r.task, driver.InspectStatus{Finished: true}); err != nil {
		t.Fatalf("Finish: %v", err)
	}
}

func TestAbort_AbortsAndTearsDown(t *testing.T) {
	r := newRig(t)
	r.task.Node.DriverInternalInfo[ManageBootKey] = true
	if err := r.insp.Abort(context.Background(), r.task); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"abort introspection", "clean up ramdisk", "remove network", "power off"}, r.c.log); diff != "" {
		t.Errorf("calls (-want +got):\n%s", diff)
	}
	// Idempotent: a second abort runs the same steps without error.
	if err := r.insp.Abort(context.Background(), r.task); err != nil {
		t.Fatal(err)
	}
}

func TestCallbackURL(t *testing.T) {
	for _, tc := range []struct {
		base, want string
		loopback   bool
		wantErr    string
	}{
		{base: "http://192.0.2.1:5050", want: "http://192.0.2.1:5050/v1/continue"},
		{base: "http://192.0.2.1:5050/", want: "http://192.0.2.1:5050/v1/continue"},
		{base: "http://192.0.2.1:5050/v1", want: "http://192.0.2.1:5050/v1/continue"},
		{base: "https://insp.example.com/baremetal-introspection", want: "https://insp.example.com/baremetal-introspection/v1/continue"},
		{base: "http://127.0.0.1:5050", wantErr: `invalid parameter value: inspector callback endpoint "http://127.0.0.1:5050" is a loopback address the ramdisk cannot reach; set [inspector]callback_endpoint_override`},
		{base: "http://localhost:5050", wantErr: "loopback"},
		{base: "http://[::1]:5050", wantErr: "loopback"},
		{base: "http://127.0.0.1:5050", loopback: true, want: "http://127.0.0.1:5050/v1/continue"},
		{base: "ftp://x", wantErr: `invalid parameter value: inspector callback endpoint "ftp://x" is not an http(s) URL`},
		{base: "not a url", wantErr: "is not an http(s) URL"},
		{base: "mdns", want: "mdns"},
	} {
		got, err := CallbackURL(callback.Settings{CallbackEndpointOverride: tc.base}, tc.loopback)
		if got != tc.want || (tc.wantErr == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), tc.wantErr)) {
			t.Errorf("CallbackURL(%q, %t) = %q, %v; want %q, error %q", tc.base, tc.loopback, got, err, tc.want, tc.wantErr)
		}
		if err != nil && !errors.Is(err, driver.ErrInvalidParameter) {
			t.Errorf("CallbackURL(%q): %v does not wrap ErrInvalidParameter", tc.base, err)
		}
	}
}

func TestParseKernelParams(t *testing.T) {
	got, err := ParseKernelParams(`a=1 flag  b="two words" c='x y' d=\"q`)
	if err != nil {
		t.Fatal(err)
	}
	want := driver.RamdiskParams{{Key: "a", Value: "1"}, {Key: "flag", Flag: true}, {Key: "b", Value: "two words"}, {Key: "c", Value: "x y"}, {Key: "d", Value: `"q`}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	for _, bad := range []string{`a="open`, `=v`, `x\`} {
		if _, err := ParseKernelParams(bad); err == nil {
			t.Errorf("ParseKernelParams(%q) succeeded", bad)
		}
	}
}

func TestValidate_RejectsReservedParams(t *testing.T) {
	r := newRig(t)
	r.task.Node.DriverInfo[ExtraKernelParamsKey] = "ipa-inspection-callback-url=http://evil/"
	if err := r.insp.Validate(context.Background(), r.task); !errors.Is(err, driver.ErrInvalidParameter) {
		t.Fatalf("Validate = %v", err)
	}
	r.task.Node.DriverInfo[ExtraKernelParamsKey] = 42
	if err := r.insp.Validate(context.Background(), r.task); !errors.Is(err, driver.ErrInvalidParameter) {
		t.Fatalf("Validate = %v", err)
	}
}
