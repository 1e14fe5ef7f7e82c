package tftp

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/binary"
	"fmt"
	"log/slog"
	"net"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ferrometal/ferro/internal/netboot/bootfs"
	"github.com/ferrometal/ferro/internal/testing/ferrotest"
)

const node = "1be26c0b-03f2-4d2e-ae87-c02d7f33c123"

// Sizes around the block boundaries of 512 and 1468 byte blocks, and one
// past 65535 blocks of 512 bytes: the block number wraps to 0.
var sizes = map[string]int{
	"empty": 0, "b511": 511, "b512": 512, "b513": 513, "b1468x3": 3 * 1468, "b1428x5": 5 * 1428,
	"b1024x7": 7 * 1024, "odd": 100_003,
}

const rollover = "rollover" // 65536*512 + 100 bytes

// allowList is an Access of fixed client addresses per node.
type allowList map[string][]netip.Addr

func (a allowList) BootFilesAllowed(_ context.Context, nodeUUID string, client netip.Addr) (bool, error) {
	for _, ip := range a[nodeUUID] {
		if ip == client {
			return true, nil
		}
	}
	return false, nil
}

type recorder struct {
	mu     sync.Mutex
	events []string
}

func (r *recorder) Record(_ context.Context, nodeUUID, phase, detail string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.events = append(r.events, nodeUUID+" "+phase+" "+detail)
}

func (r *recorder) String() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return strings.Join(r.events, "\n")
}

type fixture struct {
	dir    string
	sums   map[string][32]byte
	srv    *Server
	port   string
	events *recorder
	log    *syncBuffer
}

type syncBuffer struct {
	mu     sync.Mutex
	b      bytes.Buffer
	notify chan struct{}
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	select {
	case s.notify <- struct{}{}:
	default:
	}
	return s.b.Write(p)
}

// waitRetransmit waits (5 s at most) for the server to count more
// retransmissions than before; every one is logged.
func (f *fixture) waitRetransmit(before uint64) bool {
	timeout := time.After(5 * time.Second)
	for f.srv.Stats().Retransmits == before {
		select {
		case <-f.log.notify:
		case <-timeout:
			return false
		}
	}
	return true
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

var (
	bigOnce sync.Once
	bigData []byte
)

// newFixture serves a root of the files above on 127.0.0.1 with o's
// settings (Root, Log and Events filled in).
func newFixture(t *testing.T, o Options, big bool) *fixture {
	t.Helper()
	f := &fixture{dir: t.TempDir(), sums: map[string][32]byte{}, events: &recorder{}, log: &syncBuffer{notify: make(chan struct{}, 1)}}
	write := func(name string, b []byte) {
		p := filepath.Join(f.dir, name)
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
		f.sums[name] = sha256.Sum256(b)
	}
	for name, n := range sizes {
		b := make([]byte, n)
		rand.Read(b)
		write(name, b)
	}
	if big {
		bigOnce.Do(func() {
			bigData = make([]byte, 65536*512+100)
			rand.Read(bigData)
		})
		write(rollover, bigData)
	}
	write(node+"/config", []byte("#!ipxe\nkernel token=secret\n"))
	write(node+"/deploy_kernel", []byte("kernel"))
	os.MkdirAll(filepath.Join(f.dir, "pxelinux.cfg"), 0o755)
	os.Symlink("../"+node+"/config", filepath.Join(f.dir, "pxelinux.cfg", "01-52-54-00-12-34-56"))
	outside := filepath.Join(filepath.Dir(f.dir), "secret")
	os.WriteFile(outside, []byte("secret"), 0o644)
	os.Symlink(outside, filepath.Join(f.dir, "link-out"))
	os.Symlink("../secret", filepath.Join(f.dir, "link-rel"))
	root, err := bootfs.Open(f.dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { root.Close() })
	o.Root, o.Events = root, f.events
	o.Log = slog.New(slog.NewTextHandler(f.log, &slog.HandlerOptions{Level: slog.LevelDebug}))
	srv, err := New(o)
	if err != nil {
		t.Fatal(err)
	}
	if err := srv.Listen("127.0.0.1:0"); err != nil {
		t.Fatal(err)
	}
	f.srv = srv
	f.port = strconv.Itoa(srv.Addr().(*net.UDPAddr).Port)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Serve: %v", err)
		}
		if t.Failed() {
			t.Logf("server log:\n%s", f.log)
		}
	})
	return f
}

