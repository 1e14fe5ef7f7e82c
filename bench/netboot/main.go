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
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/insomniacslk/dhcp/dhcpv4"
	"github.com/insomniacslk/dhcp/iana"

	"github.com/ferrometal/ferro/bench/netboot/lab"
)

const serverIP = lab.ServerIP

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

func run(o options) error {
	l, err := lab.Setup()
	if err != nil {
		return err
	}
	defer l.Close()
	dir, err := os.MkdirTemp("", "ferro-bench-netboot-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	n, cl := l.Server, l.Client
	bin, err := lab.FerroBinary(o.ferro, dir)
	if err != nil {
		return err
	}
	macs, uuids, err := lab.PrepareNodes(dir, o.clients, o.kernelMB)
	if err != nil {
		return fmt.Errorf("prepare nodes: %w", err)
	}
	srv, err := lab.StartFerro(n, bin, dir, "FERRO_NETBOOT_TFTP_SINGLE_PORT="+strconv.FormatBool(o.singlePort))
	if err != nil {
		return err
	}
	defer srv.Stop()
	fmt.Printf("bench/netboot: %d clients, tftp_single_port=%v, ferro serve pid %d, RSS at start %.1f MB\n", o.clients, o.singlePort, srv.PID(), lab.RSSMB(srv.PID(), "VmRSS"))

	phase := func(name string, fn func() (string, error)) error {
		stop := make(chan struct{})
		var peak atomic.Uint64
		var wg sync.WaitGroup
		wg.Go(func() {
			for {
				if r := uint64(lab.RSSMB(srv.PID(), "VmRSS") * 1024); r > peak.Load() {
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
			return fmt.Errorf("%s: %w\n%s", name, err, srv.LogTail())
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
	fmt.Printf("ferro peak RSS over the run (VmHWM): %.1f MB\n", lab.RSSMB(srv.PID(), "VmHWM"))
	return nil
}

// benchDHCP runs every client's exchanges at once over one socket on v1
// (replies are broadcast; they are matched by transaction id).
func benchDHCP(n lab.NS, macs []net.HardwareAddr, rounds int, leased map[string]net.IP) (string, error) {
	d, err := n.ListenDHCP()
	if err != nil {
		return "", err
	}
	defer d.Close()
	var mu sync.Mutex
	ipxe := []dhcpv4.Modifier{
		dhcpv4.WithOption(dhcpv4.OptClassIdentifier("PXEClient:Arch:00000:UNDI:002001")),
		dhcpv4.WithOption(dhcpv4.OptClientArch(iana.INTEL_X86PC)),
		dhcpv4.WithOption(dhcpv4.OptGeneric(dhcpv4.OptionUserClassInformation, []byte("iPXE"))),
		dhcpv4.WithBroadcast(true),
	}
	// exchange sends m until a reply of type want arrives (1 s per try, 5 tries).
	exchange := func(m *dhcpv4.DHCPv4, want dhcpv4.MessageType, retries *atomic.Uint64) (*dhcpv4.DHCPv4, error) {
		r, again, err := d.Exchange(m, want, 5, time.Second)
		retries.Add(uint64(again))
		return r, err
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
func benchTFTP(n lab.NS, clients, window int, file string) (string, error) {
	var total atomic.Int64
	var wg sync.WaitGroup
	errc := make(chan error, clients)
	server := &net.UDPAddr{IP: net.ParseIP(serverIP), Port: 69}
	began := time.Now()
	for range clients {
		wg.Go(func() {
			var c *net.UDPConn
			err := n.Do(func() error {
				var err error
				c, err = net.ListenUDP("udp4", &net.UDPAddr{})
				return err
			})
			if err != nil {
				errc <- err
				return
			}
			defer c.Close()
			k, err := lab.TFTPGet(c, server, file, 1468, window, 2*time.Second, 10, io.Discard)
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
func benchHTTP(n lab.NS, uuids []string, locals []net.IP) (string, error) {
	clientFrom := func(local net.IP) *http.Client {
		return &http.Client{Transport: &http.Transport{
			DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
				var c net.Conn
				err := n.Do(func() error {
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
