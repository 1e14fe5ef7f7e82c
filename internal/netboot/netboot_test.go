package netboot_test

import (
	"bytes"
	"context"
	"crypto/rand"
	"fmt"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/ferrometal/ferro/internal/baremetal"
	"github.com/ferrometal/ferro/internal/driver"
	"github.com/ferrometal/ferro/internal/driver/deployimage"
	"github.com/ferrometal/ferro/internal/driver/fake"
	"github.com/ferrometal/ferro/internal/driver/pxe"
	"github.com/ferrometal/ferro/internal/netboot"
	"github.com/ferrometal/ferro/internal/states"
	"github.com/ferrometal/ferro/internal/store"
	sqlstore "github.com/ferrometal/ferro/internal/store/sql"
	"github.com/ferrometal/ferro/internal/testing/ferrotest"
	"github.com/ferrometal/ferro/internal/testing/netnstest"
)

const (
	serverIP = "192.168.77.1"
	httpPort = "8080"
	httpURL  = "http://" + serverIP + ":" + httpPort + "/httpboot"
)

// recorder is the Events of the tests: it keeps every event and lets a
// test wait for one.
type recorder struct {
	mu     sync.Mutex
	events []string // "uuid phase detail"
	notify chan struct{}
}

func newRecorder() *recorder { return &recorder{notify: make(chan struct{}, 1)} }

func (r *recorder) Record(_ context.Context, nodeUUID, phase, detail string) {
	r.mu.Lock()
	r.events = append(r.events, nodeUUID+" "+phase+" "+detail)
	r.mu.Unlock()
	select {
	case r.notify <- struct{}{}:
	default:
	}
}

func (r *recorder) has(nodeUUID, phase string) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, e := range r.events {
		if strings.HasPrefix(e, nodeUUID+" "+phase+" ") {
			return true
		}
	}
	return false
}

func (r *recorder) String() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return strings.Join(r.events, "\n")
}

// wait waits until the node reached phase or ctx ends.
func (r *recorder) wait(ctx context.Context, nodeUUID, phase string) error {
	for !r.has(nodeUUID, phase) {
		select {
		case <-ctx.Done():
			return fmt.Errorf("node %s never reached %s; events:\n%s", nodeUUID, phase, r)
		case <-r.notify:
		}
	}
	return nil
}

// env is a network namespace with a bridge, a SQLite store, the boot
// roots and the netboot service serving them on the bridge.
type env struct {
	ns                 *netnstest.NS
	db                 *sqlstore.DB
	pxe                pxe.Options // the boot interfaces that lay out managed nodes' files
	tftpRoot, httpRoot string
	images             string
	// kernelSrc is the file the nodes' deploy kernel is a copy of.
	kernelSrc string
	events    *recorder
	log       *slog.Logger
	logBuf    *syncBuffer

	svc    *netboot.Service
	cancel context.CancelFunc
	done   chan error
}

type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

func newEnv(t *testing.T) *env {
	t.Helper()
	ns := netnstest.New(t, serverIP, 24)
	dir := t.TempDir()
	db, err := sqlstore.Open(t.Context(), "sqlite://"+filepath.Join(dir, "ferro.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	e := &env{ns: ns, db: db, tftpRoot: filepath.Join(dir, "tftpboot"),
		httpRoot: filepath.Join(dir, "httpboot"), images: filepath.Join(dir, "images"), events: newRecorder(),
		logBuf: &syncBuffer{}, kernelSrc: "/usr/lib/ipxe/ipxe.lkrn"}
	e.log = slog.New(slog.NewTextHandler(e.logBuf, &slog.HandlerOptions{Level: slog.LevelDebug}))
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("netboot log:\n%s", e.logBuf)
		}
	})
	os.MkdirAll(e.images, 0o755)
	e.pxe = pxe.Options{Images: deployimage.New(deployimage.Options{AllowedPaths: []string{e.images}}),
		TFTPRoot: e.tftpRoot, HTTPRoot: e.httpRoot, HTTPURL: httpURL,
		PXEBootfile: "pxelinux.0", IPXEBootfile: "undionly.kpxe", KernelAppendParams: "nofb nomodeset vga=normal"}
	return e
}

