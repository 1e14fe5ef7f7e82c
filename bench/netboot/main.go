// Command netboot is the built-in netboot's load probe: it runs `ferro
// serve` with [dhcp]dhcp_provider=builtin in a network namespace, with N
// nodes in inspect wait (managed, ipxe boot files laid out by the real
// ipxe boot interface), and N simulated clients on a veth pair of the
// namespace's bridge that:
//
//   - DHCP: DISCOVER → OFFER → REQUEST → ACK, as iPXE (options 60, 77, 93), -rounds times each;
//   - TFTP: fetch undionly.kpxe (blksize 1468, tsize), in lock step, then
//     with windowsize -tftp-windowsize (RFC 7440);
//   - HTTP: fetch the node's deploy kernel (-kernel-mb MB) from the API
//     port, each client from the address DHCP leased to its node (a
//     node's files go only there).
//
// It prints replies per second, throughput, and ferro's RSS (sampled) and
// peak RSS (VmHWM). It needs root (network namespaces).
//
//	sudo go run ./bench/netboot [-clients 200] [-rounds 5] [-kernel-mb 4] [-tftp-single-port=false] [-tftp-windowsize 8] [-tftp-mb 0]
package main

import (
	"context"
	"crypto/rand"
	"errors"
	"flag"
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
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/google/uuid"
	"github.com/insomniacslk/dhcp/dhcpv4"
	"github.com/insomniacslk/dhcp/dhcpv4/server4"
	"github.com/insomniacslk/dhcp/iana"

	"github.com/ferrometal/ferro/internal/baremetal"
	"github.com/ferrometal/ferro/internal/driver"
	"github.com/ferrometal/ferro/internal/driver/deployimage"
	"github.com/ferrometal/ferro/internal/driver/fake"
	"github.com/ferrometal/ferro/internal/driver/pxe"
	"github.com/ferrometal/ferro/internal/netns"
	"github.com/ferrometal/ferro/internal/states"
	sqlstore "github.com/ferrometal/ferro/internal/store/sql"
)

const serverIP = "192.168.78.1"

type options struct {
	clients, rounds, kernelMB int
	ferro                     string
	singlePort                bool
	window                    int
	tftpMB                    int
}

func main() {
	var o options
	flag.IntVar(&o.clients, "clients", 200, "simulated clients (one node each)")
	flag.IntVar(&o.rounds, "rounds", 5, "DHCP exchanges per client")
	flag.IntVar(&o.kernelMB, "kernel-mb", 4, "size of the deploy kernel fetched over HTTP (MB)")
	flag.StringVar(&o.ferro, "ferro", os.Getenv("FERRO_BIN"), "ferro binary (default $FERRO_BIN, else build ./cmd/ferro)")
	flag.BoolVar(&o.singlePort, "tftp-single-port", true, "[netboot]tftp_single_port")
	flag.IntVar(&o.window, "tftp-windowsize", 8, "windowsize the clients ask in the second TFTP round")
	flag.IntVar(&o.tftpMB, "tftp-mb", 0, "fetch a file of this many MB over TFTP instead of undionly.kpxe")
	flag.Parse()
	if err := run(o); err != nil {
		fmt.Fprintln(os.Stderr, "bench/netboot:", err)
		os.Exit(1)
	}
}

// ns is the probe's network namespace.
type ns string

func (n ns) ip(args ...string) error {
	out, err := exec.Command("ip", append([]string{"-n", string(n)}, args...)...).CombinedOutput()
	if err != nil {
		return fmt.Errorf("ip %s: %v: %s", strings.Join(args, " "), err, out)
	}
	return nil
}

// do runs fn on a thread inside the namespace.
func (n ns) do(fn func() error) error { return netns.Do(netns.Path(string(n)), fn) }

