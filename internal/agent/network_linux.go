package agent

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"sync"
	"time"

	"github.com/insomniacslk/dhcp/dhcpv4"
	"github.com/insomniacslk/dhcp/dhcpv4/nclient4"
	"github.com/u-root/u-root/pkg/dhclient"
	"github.com/vishvananda/netlink"
	"golang.org/x/sys/unix"
)

// NetworkOptions says which NICs get an address.
type NetworkOptions struct {
	// BootMAC is the NIC the machine booted from; DHCP runs only there
	// unless All is set or no NIC has this MAC.
	BootMAC net.HardwareAddr
	All     bool
	// Timeout bounds the whole DHCP exchange.
	Timeout time.Duration
}

// LinkUp sets a network interface administratively up.
func LinkUp(name string) error {
	l, err := netlink.LinkByName(name)
	if err != nil {
		return fmt.Errorf("link %s: %w", name, err)
	}
	if err := netlink.LinkSetUp(l); err != nil {
		return fmt.Errorf("link %s up: %w", name, err)
	}
	return nil
}

// Network gets the agent its address. Start is handed each NIC as its
// driver creates it, so DHCP on the boot NIC overlaps the loading of the
// other modules (≈ 0.4 s of a boot under emulation); Wait settles which
// NICs are chosen once all are known, and waits for the lease.
type Network struct {
	log    *slog.Logger
	o      NetworkOptions
	ctx    context.Context
	cancel context.CancelFunc
	mu     sync.Mutex
	leases map[string]*leaseRun
}

// leaseRun is one NIC's DHCP: err is valid once done is closed.
type leaseRun struct {
	done chan struct{}
	err  error
}

// NewNetwork starts the clock of o.Timeout, which bounds all DHCP.
func NewNetwork(ctx context.Context, log *slog.Logger, o NetworkOptions) *Network {
	if o.Timeout <= 0 {
		o.Timeout = DefaultDHCPTimeout
	}
	ctx, cancel := context.WithTimeout(ctx, o.Timeout)
	return &Network{log: log, o: o, ctx: ctx, cancel: cancel, leases: map[string]*leaseRun{}}
}

// Start begins DHCP on a NIC that is up when Wait would choose it
// whatever else appears: the BOOTIF NIC, or any NIC without BOOTIF or
// with ipa-inspection-dhcp-all-interfaces. Others wait for Wait.
func (n *Network) Start(name string) {
	l, err := netlink.LinkByName(name)
	if err != nil {
		return
	}
	if n.o.All || n.o.BootMAC == nil || bytes.Equal(l.Attrs().HardwareAddr, n.o.BootMAC) {
		n.start(l)
	}
}

// start runs DHCP on l once; an address it already has (a ramdisk that
// configured its network) counts as its lease.
func (n *Network) start(l netlink.Link) *leaseRun {
	name := l.Attrs().Name
	n.mu.Lock()
	defer n.mu.Unlock()
	if r, ok := n.leases[name]; ok {
		return r
	}
	r := &leaseRun{done: make(chan struct{})}
	n.leases[name] = r
	go func() {
		defer close(r.done)
		if v4, _ := SystemAddrs(name); v4 != "" {
			n.log.Info("interface already has an address, no DHCP", "interface", name, "address", v4)
			return
		}
		r.err = lease(n.ctx, n.log, l, n.o.Timeout)
	}()
	return r
}