func (e *env) options(proxy bool) netboot.Options {
	o := netboot.Options{
		Interface: "br0", ServerIP: net.ParseIP(serverIP), Proxy: proxy,
		RangeStart: net.ParseIP("192.168.77.100"), RangeEnd: net.ParseIP("192.168.77.199"),
		Netmask: net.CIDRMask(24, 32), Router: net.ParseIP(serverIP), LeaseTime: time.Hour,
		DHCPPort: 67, TFTPPort: 69, TFTPMaxTransfers: 8, TFTPTimeout: 2 * time.Second, TFTPSinglePort: true, IPv6RA: true,
		TFTPRoot: e.tftpRoot, HTTPRoot: e.httpRoot, HTTPURL: httpURL,
		HTTPListen: net.JoinHostPort(serverIP, httpPort), HTTPPrefix: "/httpboot/",
		PXEBootfile: "pxelinux.0", IPXEBootfile: "undionly.kpxe", UEFIIPXEBootfile: "snponly.efi",
		LoaderDirs: netboot.DebianLoaderDirs,
		Store:      e.db, Events: e.events, Log: e.log,
	}
	return o
}

// rfc1350Options are options(false) with [netboot]tftp_max_amplification
// = 0: tftp-hpa and curl --tftp-no-options ask no TFTP option, and block 1
// of a large file is refused to such a request by default.
func (e *env) rfc1350Options() netboot.Options {
	o := e.options(false)
	o.TFTPLimits.MaxAmplification = -1
	return o
}

// start runs the service with its sockets opened in the namespace.
func (e *env) start(t *testing.T, o netboot.Options) {
	t.Helper()
	svc, err := netboot.New(o)
	if err != nil {
		t.Fatal(err)
	}
	if err := e.ns.Do(svc.Listen); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	e.svc, e.cancel, e.done = svc, cancel, make(chan error, 1)
	go func() { e.done <- svc.Serve(ctx) }()
	t.Cleanup(func() { e.stop(t) })
}

func (e *env) stop(t *testing.T) {
	if e.cancel == nil {
		return
	}
	e.cancel()
	if err := <-e.done; err != nil {
		t.Errorf("netboot service: %v", err)
	}
	e.cancel = nil
}

// addNode enrols a node with one port per MAC in the given state and, when
// managed, lays out its boot files with the real pxe/ipxe boot interface.
func (e *env) addNode(t *testing.T, boot, state string, managed bool, macs ...string) *baremetal.Node {
	t.Helper()
	ctx := t.Context()
	kernel := filepath.Join(e.images, "kernel")
	ramdisk := filepath.Join(e.images, "ramdisk")
	// The "kernel" is iPXE in Linux kernel format, which iPXE and PXELINUX
	// load and boot like a kernel; the "ramdisk" is random bytes.
	if _, err := os.Stat(kernel); err != nil {
		b, err := os.ReadFile(e.kernelSrc)
		if err != nil {
			ferrotest.SkipOrFail(t, "Debian's ipxe package (ipxe.lkrn) is needed: %v", err)
		}
		os.WriteFile(kernel, b, 0o644)
		os.WriteFile(ramdisk, []byte(rand.Text()+strings.Repeat("r", 200_000)), 0o644)
	}
	n := &baremetal.Node{
		UUID: uuid.NewString(), Driver: "ipmi", ProvisionState: state, PowerState: baremetal.PowerOff,
		Interfaces:         map[string]string{"boot": boot},
		DriverInfo:         baremetal.JSON{"deploy_kernel": "file://" + kernel, "deploy_ramdisk": "file://" + ramdisk},
		DriverInternalInfo: baremetal.JSON{netbootManageBootKey: managed},
		InstanceInfo:       baremetal.JSON{},
	}
	if err := e.db.CreateNode(ctx, n); err != nil {
		t.Fatal(err)
	}
	var ports []*baremetal.Port
	for _, mac := range macs {
		p := &baremetal.Port{UUID: uuid.NewString(), NodeUUID: n.UUID, Address: mac, PXEEnabled: true}
		if err := e.db.CreatePort(ctx, p); err != nil {
			t.Fatal(err)
		}
		ports = append(ports, p)
	}
	if managed {
		b, err := pxe.New(pxe.Kind(boot), e.pxe)
		if err != nil {
			t.Fatal(err)
		}
		task := &driver.Task{Node: n, Ports: ports, Driver: &driver.Interfaces{Management: fake.Management{}},
			Log: e.log}
		if err := b.PrepareRamdisk(ctx, task, driver.RamdiskParams{{Key: "ipa-inspection-callback-url", Value: "http://" + serverIP + ":5050/v1/continue"}}); err != nil {
			t.Fatal(err)
		}
	}
	return n
}

