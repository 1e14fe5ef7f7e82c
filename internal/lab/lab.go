// Package lab is `ferro lab up`: a network namespace with a bridge, ferro
// serve with its built-in netboot on it, ferro-vbmc with QEMU machines on
// taps of the bridge, Debian's lldpd as the "switch", and the machines
// enrolled and manageable, so that one `baremetal node inspect --wait`
// inspects a virtual machine in-band. Everything is removed when it stops.
package lab

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/ferrometal/ferro/internal/netns"

	"github.com/ferrometal/ferro/internal/progress"
)

// Options configure a lab.
type Options struct {
	// Netns is the namespace's name; Dir holds the databases, boot roots,
	// machine disks and logs (removed at the end unless Keep).
	Netns, Dir string
	Keep       bool
	// Machines is how many QEMU machines to create; MemoryMB and CPUs each.
	Machines, MemoryMB, CPUs int
	// Ferro and VBMC are the binaries; Kernel and Initramfs the deploy
	// ramdisk (`ferro ramdisk build`'s).
	Ferro, VBMC       string
	Kernel, Initramfs string
	Log               *slog.Logger
	// Out gets the lines a user reads: what was enrolled and how to inspect.
	Out io.Writer
	// Boot is how the machines boot the ramdisk (see Boots); "" is ipxe.
	Boot string
	// Progress hears each step of Up (network, ferro serve, ferro-vbmc and
	// its machines, enrolment); nil for silence.
	Progress progress.Func
}

// Boots are the lab's boot paths: the node's hardware type and boot
// interface, the machine's firmware and QEMU machine type.
var Boots = map[string]struct {
	Driver, BootInterface, Mode, Machine string
}{
	"ipxe": {"ipmi", "ipxe", "bios", "q35"}, // iPXE script, kernel and initramfs over HTTP
	"pxe":  {"ipmi", "pxe", "bios", "q35"},  // PXELINUX, everything over TFTP
	"uefi": {"ipmi", "ipxe", "uefi", "q35"}, // OVMF, snponly.efi over TFTP, then HTTP
	// The ISO as a virtual CD, on q35's AHCI: SeaBIOS reads an IDE CD by
	// PIO, ≈ 1 s longer for the 14 MB of kernel and initramfs under TCG.
	"vmedia": {"redfish", "redfish-virtual-media", "bios", "q35"},
}

// Addresses inside the namespace.
const (
	BridgeIP = "192.168.77.1"
	APIURL   = "http://" + BridgeIP + ":6385"
	username = "admin"
)

// Lab is a running lab.
type Lab struct {
	o       Options
	procs   []*proc
	created bool
	// cleanups run at Down, after the processes stopped.
	cleanups []func()
	client   *http.Client
	// Nodes are the enrolled machines' names.
	Nodes []string
}

