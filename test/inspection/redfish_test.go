package inspection_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	bmc "github.com/ferrometal/ferro/internal/bmc/redfish"
	"github.com/ferrometal/ferro/internal/bmc/redfish/redfishtest"
	rfdriver "github.com/ferrometal/ferro/internal/driver/redfish"
	"github.com/ferrometal/ferro/internal/ramdisk"
	"github.com/ferrometal/ferro/internal/testing/ferrotest"
	"github.com/ferrometal/ferro/internal/testing/vbmctest"
	"github.com/ferrometal/ferro/test/inspection"
)

// redfishLab is a lab whose HTTP boot root is served (a BMC fetches the
// virtual media ISO from it), with fast Redfish retries.
type redfishLab struct {
	*lab
	httpBase string
}

func startRedfishLab(t *testing.T, env ...string) *redfishLab {
	t.Helper()
	if err := ramdisk.CheckLoaders(ramdisk.ISOOptions{}); err != nil {
		ferrotest.SkipOrFail(t, "%v", err)
	}
	// The root is known once the lab exists; the server is needed before.
	var root atomic.Value
	root.Store("")
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.FileServer(http.Dir(root.Load().(string))).ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	l := startLab(t, append([]string{
		"FERRO_DEPLOY_HTTP_URL=" + srv.URL,
		"FERRO_REDFISH_CONNECTION_ATTEMPTS=2",
		"FERRO_REDFISH_CONNECTION_RETRY_INTERVAL=1",
		"FERRO_CONDUCTOR_POWER_STATE_CHANGE_TIMEOUT=3",
	}, env...)...)
	root.Store(l.httpRoot)
	return &redfishLab{lab: l, httpBase: srv.URL}
}

// enrollRedfish creates a redfish node with driver_info and makes it manageable.
func (l *redfishLab) enrollRedfish(info map[string]any, boot, inspect string) *node {
	l.t.Helper()
	full := map[string]any{"deploy_kernel": l.kernel, "deploy_ramdisk": l.ramdisk}
	for k, v := range info {
		full[k] = v
	}
	var created struct {
		UUID string `json:"uuid"`
	}
	l.must(http.MethodPost, "/v1/nodes", map[string]any{
		"driver": "redfish", "boot_interface": boot, "network_interface": "noop", "inspect_interface": inspect,
		"driver_info": full,
	}, &created)
	n := &node{uuid: created.UUID}
	l.must(http.MethodPut, "/v1/nodes/"+n.uuid+"/states/provision", map[string]any{"target": "manage"}, nil)
	l.waitState(n, "manageable")
	return n
}

