package vm_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ferrometal/ferro/internal/testing/ferrotest"
	"github.com/ferrometal/ferro/internal/testing/vbmctest"
	"github.com/ferrometal/ferro/internal/vbmc"
)

// The faults of issue 9's "Bad input and faults" that need ferro serve as
// a whole: Go and busybox clients play the firmware and the agent, so no
// machine boots and each test takes seconds.

// faultTimeout is the short [conductor]inspect_wait_timeout of the fault
// tests, in seconds (room for the test's own steps on a loaded machine);
// the timeouts are checked every second.
const faultTimeout = 15

func startFaultLab(t *testing.T, env ...string) *lab {
	return startLab(t, append([]string{
		"FERRO_CONDUCTOR_INSPECT_WAIT_TIMEOUT=" + strconv.Itoa(faultTimeout),
		"FERRO_CONDUCTOR_CHECK_PROVISION_STATE_INTERVAL=1",
		"FERRO_INSPECTOR_CALLBACK_ENDPOINT_OVERRIDE=http://" + bridgeIP + ":5050",
	}, env...)...)
}

// fakeNode enrols a fake-hardware node with the ipxe boot interface and one
// port, moves it to manageable and starts its inspection (no --wait).
func (l *lab) fakeNode(t *testing.T, mac string) string {
	t.Helper()
	kernel := filepath.Join(l.images, "kernel")
	if _, err := os.Stat(kernel); err != nil {
		os.WriteFile(kernel, []byte(strings.Repeat("kernel", 20000)), 0o644)
		os.WriteFile(filepath.Join(l.images, "ramdisk"), []byte(strings.Repeat("ramdisk", 20000)), 0o644)
	}
	uuid := strings.TrimSpace(l.baremetal("node", "create", "--driver", "fake-hardware", "--boot-interface", "ipxe",
		"--network-interface", "noop", "--inspect-interface", "inspector",
		"--driver-info", "deploy_kernel=file://"+kernel, "--driver-info", "deploy_ramdisk=file://"+filepath.Join(l.images, "ramdisk"),
		"-f", "value", "-c", "uuid"))
	l.baremetal("port", "create", mac, "--node", uuid, "--pxe-enabled", "true")
	l.baremetal("node", "manage", uuid, "--wait", "60")
	l.baremetal("node", "inspect", uuid)
	if st := l.node(uuid)["provision_state"]; st != "inspect wait" {
		t.Fatalf("provision_state %v, want inspect wait", st)
	}
	return uuid
}

// veth adds a veth pair to the bridge whose namespace end, ifname, has mac:
// the NIC of a firmware played by the test.
func (l *lab) veth(t *testing.T, ifname, mac string) {
	t.Helper()
	l.ns.AddVeth("br-"+ifname, ifname)
	l.ns.MustIP("link", "set", ifname, "down")
	l.ns.MustIP("link", "set", ifname, "address", mac)
	l.ns.MustIP("link", "set", ifname, "up")
}

// udhcpc runs busybox's DHCP client on ifname as a PXE ROM (vendor class
// PXEClient) and returns what its script saw, or an error without a lease.
func (l *lab) udhcpc(t *testing.T, ifname string) (map[string]string, error) {
	t.Helper()
	bb := ferrotest.RequireTool(t, "busybox")
	dir := t.TempDir()
	out := filepath.Join(dir, "lease")
	script := filepath.Join(dir, "script")
	os.WriteFile(script, []byte("#!/bin/sh\n[ \"$1\" = bound ] && env > "+out+"\nexit 0\n"), 0o755)
	b, err := l.ns.Command(bb, "udhcpc", "-i", ifname, "-n", "-q", "-f", "-t", "3", "-T", "1", "-s", script,
		"-V", "PXEClient:Arch:00000:UNDI:002001").CombinedOutput()
	if err != nil {
		return nil, fmt.Errorf("udhcpc: %v: %s", err, b)
	}
	env, err := os.ReadFile(out)
	if err != nil {
		return nil, fmt.Errorf("udhcpc bound no lease: %s", b)
	}
	m := map[string]string{}
	for _, line := range strings.Split(string(env), "\n") {
		if k, v, ok := strings.Cut(line, "="); ok {
			m[k] = v
		}
	}
	return m, nil
}

var (
	kernelLineRE = regexp.MustCompile(`(?m)^kernel (\S+)`)
	tokenRE      = regexp.MustCompile(`ferro-inspection-token=(\S+)`)
)

// bootScript reads the node's iPXE script where ferro wrote it (over
// HTTP it goes only to the node's leased address).
func (l *lab) bootScript(t *testing.T, uuid string) string {
	t.Helper()
	body, err := os.ReadFile(filepath.Join(l.httpRoot, uuid, "config"))
	if err != nil || !bytes.HasPrefix(body, []byte("#!ipxe")) {
		t.Fatalf("the node's iPXE script: %v %q", err, body)
	}
	return string(body)
}

