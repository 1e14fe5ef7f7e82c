package agent

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"time"

	"github.com/u-root/u-root/pkg/dhclient"
	"github.com/vishvananda/netlink"
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
	cfg := dhclient.Config{Timeout: 4 * time.Second, Retries: int(timeout / (4 * time.Second))}
	var errs []error
	got := 0
	for r := range dhclient.SendRequests(ctx, chosen, true, false, cfg, timeout) {
		name := r.Interface.Attrs().Name
		if r.Err != nil {
			errs = append(errs, fmt.Errorf("dhcp on %s: %w", name, r.Err))
			continue
		}
		if err := r.Lease.Configure(); err != nil {
			errs = append(errs, fmt.Errorf("dhcp on %s: configure: %w", name, err))
			continue
		}
		got++
		log.Info("dhcp lease", "interface", name, "lease", r.Lease.String())
		if !o.All {
			break // one lease on the boot NIC is what the callback needs
		}
	}
	if got == 0 {
		return fmt.Errorf("network: no DHCP lease: %w", errors.Join(errs...))
	}
	return nil
}
