// Package firmware is bench/scale's netboot phase: up to a few hundred
// simulated machines booting at once against ferro serve's built-in
// netboot (DHCP, TFTP, HTTP), each as its firmware does it. In a network
// namespace of bench/netboot/lab, so it needs root. A machine:
//
//  1. PXE ROM: DHCP DISCOVER → OFFER, REQUEST → ACK with the options a
//     BIOS PXE ROM sends (60 PXEClient:Arch:00000:UNDI:002001, 93 arch 0,
//     94 UNDI 2.1, 97 the machine's GUID, 55 asking for 66 and 67);
//  2. TFTP of the boot file the ACK names (undionly.kpxe) from its
//     next-server, in lock step as a PXE ROM does (blksize 1468, tsize);
//  3. iPXE: DHCP again, user class (77) "iPXE", for the script URL;
//  4. HTTP from its leased address: the script, then the kernel and the
//     ramdisk it names. Then it counts as booted.
//
// Every exchange is bounded (DHCP 5 tries of 1 s, TFTP 10 of 2 s, HTTP a
// minute), and the phase by its context.
package firmware

import (
	"bufio"
	"bytes"
	"context"
	"crypto/rand"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"sync"
	"time"

	"github.com/insomniacslk/dhcp/dhcpv4"
	"github.com/insomniacslk/dhcp/iana"

	"github.com/ferrometal/ferro/bench/netboot/lab"
)

// Config is the phase's profile.
type Config struct {
	Ferro    string // the ferro binary
	Machines int    // booting at once
	KernelMB int    // size of the deploy kernel fetched over HTTP
}

// Result is what the phase measured.
type Result struct {
	Config Config
	// AllBooted is from the first DISCOVER until the last machine had its
	// ramdisk; Boot is each machine's own time.
	AllBooted time.Duration
	Boot      []time.Duration
	// DHCP is the latency of every exchange (DISCOVER → OFFER, REQUEST →
	// ACK, of the PXE ROM and of iPXE), retries included; Retransmits the
	// messages sent again.
	DHCP        []time.Duration
	Retransmits int64
	// TFTP: bytes of all transfers over the span from the first request to
	// the last block; each transfer's time in TFTPEach.
	TFTPBytes int64
	TFTPSpan  time.Duration
	TFTPEach  []time.Duration
	HTTPBytes int64
	Failed    int      // machines that did not boot
	Errors    []string // the first few failures
	CPU       float64  // CPU seconds of ferro serve over the phase
	RSS       float64  // ferro serve's peak RSS, MB (VmHWM)
}