// Up creates everything and enrols the machines. On error it tears down
// what it made. Call Down when done.
func Up(ctx context.Context, o Options) (l *Lab, err error) {
	if o.Log == nil {
		o.Log = slog.Default()
	}
	if o.Out == nil {
		o.Out = io.Discard
	}
	if o.Machines <= 0 {
		o.Machines = 1
	}
	if o.MemoryMB <= 0 {
		o.MemoryMB = 1024
	}
	if o.CPUs <= 0 {
		o.CPUs = 1
	}
	if o.Boot == "" {
		o.Boot = "ipxe"
	}
	if _, ok := Boots[o.Boot]; !ok {
		return nil, fmt.Errorf("lab: unknown boot %q (ipxe, pxe, uefi or vmedia)", o.Boot)
	}
	if os.Geteuid() != 0 {
		return nil, errors.New("lab: needs root (network namespace, taps, DHCP on port 67)")
	}
	for _, f := range []string{o.Ferro, o.VBMC, o.Kernel, o.Initramfs} {
		if _, err := os.Stat(f); err != nil {
			return nil, fmt.Errorf("lab: %w", err)
		}
	}
	l = &Lab{o: o}
	defer func() {
		if err != nil {
			l.Down()
			l = nil
		}
	}()
	if err := os.MkdirAll(o.Dir, 0o755); err != nil {
		return l, fmt.Errorf("lab: %w", err)
	}
	step := func(name string, fn func() error) error {
		o.Progress.Report(progress.Event{Step: name})
		if err := fn(); err != nil {
			return err
		}
		o.Progress.Report(progress.Event{Step: name, End: true})
		return nil
	}
	if err := step(fmt.Sprintf("creating network namespace %s with bridge %s and %d tap(s)", o.Netns, BridgeIP+"/24", o.Machines), l.network); err != nil {
		return l, err
	}
	l.client = l.httpClient()
	if err := step("starting ferro serve with the built-in DHCP/TFTP/HTTP netboot", func() error { return l.startFerro(ctx) }); err != nil {
		return l, err
	}
	var ready *vbmcReady
	if err := step(fmt.Sprintf("starting ferro-vbmc with %d QEMU machine(s) (%d CPU, %d MiB each)", o.Machines, o.CPUs, o.MemoryMB), func() (err error) {
		ready, err = l.startVBMC(ctx)
		return err
	}); err != nil {
		return l, err
	}
	l.startLLDPD()
	if err := step(fmt.Sprintf("enrolling the machine(s) as %s nodes with %s boot and making them manageable", Boots[o.Boot].Driver, Boots[o.Boot].BootInterface),
		func() error { return l.enroll(ctx, ready) }); err != nil {
		return l, err
	}
	return l, nil
}

func (l *Lab) ip(args ...string) error {
	out, err := exec.Command("ip", args...).CombinedOutput()
	if err != nil {
		return fmt.Errorf("lab: ip %s: %v: %s", strings.Join(args, " "), err, bytes.TrimSpace(out))
	}
	return nil
}

func (l *Lab) tap(i int) string { return "lab" + strconv.Itoa(i) }

// network makes the namespace, the bridge and one tap per machine.
func (l *Lab) network() error {
	if err := l.ip("netns", "add", l.o.Netns); err != nil {
		return err
	}
	l.created = true
	n := []string{"-n", l.o.Netns}
	steps := [][]string{
		{"link", "set", "lo", "up"},
		{"link", "add", "br0", "type", "bridge", "stp_state", "0", "forward_delay", "0"},
		{"addr", "add", BridgeIP + "/24", "dev", "br0"},
		{"link", "set", "br0", "up"},
	}
	for i := range l.o.Machines {
		steps = append(steps, []string{"tuntap", "add", "dev", l.tap(i), "mode", "tap"},
			[]string{"link", "set", l.tap(i), "master", "br0"}, []string{"link", "set", l.tap(i), "up"})
	}
	for _, s := range steps[:2] {
		if err := l.ip(append(n, s...)...); err != nil {
			return err
		}
	}
	// No IPv6 duplicate address detection on the bridge: its link-local
	// address (for router advertisements) is usable at once.
	if out, err := l.command("sysctl", "-qw", "net.ipv6.conf.br0.accept_dad=0").CombinedOutput(); err != nil {
		return fmt.Errorf("lab: sysctl accept_dad: %v: %s", err, out)
	}
	for _, s := range steps[2:] {
		if err := l.ip(append(n, s...)...); err != nil {
			return err
		}
	}
	return nil
}

// command is exec.Command inside the namespace.
func (l *Lab) command(name string, args ...string) *exec.Cmd {
	return exec.Command("ip", append([]string{"netns", "exec", l.o.Netns, name}, args...)...)
}

type proc struct {
	cmd  *exec.Cmd
	done chan struct{}
}