func run(o options) error {
	if os.Geteuid() != 0 {
		return errors.New("needs root for network namespaces")
	}
	dir, err := os.MkdirTemp("", "ferro-bench-netboot-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	n := ns("ferro-bench-" + strings.ToLower(rand.Text()[:6]))
	if out, err := exec.Command("ip", "netns", "add", string(n)).CombinedOutput(); err != nil {
		return fmt.Errorf("ip netns add: %v: %s", err, out)
	}
	defer exec.Command("ip", "netns", "del", string(n)).Run()
	// The clients live in a namespace of their own, at the other end of
	// the veth pair: their packets cross it as a machine's would.
	cl := ns(string(n) + "-c")
	if out, err := exec.Command("ip", "netns", "add", string(cl)).CombinedOutput(); err != nil {
		return fmt.Errorf("ip netns add: %v: %s", err, out)
	}
	defer exec.Command("ip", "netns", "del", string(cl)).Run()
	for _, args := range [][]string{
		{"link", "set", "lo", "up"},
		{"link", "add", "br0", "type", "bridge", "stp_state", "0", "forward_delay", "0"},
		{"addr", "add", serverIP + "/24", "dev", "br0"},
		{"link", "set", "br0", "up"},
		{"link", "add", "v0", "type", "veth", "peer", "name", "v1"},
		{"link", "set", "v0", "master", "br0"},
		{"link", "set", "v0", "up"},
		{"link", "set", "v1", "netns", string(cl)},
	} {
		if err := n.ip(args...); err != nil {
			return err
		}
	}
	for _, args := range [][]string{
		{"link", "set", "lo", "up"},
		{"addr", "add", "192.168.78.2/24", "dev", "v1"},
		{"link", "set", "v1", "up"},
	} {
		if err := cl.ip(args...); err != nil {
			return err
		}
	}
	bin, err := ferroBinary(o.ferro, dir)
	if err != nil {
		return err
	}
	macs, uuids, err := prepareNodes(dir, o)
	if err != nil {
		return fmt.Errorf("prepare nodes: %w", err)
	}
	srv, err := startFerro(n, bin, dir, o)
	if err != nil {
		return err
	}
	defer srv.stop()
	fmt.Printf("bench/netboot: %d clients, tftp_single_port=%v, ferro serve pid %d, RSS at start %.1f MB\n", o.clients, o.singlePort, srv.cmd.Process.Pid, rssMB(srv.pid(), "VmRSS"))

	phase := func(name string, fn func() (string, error)) error {
		stop := make(chan struct{})
		var peak atomic.Uint64
		var wg sync.WaitGroup
		wg.Go(func() {
			for {
				if r := uint64(rssMB(srv.pid(), "VmRSS") * 1024); r > peak.Load() {
					peak.Store(r)
				}
				select {
				case <-stop:
					return
				case <-time.After(20 * time.Millisecond):
				}
			}
		})
		res, err := fn()
		close(stop)
		wg.Wait()
		if err != nil {
			return fmt.Errorf("%s: %w\n%s", name, err, srv.logTail())
		}
		fmt.Printf("%-5s %s; ferro RSS peak %.1f MB\n", name, res, float64(peak.Load())/1024)
		return nil
	}
	leased := map[string]net.IP{}
	if err := phase("dhcp", func() (string, error) { return benchDHCP(cl, macs, o.rounds, leased) }); err != nil {
		return err
	}
	tftpFile := "undionly.kpxe"
	if o.tftpMB > 0 {
		tftpFile = "bench.bin"
		b := make([]byte, o.tftpMB<<20)
		rand.Read(b)
		if err := os.WriteFile(filepath.Join(dir, "tftpboot", tftpFile), b, 0o644); err != nil {
			return err
		}
	}
	if err := phase("tftp", func() (string, error) { return benchTFTP(cl, len(macs), 1, tftpFile) }); err != nil {
		return err
	}
	if err := phase(fmt.Sprintf("tftp-w%d", o.window), func() (string, error) { return benchTFTP(cl, len(macs), o.window, tftpFile) }); err != nil {
		return err
	}
	// Each HTTP client takes its node's leased address.
	var batch strings.Builder
	locals := make([]net.IP, len(macs))
	for i, mac := range macs {
		locals[i] = leased[mac.String()]
		if locals[i] == nil {
			return fmt.Errorf("no lease for %s", mac)
		}
		fmt.Fprintf(&batch, "addr add %s/32 dev v1\n", locals[i])
	}
	ipb := exec.Command("ip", "-n", string(cl), "-batch", "-")
	ipb.Stdin = strings.NewReader(batch.String())
	if out, err := ipb.CombinedOutput(); err != nil {
		return fmt.Errorf("ip -batch: %v: %s", err, out)
	}
	if err := phase("http", func() (string, error) { return benchHTTP(cl, uuids, locals) }); err != nil {
		return err
	}
	fmt.Printf("ferro peak RSS over the run (VmHWM): %.1f MB\n", rssMB(srv.pid(), "VmHWM"))
	return nil
}

// prepareNodes writes the database and boot roots ferro will start on: N
// nodes in inspect wait with one port each and their ipxe boot files.
func prepareNodes(dir string, o options) (macs []net.HardwareAddr, uuids []string, err error) {
	ctx := context.Background()
	images := filepath.Join(dir, "images")
	os.MkdirAll(images, 0o755)
	kernel := make([]byte, o.kernelMB<<20)
	rand.Read(kernel)
	if err := os.WriteFile(filepath.Join(images, "kernel"), kernel, 0o644); err != nil {
		return nil, nil, err
	}
	os.WriteFile(filepath.Join(images, "ramdisk"), []byte("ramdisk"), 0o644)
	os.MkdirAll(filepath.Join(dir, "data"), 0o755)
	db, err := sqlstore.Open(ctx, "sqlite://"+filepath.Join(dir, "data", "ferro.db"))
	if err != nil {
		return nil, nil, err
	}
	defer db.Close()
	// [pxe]'s defaults, with the bench's roots and images.
	boot, err := pxe.New(pxe.IPXE, pxe.Options{Images: deployimage.New(deployimage.Options{AllowedPaths: []string{images}}),
		TFTPRoot: filepath.Join(dir, "tftpboot"), HTTPRoot: filepath.Join(dir, "httpboot"),
		HTTPURL:     "http://" + serverIP + ":6385/httpboot",
		PXEBootfile: "pxelinux.0", IPXEBootfile: "undionly.kpxe", KernelAppendParams: "nofb nomodeset vga=normal"})
	if err != nil {
		return nil, nil, err
	}
	quiet := slog.New(slog.DiscardHandler)
	for i := range o.clients {
		mac := net.HardwareAddr{0x52, 0x54, 0x00, 0x78, byte(i >> 8), byte(i)}
		node := &baremetal.Node{UUID: uuid.NewString(), Name: fmt.Sprintf("bench-%d", i), Driver: "fake-hardware",
			ProvisionState: states.InspectWait, PowerState: baremetal.PowerOn,
			Interfaces: map[string]string{"boot": "ipxe", "power": "fake", "management": "fake", "network": "noop", "inspect": "inspector"},
			DriverInfo: baremetal.JSON{"deploy_kernel": "file://" + filepath.Join(images, "kernel"),
				"deploy_ramdisk": "file://" + filepath.Join(images, "ramdisk")},
			DriverInternalInfo: baremetal.JSON{"inspector_manage_boot": true}, InstanceInfo: baremetal.JSON{}}
		if err := db.CreateNode(ctx, node); err != nil {
			return nil, nil, err
		}
		port := &baremetal.Port{UUID: uuid.NewString(), NodeUUID: node.UUID, Address: mac.String(), PXEEnabled: true}
		if err := db.CreatePort(ctx, port); err != nil {
			return nil, nil, err
		}
		task := &driver.Task{Node: node, Ports: []*baremetal.Port{port}, Driver: &driver.Interfaces{Management: fake.Management{}}, Log: quiet}
		if err := boot.PrepareRamdisk(ctx, task, nil); err != nil {
			return nil, nil, err
		}
		macs = append(macs, mac)
		uuids = append(uuids, node.UUID)
	}
	return macs, uuids, nil
}

// benchDHCP runs every client's exchanges at once over one socket on v1
// (replies are broadcast; they are matched by transaction id).
func benchDHCP(n ns, macs []net.HardwareAddr, rounds int, leased map[string]net.IP) (string, error) {
	var conn *net.UDPConn
	if err := n.do(func() error {
		c, err := server4.NewIPv4UDPConn("v1", &net.UDPAddr{Port: dhcpv4.ClientPort})
		conn = c
		return err
	}); err != nil {
		return "", err
	}
	defer conn.Close()
	var mu sync.Mutex
	waiting := map[dhcpv4.TransactionID]chan *dhcpv4.DHCPv4{}
	go func() {
		buf := make([]byte, 1500)
		for {
			k, _, err := conn.ReadFrom(buf)
			if err != nil {
				return
			}
			m, err := dhcpv4.FromBytes(buf[:k])
			if err != nil {
				continue
			}
			mu.Lock()
			ch := waiting[m.TransactionID]
			mu.Unlock()
			if ch != nil {
				select {
				case ch <- m:
				default:
				}
			}
		}
	}()
	bcast := &net.UDPAddr{IP: net.IPv4bcast, Port: dhcpv4.ServerPort}
	ipxe := []dhcpv4.Modifier{
		dhcpv4.WithOption(dhcpv4.OptClassIdentifier("PXEClient:Arch:00000:UNDI:002001")),
		dhcpv4.WithOption(dhcpv4.OptClientArch(iana.INTEL_X86PC)),
		dhcpv4.WithOption(dhcpv4.OptGeneric(dhcpv4.OptionUserClassInformation, []byte("iPXE"))),
		dhcpv4.WithBroadcast(true),
	}
	// exchange sends m until a reply of type want arrives (1 s per try, 5 tries).
	exchange := func(m *dhcpv4.DHCPv4, want dhcpv4.MessageType, retries *atomic.Uint64) (*dhcpv4.DHCPv4, error) {
		ch := make(chan *dhcpv4.DHCPv4, 4)
		mu.Lock()
		waiting[m.TransactionID] = ch
		mu.Unlock()
		defer func() { mu.Lock(); delete(waiting, m.TransactionID); mu.Unlock() }()
		for try := range 5 {
			if try > 0 {
				retries.Add(1)
			}
			if _, err := conn.WriteTo(m.ToBytes(), bcast); err != nil {
				return nil, err
			}
			timeout := time.After(time.Second)
			for {
				select {
				case r := <-ch:
					if r.MessageType() == want {
						return r, nil
					}
					continue
				case <-timeout:
				}
				break
			}
		}
		return nil, fmt.Errorf("no %s for %s", want, m.ClientHWAddr)
	}
	var replies, retries atomic.Uint64
	var wg sync.WaitGroup
	errc := make(chan error, len(macs))
	began := time.Now()
	for _, mac := range macs {
		wg.Go(func() {
			for range rounds {
				d, err := dhcpv4.NewDiscovery(mac, ipxe...)
				if err != nil {
					errc <- err
					return
				}
				offer, err := exchange(d, dhcpv4.MessageTypeOffer, &retries)
				if err != nil {
					errc <- err
					return
				}
				replies.Add(1)
				req, err := dhcpv4.NewRequestFromOffer(offer, ipxe...)
				if err != nil {
					errc <- err
					return
				}
				ack, err := exchange(req, dhcpv4.MessageTypeAck, &retries)
				if err != nil {
					errc <- err
					return
				}
				mu.Lock()
				leased[mac.String()] = ack.YourIPAddr
				mu.Unlock()
				replies.Add(1)
			}
		})
	}
	wg.Wait()
	took := time.Since(began)
	close(errc)
	if err := <-errc; err != nil {
		return "", err
	}
	return fmt.Sprintf("%d replies (OFFER+ACK) in %v: %.0f replies/s, %d retransmissions", replies.Load(), took.Round(time.Millisecond),
		float64(replies.Load())/took.Seconds(), retries.Load()), nil
}

// benchTFTP fetches file with every client at once, asking windowsize
// window when it is more than 1.
func benchTFTP(n ns, clients, window int, file string) (string, error) {
	var total atomic.Int64
	var wg sync.WaitGroup
	errc := make(chan error, clients)
	server := &net.UDPAddr{IP: net.ParseIP(serverIP), Port: 69}
	began := time.Now()
	for range clients {
		wg.Go(func() {
			var c *net.UDPConn
			err := n.do(func() error {
				var err error
				c, err = net.ListenUDP("udp4", &net.UDPAddr{})
				return err
			})
			if err != nil {
				errc <- err
				return
			}
			defer c.Close()
			k, err := tftpGet(c, server, file, 1468, window, 2*time.Second, 10, io.Discard)
			total.Add(k)
			if err != nil {
				errc <- err
			}
		})
	}
	wg.Wait()
	took := time.Since(began)
	close(errc)
	if err := <-errc; err != nil {
		return "", err
	}
	return fmt.Sprintf("%d transfers, %.1f MB in %v: %.1f MB/s", clients, float64(total.Load())/1e6, took.Round(time.Millisecond),
		float64(total.Load())/1e6/took.Seconds()), nil
}

// benchHTTP fetches each node's deploy kernel from the API port at once.
func benchHTTP(n ns, uuids []string, locals []net.IP) (string, error) {
	clientFrom := func(local net.IP) *http.Client {
		return &http.Client{Transport: &http.Transport{
			DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
				var c net.Conn
				err := n.do(func() error {
					var err error
					c, err = (&net.Dialer{LocalAddr: &net.TCPAddr{IP: local}}).DialContext(ctx, network, addr)
					return err
				})
				return c, err
			},
		}, Timeout: 5 * time.Minute}
	}
	var total atomic.Int64
	var wg sync.WaitGroup
	errc := make(chan error, len(uuids))
	began := time.Now()
	for i, u := range uuids {
		client := clientFrom(locals[i])
		wg.Go(func() {
			resp, err := client.Get("http://" + serverIP + ":6385/httpboot/" + u + "/deploy_kernel")
			if err != nil {
				errc <- err
				return
			}
			defer resp.Body.Close()
			if resp.StatusCode != http.StatusOK {
				errc <- fmt.Errorf("GET %s: %s", u, resp.Status)
				return
			}
			k, err := io.Copy(io.Discard, resp.Body)
			total.Add(k)
			if err != nil {
				errc <- err
			}
		})
	}
	wg.Wait()
	took := time.Since(began)
	close(errc)
	if err := <-errc; err != nil {
		return "", err
	}
	return fmt.Sprintf("%d GETs, %.1f MB in %v: %.0f MB/s", len(uuids), float64(total.Load())/1e6, took.Round(time.Millisecond),
		float64(total.Load())/1e6/took.Seconds()), nil
}