// Run boots the machines.
func Run(ctx context.Context, c Config) (*Result, error) {
	l, err := lab.Setup()
	if err != nil {
		return nil, err
	}
	defer l.Close()
	dir, err := os.MkdirTemp("", "ferro-scale-netboot-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	macs, uuids, err := lab.PrepareNodes(dir, c.Machines, c.KernelMB)
	if err != nil {
		return nil, fmt.Errorf("prepare nodes: %w", err)
	}
	srv, err := lab.StartFerro(l.Server, c.Ferro, dir,
		"FERRO_NETBOOT_TFTP_MAX_TRANSFERS="+fmt.Sprint(max(256, c.Machines+16)),
		"FERRO_NETBOOT_TFTP_MAX_TRANSFERS_PER_CLIENT="+fmt.Sprint(max(256, c.Machines+16)))
	if err != nil {
		return nil, err
	}
	defer srv.Stop()
	// Every address of the range on the machines' link, so each can send
	// from the one it leases (a node's boot files go only there).
	var batch strings.Builder
	for i := 10; i <= 250; i++ {
		fmt.Fprintf(&batch, "addr add 192.168.78.%d/32 dev v1\n", i)
	}
	ipb := exec.Command("ip", "-n", string(l.Client), "-batch", "-")
	ipb.Stdin = strings.NewReader(batch.String())
	if out, err := ipb.CombinedOutput(); err != nil {
		return nil, fmt.Errorf("ip -batch: %v: %s", err, out)
	}
	d, err := l.Client.ListenDHCP()
	if err != nil {
		return nil, err
	}
	defer d.Close()

	res := &Result{Config: c}
	var mu sync.Mutex
	var tftpFirst, tftpLast time.Time
	cpu0 := lab.CPUSeconds(srv.PID())
	began := time.Now()
	var wg sync.WaitGroup
	for i := range macs {
		wg.Go(func() {
			m := &machine{mac: macs[i], uuid: uuids[i], ns: l.Client, dhcp: d}
			t0 := time.Now()
			err := m.boot(ctx, func(start, end time.Time) {
				mu.Lock()
				defer mu.Unlock()
				if tftpFirst.IsZero() || start.Before(tftpFirst) {
					tftpFirst = start
				}
				if end.After(tftpLast) {
					tftpLast = end
				}
			})
			mu.Lock()
			defer mu.Unlock()
			res.DHCP = append(res.DHCP, m.dhcpTimes...)
			res.Retransmits += int64(m.retransmits)
			res.TFTPBytes += m.tftpBytes
			res.HTTPBytes += m.httpBytes
			if m.tftpTook > 0 {
				res.TFTPEach = append(res.TFTPEach, m.tftpTook)
			}
			if err != nil {
				res.Failed++
				if len(res.Errors) < 5 {
					res.Errors = append(res.Errors, fmt.Sprintf("%s: %v", m.mac, err))
				}
				return
			}
			res.Boot = append(res.Boot, time.Since(t0))
		})
	}
	wg.Wait()
	res.AllBooted = time.Since(began)
	res.TFTPSpan = tftpLast.Sub(tftpFirst)
	res.CPU = lab.CPUSeconds(srv.PID()) - cpu0
	res.RSS = lab.RSSMB(srv.PID(), "VmHWM")
	return res, nil
}

// machine is one simulated machine's firmware.
type machine struct {
	mac         net.HardwareAddr
	uuid        string
	ns          lab.NS
	dhcp        *lab.DHCP
	dhcpTimes   []time.Duration
	retransmits int
	tftpBytes   int64
	tftpTook    time.Duration
	httpBytes   int64
}

func (m *machine) boot(ctx context.Context, tftpSpan func(start, end time.Time)) error {
	guid := make([]byte, 17) // option 97: type 0, then the GUID
	rand.Read(guid[1:])
	pxeROM := []dhcpv4.Modifier{
		dhcpv4.WithOption(dhcpv4.OptClassIdentifier("PXEClient:Arch:00000:UNDI:002001")),
		dhcpv4.WithOption(dhcpv4.OptClientArch(iana.INTEL_X86PC)),
		dhcpv4.WithOption(dhcpv4.OptGeneric(dhcpv4.OptionClientNetworkInterfaceIdentifier, []byte{1, 2, 1})),
		dhcpv4.WithOption(dhcpv4.OptGeneric(dhcpv4.OptionClientMachineIdentifier, guid)),
		dhcpv4.WithRequestedOptions(dhcpv4.OptionTFTPServerName, dhcpv4.OptionBootfileName, dhcpv4.OptionVendorSpecificInformation),
		dhcpv4.WithBroadcast(true),
	}
	ack, err := m.lease(pxeROM)
	if err != nil {
		return fmt.Errorf("PXE ROM: %w", err)
	}
	file := ack.BootFileName
	if file == "" {
		file = dhcpv4.GetString(dhcpv4.OptionBootfileName, ack.Options)
	}
	next := ack.ServerIPAddr
	if file == "" || next == nil || next.IsUnspecified() {
		return fmt.Errorf("PXE ROM: the ACK names no boot file (%q) or next-server (%v)", file, next)
	}
	var conn *net.UDPConn
	if err := m.ns.Do(func() error {
		var err error
		conn, err = net.ListenUDP("udp4", &net.UDPAddr{IP: ack.YourIPAddr})
		return err
	}); err != nil {
		return err
	}
	start := time.Now()
	m.tftpBytes, err = lab.TFTPGet(conn, &net.UDPAddr{IP: next, Port: 69}, file, 1468, 1, 2*time.Second, 10, io.Discard)
	conn.Close()
	m.tftpTook = time.Since(start)
	tftpSpan(start, time.Now())
	if err != nil {
		return fmt.Errorf("TFTP %s: %w", file, err)
	}
	// iPXE now runs, and asks again, with its user class.
	ipxe := append(pxeROM[:len(pxeROM):len(pxeROM)], dhcpv4.WithOption(dhcpv4.OptGeneric(dhcpv4.OptionUserClassInformation, []byte("iPXE"))))
	ack, err = m.lease(ipxe)
	if err != nil {
		return fmt.Errorf("iPXE: %w", err)
	}
	script := ack.BootFileName
	if script == "" {
		script = dhcpv4.GetString(dhcpv4.OptionBootfileName, ack.Options)
	}
	if !strings.HasPrefix(script, "http://") {
		return fmt.Errorf("iPXE: the ACK names %q, not a script URL", script)
	}
	client := &http.Client{Timeout: time.Minute, Transport: &http.Transport{
		DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
			var c net.Conn
			err := m.ns.Do(func() error {
				var err error
				c, err = (&net.Dialer{LocalAddr: &net.TCPAddr{IP: ack.YourIPAddr}}).DialContext(ctx, network, addr)
				return err
			})
			return c, err
		},
	}}
	defer client.CloseIdleConnections()
	body, err := m.get(ctx, client, script, true)
	if err != nil {
		return err
	}
	var urls []string
	for sc := bufio.NewScanner(bytes.NewReader(body)); sc.Scan(); {
		f := strings.Fields(sc.Text())
		if len(f) >= 2 && (f[0] == "kernel" || f[0] == "initrd") {
			urls = append(urls, f[1])
		}
	}
	if len(urls) != 2 {
		return fmt.Errorf("the script %s names %d of a kernel and an initrd:\n%s", script, len(urls), body)
	}
	for _, u := range urls {
		if _, err := m.get(ctx, client, u, false); err != nil {
			return err
		}
	}
	return nil
}