// Wait brings loopback and every named NIC up (LLDP and carrier
// detection need them up), runs DHCP on the chosen ones not started yet,
// and waits: for the first lease, or for all of them with All. It fails
// when no chosen NIC got a lease. DHCP still running when it returns is
// stopped.
func (n *Network) Wait(names []string) error {
	defer n.cancel()
	if lo, err := netlink.LinkByName("lo"); err == nil {
		_ = netlink.LinkSetUp(lo)
	}
	var all, chosen []netlink.Link
	for _, name := range names {
		l, err := netlink.LinkByName(name)
		if err != nil {
			return fmt.Errorf("network: %w", err)
		}
		if err := netlink.LinkSetUp(l); err != nil {
			return fmt.Errorf("network: bring %s up: %w", name, err)
		}
		all = append(all, l)
		if n.o.BootMAC != nil && bytes.Equal(l.Attrs().HardwareAddr, n.o.BootMAC) {
			chosen = append(chosen, l)
		}
	}
	if len(all) == 0 {
		return errors.New("network: no network interface found")
	}
	if n.o.All || len(chosen) == 0 {
		if n.o.BootMAC != nil && !n.o.All {
			n.log.Warn("no NIC has the BOOTIF MAC, trying all", "bootif", n.o.BootMAC.String())
		}
		chosen = all
	}
	type result struct {
		name string
		err  error
	}
	results := make(chan result, len(chosen))
	for _, l := range chosen {
		r := n.start(l)
		go func() {
			<-r.done
			results <- result{l.Attrs().Name, r.err}
		}()
	}
	var errs []error
	got := 0
	for range chosen {
		r := <-results
		if r.err != nil {
			errs = append(errs, fmt.Errorf("dhcp on %s: %w", r.name, r.err))
			continue
		}
		got++
		if !n.o.All {
			break // one lease on the boot NIC is what the callback needs
		}
	}
	if got == 0 {
		return fmt.Errorf("network: no DHCP lease: %w", errors.Join(errs...))
	}
	return nil
}

// lease gets a DHCPv4 lease on l and configures it. It starts as soon as
// the link has carrier: u-root's dhclient waits for the operational state
// instead, which the kernel's link watch updates up to a second later,
// while frames already go out once the carrier is there.
func lease(ctx context.Context, log *slog.Logger, l netlink.Link, timeout time.Duration) error {
	name := l.Attrs().Name
	if err := waitCarrier(ctx, name); err != nil {
		return err
	}
	c, err := nclient4.New(name, nclient4.WithTimeout(4*time.Second), nclient4.WithRetry(max(1, int(timeout/(4*time.Second)))))
	if err != nil {
		return err
	}
	defer c.Close()
	// the options u-root's dhclient sends
	ack, err := c.Request(ctx,
		dhcpv4.WithOption(dhcpv4.OptClassIdentifier("PXE UROOT")),
		dhcpv4.WithRequestedOptions(dhcpv4.OptionSubnetMask),
		dhcpv4.WithNetboot)
	if err != nil {
		return err
	}
	p := dhclient.NewPacket4(l, ack.ACK)
	if err := p.Configure(); err != nil {
		return fmt.Errorf("configure: %w", err)
	}
	log.Info("dhcp lease", "interface", name, "lease", p.String())
	return nil
}

// waitCarrier returns once the named link reports carrier (IFF_LOWER_UP),
// watching the kernel's link notifications. The subscription lists the
// links first, so a carrier already there counts. Messages the library
// skips (one from a sender other than the kernel, an undecodable link)
// do not end the wait; a failed receive (the socket overflowed) ends the
// subscription, and a new one reads the state again.
func waitCarrier(ctx context.Context, name string) error {
	const subscriptions = 5
	var lastErr error
	for range subscriptions {
		err := watchCarrier(ctx, name)
		if err == nil || ctx.Err() != nil {
			return err
		}
		lastErr = err
	}
	return fmt.Errorf("watch link %s: %w", name, lastErr)
}

// watchCarrier is one subscription of waitCarrier.
func watchCarrier(ctx context.Context, name string) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	updates := make(chan netlink.LinkUpdate, 16)
	var mu sync.Mutex
	var lastErr error
	err := netlink.LinkSubscribeWithOptions(updates, ctx.Done(), netlink.LinkSubscribeOptions{
		ListExisting: true,
		ErrorCallback: func(err error) {
			mu.Lock()
			lastErr = err
			mu.Unlock()
		},
	})
	if err != nil {
		return err
	}
	for {
		select {
		case <-ctx.Done():
			return fmt.Errorf("no carrier on %s: %w", name, ctx.Err())
		case u, ok := <-updates:
			if !ok {
				if ctx.Err() != nil {
					return fmt.Errorf("no carrier on %s: %w", name, ctx.Err())
				}
				mu.Lock()
				defer mu.Unlock()
				return fmt.Errorf("subscription ended: %v", lastErr)
			}
			if u.Attrs().Name == name && u.IfInfomsg.Flags&unix.IFF_LOWER_UP != 0 {
				return nil
			}
		}
	}
}