// getFrom GETs url as the firmware on ifname does, from the address ip
// that ferro's DHCP leased it (a node's boot files go there only).
func (l *lab) getFrom(t *testing.T, ifname, ip, url string) (int, []byte) {
	t.Helper()
	l.ns.MustIP("addr", "replace", ip+"/32", "dev", ifname)
	c := &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{
		DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
			var conn net.Conn
			err := l.ns.Do(func() error {
				var err error
				conn, err = (&net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(ip)}}).DialContext(ctx, network, addr)
				return err
			})
			return conn, err
		}}}
	resp, err := c.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	return resp.StatusCode, b
}

// assertTornDown checks that nothing of the node's inspection is left: its
// boot files, its DHCP lease, its power.
func (l *lab) assertTornDown(t *testing.T, uuid string) {
	t.Helper()
	if _, err := os.Stat(filepath.Join(l.httpRoot, uuid)); !os.IsNotExist(err) {
		t.Errorf("the node's boot files are still there: %v", err)
	}
	// Released by the teardown itself (not later by the netboot's sweep),
	// which the conductor logs before it saves the failed state.
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second)
	defer cancel()
	if err := l.waitLog(ctx, regexp.MustCompile(`dhcp: lease released on teardown.*node=`+uuid)); err != nil {
		t.Error(err)
	}
	if left := l.leases(t, uuid); len(left) != 0 {
		t.Errorf("leases left: %v", left)
	}
	if st := l.node(uuid)["power_state"]; st != "power off" {
		t.Errorf("power_state %v after the teardown, want power off", st)
	}
}

// TestFault_KernelNeverFetchesItsInitramfs: the "firmware" gets its DHCP
// offer, fetches the iPXE script and the kernel, and never the initramfs.
// The inspection times out naming the timeout, its option and the last
// phase reached, and tears down.
func TestFault_KernelNeverFetchesItsInitramfs(t *testing.T) {
	l := startFaultLab(t)
	mac := "52:54:00:77:20:01"
	l.veth(t, "fw1", mac)
	uuid := l.fakeNode(t, mac)

	lease, err := l.udhcpc(t, "fw1")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(lease["ip"], "192.168.77.") {
		t.Fatalf("lease %v", lease)
	}
	code, script := l.getFrom(t, "fw1", lease["ip"], httpURL+"/"+uuid+"/config")
	m := kernelLineRE.FindStringSubmatch(string(script))
	if code != 200 || m == nil {
		t.Fatalf("the node's iPXE script from its leased address: %d %q", code, script)
	}
	if code, body := l.getFrom(t, "fw1", lease["ip"], m[1]); code != 200 || len(body) == 0 {
		t.Fatalf("kernel %s: %d, %d bytes", m[1], code, len(body))
	}
	if st := l.node(uuid)["provision_state"]; st != "inspect wait" {
		t.Fatalf("provision_state %v once the kernel was fetched: the test was slower than the %d s timeout", st, faultTimeout)
	}

	ctx, cancel := context.WithTimeout(t.Context(), 90*time.Second)
	defer cancel()
	n, err := l.waitState(ctx, uuid, "inspect failed")
	if err != nil {
		t.Fatal(err)
	}
	msg := str(n["last_error"])
	for _, want := range []string{"timed out after " + strconv.Itoa(faultTimeout) + " s", "[conductor]inspect_wait_timeout", "last seen: kernel fetched at "} {
		if !strings.Contains(msg, want) {
			t.Errorf("last_error %q does not say %q", msg, want)
		}
	}
	l.assertTornDown(t, uuid)
}