// client runs one independent TFTP client fetching name into out.
type client struct {
	name string
	tool string
	args func(port, name, out string) []string
	// rfc1350 clients ask no option: block 1 of a large file is refused
	// to them unless MaxAmplification is off.
	rfc1350 bool
}

var clients = []client{
	{"tftp-hpa", "tftp", func(port, name, out string) []string {
		return []string{"-m", "binary", "127.0.0.1", port, "-c", "get", name, out}
	}, true},
	{"atftp", "atftp", func(port, name, out string) []string {
		return []string{"-g", "-r", name, "-l", out, "127.0.0.1", port}
	}, true},
	{"atftp-blksize", "atftp", func(port, name, out string) []string {
		return []string{"--option", "blksize 1428", "--option", "tsize 0", "-g", "-r", name, "-l", out, "127.0.0.1", port}
	}, false},
	{"atftp-windowsize", "atftp", func(port, name, out string) []string {
		return []string{"--option", "blksize 1428", "--option", "windowsize 8", "-g", "-r", name, "-l", out, "127.0.0.1", port}
	}, false},
	{"atftp-window512", "atftp", func(port, name, out string) []string {
		return []string{"--option", "blksize 512", "--option", "windowsize 8", "-g", "-r", name, "-l", out, "127.0.0.1", port}
	}, false},
	{"busybox", "busybox", func(port, name, out string) []string {
		return []string{"tftp", "-g", "-r", name, "-l", out, "-b", "1468", "127.0.0.1", port}
	}, false},
	{"curl", "curl", func(port, name, out string) []string {
		return []string{"-sS", "--max-time", "60", "-o", out, "tftp://127.0.0.1:" + port + "/" + name}
	}, false},
	{"curl-blksize512", "curl", func(port, name, out string) []string {
		return []string{"-sS", "--max-time", "60", "--tftp-blksize", "512", "-o", out, "tftp://127.0.0.1:" + port + "/" + name}
	}, false},
	{"curl-no-options", "curl", func(port, name, out string) []string {
		return []string{"-sS", "--max-time", "60", "--tftp-no-options", "-o", out, "tftp://127.0.0.1:" + port + "/" + name}
	}, true},
}

func (c client) get(t *testing.T, port, name string) ([]byte, string, error) {
	t.Helper()
	bin := ferrotest.RequireTool(t, c.tool)
	out := filepath.Join(t.TempDir(), "out")
	cmd := exec.Command(bin, c.args(port, name, out)...)
	b, err := cmd.CombinedOutput()
	got, rerr := os.ReadFile(out)
	if err == nil && rerr != nil && !strings.Contains(string(b), "rror") {
		// An empty file: some clients create nothing for it.
		got, rerr = nil, nil
	}
	if err == nil && bytes.Contains(b, []byte("rror")) {
		err = fmt.Errorf("client reported an error")
	}
	return got, string(b), err
}

// TestServe_FilesOfEverySizeToIndependentClients: the clients that ask
// options are served with the default bounds; the RFC 1350 ones (no
// option) with MaxAmplification off, as [netboot]tftp_max_amplification=0.
func TestServe_FilesOfEverySizeToIndependentClients(t *testing.T) {
	strict := newFixture(t, Options{SinglePort: true, Timeout: time.Second}, true)
	open := newFixture(t, Options{SinglePort: true, Timeout: time.Second, Limits: Limits{MaxAmplification: -1}}, true)
	for _, c := range clients {
		f := strict
		if c.rfc1350 {
			f = open
		}
		t.Run(c.name, func(t *testing.T) {
			names := []string{"empty", "b511", "b512", "b513", "b1468x3", "b1428x5", "b1024x7", "odd"}
			// The rollover file, lock step and with a window.
			if c.name == "tftp-hpa" || c.name == "atftp-window512" || c.name == "curl-blksize512" {
				names = append(names, rollover)
			}
			for _, name := range names {
				got, out, err := c.get(t, f.port, name)
				if err != nil {
					t.Errorf("%s get %s: %v: %s", c.name, name, err, out)
					continue
				}
				if sha256.Sum256(got) != f.sums[name] {
					t.Errorf("%s get %s: %d bytes, sha256 differs (want %d bytes)", c.name, name, len(got), fileSize(name))
				}
			}
		})
	}
	log := strict.log.String()
	// What each client asked for is logged at debug level.
	for _, want := range []string{"windowsize=8", "blksize=1428", "tsize="} {
		if !strings.Contains(log, want) {
			t.Errorf("negotiation log has no %q", want)
		}
	}
	for _, f := range []*fixture{strict, open} {
		if st := f.srv.Stats(); st.Failed != 0 || st.Refused != 0 || st.Retransmits != 0 || st.Bytes == 0 {
			t.Errorf("stats %+v, want no failure and the bytes served", st)
		}
	}
}

