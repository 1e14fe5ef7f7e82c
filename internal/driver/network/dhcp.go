package network

import (
	"context"
	"fmt"

	"github.com/ferrometal/ferro/internal/dhcpopt"
	"github.com/ferrometal/ferro/internal/driver"
	"github.com/ferrometal/ferro/internal/neutron"
)

// NeutronDHCP is the "neutron" DHCP provider ([dhcp]dhcp_provider): it sets
// extra_dhcp_opts on the Neutron port recorded in each of the node's
// ports' internal_info[inspection_vif_port_id], the VIFs the flat and
// neutron interfaces made.
type NeutronDHCP struct{ Provider *neutron.DHCPProvider }

var _ driver.DHCP = NeutronDHCP{}

// UpdateDHCPOptions sets opts on every inspection VIF of the node; it fails
// when the node has none (neutron.DHCPProvider.UpdateDHCPOptions).
func (d NeutronDHCP) UpdateDHCPOptions(ctx context.Context, t *driver.Task, opts []dhcpopt.Option) error {
	var vifs []neutron.VIF
	for _, p := range t.Ports {
		if id, _ := p.InternalInfo[driver.InspectionVIFKey].(string); id != "" {
			vifs = append(vifs, neutron.VIF{Port: p.UUID, ID: id})
		}
	}
	if len(vifs) == 0 {
		return fmt.Errorf("update DHCP options for node %s: no port has a Neutron VIF (%s)", t.Node.UUID, driver.InspectionVIFKey)
	}
	log := t.Log
	if log != nil {
		log = log.With("phase", "dhcp")
	}
	return d.Provider.UpdateDHCPOptions(ctx, t.Node.UUID, vifs, opts, log)
}