// waitFailed waits for inspect failed and returns the node.
func (l *redfishLab) waitFailed(n *node) map[string]any {
	l.t.Helper()
	deadline := time.Now().Add(stateTimeout)
	for {
		got := l.get(n)
		if got["provision_state"] == "inspect failed" {
			return got
		}
		if got["provision_state"] == "manageable" || time.Now().After(deadline) {
			l.t.Fatalf("node %s in %v, want inspect failed; last_error %v", n.uuid, got["provision_state"], got["last_error"])
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func (l *redfishLab) isoDir(n *node) string { return filepath.Join(l.httpRoot, "vmedia", n.uuid) }

// checkNoSecrets greps ferro's and ferro-vbmc's logs for the passwords.
func (l *redfishLab) checkNoSecrets(v *vbmctest.VBMC, secrets ...string) {
	l.t.Helper()
	ferrotest.AssertNoSecrets(l.t, "ferro serve", l.srv.Log(), secrets...)
	ferrotest.AssertNoSecrets(l.t, "ferro-vbmc", v.Log(), secrets...)
}

// TestRedfishVirtualMedia_ManagedInspection: a ferro-vbmc machine with
// redfish power and management, redfish-virtual-media boot and the
// inspector: the ISO is built and inserted (ferro-vbmc fetches it from the
// HTTP root), the override is Cd once, the machine is on; the agent's
// report, posted with the token from the ISO's boot config, finishes the
// inspection, and the ISO is ejected and removed and the machine off.
func TestRedfishVirtualMedia_ManagedInspection(t *testing.T) {
	t.Parallel()
	isoinfo := ferrotest.RequireTool(t, "isoinfo")
	v := vbmctest.Start(t, vbmctest.Config{Machines: vbmctest.FakeMachines("rv", 1)})
	l := startRedfishLab(t)
	// ferro's agent: the ramdisk carries a callback token (the stock agent's would not).
	info := map[string]any{"redfish_address": v.RedfishURL, "redfish_username": v.Username, "redfish_password": v.Password,
		"redfish_system_id": "/redfish/v1/Systems/rv0", "inspection_agent": "ferro-agent"}
	n := l.enrollRedfish(info, "redfish-virtual-media", "inspector")
	mac := vbmctest.FakeMachines("rv", 1)[0].MACs[0]
	l.must(http.MethodPost, "/v1/ports", map[string]any{"node_uuid": n.uuid, "address": mac, "pxe_enabled": true}, nil)
	start := time.Now()
	got := l.inspect(n)
	t.Logf("inspect → inspect wait: %v", time.Since(start))
	if got["power_state"] != "power on" {
		t.Errorf("power state %v in inspect wait", got["power_state"])
	}
	client := bmc.New(bmc.Options{ConnectionAttempts: 2, ConnectionRetryInterval: time.Millisecond})
	defer client.Close()
	ep, _ := rfdriver.ParseDriverInfo(info, "auto")
	ctx := context.Background()
	cds, err := client.CDs(ctx, ep)
	if err != nil || len(cds) != 1 || !cds[0].Inserted || !strings.HasPrefix(cds[0].Image, l.httpBase+"/vmedia/"+n.uuid+"/") {
		t.Fatalf("virtual CD %+v, %v", cds, err)
	}
	sys, err := client.System(ctx, ep)
	if err != nil || sys.PowerState != "On" {
		t.Fatalf("System %+v, %v", sys, err)
	}
	// What the machine boots: the ISO ferro-vbmc fetched.
	fetched, _ := filepath.Glob(filepath.Join(v.StateDir, "*", "*.iso"))
	if len(fetched) != 1 {
		t.Fatalf("ferro-vbmc holds %v", fetched)
	}
	grub, err := exec.Command(isoinfo, "-R", "-i", fetched[0], "-x", "/boot/grub/grub.cfg").Output()
	if err != nil {
		t.Fatal(err)
	}
	bc, err := inspection.ParseBootConfig("grub", grub)
	if err != nil {
		t.Fatal(err)
	}
	if bc.Token == "" || bc.Callback != l.callback {
		t.Fatalf("boot config: token %q callback %q (want %q)", bc.Token, bc.Callback, l.callback)
	}
	report, err := inspection.Report(mac)
	if err != nil {
		t.Fatal(err)
	}
	if status, body, err := inspection.Post(ctx, http.DefaultClient, bc.Callback, "not-"+bc.Token, report); err != nil || status < 400 {
		t.Fatalf("a report with a wrong token: %d %s %v", status, body, err)
	}
	status, body, err := inspection.Post(ctx, http.DefaultClient, bc.Callback, bc.Token, report)
	if err != nil || status != http.StatusOK && status != http.StatusAccepted {
		t.Fatalf("post report: %d %s %v", status, body, err)
	}
	done := l.waitState(n, "manageable")
	if done["power_state"] != "power off" || done["reservation"] != nil {
		t.Errorf("after inspection: power %v, reservation %v", done["power_state"], done["reservation"])
	}
	cds, err = client.CDs(ctx, ep)
	if err != nil || cds[0].Inserted || cds[0].Image != "" {
		t.Errorf("CD after inspection: %+v, %v", cds, err)
	}
	if _, err := os.Stat(l.isoDir(n)); !os.IsNotExist(err) {
		t.Errorf("ISO directory left: %v", err)
	}
	if sys, _ := client.System(ctx, ep); sys.PowerState != "Off" {
		t.Errorf("machine %s after inspection", sys.PowerState)
	}
	l.checkNoSecrets(v, v.Password)
}

// TestRedfish_Faults: each fault fails the inspection in the background
// with a last_error naming the BMC and the phase, leaves nothing inserted,
// no ISO and no lock, and no password in the log.
func TestRedfish_Faults(t *testing.T) {
	t.Parallel()
	v := vbmctest.Start(t, vbmctest.Config{Machines: vbmctest.FakeMachines("rf", 1)})
	never := redfishtest.New(t)
	never.Set(func(b *redfishtest.Sloppy) { b.NeverConfirm = true })
	l := startRedfishLab(t)
	dead := "http://127.0.0.1:" + strconv.Itoa(ferrotest.FreePort(t))
	ok := map[string]any{"redfish_address": v.RedfishURL, "redfish_username": v.Username, "redfish_password": v.Password,
		"redfish_system_id": "/redfish/v1/Systems/rf0"}
	with := func(k, val string) map[string]any {
		m := map[string]any{}
		for a, b := range ok {
			m[a] = b
		}
		m[k] = val
		return m
	}
	// Manage reads the power state: a wrong password is caught there.
	{
		var created struct {
			UUID string `json:"uuid"`
		}
		l.must(http.MethodPost, "/v1/nodes", map[string]any{"driver": "redfish", "driver_info": with("redfish_password", "wrong-pass-rf-5521")}, &created)
		n := &node{uuid: created.UUID}
		l.must(http.MethodPut, "/v1/nodes/"+n.uuid+"/states/provision", map[string]any{"target": "manage"}, nil)
		deadline := time.Now().Add(stateTimeout)
		for got := l.get(n); ; got = l.get(n) {
			if got["provision_state"] == "enroll" && got["last_error"] != nil {
				if msg := got["last_error"].(string); !strings.Contains(msg, "redfish BMC "+v.RedfishURL) || !strings.Contains(msg, "refused the credentials") {
					t.Errorf("manage: last_error %q", msg)
				}
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("manage with a wrong password: %v", got)
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
	// A bad driver_info is refused by the API itself, nothing changed.
	{
		n := l.enrollRedfish(ok, "redfish-virtual-media", "inspector")
		l.must(http.MethodPatch, "/v1/nodes/"+n.uuid, []map[string]any{{"op": "add", "path": "/driver_info/redfish_address", "value": "ftp://" + v.RedfishURL[len("http://"):]}}, nil)
		code, body := l.do(http.MethodPut, "/v1/nodes/"+n.uuid+"/states/provision", map[string]any{"target": "inspect"})
		if code != http.StatusBadRequest || !strings.Contains(string(body), "redfish_address") {
			t.Errorf("inspect with a bad redfish_address: %d %s", code, body)
		}
		if got := l.get(n); got["provision_state"] != "manageable" || got["reservation"] != nil {
			t.Errorf("after a refused inspect: %v, reservation %v", got["provision_state"], got["reservation"])
		}
	}
	// The others break a manageable node's BMC before the inspection.
	for _, tc := range []struct {
		name     string
		key, val string
		want     []string
	}{
		{"wrong password", "redfish_password", "wrong-pass-rf-5521", []string{"redfish BMC " + v.RedfishURL, "refused the credentials"}},
		{"nonexistent system", "redfish_system_id", "/redfish/v1/Systems/ghost", []string{"redfish BMC " + v.RedfishURL, "ghost", "does not exist"}},
		{"unreachable BMC", "redfish_address", dead, []string{"redfish BMC " + dead, "after 2 attempts"}},
		{"never confirming power", "redfish_address", never.URL, []string{"powering on the node", "redfish BMC " + never.URL, "still reports PowerState"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			l.t = t
			info := ok
			if tc.name == "never confirming power" {
				info = map[string]any{"redfish_address": never.URL, "redfish_username": redfishtest.User, "redfish_password": redfishtest.Password}
			}
			n := l.enrollRedfish(info, "redfish-virtual-media", "inspector")
			if tc.name != "never confirming power" {
				l.must(http.MethodPatch, "/v1/nodes/"+n.uuid, []map[string]any{{"op": "add", "path": "/driver_info/" + tc.key, "value": tc.val}}, nil)
			}
			l.baremetal("node", "inspect", n.uuid)
			got := l.waitFailed(n)
			msg, _ := got["last_error"].(string)
			for _, w := range tc.want {
				if !strings.Contains(msg, w) {
					t.Errorf("last_error %q lacks %q", msg, w)
				}
			}
			if got["reservation"] != nil {
				t.Errorf("lock left: %v", got["reservation"])
			}
			if _, err := os.Stat(l.isoDir(n)); !os.IsNotExist(err) {
				t.Errorf("ISO directory left: %v", err)
			}
		})
	}
	l.t = t
	var img string
	never.Get(func(b *redfishtest.Sloppy) { img = b.CDImage })
	if img != "" {
		t.Errorf("the never-confirming BMC still holds %q", img)
	}
	l.checkNoSecrets(v, v.Password, "wrong-pass-rf-5521", redfishtest.Password)
}

// TestRedfishInspect_OutOfBand: inspect_interface=redfish on a BMC that
// answers 500 twice and sends counts as strings: properties, ports and the
// inventory API, in one synchronous step.
func TestRedfishInspect_OutOfBand(t *testing.T) {
	t.Parallel()
	sloppy := redfishtest.New(t)
	sloppy.Set(func(b *redfishtest.Sloppy) { b.Fail500 = 1 })
	v := vbmctest.Start(t, vbmctest.Config{Machines: vbmctest.FakeMachines("ob", 1)})
	l := startRedfishLab(t)
	for _, tc := range []struct {
		name  string
		info  map[string]any
		props map[string]string
		macs  []string // the ports: the NICs Enabled with Health OK, as Ironic's rule
		nics  int      // the inventory's interfaces
	}{
		{"sloppy BMC, 500 then recovery", map[string]any{"redfish_address": sloppy.URL, "redfish_username": redfishtest.User, "redfish_password": redfishtest.Password},
			map[string]string{"cpus": "16", "cpu_arch": "x86_64", "memory_mb": "98304", "local_gb": "185"}, []string{"12:44:6a:3b:04:11"}, 2},
		{"ferro-vbmc", map[string]any{"redfish_address": v.RedfishURL, "redfish_username": v.Username, "redfish_password": v.Password, "redfish_system_id": "/redfish/v1/Systems/ob0"},
			map[string]string{"cpus": "2", "cpu_arch": "x86_64", "memory_mb": "2048", "local_gb": "9"}, vbmctest.FakeMachines("ob", 1)[0].MACs, len(vbmctest.FakeMachines("ob", 1)[0].MACs)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			l.t = t
			n := l.enrollRedfish(tc.info, "ipxe", "redfish")
			l.baremetal("node", "inspect", n.uuid)
			got := l.waitState(n, "manageable")
			props, _ := got["properties"].(map[string]any)
			for k, w := range tc.props {
				if props[k] != w {
					t.Errorf("%s = %v, want %s", k, props[k], w)
				}
			}
			var macs []string
			for _, p := range l.portsOf(n) {
				macs = append(macs, p["address"].(string))
			}
			slices.Sort(macs)
			if !slices.Equal(macs, tc.macs) {
				t.Errorf("ports %v, want %v", macs, tc.macs)
			}
			var inv struct {
				Inventory struct {
					CPU    struct{ Count int } `json:"cpu"`
					Memory struct {
						PhysicalMB int `json:"physical_mb"`
					} `json:"memory"`
					Interfaces []struct {
						MAC string `json:"mac_address"`
					} `json:"interfaces"`
				} `json:"inventory"`
			}
			ferrotest.Must(t, l.srv.URL, http.MethodGet, "/v1/nodes/"+n.uuid+"/inventory", nil, &inv)
			if inv.Inventory.CPU.Count == 0 || inv.Inventory.Memory.PhysicalMB == 0 || len(inv.Inventory.Interfaces) != tc.nics {
				t.Errorf("inventory %+v", inv)
			}
			// A second inspection adds no port.
			l.baremetal("node", "inspect", n.uuid)
			l.waitState(n, "manageable")
			if len(l.portsOf(n)) != len(tc.macs) {
				t.Errorf("ports duplicated: %v", l.portsOf(n))
			}
		})
	}
	l.t = t
	l.checkNoSecrets(v, v.Password, redfishtest.Password)
}

// TestRedfishVirtualMedia_AbortEjects: an abort in inspect wait tears the
// virtual media down too (Ironic 21.4 leaves it inserted).
func TestRedfishVirtualMedia_AbortEjects(t *testing.T) {
	t.Parallel()
	v := vbmctest.Start(t, vbmctest.Config{Machines: vbmctest.FakeMachines("ra", 1)})
	l := startRedfishLab(t)
	info := map[string]any{"redfish_address": v.RedfishURL, "redfish_username": v.Username, "redfish_password": v.Password,
		"redfish_system_id": "/redfish/v1/Systems/ra0"}
	n := l.enrollRedfish(info, "redfish-virtual-media", "inspector")
	l.inspect(n)
	client := bmc.New(bmc.Options{ConnectionAttempts: 2, ConnectionRetryInterval: time.Millisecond})
	defer client.Close()
	ep, _ := rfdriver.ParseDriverInfo(info, "auto")
	ctx := context.Background()
	if cds, err := client.CDs(ctx, ep); err != nil || !cds[0].Inserted {
		t.Fatalf("CD in inspect wait: %+v, %v", cds, err)
	}
	l.baremetal("node", "abort", n.uuid)
	got := l.waitFailed(n)
	if got["reservation"] != nil || got["power_state"] != "power off" {
		t.Errorf("after abort: reservation %v, power %v", got["reservation"], got["power_state"])
	}
	if cds, err := client.CDs(ctx, ep); err != nil || cds[0].Inserted || cds[0].Image != "" {
		t.Errorf("CD after abort: %+v, %v", cds, err)
	}
	if _, err := os.Stat(l.isoDir(n)); !os.IsNotExist(err) {
		t.Errorf("ISO directory left: %v", err)
	}
	l.checkNoSecrets(v, v.Password)
}

// TestRedfishVirtualMedia_TimeoutEjects: an inspection whose report never
// comes fails at [conductor]inspect_wait_timeout with the same teardown.
func TestRedfishVirtualMedia_TimeoutEjects(t *testing.T) {
	t.Parallel()
	v := vbmctest.Start(t, vbmctest.Config{Machines: vbmctest.FakeMachines("rt", 1)})
	l := startRedfishLab(t, "FERRO_CONDUCTOR_INSPECT_WAIT_TIMEOUT=5", "FERRO_CONDUCTOR_CHECK_PROVISION_STATE_INTERVAL=1")
	info := map[string]any{"redfish_address": v.RedfishURL, "redfish_username": v.Username, "redfish_password": v.Password,
		"redfish_system_id": "/redfish/v1/Systems/rt0"}
	n := l.enrollRedfish(info, "redfish-virtual-media", "inspector")
	l.baremetal("node", "inspect", n.uuid)
	got := l.waitFailed(n)
	if msg, _ := got["last_error"].(string); !strings.Contains(strings.ToLower(msg), "timeout") && !strings.Contains(strings.ToLower(msg), "timed out") {
		t.Errorf("last_error %q does not say it timed out", msg)
	}
	client := bmc.New(bmc.Options{ConnectionAttempts: 2, ConnectionRetryInterval: time.Millisecond})
	defer client.Close()
	ep, _ := rfdriver.ParseDriverInfo(info, "auto")
	if cds, err := client.CDs(context.Background(), ep); err != nil || cds[0].Inserted || cds[0].Image != "" {
		t.Errorf("CD after the timeout: %+v, %v", cds, err)
	}
	if _, err := os.Stat(l.isoDir(n)); !os.IsNotExist(err) {
		t.Errorf("ISO directory left: %v", err)
	}
	if got["reservation"] != nil || got["power_state"] != "power off" {
		t.Errorf("after the timeout: reservation %v, power %v", got["reservation"], got["power_state"])
	}
}