// lease is DISCOVER → OFFER, REQUEST → ACK with mods.
func (m *machine) lease(mods []dhcpv4.Modifier) (*dhcpv4.DHCPv4, error) {
	disc, err := dhcpv4.NewDiscovery(m.mac, mods...)
	if err != nil {
		return nil, err
	}
	t := time.Now()
	offer, again, err := m.dhcp.Exchange(disc, dhcpv4.MessageTypeOffer, 5, time.Second)
	m.retransmits += again
	if err != nil {
		return nil, err
	}
	m.dhcpTimes = append(m.dhcpTimes, time.Since(t))
	req, err := dhcpv4.NewRequestFromOffer(offer, mods...)
	if err != nil {
		return nil, err
	}
	t = time.Now()
	ack, again, err := m.dhcp.Exchange(req, dhcpv4.MessageTypeAck, 5, time.Second)
	m.retransmits += again
	if err != nil {
		return nil, err
	}
	m.dhcpTimes = append(m.dhcpTimes, time.Since(t))
	return ack, nil
}

// get fetches url, keeping the body if keep.
func (m *machine) get(ctx context.Context, c *http.Client, url string, keep bool) ([]byte, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return nil, err
	}
	resp, err := c.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("GET %s: %s", url, resp.Status)
	}
	var w bytes.Buffer
	var dst io.Writer = io.Discard
	if keep {
		dst = &w
	}
	k, err := io.Copy(dst, io.LimitReader(resp.Body, 1<<30))
	m.httpBytes += k
	if err != nil {
		return nil, fmt.Errorf("GET %s: %w", url, err)
	}
	return w.Bytes(), nil
}
