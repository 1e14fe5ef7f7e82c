package neutron

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/netip"
	"time"

	"github.com/ferrometal/ferro/internal/driver"
)

// PortUpdater is what the DHCP provider needs from Neutron; *Client
// implements it.
type PortUpdater interface {
	GetPort(ctx context.Context, id string) (Port, error)
	UpdatePort(ctx context.Context, id string, u PortUpdate) (Port, error)
}

// DHCPProvider is the "neutron" DHCP provider ([dhcp]dhcp_provider): it
// sets extra_dhcp_opts on the Neutron port recorded in each of the node's
// ports' internal_info[inspection_vif_port_id], as Ironic's neutron DHCP
// provider does with a node's current VIFs.
type DHCPProvider struct {
	ports PortUpdater
	delay time.Duration
}

var _ driver.DHCP = (*DHCPProvider)(nil)

// NewDHCPProvider returns the neutron DHCP provider. delay is
// [neutron]port_setup_delay: how long to wait after updating the ports so
// that Neutron's DHCP agent has the options before the node boots.
func NewDHCPProvider(ports PortUpdater, delay time.Duration) *DHCPProvider {
	return &DHCPProvider{ports: ports, delay: delay}
}

// UpdateDHCPOptions sets opts on every inspection VIF of the node, keeping
// for each Neutron port only the options of the IP versions its fixed IPs
// have (IPv4 when it has none). It fails when the node has no VIF or when
// no VIF could be updated; a partial failure is logged. It then waits
// port_setup_delay, or until ctx ends.
func (d *DHCPProvider) UpdateDHCPOptions(ctx context.Context, t *driver.Task, opts []driver.DHCPOption) error {
	type vif struct{ port, id string }
	var vifs []vif
	for _, p := range t.Ports {
		if id, _ := p.InternalInfo[driver.InspectionVIFKey].(string); id != "" {
			vifs = append(vifs, vif{p.UUID, id})
		}
	}
	if len(vifs) == 0 {
		return fmt.Errorf("update DHCP options for node %s: no port has a Neutron VIF (%s)", t.Node.UUID, driver.InspectionVIFKey)
	}
	log := taskLog(t)
	var errs []error
	for _, v := range vifs {
		if err := d.updatePort(ctx, v.id, opts); err != nil {
			log.Warn("cannot set DHCP options on neutron port", "port", v.port, "vif", v.id, "error", err)
			errs = append(errs, fmt.Errorf("port %s (vif %s): %w", v.port, v.id, err))
		}
	}
	if len(errs) == len(vifs) {
		return fmt.Errorf("update DHCP options for node %s: failed on every port: %w", t.Node.UUID, errors.Join(errs...))
	}
	if len(errs) > 0 {
		log.Warn("DHCP options set on some ports only", "failed", len(errs), "of", len(vifs))
	}
	if d.delay > 0 {
		timer := time.NewTimer(d.delay)
		defer timer.Stop()
		select {
		case <-ctx.Done():
			return fmt.Errorf("update DHCP options for node %s: waiting port_setup_delay: %w", t.Node.UUID, ctx.Err())
		case <-timer.C:
		}
	}
	return nil
}

func (d *DHCPProvider) updatePort(ctx context.Context, id string, opts []driver.DHCPOption) error {
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
func FilterDHCPOptions(opts []driver.DHCPOption, p Port) []driver.DHCPOption {
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
	var out []driver.DHCPOption
	for _, o := range opts {
		if versions[ipVersion(o)] {
			out = append(out, o)
		}
	}
	return out
}

var discard = slog.New(slog.NewTextHandler(io.Discard, nil))

func taskLog(t *driver.Task) *slog.Logger {
	if t.Log != nil {
		return t.Log.With("phase", "dhcp")
	}
	return discard
}