func fileSize(name string) int {
	if name == rollover {
		return len(bigData)
	}
	return sizes[name]
}

func TestServe_PerTransferPort(t *testing.T) {
	f := newFixture(t, Options{SinglePort: false, Timeout: time.Second, Limits: Limits{MaxAmplification: -1}}, false)
	for _, c := range clients {
		if c.name != "tftp-hpa" && c.name != "atftp-windowsize" && c.name != "curl" {
			continue
		}
		got, out, err := c.get(t, f.port, "odd")
		if err != nil || sha256.Sum256(got) != f.sums["odd"] {
			t.Errorf("%s: %v %d bytes: %s", c.name, err, len(got), out)
		}
	}
}

func TestServe_RefusesWithTheRightError(t *testing.T) {
	f := newFixture(t, Options{SinglePort: true, Timeout: time.Second,
		Access: allowList{node: {netip.MustParseAddr("127.0.0.2")}}}, false)
	hpa := ferrotest.RequireTool(t, "tftp")
	for _, tc := range []struct{ name, want string }{
		{"missing", "Error code 1"},
		{"../../etc/passwd", "Error code 1"},
		{"/etc/passwd", "Error code 1"},
		{"link-out", "Error code 1"},
		{"link-rel", "Error code 1"},
		{node + "/../../secret", "Error code 1"},
		// The node's files, from an address not leased to it.
		{node + "/config", "Error code 2"},
		{"pxelinux.cfg/01-52-54-00-12-34-56", "Error code 2"},
		{node + "/deploy_kernel", "Error code 2"},
	} {
		out := filepath.Join(t.TempDir(), "out")
		b, _ := exec.Command(hpa, "-m", "binary", "127.0.0.1", f.port, "-c", "get", tc.name, out).CombinedOutput()
		if got, _ := os.ReadFile(out); len(got) > 0 || !strings.Contains(string(b), tc.want) {
			t.Errorf("get %s: %d bytes, %q; want %s", tc.name, len(got), b, tc.want)
		}
	}
	// A write is refused.
	src := filepath.Join(t.TempDir(), "upload")
	os.WriteFile(src, []byte("data"), 0o644)
	b, _ := exec.Command(hpa, "-m", "binary", "127.0.0.1", f.port, "-c", "put", src, "upload").CombinedOutput()
	if !strings.Contains(string(b), "Error code 2") {
		t.Errorf("put: %q, want error 2", b)
	}
	if _, err := os.Stat(filepath.Join(f.dir, "upload")); err == nil {
		t.Error("the put wrote a file into the root")
	}
	// curl says so too (exit status 69: permission problem on the server).
	curl := ferrotest.RequireTool(t, "curl")
	err := exec.Command(curl, "-sS", "-o", "/dev/null", "tftp://127.0.0.1:"+f.port+"/"+node+"/config").Run()
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 69 {
		t.Errorf("curl of a node's config from another address: %v, want exit status 69", err)
	}
	if ev := f.events.String(); ev != "" {
		t.Errorf("refused requests recorded events:\n%s", ev)
	}
}

