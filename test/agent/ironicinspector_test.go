package agent_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/ferrometal/ferro/internal/callback"
	"github.com/ferrometal/ferro/internal/ramdisk"
	"github.com/ferrometal/ferro/internal/testing/ferrotest"
	"github.com/ferrometal/ferro/internal/testing/netnstest"
)

// The addresses of the lane's network namespace (its bridge br0).
const (
	iiHost      = "192.168.118.1"
	iiFerroPort = "6385"
	iiInspPort  = "5050"
)

// TestQEMU_IronicInspector111ProcessesFerroAgentReport: ferro-agent as a
// drop-in ramdisk for an ironic-inspector site. A QEMU machine on a tap in
// a network namespace boots Debian's kernel with ferro's initramfs; its
// kernel line has what an 11.1 site puts there (the callback, BOOTIF,
// ipa-collect-lldp=1). Debian's lldpd is the switch on the tap, busybox's
// udhcpd the site's DHCP. Debian's ironic-inspector 11.1, with the
// lldp_basic and local_link_connection hooks and a ferro serve as its
// Ironic, processes the report; the test checks that the introspection
// finished and that the node's port got its local_link_connection from
// lldpd's frames: switch_id the chassis (the tap's MAC), port_id the tap.
func TestQEMU_IronicInspector111ProcessesFerroAgentReport(t *testing.T) {
	qemu := ferrotest.RequireTool(t, "qemu-system-x86_64")
	inspectorBin := ferrotest.RequireTool(t, "ironic-inspector")
	dbsync := ferrotest.RequireTool(t, "ironic-inspector-dbsync")
	lldpd := ferrotest.RequireTool(t, "lldpd", "/usr/sbin")
	lldpcli := ferrotest.RequireTool(t, "lldpcli", "/usr/sbin")
	busybox := ferrotest.RequireTool(t, "busybox")
	ferrotest.RequireTool(t, "apt-get")
	ferrotest.RequireTool(t, "dpkg-deb")
	ctx, cancel := context.WithTimeout(context.Background(), 8*time.Minute)
	defer cancel()

	images := buildRamdisk(t, ctx)
	ns := netnstest.New(t, iiHost, 24)
	ns.AddTap("tap0")
	dir := t.TempDir()
	daemon := func(logName, bin string, args ...string) {
		t.Helper()
		cmd := ns.Command(bin, args...)
		logf, err := os.Create(filepath.Join(dir, logName))
		if err != nil {
			t.Fatal(err)
		}
		cmd.Stdout, cmd.Stderr = logf, logf
		if err := cmd.Start(); err != nil {
			t.Fatalf("%s: %v", bin, err)
		}
		t.Cleanup(func() {
			_ = cmd.Process.Kill()
			_ = cmd.Wait()
			logf.Close()
			if t.Failed() {
				b, _ := os.ReadFile(logf.Name())
				t.Logf("%s:\n%s", logName, tailBytes(b, 80))
			}
		})
	}
	client := ns.HTTPClient()
	waitHTTP := func(url string, exited <-chan struct{}) {
		t.Helper()
		for deadline := time.Now().Add(2 * time.Minute); ; {
			select {
			case <-exited:
				t.Fatalf("the server for %s exited", url)
			default:
			}
			if resp, err := client.Get(url); err == nil {
				resp.Body.Close()
				if resp.StatusCode == http.StatusOK {
					return
				}
			}
			if time.Now().After(deadline) {
				t.Fatalf("%s does not answer", url)
			}
			time.Sleep(100 * time.Millisecond)
		}
	}

	// The site's DHCP.
	udhcpdConf := filepath.Join(dir, "udhcpd.conf")
	writeText(t, udhcpdConf, fmt.Sprintf("start 192.168.118.100\nend 192.168.118.150\ninterface br0\nlease_file %s/udhcpd.leases\noption subnet 255.255.255.0\n", dir))
	writeText(t, filepath.Join(dir, "udhcpd.leases"), "")
	daemon("udhcpd.log", busybox, "udhcpd", "-f", udhcpdConf)

	// ferro serve as the site's Ironic, on the namespace's loopback (only
	// ironic-inspector, beside it, talks to it).
	ferroURL := "http://127.0.0.1:" + iiFerroPort
	ferro := ns.Command(ferrotest.Binary(t), "serve", "--data-dir", filepath.Join(dir, "ferro"))
	ferro.Env = append(withoutFerroEnv(), "FERRO_API_HOST_IP=127.0.0.1", "FERRO_API_PORT="+iiFerroPort,
		"FERRO_INSPECTOR_LISTEN_ADDRESS=127.0.0.1", "FERRO_INSPECTOR_LISTEN_PORT=5051")
	ferroLog := &bytes.Buffer{}
	ferro.Stdout, ferro.Stderr = ferroLog, ferroLog
	if err := ferro.Start(); err != nil {
		t.Fatal(err)
	}
	ferroDone := make(chan struct{})
	go func() { _ = ferro.Wait(); close(ferroDone) }()
	t.Cleanup(func() {
		_ = ferro.Process.Kill()
		<-ferroDone
		if t.Failed() {
			t.Logf("ferro serve:\n%s", tailBytes(ferroLog.Bytes(), 60))
		}
	})
	waitHTTP(ferroURL+"/", ferroDone)
	api := func(method, path string, body any, out any) int {
		t.Helper()
		var rd io.Reader
		if body != nil {
			b, _ := json.Marshal(body)
			rd = bytes.NewReader(b)
		}
		req, _ := http.NewRequestWithContext(ctx, method, path, rd)
		req.Header.Set("X-OpenStack-Ironic-API-Version", "latest")
		req.Header.Set("Content-Type", "application/json")
		resp, err := client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		if out != nil && json.Unmarshal(b, out) != nil {
			t.Fatalf("%s %s: %d %s", method, path, resp.StatusCode, b)
		}
		return resp.StatusCode
	}
	var node struct {
		UUID string `json:"uuid"`
	}
	api("POST", ferroURL+"/v1/nodes", map[string]any{"driver": "fake-hardware", "name": "vm0"}, &node)
	api("POST", ferroURL+"/v1/ports", map[string]any{"node_uuid": node.UUID, "address": vmMAC, "pxe_enabled": true}, nil)
	api("PUT", ferroURL+"/v1/nodes/"+node.UUID+"/states/provision", map[string]any{"target": "manage"}, nil)
	for deadline := time.Now().Add(time.Minute); ; {
		var n map[string]any
		api("GET", ferroURL+"/v1/nodes/"+node.UUID, nil, &n)
		if n["provision_state"] == "manageable" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("node is %v, want manageable", n["provision_state"])
		}
		time.Sleep(50 * time.Millisecond)
	}

	// ironic-inspector 11.1, standalone, with the LLDP hooks.
	conf := filepath.Join(dir, "inspector.conf")
	writeText(t, conf, fmt.Sprintf(`[DEFAULT]
auth_strategy = noauth
listen_address = %s
listen_port = %s
transport_url = fake://
[ironic]
auth_type = none
endpoint_override = %s
[database]
connection = sqlite:///%s/inspector.sqlite
[processing]
store_data = database
processing_hooks = $default_processing_hooks,lldp_basic,local_link_connection
[pxe_filter]
driver = noop
`, iiHost, iiInspPort, ferroURL, dir))
	if out, err := exec.CommandContext(ctx, dbsync, "--config-file", conf, "upgrade").CombinedOutput(); err != nil {
		t.Fatalf("ironic-inspector-dbsync: %v\n%s", err, out)
	}
	daemon("ironic-inspector.log", inspectorBin, "--config-file", conf)
	inspURL := "http://" + iiHost + ":" + iiInspPort
	waitHTTP(inspURL+"/", nil)
	if code := api("POST", inspURL+"/v1/introspection/"+node.UUID+"?manage_boot=false", nil, nil); code != http.StatusAccepted {
		t.Fatalf("start introspection: %d", code)
	}

	// The machine, as an 11.1 site's PXE config boots IPA.
	cmdline := strings.Join([]string{
		"console=ttyS0", "panic=-1", "quiet", "loglevel=3",
		callback.URLParam + "=" + inspURL + "/v1/continue",
		"BOOTIF=01-" + strings.ReplaceAll(vmMAC, ":", "-"),
		"ipa-collect-lldp=1", "ipa-lldp-timeout=60",
	}, " ")
	args := append([]string{
		"-machine", "pc", "-m", fmt.Sprint(vmMemMB), "-smp", fmt.Sprint(vmCPUs),
		"-nographic", "-monitor", "none", "-no-reboot",
		"-kernel", filepath.Join(images, ramdisk.KernelFile), "-initrd", filepath.Join(images, ramdisk.InitramfsFile),
		"-append", cmdline,
		"-netdev", "tap,id=n0,ifname=tap0,script=no,downscript=no", "-device", "virtio-net-pci,netdev=n0,mac=" + vmMAC,
	}, accel()...)
	serialPath := filepath.Join(dir, "serial.log")
	serial, err := os.Create(serialPath)
	if err != nil {
		t.Fatal(err)
	}
	defer serial.Close()
	vm := ns.Command(qemu, args...)
	vm.Stdout, vm.Stderr = serial, serial
	if err := vm.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- vm.Wait() }()
	t.Cleanup(func() {
		_ = vm.Process.Kill()
		<-exited
		if t.Failed() {
			b, _ := os.ReadFile(serialPath)
			if len(b) > 16000 {
				b = b[len(b)-16000:]
			}
			t.Logf("serial console (tail):\n%s", b)
		}
	})

	// The switch: lldpd on the tap, started once QEMU holds the tap and
	// its carrier is up. lldpd sends at start; started on a tap with no
	// carrier it may not notice the carrier come (a failed run heard
	// nothing in the agent's whole minute), while the agent's capture
	// waits up to 60 s for the first frame, so a late start costs nothing.
	for deadline := time.Now().Add(time.Minute); ; {
		out, _ := ns.Command("ip", "link", "show", "tap0").Output()
		if bytes.Contains(out, []byte("LOWER_UP")) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("tap0 has no carrier a minute after QEMU started:\n%s", out)
		}
		time.Sleep(20 * time.Millisecond)
	}
	// One frame a second once configured (read back). lldpcli drops privileges: the control socket's directory and its
	// parents must be reachable by lldpd's user, which a test's temporary
	// directory's are not.
	sockDir, err := os.MkdirTemp("", "ferro-lldpd-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(sockDir) })
	if err := os.Chmod(sockDir, 0o755); err != nil {
		t.Fatal(err)
	}
	sock := filepath.Join(sockDir, "lldpd.sock")
	daemon("lldpd.log", lldpd, "-d", "-u", sock, "-I", "tap0", "-C", "tap0", "-S", "ferro test switch")
	for deadline := time.Now().Add(time.Minute); ; {
		_ = ns.Command(lldpcli, "-u", sock, "configure", "lldp", "tx-interval", "1").Run()
		out, _ := ns.Command(lldpcli, "-u", sock, "show", "configuration").CombinedOutput()
		if bytes.Contains(out, []byte("Transmit delay: 1")) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("lldpd's tx-interval does not read back as 1 s:\n%s", out)
		}
		time.Sleep(200 * time.Millisecond)
	}
	// And ask it to send now, every second, until the test ends
	// ("lldpcli update" re-reads the interfaces and sends on each).
	ferrotest.Repeat(t, time.Second, func() { _ = ns.Command(lldpcli, "-u", sock, "update").Run() })
	// What lldpd says it sent and what the tap passed to the machine,
	// for a failure: "sent, not received" is the machine's side.
	lldpCounters := func() string {
		stats, _ := ns.Command(lldpcli, "-u", sock, "show", "statistics").CombinedOutput()
		link, _ := ns.Command("ip", "-s", "link", "show", "tap0").CombinedOutput()
		return string(stats) + string(link)
	}
	// The switch must have sent a frame before the agent's verdict means
	// anything: a failure here is the rig's, not the agent's.
	for deadline := time.Now().Add(time.Minute); ; {
		out, _ := ns.Command(lldpcli, "-u", sock, "-f", "keyvalue", "show", "statistics").Output()
		if sent := regexp.MustCompile(`(?m)^lldp\.tap0\.tx\.tx=([0-9]+)$`).FindSubmatch(out); sent != nil && string(sent[1]) != "0" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("lldpd sent no frame on tap0 in a minute:\n%s", lldpCounters())
		}
		time.Sleep(100 * time.Millisecond)
	}

	// Wait for 11.1 to end the introspection (an HTTP state); the
	// machine powers itself off once its report was accepted.
	var st map[string]any
	for {
		api("GET", inspURL+"/v1/introspection/"+node.UUID, nil, &st)
		if st["finished"] == true {
			break
		}
		select {
		case <-ctx.Done():
			t.Fatalf("ironic-inspector did not finish the introspection: %v\nserial console (tail):\n%s", st, tail(serialPath, 60))
		case <-time.After(200 * time.Millisecond):
		}
	}
	if st["state"] != "finished" || st["error"] != nil {
		t.Fatalf("introspection %v\nserial console (tail):\n%s", st, tail(serialPath, 60))
	}

	// The port's local_link_connection, from lldpd's frames.
	out, err := ns.Command("ip", "-br", "link", "show", "tap0").Output()
	if err != nil {
		t.Fatal(err)
	}
	f := strings.Fields(string(out))
	if len(f) < 3 {
		t.Fatalf("ip link: %q", out)
	}
	tapMAC := f[2]
	var ports struct {
		Ports []struct {
			Address string         `json:"address"`
			LLC     map[string]any `json:"local_link_connection"`
		} `json:"ports"`
	}
	api("GET", ferroURL+"/v1/ports/detail?node="+node.UUID, nil, &ports)
	if len(ports.Ports) != 1 || ports.Ports[0].Address != vmMAC {
		t.Fatalf("ports %+v, want the one of %s", ports.Ports, vmMAC)
	}
	llc := ports.Ports[0].LLC
	if llc["switch_id"] != tapMAC || (llc["port_id"] != "tap0" && llc["port_id"] != tapMAC) {
		t.Errorf("local_link_connection %v, want switch_id %s (lldpd's chassis, -C tap0) and port_id tap0\n%s", llc, tapMAC, lldpCounters())
	}
	var data map[string]any
	api("GET", inspURL+"/v1/introspection/"+node.UUID+"/data", nil, &data)
	all, _ := data["all_interfaces"].(map[string]any)
	eth0, _ := all["eth0"].(map[string]any)
	if proc, _ := eth0["lldp_processed"].(map[string]any); proc["switch_chassis_id"] != tapMAC {
		t.Errorf("11.1's lldp_basic: all_interfaces.eth0 = %v, want lldp_processed.switch_chassis_id %s", eth0, tapMAC)
	}
	if log, _ := os.ReadFile(filepath.Join(dir, "ironic-inspector.log")); bytes.Contains(log, []byte("No LLDP Data found")) {
		t.Errorf("ironic-inspector found no LLDP data:\n%s", tailBytes(log, 40))
	}
}

func writeText(t *testing.T, path, s string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(s), 0o644); err != nil {
		t.Fatal(err)
	}
}

func tailBytes(b []byte, lines int) string {
	ls := bytes.Split(b, []byte("\n"))
	if len(ls) > lines {
		ls = ls[len(ls)-lines:]
	}
	return string(bytes.Join(ls, []byte("\n")))
}

// withoutFerroEnv is the test's environment less FERRO_* variables, so a
// developer's settings do not reach the server the test starts.
func withoutFerroEnv() []string {
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "FERRO_") {
			env = append(env, kv)
		}
	}
	return env
}
