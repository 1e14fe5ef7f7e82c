package neutron

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/netip"
	"time"

	"github.com/ferrometal/ferro/internal/dhcpopt"
)

// PortUpdater is what the DHCP provider needs from Neutron; *Client
// implements it.
type PortUpdater interface {
	GetPort(ctx context.Context, id string) (Port, error)
	UpdatePort(ctx context.Context, id string, u PortUpdate) (Port, error)
}

// DHCPProvider sets extra_dhcp_opts on a node's Neutron ports, as Ironic's
// neutron DHCP provider does with a node's current VIFs. It takes the
// VIFs, not a conductor task: driver/network finds them on the node's
// ports.
type DHCPProvider struct {
	ports PortUpdater
	delay time.Duration
}

// NewDHCPProvider returns the neutron DHCP provider. delay is
// [neutron]port_setup_delay: how long to wait after updating the ports so
// that Neutron's DHCP agent has the options before the node boots.
func NewDHCPProvider(ports PortUpdater, delay time.Duration) *DHCPProvider {
	return &DHCPProvider{ports: ports, delay: delay}
}

// VIF is the Neutron port a bare metal port is bound to.
type VIF struct {
	// Port is the bare metal port's UUID, for messages.
	Port string
	// ID is the Neutron port's id.
	ID string
}

// UpdateDHCPOptions sets opts on every VIF of node, keeping for each
// Neutron port only the options of the IP versions its fixed IPs have
// (IPv4 when it has none). It fails when no VIF could be updated; a
// partial failure is logged. It then waits port_setup_delay, or until ctx
// ends. log may be nil.
func (d *DHCPProvider) UpdateDHCPOptions(ctx context.Context, node string, vifs []VIF, opts []dhcpopt.Option, log *slog.Logger) error {
	if log == nil {
		log = discard
	}
	if len(vifs) == 0 {
		return fmt.Errorf("update DHCP options for node %s: no VIF", node)
	}
	var errs []error
	for _, v := range vifs {
		if err := d.updatePort(ctx, v.ID, opts); err != nil {
			log.Warn("cannot set DHCP options on neutron port", "port", v.Port, "vif", v.ID, "error", err)
			errs = append(errs, fmt.Errorf("port %s (vif %s): %w", v.Port, v.ID, err))
		}
	}
	if len(errs) == len(vifs) {
		return fmt.Errorf("update DHCP options for node %s: failed on every port: %w", node, errors.Join(errs...))
	}
	if len(errs) > 0 {
		log.Warn("DHCP options set on some ports only", "failed", len(errs), "of", len(vifs))
	}
	if d.delay > 0 {
		timer := time.NewTimer(d.delay)
		defer timer.Stop()
		select {
		case <-ctx.Done():
			return fmt.Errorf("update DHCP options for node %s: waiting port_setup_delay: %w", node, ctx.Err())
		case <-timer.C:
		}
	}
	return nil
}

func (d *DHCPProvider) updatePort(ctx context.Context, id string, opts []dhcpopt.Option) error {
	port, err := d.ports.GetPort(ctx, id)
	if err != nil {
		return err
	}
	keep := FilterDHCPOptions(opts, port)
	if len(keep) == 0 {
		return nil
	}
	_, err = d.ports.UpdatePort(ctx, id, PortUpdate{ExtraDHCPOpts: keep})
	return err
}

// FilterDHCPOptions returns the options whose IP version (4 when unset) one
// of the port's fixed IPs has. A port without addresses keeps the IPv4
// options: that is Neutron's default version for extra_dhcp_opts.
func FilterDHCPOptions(opts []dhcpopt.Option, p Port) []dhcpopt.Option {
	versions := map[int]bool{}
	for _, ip := range p.FixedIPs {
		if a, err := netip.ParseAddr(ip.IPAddress); err == nil {
			if a.Is4() || a.Is4In6() {
				versions[4] = true
			} else {
				versions[6] = true
			}
		}
	}
	if len(versions) == 0 {
		versions[4] = true
	}
	var out []dhcpopt.Option
	for _, o := range opts {
		if versions[o.Version()] {
			out = append(out, o)
		}
	}
	return out
}

var discard = slog.New(slog.NewTextHandler(io.Discard, nil))