func TestServe_NodeFilesToTheNodesAddress(t *testing.T) {
	f := newFixture(t, Options{SinglePort: true, Timeout: time.Second, Limits: Limits{MaxAmplification: -1},
		Access: allowList{node: {netip.MustParseAddr("127.0.0.1")}}}, false)
	hpa := clients[0]
	for _, name := range []string{node + "/config", "pxelinux.cfg/01-52-54-00-12-34-56", node + "/deploy_kernel", "b512"} {
		got, out, err := hpa.get(t, f.port, name)
		if err != nil || len(got) == 0 {
			t.Errorf("get %s: %v: %s", name, err, out)
		}
	}
	for _, want := range []string{node + " boot_script_fetched tftp pxelinux.cfg/01-52-54-00-12-34-56 to 127.0.0.1",
		node + " kernel_fetched tftp " + node + "/deploy_kernel to 127.0.0.1 (6 bytes)"} {
		if !strings.Contains(f.events.String(), want) {
			t.Errorf("events lack %q:\n%s", want, f.events)
		}
	}
}

// relay forwards UDP between a client and the server, dropping packets
// that drop says to.
type relay struct {
	conn    *net.UDPConn
	dropped atomic.Int64
	drops   chan struct{} // one per packet dropped
}

// newRelay listens on 127.0.0.1; packets from the client go to server
// from a socket of the relay's, and the server's answers back to the
// client from the relay's listening port.
func newRelay(t *testing.T, server string, drop func(fromClient bool, b []byte) bool) *relay {
	t.Helper()
	c, err := net.ListenUDP("udp4", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	up, err := net.ListenUDP("udp4", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	srvAddr, _ := net.ResolveUDPAddr("udp4", server)
	r := &relay{conn: c, drops: make(chan struct{}, 100)}
	var clientAddr atomic.Pointer[net.UDPAddr]
	var serverTID atomic.Pointer[net.UDPAddr]
	go func() {
		buf := make([]byte, 70000)
		for {
			n, from, err := c.ReadFromUDP(buf)
			if err != nil {
				return
			}
			clientAddr.Store(from)
			if drop(true, buf[:n]) {
				r.dropped.Add(1)
				r.drops <- struct{}{}
				continue
			}
			to := srvAddr
			if s := serverTID.Load(); s != nil && binary.BigEndian.Uint16(buf) != opRRQ {
				to = s
			}
			up.WriteToUDP(buf[:n], to)
		}
	}()
	go func() {
		buf := make([]byte, 70000)
		for {
			n, from, err := up.ReadFromUDP(buf)
			if err != nil {
				return
			}
			serverTID.Store(from)
			if drop(false, buf[:n]) {
				r.dropped.Add(1)
				r.drops <- struct{}{}
				continue
			}
			if ca := clientAddr.Load(); ca != nil {
				c.WriteToUDP(buf[:n], ca)
			}
		}
	}()
	t.Cleanup(func() { c.Close(); up.Close() })
	return r
}

func (r *relay) port() string { return strconv.Itoa(r.conn.LocalAddr().(*net.UDPAddr).Port) }

// dropOnce drops the first packet of an opcode and (DATA, ACK) block
// number going one way, once each.
func dropOnce(fromClient bool, op, block uint16) func(bool, []byte) bool {
	var done atomic.Bool
	return func(fc bool, b []byte) bool {
		if fc != fromClient || len(b) < 4 || binary.BigEndian.Uint16(b) != op || (op != opOACK && binary.BigEndian.Uint16(b[2:]) != block) {
			return false
		}
		return done.CompareAndSwap(false, true)
	}
}

func TestServe_RetransmitsLostPackets(t *testing.T) {
	for _, sp := range []bool{true, false} {
		strict := newFixture(t, Options{SinglePort: sp, Timeout: 200 * time.Millisecond}, false)
		open := newFixture(t, Options{SinglePort: sp, Timeout: 200 * time.Millisecond, Limits: Limits{MaxAmplification: -1}}, false)
		for _, tc := range []struct {
			name   string
			c      client
			drop   func(bool, []byte) bool
			server bool // the server must have retransmitted
		}{
			{"lock step, a DATA lost", clients[0], dropOnce(false, opDATA, 7), false},
			{"lock step, an ACK lost", clients[0], dropOnce(true, opACK, 9), true},
			{"window, a DATA lost", clients[3], dropOnce(false, opDATA, 20), false},
			{"window, an ACK lost", clients[3], dropOnce(true, opACK, 16), true},
			{"OACK lost", clients[3], dropOnce(false, opOACK, 0), false},
			// atftp aborts on an OACK sent again ("unexpected OACK"): curl does not.
			{"ACK of the OACK lost", clients[7], dropOnce(true, opACK, 0), true},
			{"last ACK lost", clients[2], dropOnce(true, opACK, 71), true},
		} {
			t.Run(fmt.Sprintf("single_port=%v/%s", sp, tc.name), func(t *testing.T) {
				f := strict
				if tc.c.rfc1350 {
					f = open
				}
				r := newRelay(t, "127.0.0.1:"+f.port, tc.drop)
				before := f.srv.Stats()
				got, out, err := tc.c.get(t, r.port(), "odd")
				if err != nil || sha256.Sum256(got) != f.sums["odd"] {
					t.Fatalf("%s through the relay: %v, %d bytes: %s", tc.c.name, err, len(got), out)
				}
				// The client may exit before its last ACK reached the relay.
				select {
				case <-r.drops:
				case <-time.After(5 * time.Second):
					t.Fatal("the relay dropped nothing")
				}
				// The server's side of a lost ACK is a timeout and a retransmission.
				if tc.server {
					if !f.waitRetransmit(before.Retransmits) {
						t.Error("the server never retransmitted")
					}
				}
			})
		}
	}
}

// rawClient is a socket speaking TFTP bytes, for the server's bounds.
func rawClient(t *testing.T, port string) (*net.UDPConn, *net.UDPAddr) {
	return rawClientFrom(t, port, "127.0.0.1")
}

// rawClientFrom is rawClient from another loopback address (any of
// 127.0.0.0/8), a client address of its own.
func rawClientFrom(t *testing.T, port, ip string) (*net.UDPConn, *net.UDPAddr) {
	t.Helper()
	c, err := net.ListenUDP("udp4", &net.UDPAddr{IP: net.ParseIP(ip)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	a, _ := net.ResolveUDPAddr("udp4", "127.0.0.1:"+port)
	return c, a
}

func rrq(name string, opts ...string) []byte {
	r := &request{op: opRRQ, filename: name, mode: "octet"}
	for i := 0; i+1 < len(opts); i += 2 {
		r.options = append(r.options, option{opts[i], opts[i+1]})
	}
	return r.encode()
}

func read(t *testing.T, c *net.UDPConn, d time.Duration) ([]byte, *net.UDPAddr) {
	t.Helper()
	c.SetReadDeadline(time.Now().Add(d))
	buf := make([]byte, 70000)
	n, from, err := c.ReadFromUDP(buf)
	if err != nil {
		return nil, nil
	}
	return buf[:n], from
}

func ack(block uint16) []byte { return []byte{0, opACK, byte(block >> 8), byte(block)} }

// TestServe_GivesUpAndBoundsTransfers: an acknowledged transfer whose
// client goes quiet gets its first unacknowledged block again Retries
// times, then an error; while it holds the only slot another client is
// refused; options out of range are left out of the OACK.
func TestServe_GivesUpAndBoundsTransfers(t *testing.T) {
	f := newFixture(t, Options{SinglePort: true, Timeout: 50 * time.Millisecond, Retries: 2, MaxTransfers: 1}, false)
	a, srv := rawClient(t, f.port)
	a.WriteToUDP(rrq("odd", "blksize", "512"), srv)
	if p, _ := read(t, a, 5*time.Second); len(p) < 2 || binary.BigEndian.Uint16(p) != opOACK {
		t.Fatalf("first answer %q, want an OACK", p)
	}
	a.WriteToUDP(ack(0), srv)
	// Block 1, then twice again, then the error: the server gave up.
	var data int
	for {
		b, _ := read(t, a, 5*time.Second)
		if b == nil {
			t.Fatal("no error after the retries")
		}
		if binary.BigEndian.Uint16(b) == opERROR {
			break
		}
		if binary.BigEndian.Uint16(b) == opDATA && binary.BigEndian.Uint16(b[2:]) == 1 {
			data++
			if data == 1 {
				// While a's transfer holds the only slot, b is refused.
				b, srv := rawClientFrom(t, f.port, "127.0.0.2")
				b.WriteToUDP(rrq("odd", "tsize", "0"), srv)
				if p, _ := read(t, b, 5*time.Second); len(p) < 4 || binary.BigEndian.Uint16(p) != opERROR || !strings.Contains(string(p), "busy") {
					t.Errorf("second transfer got %q, want a busy error", p)
				}
			}
		} else {
			t.Errorf("unexpected packet %q", b)
		}
	}
	if data != 3 {
		t.Errorf("block 1 was sent %d times, want 1 + 2 retries", data)
	}
	if st := f.srv.Stats(); st.Failed != 1 || st.Refused != 1 || st.Busy != 1 || st.Retransmits != 2 {
		t.Errorf("stats %+v, want 1 failed, 1 refused, 2 retransmits", st)
	}
	// The slot is free again: a malformed request gets error 4, then a
	// good one is served.
	a.WriteToUDP([]byte{0, 1, 'x'}, srv)
	if p, _ := read(t, a, 5*time.Second); len(p) < 4 || binary.BigEndian.Uint16(p[2:]) != errIllegalOp {
		t.Errorf("malformed request: %q", p)
	}
	a.WriteToUDP(rrq("b511", "blksize", "100000", "windowsize", "0", "timeout", "300", "tsize", "0", "foo", "1"), srv)
	p, _ := read(t, a, 5*time.Second)
	// Every option out of range is left out; tsize answered.
	if want := "\x00\x06tsize\x00511\x00"; string(p) != want {
		t.Errorf("OACK %q, want %q", p, want)
	}
}

func TestServe_TransferTimeout(t *testing.T) {
	f := newFixture(t, Options{SinglePort: true, Timeout: time.Second, TransferTimeout: 100 * time.Millisecond}, false)
	a, srv := rawClient(t, f.port)
	a.WriteToUDP(rrq("odd", "tsize", "0"), srv)
	read(t, a, 5*time.Second) // the OACK
	a.WriteToUDP(ack(0), srv)
	for {
		b, _ := read(t, a, 5*time.Second)
		if b == nil {
			t.Fatal("no error after the transfer timeout")
		}
		if binary.BigEndian.Uint16(b) == opERROR {
			break
		}
	}
	if st := f.srv.Stats(); st.Failed != 1 {
		t.Errorf("stats %+v", st)
	}
}

func TestNew_ClampsBlockSizeToTheMTU(t *testing.T) {
	f := newFixture(t, Options{BlockSize: 65464, SinglePort: true}, false)
	// Loopback's MTU is 65536: the cap stays the configured one.
	if got := f.srv.MaxBlockSize(); got != 65464 {
		t.Errorf("max blksize on lo = %d", got)
	}
	if got := interfaceMTU(net.IPv4(127, 0, 0, 1)); got < 1500 {
		t.Errorf("lo MTU %d", got)
	}
}

func FuzzParseRequest(f *testing.F) {
	f.Add(rrq("pxelinux.0", "blksize", "1468", "tsize", "0"))
	f.Add(rrq("a", "windowsize", "8"))
	f.Add([]byte("\x00\x02file\x00octet\x00"))
	f.Add([]byte("\x00\x01\x00\x00"))
	f.Add([]byte("\x00\x01a\x00netascii\x00blksize\x00"))
	f.Fuzz(func(t *testing.T, b []byte) {
		r, err := parseRequest(b)
		if err != nil {
			return
		}
		// What parses encodes back to a request that parses the same.
		r2, err := parseRequest(r.encode())
		if err != nil {
			t.Fatalf("re-encoded %q: %v", r.encode(), err)
		}
		if r2.filename != r.filename || r2.mode != r.mode || len(r2.options) != len(r.options) {
			t.Fatalf("round trip %+v → %+v", r, r2)
		}
		if len(r.options) > maxOptions || r.filename == "" {
			t.Fatalf("bounds not kept: %+v", r)
		}
	})
}
