package agent

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
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

// ConfigureNetwork brings loopback and every physical NIC up (LLDP and
// carrier detection need them up) and runs DHCP on the chosen ones with
// u-root's dhclient. It fails when no chosen NIC got a lease.
func ConfigureNetwork(ctx context.Context, log *slog.Logger, names []string, o NetworkOptions) error {
	if lo, err := netlink.LinkByName("lo"); err == nil {
		_ = netlink.LinkSetUp(lo)
	}
	var all, chosen []netlink.Link
	for _, n := range names {
		l, err := netlink.LinkByName(n)
		if err != nil {
			return fmt.Errorf("network: %w", err)
		}
		if err := netlink.LinkSetUp(l); err != nil {
			return fmt.Errorf("network: bring %s up: %w", n, err)
		}
		all = append(all, l)
		if o.BootMAC != nil && bytes.Equal(l.Attrs().HardwareAddr, o.BootMAC) {
			chosen = append(chosen, l)
		}
	}
	if len(all) == 0 {
		return errors.New("network: no network interface found")
	}
	if o.All || len(chosen) == 0 {
		if o.BootMAC != nil && !o.All {
			log.Warn("no NIC has the BOOTIF MAC, trying all", "bootif", o.BootMAC.String())
		}
		chosen = all
	}
	// As a service in a ramdisk that configured its network already, keep
	// what is there.
	var unconfigured []netlink.Link
	for _, l := range chosen {
		if v4, _ := SystemAddrs(l.Attrs().Name); v4 == "" {
			unconfigured = append(unconfigured, l)
		} else {
			log.Info("interface already has an address, no DHCP", "interface", l.Attrs().Name, "address", v4)
			if !o.All {
				return nil
			}
		}
	}
	if len(unconfigured) == 0 {
		return nil
	}
	chosen = unconfigured
	timeout := o.Timeout
	if timeout <= 0 {
		timeout = DefaultDHCPTimeout
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	type result struct {
		name string
		err  error
	}
	results := make(chan result, len(chosen))
	for _, l := range chosen {
		go func() {
			results <- result{l.Attrs().Name, lease(ctx, log, l, timeout)}
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
		if !o.All {
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
// watching the kernel's link notifications.
func waitCarrier(ctx context.Context, name string) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	updates := make(chan netlink.LinkUpdate, 16)
	errc := make(chan error, 1)
	err := netlink.LinkSubscribeWithOptions(updates, ctx.Done(), netlink.LinkSubscribeOptions{
		ListExisting: true,
		ErrorCallback: func(err error) {
			select {
			case errc <- err:
			default:
			}
		},
	})
	if err != nil {
		return fmt.Errorf("watch link %s: %w", name, err)
	}
	for {
		select {
		case <-ctx.Done():
			return fmt.Errorf("no carrier on %s: %w", name, ctx.Err())
		case err := <-errc:
			return fmt.Errorf("watch link %s: %w", name, err)
		case u, ok := <-updates:
			if !ok {
				return fmt.Errorf("watch link %s: closed", name)
			}
			if u.Attrs().Name == name && u.IfInfomsg.Flags&unix.IFF_LOWER_UP != 0 {
				return nil
			}
		}
	}
}