const netbootManageBootKey = "inspector_manage_boot"

// waitEvent waits a few seconds for an event the server records after the
// client is done.
func (e *env) waitEvent(t *testing.T, nodeUUID, phase string) error {
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	return e.events.wait(ctx, nodeUUID, phase)
}

// setState moves a node to another provision state.
func (e *env) setState(t *testing.T, n *baremetal.Node, state string) {
	t.Helper()
	got, err := e.db.GetNode(t.Context(), n.UUID)
	if err != nil {
		t.Fatal(err)
	}
	got.ProvisionState = state
	if err := e.db.UpdateNode(t.Context(), got); err != nil {
		t.Fatal(err)
	}
}

func leases(t *testing.T, s store.Store) map[string]string {
	t.Helper()
	all, err := s.ListLeases(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	m := map[string]string{}
	for _, l := range all {
		m[l.MAC] = l.IP
	}
	return m
}

// ifMAC returns an interface's MAC inside the namespace.
func (e *env) ifMAC(t *testing.T, name string) string {
	t.Helper()
	return ifMACIn(t, e.ns, name)
}

func ifMACIn(t *testing.T, ns *netnstest.NS, name string) string {
	t.Helper()
	var mac string
	err := ns.Do(func() error {
		ifi, err := net.InterfaceByName(name)
		if err != nil {
			return err
		}
		mac = ifi.HardwareAddr.String()
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return mac
}

// udhcpc runs busybox's DHCP client on ifname with the given vendor class
// and returns what its script saw (ip, siaddr, boot_file, …), or an error
// when it got no lease.
func (e *env) udhcpc(t *testing.T, ifname, vendorClass string) (map[string]string, error) {
	t.Helper()
	return udhcpcIn(t, e.ns, ifname, vendorClass)
}

// udhcpcIn is udhcpc in another namespace.
func udhcpcIn(t *testing.T, ns *netnstest.NS, ifname, vendorClass string) (map[string]string, error) {
	t.Helper()
	bb := ferrotest.RequireTool(t, "busybox")
	dir := t.TempDir()
	out := filepath.Join(dir, "lease")
	script := filepath.Join(dir, "script")
	os.WriteFile(script, []byte("#!/bin/sh\n[ \"$1\" = bound ] && env > "+out+"\nexit 0\n"), 0o755)
	args := []string{"udhcpc", "-i", ifname, "-n", "-q", "-f", "-t", "3", "-T", "1", "-s", script}
	if vendorClass != "" {
		args = append(args, "-V", vendorClass)
	}
	cmd := ns.Command(bb, args...)
	b, err := cmd.CombinedOutput()
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

func TestDHCP_AnswersOnlyNodesBeingInspected(t *testing.T) {
	e := newEnv(t)
	e.ns.AddVeth("v0", "v1")
	e.ns.AddVeth("w0", "w1")
	mac := e.ifMAC(t, "v1")
	other := e.ifMAC(t, "w1")
	n := e.addNode(t, "ipxe", states.InspectWait, true, mac)
	// A node that is not being inspected: its port must get nothing.
	e.addNode(t, "ipxe", states.Manageable, false, other)
	e.start(t, e.options(false))

	got, err := e.udhcpc(t, "v1", "PXEClient:Arch:00000:UNDI:002001")
	if err != nil {
		t.Fatal(err)
	}
	if got["ip"] != "192.168.77.100" || got["siaddr"] != serverIP || got["boot_file"] != "undionly.kpxe" || got["subnet"] != "255.255.255.0" {
		t.Errorf("lease = ip %q siaddr %q boot_file %q subnet %q, want 192.168.77.100 %s undionly.kpxe 255.255.255.0",
			got["ip"], got["siaddr"], got["boot_file"], got["subnet"], serverIP)
	}
	if l := leases(t, e.db); l[mac] != "192.168.77.100" || len(l) != 1 {
		t.Errorf("stored leases %v, want %s → 192.168.77.100 only", l, mac)
	}
	if err := e.waitEvent(t, n.UUID, netboot.PhaseDHCPOffer); err != nil {
		t.Error(err)
	}
	// The agent's own DHCP (no PXE options) gets the same address, no boot file.
	got, err = e.udhcpc(t, "v1", "")
	if err != nil {
		t.Fatal(err)
	}
	if got["ip"] != "192.168.77.100" || got["boot_file"] != "" {
		t.Errorf("agent lease = ip %q boot_file %q, want 192.168.77.100 and none", got["ip"], got["boot_file"])
	}

	before := e.svc.DHCP().Stats().Ignored
	if _, err := e.udhcpc(t, "w1", "PXEClient:Arch:00000:UNDI:002001"); err == nil {
		t.Error("a port of a manageable node got a lease")
	}
	if st := e.svc.DHCP().Stats(); st.Ignored <= before {
		t.Errorf("ignored counter %d did not grow past %d", st.Ignored, before)
	}

	// Leaving inspection releases the lease.
	e.setState(t, n, states.Manageable)
	if err := e.svc.DHCP().Sweep(t.Context()); err != nil {
		t.Fatal(err)
	}
	if l := leases(t, e.db); len(l) != 0 {
		t.Errorf("leases after the node left inspection: %v", l)
	}
}

// TestDHCP_UnknownMACsOnlyWhileDiscovering: a machine no port has gets
// nothing, unless discovery is on; then it boots iPXE into the default
// script, with a lease held for discovery, while a port of a node that is
// not being inspected still gets nothing.
func TestDHCP_UnknownMACsOnlyWhileDiscovering(t *testing.T) {
	e := newEnv(t)
	e.ns.AddVeth("v0", "v1")
	e.ns.AddVeth("w0", "w1")
	unknown := e.ifMAC(t, "v1")
	e.addNode(t, "ipxe", states.Manageable, false, e.ifMAC(t, "w1"))
	e.start(t, e.options(false))
	if _, err := e.udhcpc(t, "v1", "PXEClient:Arch:00000:UNDI:002001"); err == nil {
		t.Fatal("an unknown MAC got a lease with discovery off")
	}
	e.stop(t)

	o := e.options(false)
	o.DHCPDiscovery = true
	e.start(t, o)
	got, err := e.udhcpc(t, "v1", "PXEClient:Arch:00000:UNDI:002001")
	if err != nil {
		t.Fatal(err)
	}
	if got["boot_file"] != "undionly.kpxe" || got["ip"] == "" {
		t.Errorf("unknown MAC with discovery: ip %q boot_file %q, want a lease and iPXE", got["ip"], got["boot_file"])
	}
	// Discovery's leases are not the nodes': none is stored.
	if l := leases(t, e.db); len(l) != 0 {
		t.Errorf("stored leases %v, want none for an unknown MAC", l)
	}
	// The same MAC keeps its address.
	again, err := e.udhcpc(t, "v1", "")
	if err != nil || again["ip"] != got["ip"] {
		t.Errorf("second request of %s: %v, %v; want %s again", unknown, again["ip"], err, got["ip"])
	}
	if _, err := e.udhcpc(t, "w1", "PXEClient:Arch:00000:UNDI:002001"); err == nil {
		t.Error("a port of a manageable node got a lease with discovery on")
	}
}

func TestDHCP_LeaseSurvivesRestart(t *testing.T) {
	e := newEnv(t)
	e.ns.AddVeth("v0", "v1")
	e.ns.AddVeth("w0", "w1")
	m1, m2 := e.ifMAC(t, "v1"), e.ifMAC(t, "w1")
	e.addNode(t, "ipxe", states.InspectWait, true, m1)
	e.addNode(t, "ipxe", states.InspectWait, true, m2)
	e.start(t, e.options(false))
	a, err := e.udhcpc(t, "w1", "")
	if err != nil {
		t.Fatal(err)
	}
	b, err := e.udhcpc(t, "v1", "")
	if err != nil {
		t.Fatal(err)
	}
	if a["ip"] == b["ip"] {
		t.Fatalf("two MACs got the same address %s", a["ip"])
	}
	e.stop(t)
	e.start(t, e.options(false))
	// In the opposite order: each MAC must get its own address back.
	b2, err := e.udhcpc(t, "v1", "")
	if err != nil {
		t.Fatal(err)
	}
	a2, err := e.udhcpc(t, "w1", "")
	if err != nil {
		t.Fatal(err)
	}
	if a2["ip"] != a["ip"] || b2["ip"] != b["ip"] {
		t.Errorf("after restart: %s→%s, %s→%s; before: %s, %s", m2, a2["ip"], m1, b2["ip"], a["ip"], b["ip"])
	}
}

// TestDHCP_StormOfUnknownMACsIsIgnored floods the server with DISCOVERs
// from MACs no node has, then checks that every one was counted and
// ignored and that a node being inspected is still answered.
func TestDHCP_StormOfUnknownMACsIsIgnored(t *testing.T) {
	e := newEnv(t)
	e.ns.AddVeth("v0", "v1")
	mac := e.ifMAC(t, "v1")
	e.addNode(t, "ipxe", states.InspectWait, true, mac)
	e.start(t, e.options(false))

	const storm = 5000
	err := e.ns.Do(func() error {
		c, err := net.ListenUDP("udp4", &net.UDPAddr{IP: net.ParseIP("192.168.77.1")})
		if err != nil {
			return err
		}
		defer c.Close()
		pkt := make([]byte, 300)
		pkt[0], pkt[1], pkt[2] = 1, 1, 6
		copy(pkt[236:], []byte{99, 130, 83, 99, 53, 1, 1, 255})
		dst := &net.UDPAddr{IP: net.ParseIP(serverIP), Port: 67}
		for i := range storm {
			copy(pkt[28:], []byte{0x02, 0xee, byte(i >> 24), byte(i >> 16), byte(i >> 8), byte(i)})
			if _, err := c.WriteTo(pkt, dst); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	// The known node is answered after the storm: its request is read
	// after every storm packet on the same socket.
	got, err := e.udhcpc(t, "v1", "PXEClient:Arch:00000:UNDI:002001")
	if err != nil {
		t.Fatal(err)
	}
	if got["boot_file"] != "undionly.kpxe" {
		t.Errorf("boot file %q after the storm", got["boot_file"])
	}
	st := e.svc.DHCP().Stats()
	// Loopback UDP may drop some of the storm when the socket buffer is
	// full; those never reached the server. What did was ignored.
	if st.Offers == 0 || st.Ignored+st.Malformed+st.Dropped+st.Offers+st.Acks+st.Naks < st.Received || st.Ignored < storm/10 {
		t.Errorf("stats after a storm of %d: %+v", storm, st)
	}
	if l := leases(t, e.db); len(l) != 1 {
		t.Errorf("leases after the storm: %v", l)
	}
}

func TestTFTP_ServesTheRootOnlyWithDebianClients(t *testing.T) {
	e := newEnv(t)
	e.ns.AddVeth("v0", "v1")
	n := e.addNode(t, "pxe", states.InspectWait, true, "52:54:00:00:00:01")
	tftpRootOnly(t, e, n)
}

func tftpRootOnly(t *testing.T, e *env, n *baremetal.Node) {
	e.start(t, e.rfc1350Options())
	curl := ferrotest.RequireTool(t, "curl")
	tftp := ferrotest.RequireTool(t, "tftp")
	want, err := os.ReadFile(filepath.Join(e.tftpRoot, "undionly.kpxe"))
	if err != nil {
		t.Fatalf("undionly.kpxe was not installed into the TFTP root: %v", err)
	}
	dir := t.TempDir()
	// curl asks for tsize and blksize.
	for _, args := range [][]string{
		{"--tftp-blksize", "1400"},
		{"--tftp-blksize", "512"},
		{"--tftp-no-options"},
	} {
		out := filepath.Join(dir, "undionly")
		os.Remove(out)
		cmd := e.ns.Command(curl, append([]string{"-sS", "--max-time", "20", "-o", out}, append(args, "tftp://"+serverIP+"/undionly.kpxe")...)...)
		if b, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("curl %v: %v: %s", args, err, b)
		}
		if got, _ := os.ReadFile(out); !bytes.Equal(got, want) {
			t.Errorf("curl %v: got %d bytes, want the %d of undionly.kpxe", args, len(got), len(want))
		}
	}
	// The node's own files are the node's: its kernel from the address
	// the node leased (kernel_fetched) is in the access test below.
	// Escapes are refused, with both clients.
	secret := filepath.Join(filepath.Dir(e.tftpRoot), "secret")
	os.WriteFile(secret, []byte("secret"), 0o644)
	os.Symlink(secret, filepath.Join(e.tftpRoot, "link-out"))
	for _, name := range []string{"../../etc/passwd", "/etc/passwd", "../secret", "link-out", n.UUID + "/../../secret"} {
		out := filepath.Join(dir, "refused")
		os.Remove(out)
		b, _ := e.ns.Command(tftp, "-m", "binary", serverIP, "-c", "get", name, out).CombinedOutput()
		if got, _ := os.ReadFile(out); len(got) > 0 || !bytes.Contains(b, []byte("Error")) {
			t.Errorf("tftp get %s: got %d bytes (%s), want an error", name, len(got), b)
		}
		// curl would normalise "..": --path-as-is keeps it.
		b, err := e.ns.Command(curl, "-sS", "--max-time", "10", "--path-as-is", "-o", out, "tftp://"+serverIP+"/"+name).CombinedOutput()
		if err == nil {
			t.Errorf("curl tftp %s succeeded: %s", name, b)
		}
	}
}

func TestHTTP_ServesRangesFromTheRootOnly(t *testing.T) {
	e := newEnv(t)
	// The node's files go to the node's leased address only: curl runs there.
	peer := e.ns.AddPeer("p0")
	n := e.addNode(t, "ipxe", states.InspectWait, true, ifMACIn(t, peer, "eth0"))
	e.start(t, e.options(false))
	e.leasedPeer(t, peer)
	curl := ferrotest.RequireTool(t, "curl")
	run := func(args ...string) (string, string) {
		t.Helper()
		b, err := peer.Command(curl, append([]string{"-sS", "--max-time", "10", "--path-as-is", "-w", "\n%{http_code}"}, args...)...).CombinedOutput()
		if err != nil {
			t.Fatalf("curl %v: %v: %s", args, err, b)
		}
		body, code, _ := strings.Cut(string(b), "\n")
		if i := strings.LastIndex(string(b), "\n"); i >= 0 {
			body, code = string(b[:i]), string(b[i+1:])
		}
		return body, code
	}
	script, code := run(httpURL + "/" + n.UUID + "/config")
	if code != "200" || !strings.HasPrefix(script, "#!ipxe") || !strings.Contains(script, httpURL+"/"+n.UUID+"/deploy_kernel") {
		t.Errorf("node script: %s %q", code, script)
	}
	body, code := run("-r", "0-5", httpURL+"/"+n.UUID+"/deploy_ramdisk")
	want, _ := os.ReadFile(filepath.Join(e.images, "ramdisk"))
	if code != "206" || body != string(want[:6]) {
		t.Errorf("range 0-5: %s %q, want 206 %q", code, body, want[:6])
	}
	for _, p := range []string{"/httpboot/../../../../etc/passwd", "/httpboot/%2e%2e/%2e%2e/etc/passwd", "/etc/passwd", "/httpboot/" + n.UUID} {
		if _, code := run("http://" + serverIP + ":" + httpPort + p); code != "404" {
			t.Errorf("GET %s: %s, want 404", p, code)
		}
	}
	if _, code := run("-X", "PUT", "-d", "x", httpURL+"/x"); code != "405" {
		t.Errorf("PUT: %s, want 405", code)
	}
	for _, phase := range []string{netboot.PhaseBootScript, netboot.PhaseInitramfs} {
		if err := e.waitEvent(t, n.UUID, phase); err != nil {
			t.Error(err)
		}
	}
}

// leasedPeer is a client namespace whose eth0 took a lease from ferro's
// DHCP (busybox udhcpc) and holds the leased address.
func (e *env) leasedPeer(t *testing.T, peer *netnstest.NS) string {
	t.Helper()
	got, err := udhcpcIn(t, peer, "eth0", "PXEClient:Arch:00000:UNDI:002001")
	if err != nil {
		t.Fatal(err)
	}
	peer.MustIP("addr", "add", got["ip"]+"/24", "dev", "eth0")
	return got["ip"]
}

// TestBootFiles_OnlyToTheNodesLeasedAddress checks, with tftp-hpa, atftp
// and curl in client namespaces of their own, that a node's boot config
// (which holds its token), kernel and PXELINUX entry go to the address
// ferro's DHCP leased to the node's MAC and to no other, and that shared
// files go to anyone.
func TestBootFiles_OnlyToTheNodesLeasedAddress(t *testing.T) {
	e := newEnv(t)
	node := e.ns.AddPeer("p0")
	other := e.ns.AddPeer("p1")
	inode := e.ns.AddPeer("p2")
	mac := ifMACIn(t, node, "eth0")
	imac := ifMACIn(t, inode, "eth0")
	n := e.addNode(t, "pxe", states.InspectWait, true, mac)
	m := e.addNode(t, "ipxe", states.InspectWait, true, imac)
	e.start(t, e.rfc1350Options())
	ip := e.leasedPeer(t, node)
	e.leasedPeer(t, inode)
	other.MustIP("addr", "add", "192.168.77.250/24", "dev", "eth0")
	tftp := ferrotest.RequireTool(t, "tftp")
	atftp := ferrotest.RequireTool(t, "atftp")
	curl := ferrotest.RequireTool(t, "curl")
	entry := "pxelinux.cfg/01-" + strings.ReplaceAll(mac, ":", "-")
	get := func(ns *netnstest.NS, name string) (string, []byte) {
		out := filepath.Join(t.TempDir(), "out")
		b, _ := ns.Command(tftp, "-m", "binary", serverIP, "-c", "get", name, out).CombinedOutput()
		got, _ := os.ReadFile(out)
		return string(b), got
	}
	for _, name := range []string{entry, n.UUID + "/config", n.UUID + "/deploy_kernel", n.UUID + "/deploy_ramdisk"} {
		if msg, got := get(node, name); len(got) == 0 || strings.Contains(msg, "Error") {
			t.Errorf("tftp get %s from the node's address %s: %d bytes, %q", name, ip, len(got), msg)
		}
		if msg, got := get(other, name); len(got) != 0 || !strings.Contains(msg, "Error code 2") {
			t.Errorf("tftp get %s from another address: %d bytes, %q; want an access violation", name, len(got), msg)
		}
	}
	if msg, got := get(other, "undionly.kpxe"); len(got) == 0 {
		t.Errorf("a shared file was refused to another address: %q", msg)
	}
	// atftp with a window, from both.
	out := filepath.Join(t.TempDir(), "atftp")
	if b, err := node.Command(atftp, "--option", "windowsize 8", "--option", "blksize 1428", "-g", "-r", n.UUID+"/deploy_ramdisk", "-l", out, serverIP).CombinedOutput(); err != nil {
		t.Errorf("atftp from the node: %v: %s", err, b)
	} else if got, _ := os.ReadFile(out); !bytes.Equal(got, mustRead(t, filepath.Join(e.images, "ramdisk"))) {
		t.Errorf("atftp from the node got %d bytes, not the ramdisk", len(got))
	}
	if b, err := other.Command(atftp, "-g", "-r", entry, "-l", out+"2", serverIP).CombinedOutput(); err == nil {
		t.Errorf("atftp from another address got the node's entry: %s", b)
	}
	if err := e.waitEvent(t, n.UUID, netboot.PhaseKernel); err != nil {
		t.Error(err)
	}
	if !strings.Contains(e.events.String(), "to "+ip+" ") {
		t.Errorf("events do not name the node's address %s:\n%s", ip, e.events)
	}

	// HTTP: the iPXE node's script, kernel and per-MAC entry go to its
	// address only (not to the other node's either); boot.ipxe to anyone.
	code := func(ns *netnstest.NS, url string) string {
		b, _ := ns.Command(curl, "-sS", "--max-time", "10", "-o", "/dev/null", "-w", "%{http_code}", url).CombinedOutput()
		return string(b)
	}
	for _, c := range []struct {
		ns   *netnstest.NS
		path string
		want string
	}{
		{inode, "/" + m.UUID + "/config", "200"},
		{inode, "/" + m.UUID + "/deploy_kernel", "200"},
		{inode, "/pxelinux.cfg/" + strings.ReplaceAll(imac, ":", "-"), "200"},
		{node, "/" + m.UUID + "/config", "403"},
		{other, "/" + m.UUID + "/config", "403"},
		{other, "/" + m.UUID + "/deploy_kernel", "403"},
		{other, "/pxelinux.cfg/" + strings.ReplaceAll(imac, ":", "-"), "403"},
		{other, "/boot.ipxe", "200"},
		{other, "/missing", "404"},
	} {
		if got := code(c.ns, httpURL+c.path); got != c.want {
			t.Errorf("GET %s from %s: %s, want %s", c.path, c.ns.Name, got, c.want)
		}
	}
	// Released leases close the door again.
	if err := e.svc.DHCP().Release(t.Context(), m.UUID); err != nil {
		t.Fatal(err)
	}
	if got := code(inode, httpURL+"/"+m.UUID+"/config"); got != "403" {
		t.Errorf("GET the config after the lease was released: %s, want 403", got)
	}
}

func mustRead(t *testing.T, p string) []byte {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestBootFiles_OnlyDuringThatInspection checks, with tftp-hpa and curl in
// a namespace with a udhcpc lease, that a node's boot config (which holds
// its token) goes to its leased address only while the node is being
// inspected and only on a lease of this inspection: not to a lease older
// than the inspection's start, and not once the node left inspect wait,
// even before the sweep releases the lease.
func TestBootFiles_OnlyDuringThatInspection(t *testing.T) {
	e := newEnv(t)
	peer := e.ns.AddPeer("p0")
	mac := ifMACIn(t, peer, "eth0")
	n := e.addNode(t, "pxe", states.InspectWait, true, mac)
	started := func(at time.Time) {
		t.Helper()
		got, err := e.db.GetNode(t.Context(), n.UUID)
		if err != nil {
			t.Fatal(err)
		}
		at = at.UTC()
		got.InspectionStartedAt = &at
		if err := e.db.UpdateNode(t.Context(), got); err != nil {
			t.Fatal(err)
		}
	}
	started(time.Now().Add(-time.Minute))
	e.start(t, e.rfc1350Options())
	ip := e.leasedPeer(t, peer)
	tftp := ferrotest.RequireTool(t, "tftp")
	curl := ferrotest.RequireTool(t, "curl")
	name := n.UUID + "/config"
	served := func() (tftpOK, curlOK bool) {
		t.Helper()
		out := filepath.Join(t.TempDir(), "out")
		peer.Command(tftp, "-m", "binary", serverIP, "-c", "get", name, out).CombinedOutput()
		got, _ := os.ReadFile(out)
		b, _ := peer.Command(curl, "-sS", "--max-time", "10", "tftp://"+serverIP+"/"+name).Output()
		return len(got) > 0, len(b) > 0
	}
	check := func(when string, want bool) {
		t.Helper()
		if a, b := served(); a != want || b != want {
			t.Errorf("%s: tftp-hpa got the config %v, curl %v; want %v", when, a, b, want)
		}
	}
	check("lease of this inspection, node in inspect wait", true)

	// A new inspection starts: the lease is from the last one.
	started(time.Now())
	check("lease older than the inspection", false)
	got, err := udhcpcIn(t, peer, "eth0", "PXEClient:Arch:00000:UNDI:002001")
	if err != nil || got["ip"] != ip {
		t.Fatalf("the node asks again: %v %v, want %s", got, err, ip)
	}
	check("lease renewed in this inspection", true)

	// The inspection is over; the lease is still there.
	e.setState(t, n, states.Manageable)
	if _, ok := leases(t, e.db)[mac]; !ok {
		t.Log("the sweep released the lease already; the state alone is not what refused")
	}
	check("node no longer in inspect wait", false)
	if !strings.Contains(e.logBuf.String(), "boot files refused") {
		t.Errorf("the refusals are not logged:\n%s", e.logBuf)
	}
}