// start runs a long-lived process in the namespace, its output in a log file.
func (l *Lab) start(logName, name string, env []string, args ...string) (*proc, error) {
	f, err := os.Create(filepath.Join(l.o.Dir, logName))
	if err != nil {
		return nil, err
	}
	cmd := l.command(name, args...)
	cmd.Env = env
	cmd.Stdout, cmd.Stderr = f, f
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		f.Close()
		return nil, fmt.Errorf("lab: start %s: %w", name, err)
	}
	p := &proc{cmd: cmd, done: make(chan struct{})}
	go func() { cmd.Wait(); f.Close(); close(p.done) }()
	l.procs = append(l.procs, p)
	return p, nil
}

func (l *Lab) startFerro(ctx context.Context) error {
	env := []string{"PATH=" + os.Getenv("PATH"), "HOME=" + l.o.Dir}
	for _, kv := range [][2]string{
		{"API_HOST_IP", BridgeIP}, {"API_PORT", "6385"},
		{"INSPECTOR_LISTEN_ADDRESS", BridgeIP}, {"INSPECTOR_LISTEN_PORT", "5050"},
		{"INSPECTOR_CALLBACK_ENDPOINT_OVERRIDE", "http://" + BridgeIP + ":5050"},
		// The agent interface's callback: the bare metal API on the bridge;
		// and the hooks that learn what ferro's inspector learns by default.
		{"SERVICE_CATALOG_ENDPOINT_OVERRIDE", APIURL},
		{"INSPECTOR_HOOKS", "$default_hooks,cpus,memory,root-device,boot-mode,cpu-capabilities,pci-devices,parse-lldp,local-link-connection"},
		{"INSPECTOR_INTROSPECTION_DELAY", "0"},
		{"CONDUCTOR_FILE_URL_ALLOWED_PATHS", filepath.Dir(l.o.Kernel) + "," + filepath.Dir(l.o.Initramfs)},
		{"CONDUCTOR_DEPLOY_KERNEL", "file://" + l.o.Kernel}, {"CONDUCTOR_DEPLOY_RAMDISK", "file://" + l.o.Initramfs},
		{"DEPLOY_HTTP_URL", APIURL + "/httpboot"}, {"DEPLOY_DEFAULT_BOOT_MODE", "bios"},
		// Kernel messages to the emulated serial port cost time (warnings
		// only), and so do the crypto self-tests at boot (≈ 0.9 s under TCG).
		{"PXE_KERNEL_APPEND_PARAMS", "console=ttyS0 panic=-1 loglevel=4 cryptomgr.notests=1"},
		{"REDFISH_KERNEL_APPEND_PARAMS", "console=ttyS0 panic=-1 loglevel=4 cryptomgr.notests=1"},
		{"DHCP_DHCP_PROVIDER", "builtin"},
		{"NETBOOT_INTERFACE", "br0"}, {"NETBOOT_LISTEN_ADDRESS", BridgeIP},
		{"NETBOOT_RANGE_START", "192.168.77.100"}, {"NETBOOT_RANGE_END", "192.168.77.199"},
		{"NETBOOT_NETMASK", "255.255.255.0"},
		{"IPMI_MIN_COMMAND_INTERVAL", "1"},
		{"DEFAULT_ENABLED_HARDWARE_TYPES", "ipmi,redfish,fake-hardware"},
		// The lab's network is the namespace's own bridge: nobody else can
		// reach the API there, so noauth is safe (ferro refuses it on a
		// non-loopback address otherwise).
		{"API_ALLOW_INSECURE_NOAUTH", "true"},
		// Its ramdisk is ferro-agent's: the callback token is issued and required.
		{"INSPECTOR_AGENT", "ferro-agent"},
	} {
		env = append(env, "FERRO_"+kv[0]+"="+kv[1])
	}
	if _, err := l.start("ferro.log", l.o.Ferro, env, "serve", "--data-dir", filepath.Join(l.o.Dir, "ferro")); err != nil {
		return err
	}
	deadline := time.Now().Add(60 * time.Second)
	for {
		resp, err := l.client.Get(APIURL + "/")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				l.o.Log.Info("ferro serve is up", "api", APIURL, "log", filepath.Join(l.o.Dir, "ferro.log"))
				return nil
			}
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("lab: ferro serve did not answer in 60 s: %v (see %s)", err, filepath.Join(l.o.Dir, "ferro.log"))
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// vbmcReady is ferro-vbmc's ready file.
type vbmcReady struct {
	RedfishURL string            `json:"redfish_url"`
	IPMI       map[string]string `json:"ipmi"`
}

func (l *Lab) password() string { return "lab-" + strings.ToLower(rand.Text()[:10]) }

func (l *Lab) startVBMC(ctx context.Context) (*vbmcReady, error) {
	pw := l.password()
	var machines []map[string]any
	for i := range l.o.Machines {
		name := "lab" + strconv.Itoa(i)
		q := map[string]any{"taps": []string{l.tap(i)}, "ipmi_device": true,
			"console_log": l.ConsoleLog(name)}
		q["machine"] = Boots[l.o.Boot].Machine
		if Boots[l.o.Boot].Mode == "uefi" {
			q["firmware"] = "uefi"
		}
		machines = append(machines, map[string]any{
			"name": name, "backend": "qemu", "ipmi_listen": BridgeIP + ":" + strconv.Itoa(6230+i),
			"cpus": l.o.CPUs, "memory_mb": l.o.MemoryMB, "disks_gb": []int{10},
			"macs":         []string{fmt.Sprintf("52:54:00:77:%02x:%02x", i>>8, i&0xff)},
			"manufacturer": "ferro-lab", "product": "qemu", "serial": fmt.Sprintf("LAB-%04d", i),
			"qemu": q,
		})
	}
	cfg := map[string]any{"username": username, "password": pw,
		"redfish": map[string]any{"listen": BridgeIP + ":8000"}, "state_dir": filepath.Join(l.o.Dir, "vbmc"),
		"machines": machines}
	b, _ := json.MarshalIndent(cfg, "", "  ")
	path := filepath.Join(l.o.Dir, "vbmc.json")
	if err := os.WriteFile(path, b, 0o600); err != nil {
		return nil, err
	}
	readyFile := filepath.Join(l.o.Dir, "vbmc.ready")
	os.Remove(readyFile)
	p, err := l.start("ferro-vbmc.log", l.o.VBMC, []string{"PATH=" + os.Getenv("PATH")}, "serve", "--config", path, "--ready-file", readyFile)
	if err != nil {
		return nil, err
	}
	deadline := time.Now().Add(60 * time.Second)
	for {
		if b, err := os.ReadFile(readyFile); err == nil {
			var r vbmcReady
			if err := json.Unmarshal(b, &r); err != nil {
				return nil, fmt.Errorf("lab: ferro-vbmc ready file: %w", err)
			}
			r.IPMI["_password"] = pw
			return &r, nil
		}
		if time.Now().After(deadline) {
			return nil, fmt.Errorf("lab: ferro-vbmc not ready in 60 s (see %s)", filepath.Join(l.o.Dir, "ferro-vbmc.log"))
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-p.done:
			return nil, fmt.Errorf("lab: ferro-vbmc exited (see %s)", filepath.Join(l.o.Dir, "ferro-vbmc.log"))
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// startLLDPD runs lldpd on the taps when it is installed, so inspection
// learns a local_link_connection; without it the lab works, with none.
func (l *Lab) startLLDPD() {
	bin, err := exec.LookPath("lldpd")
	if err != nil {
		if _, err := os.Stat("/usr/sbin/lldpd"); err != nil {
			l.o.Log.Warn("lldpd not installed: no LLDP in the lab")
			return
		}
		bin = "/usr/sbin/lldpd"
	}
	var taps []string
	for i := range l.o.Machines {
		taps = append(taps, l.tap(i))
	}
	// lldpcli drops privileges: the control socket's directory and its
	// parents must be reachable by lldpd's user, which o.Dir's need not be.
	sockDir, err := os.MkdirTemp("", "ferro-lab-lldpd-")
	if err != nil {
		l.o.Log.Warn("lldpd not started", "error", err)
		return
	}
	os.Chmod(sockDir, 0o755)
	l.cleanups = append(l.cleanups, func() { os.RemoveAll(sockDir) })
	sock := filepath.Join(sockDir, "lldpd.sock")
	if _, err := l.start("lldpd.log", bin, nil, "-d", "-u", sock,
		"-I", strings.Join(taps, ","), "-C", taps[0], "-S", "ferro lab switch"); err != nil {
		l.o.Log.Warn("lldpd did not start", "error", err)
		return
	}
	// A frame every second (lldpd's default is 30 s), so the agent's
	// capture, which ends at the first frame, is short. lldpd makes its
	// control socket once started, and may acknowledge the setting before
	// its start-up is done and keep 30 s: configure until it reads back.
	cli := filepath.Join(filepath.Dir(bin), "lldpcli")
	for deadline := time.Now().Add(30 * time.Second); ; {
		out, err := l.command(cli, "-u", sock, "configure", "lldp", "tx-interval", "1").CombinedOutput()
		if err == nil {
			out, err = l.command(cli, "-u", sock, "show", "configuration").CombinedOutput()
			if err == nil && strings.Contains(string(out), "Transmit delay: 1") {
				return
			}
		}
		if time.Now().After(deadline) {
			l.o.Log.Warn("lldpcli configure tx-interval failed: LLDP every 30 s", "error", err, "output", string(out))
			return
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// enroll creates one node per machine (the Boot's hardware type and boot
// interface, noop network) and makes it manageable.
func (l *Lab) enroll(ctx context.Context, r *vbmcReady) error {
	pw := r.IPMI["_password"]
	boot := Boots[l.o.Boot]
	for i := range l.o.Machines {
		name := "lab" + strconv.Itoa(i)
		var info map[string]any
		switch boot.Driver {
		case "ipmi":
			host, port, err := net.SplitHostPort(r.IPMI[name])
			if err != nil {
				return fmt.Errorf("lab: ferro-vbmc gave no IPMI endpoint for %s", name)
			}
			info = map[string]any{"ipmi_address": host, "ipmi_port": port, "ipmi_username": username, "ipmi_password": pw}
		case "redfish":
			info = map[string]any{"redfish_address": r.RedfishURL, "redfish_system_id": "/redfish/v1/Systems/" + name,
				"redfish_username": username, "redfish_password": pw}
		}
		var node struct {
			UUID string `json:"uuid"`
		}
		if err := l.api(ctx, http.MethodPost, "/v1/nodes", map[string]any{
			"name": name, "driver": boot.Driver, "boot_interface": boot.BootInterface, "network_interface": "noop", "inspect_interface": "agent",
			"driver_info": info,
			"properties":  map[string]any{"capabilities": "boot_mode:" + boot.Mode},
		}, &node); err != nil {
			return err
		}
		mac := fmt.Sprintf("52:54:00:77:%02x:%02x", i>>8, i&0xff)
		if err := l.api(ctx, http.MethodPost, "/v1/ports", map[string]any{"node_uuid": node.UUID, "address": mac, "pxe_enabled": true}, nil); err != nil {
			return err
		}
		if err := l.api(ctx, http.MethodPut, "/v1/nodes/"+node.UUID+"/states/provision", map[string]any{"target": "manage"}, nil); err != nil {
			return err
		}
		l.Nodes = append(l.Nodes, name)
	}
	// manage is asynchronous: wait for every node.
	for _, name := range l.Nodes {
		for {
			var n struct {
				ProvisionState string  `json:"provision_state"`
				LastError      *string `json:"last_error"`
			}
			if err := l.api(ctx, http.MethodGet, "/v1/nodes/"+name, nil, &n); err != nil {
				return err
			}
			if n.ProvisionState == "manageable" {
				break
			}
			if n.ProvisionState == "enroll" && n.LastError != nil {
				return fmt.Errorf("lab: node %s could not be managed: %s", name, *n.LastError)
			}
			select {
			case <-ctx.Done():
				return ctx.Err()
			case <-time.After(300 * time.Millisecond):
			}
		}
	}
	return nil
}

// API calls the lab's bare metal API (latest microversion) from inside
// the namespace; a status of 300 or more is an error with the body.
func (l *Lab) API(ctx context.Context, method, path string, body, out any) error {
	return l.api(ctx, method, path, body, out)
}

// ConsoleLog is the serial console log of the named machine.
func (l *Lab) ConsoleLog(name string) string { return filepath.Join(l.o.Dir, name+"-console.log") }

func (l *Lab) api(ctx context.Context, method, path string, body, out any) error {
	var rd io.Reader
	if body != nil {
		b, _ := json.Marshal(body)
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, APIURL+path, rd)
	if err != nil {
		return err
	}
	req.Header.Set("X-OpenStack-Ironic-API-Version", "latest")
	req.Header.Set("Content-Type", "application/json")
	resp, err := l.client.Do(req)
	if err != nil {
		return fmt.Errorf("lab: %s %s: %w", method, path, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if resp.StatusCode >= 300 {
		return fmt.Errorf("lab: %s %s: %s %s", method, path, resp.Status, b)
	}
	if out != nil {
		return json.Unmarshal(b, out)
	}
	return nil
}

// httpClient dials inside the namespace.
func (l *Lab) httpClient() *http.Client {
	return &http.Client{Timeout: time.Minute, Transport: &http.Transport{
		DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
			type result struct {
				c   net.Conn
				err error
			}
			ch := make(chan result, 1)
			go func() {
				var c net.Conn
				err := netns.Do(netns.Path(l.o.Netns), func() error {
					var err error
					c, err = (&net.Dialer{Timeout: 10 * time.Second}).DialContext(ctx, network, addr)
					return err
				})
				ch <- result{c, err}
			}()
			r := <-ch
			return r.c, r.err
		},
	}}
}

// Down stops every process (ferro-vbmc kills its VMs), removes the
// namespace with its links, and the directory unless Keep.
func (l *Lab) Down() error {
	var errs []error
	for i := len(l.procs) - 1; i >= 0; i-- {
		p := l.procs[i]
		syscall.Kill(-p.cmd.Process.Pid, syscall.SIGTERM)
		select {
		case <-p.done:
		case <-time.After(20 * time.Second):
			syscall.Kill(-p.cmd.Process.Pid, syscall.SIGKILL)
			<-p.done
		}
	}
	for _, f := range l.cleanups {
		f()
	}
	if l.created {
		if err := l.ip("netns", "del", l.o.Netns); err != nil {
			errs = append(errs, err)
		}
	}
	if !l.o.Keep {
		if err := os.RemoveAll(l.o.Dir); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// Instructions is what the user runs next.
func (l *Lab) Instructions() string {
	var b strings.Builder
	cli := "sudo ip netns exec " + l.o.Netns + " baremetal --os-endpoint " + APIURL + " --os-auth-type none"
	fmt.Fprintf(&b, "ferro lab: %d machine(s) enrolled and manageable: %s\n", len(l.Nodes), strings.Join(l.Nodes, ", "))
	fmt.Fprintf(&b, "Inspect one (boots it from the network, takes a minute or two under emulation):\n  %s node inspect %s --wait\n", cli, l.Nodes[0])
	fmt.Fprintf(&b, "Then look:\n  %s node show %s -f json -c properties\n", cli, l.Nodes[0])
	fmt.Fprintf(&b, "Logs: %s (ferro.log, ferro-vbmc.log, lab0-console.log). Ctrl-C stops the lab and removes everything.\n", l.o.Dir)
	return b.String()
}