// TestFault_AgentPostsGarbage: bad reports to the callback get a 4xx in
// ironic-inspector's error format and change nothing (as upstream, a report
// that cannot be matched to a node cannot fail one); the node stays in
// inspect wait, another node is still answered, and the genuine report
// then finishes the inspection.
func TestFault_AgentPostsGarbage(t *testing.T) {
	l := startFaultLab(t, "FERRO_CONDUCTOR_INSPECT_WAIT_TIMEOUT=600")
	mac := "52:54:00:12:34:56" // testdata/ipa/small-2nic.json's first NIC
	uuid := l.fakeNode(t, mac)
	token := tokenRE.FindStringSubmatch(l.bootScript(t, uuid))
	if token == nil {
		t.Fatal("no ferro-inspection-token in the iPXE script")
	}
	report, err := os.ReadFile("../../testdata/ipa/small-2nic.json")
	if err != nil {
		t.Fatal(err)
	}

	deep := strings.Repeat(`{"a":`, 100000) + "1" + strings.Repeat("}", 100000)
	wide := `{"inventory":{"interfaces":[` + strings.Repeat(`{"mac_address":"52:54:00:12:34:56"},`, 600000) + `{}]}}`
	cases := []struct {
		name, body string
		token      string
		want       int
	}{
		{"not JSON", "{garbage", token[1], 400},
		{"a JSON string", `"inventory"`, token[1], 400},
		{"no inventory", `{"error": null, "ipmi_address": null}`, token[1], 400},
		{"nesting bomb", deep, token[1], 400},
		{"larger than the limit", wide, token[1], 413},
		{"a genuine report with a wrong token", string(report), "not-the-token", 403},
	}
	for _, c := range cases {
		req, _ := http.NewRequest(http.MethodPost, "http://"+bridgeIP+":5050/v1/continue", strings.NewReader(c.body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("X-Ferro-Inspection-Token", c.token)
		resp, err := l.client.Do(req)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		b, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
		resp.Body.Close()
		var e struct {
			Error struct {
				Message string `json:"message"`
			} `json:"error"`
		}
		if resp.StatusCode != c.want || json.Unmarshal(b, &e) != nil || e.Error.Message == "" {
			t.Errorf("%s: %d %s, want %d with ironic-inspector's {\"error\": {\"message\"}}", c.name, resp.StatusCode, b, c.want)
			continue
		}
		t.Logf("%s: %d %s", c.name, resp.StatusCode, e.Error.Message)
		if n := l.node(uuid); n["provision_state"] != "inspect wait" || n["last_error"] != nil {
			t.Fatalf("after %s: provision_state %v, last_error %v, want inspect wait and no error", c.name, n["provision_state"], n["last_error"])
		}
	}

	// Another node is answered: its firmware gets a lease.
	other := "52:54:00:77:20:02"
	l.veth(t, "fw2", other)
	otherUUID := l.fakeNode(t, other)
	if _, err := l.udhcpc(t, "fw2"); err != nil {
		t.Fatalf("another node's DHCP after the garbage: %v", err)
	}
	l.baremetal("node", "abort", otherUUID)

	// The genuine report is still accepted.
	req, _ := http.NewRequest(http.MethodPost, "http://"+bridgeIP+":5050/v1/continue", bytes.NewReader(report))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("X-Ferro-Inspection-Token", token[1])
	code, body := l.do(req)
	if code != 200 {
		t.Fatalf("the genuine report: %d %s", code, body)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
	defer cancel()
	if _, err := l.waitState(ctx, uuid, "manageable"); err != nil {
		t.Fatal(err)
	}
	l.assertTornDown(t, otherUUID)
}

// TestFault_MachineNeverBoots: a ferro-vbmc fake machine is powered on by
// IPMI and never asks for anything; the inspection times out with "powered
// on" as the last phase, and the machine is powered off again.
func TestFault_MachineNeverBoots(t *testing.T) {
	l := startFaultLab(t, "FERRO_IPMI_MIN_COMMAND_INTERVAL=0")
	machines := vbmctest.FakeMachines("dead", 1)
	name, mac := machines[0].Name, machines[0].MACs[0]
	v := vbmctest.Start(t, vbmctest.Config{Machines: []vbmc.MachineConfig(machines), Listen: bridgeIP, Netns: l.ns.Name})
	ep := v.IPMI[name]
	kernel := filepath.Join(l.images, "kernel")
	os.WriteFile(kernel, []byte("kernel"), 0o644)
	os.WriteFile(filepath.Join(l.images, "ramdisk"), []byte("ramdisk"), 0o644)
	uuid := strings.TrimSpace(l.baremetal("node", "create", "--driver", "ipmi", "--boot-interface", "ipxe",
		"--network-interface", "noop", "--inspect-interface", "inspector",
		"--driver-info", "deploy_kernel=file://"+kernel, "--driver-info", "deploy_ramdisk=file://"+filepath.Join(l.images, "ramdisk"),
		"--driver-info", "ipmi_address="+ep.Host, "--driver-info", "ipmi_port="+strconv.Itoa(ep.Port),
		"--driver-info", "ipmi_username="+v.Username, "--driver-info", "ipmi_password="+v.Password,
		"-f", "value", "-c", "uuid"))
	l.baremetal("port", "create", mac, "--node", uuid, "--pxe-enabled", "true")
	l.baremetal("node", "manage", uuid, "--wait", "60")
	l.baremetal("node", "inspect", uuid)
	if st := l.vbmcPower(v, name); st != "On" {
		t.Fatalf("machine %s is %s once inspection started, want On", name, st)
	}

	ctx, cancel := context.WithTimeout(t.Context(), 90*time.Second)
	defer cancel()
	n, err := l.waitState(ctx, uuid, "inspect failed")
	if err != nil {
		t.Fatal(err)
	}
	msg := str(n["last_error"])
	for _, want := range []string{"[conductor]inspect_wait_timeout", "last seen: powered on at "} {
		if !strings.Contains(msg, want) {
			t.Errorf("last_error %q does not say %q", msg, want)
		}
	}
	if _, err := os.Stat(filepath.Join(l.httpRoot, uuid)); !os.IsNotExist(err) {
		t.Errorf("the node's boot files are still there: %v", err)
	}
	if st := l.vbmcPower(v, name); st != "Off" {
		t.Errorf("machine %s is %s after the timeout, want Off", name, st)
	}
	if st := l.node(uuid)["power_state"]; st != "power off" {
		t.Errorf("power_state %v after the timeout, want power off", st)
	}
}