type server struct {
	cmd    *exec.Cmd
	log    string
	exited chan struct{}
}

func (s *server) pid() int { return s.cmd.Process.Pid }

func startFerro(n ns, bin, dir string, o options) (*server, error) {
	s := &server{log: filepath.Join(dir, "ferro.log"), exited: make(chan struct{})}
	logf, err := os.Create(s.log)
	if err != nil {
		return nil, err
	}
	env := []string{
		"FERRO_API_HOST_IP=" + serverIP, "FERRO_API_PORT=6385", "FERRO_API_ALLOW_INSECURE_NOAUTH=true",
		"FERRO_INSPECTOR_LISTEN_ADDRESS=" + serverIP,
		"FERRO_PXE_TFTP_ROOT=" + filepath.Join(dir, "tftpboot"),
		"FERRO_DEPLOY_HTTP_ROOT=" + filepath.Join(dir, "httpboot"),
		"FERRO_DEPLOY_HTTP_URL=http://" + serverIP + ":6385/httpboot",
		"FERRO_DHCP_DHCP_PROVIDER=builtin",
		"FERRO_NETBOOT_INTERFACE=br0", "FERRO_NETBOOT_LISTEN_ADDRESS=" + serverIP,
		"FERRO_NETBOOT_RANGE_START=192.168.78.10", "FERRO_NETBOOT_RANGE_END=192.168.78.250",
		"FERRO_NETBOOT_NETMASK=255.255.255.0",
		"FERRO_NETBOOT_TFTP_MAX_TRANSFERS=256",
		// Every simulated client sends from the same address.
		"FERRO_NETBOOT_TFTP_MAX_TRANSFERS_PER_CLIENT=256", "FERRO_NETBOOT_TFTP_CLIENT_REQUEST_RATE=1000",
		"FERRO_NETBOOT_TFTP_SINGLE_PORT=" + strconv.FormatBool(o.singlePort),
		"FERRO_DEFAULT_DEBUG=" + os.Getenv("BENCH_DEBUG"),
	}
	s.cmd = exec.Command("ip", "netns", "exec", string(n), bin, "serve", "--data-dir", filepath.Join(dir, "data"))
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "FERRO_") {
			s.cmd.Env = append(s.cmd.Env, kv)
		}
	}
	s.cmd.Env = append(s.cmd.Env, env...)
	s.cmd.Stdout, s.cmd.Stderr = logf, logf
	s.cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := s.cmd.Start(); err != nil {
		return nil, err
	}
	go func() { s.cmd.Wait(); logf.Close(); close(s.exited) }()
	deadline := time.Now().Add(30 * time.Second)
	for {
		b, _ := os.ReadFile(s.log)
		if strings.Contains(string(b), "ferro started") {
			return s, nil
		}
		select {
		case <-s.exited:
			return nil, fmt.Errorf("ferro serve exited while starting\n%s", s.logTail())
		case <-time.After(50 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			s.stop()
			return nil, fmt.Errorf("ferro serve did not start in 30 s\n%s", s.logTail())
		}
	}
}

func (s *server) stop() {
	select {
	case <-s.exited:
		return
	default:
	}
	s.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-s.exited:
	case <-time.After(15 * time.Second):
		s.cmd.Process.Kill()
		<-s.exited
	}
}

func (s *server) logTail() string {
	b, _ := os.ReadFile(s.log)
	if len(b) > 4000 {
		b = b[len(b)-4000:]
	}
	return string(b)
}

// rssMB reads a Vm* line of /proc/PID/status in MB.
func rssMB(pid int, field string) float64 {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, field+":"); ok {
			kb, _ := strconv.Atoi(strings.Fields(v)[0])
			return float64(kb) / 1024
		}
	}
	return 0
}

func ferroBinary(given, dir string) (string, error) {
	if given != "" {
		return filepath.Abs(given)
	}
	out := filepath.Join(dir, "ferro")
	cmd := exec.Command("go", "build", "-trimpath", "-o", out, "./cmd/ferro")
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	if msg, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("go build ./cmd/ferro: %w\n%s", err, msg)
	}
	return out, nil
}
