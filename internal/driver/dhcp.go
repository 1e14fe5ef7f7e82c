package driver

import (
	"context"

	"github.com/ferrometal/ferro/internal/dhcpopt"
)

// DHCP is the DHCP provider ([dhcp]dhcp_provider): a boot interface calls
// it to point the node's ports at the boot files. "none" does nothing (the
// operator's DHCP server is set up by hand); "neutron" sets extra_dhcp_opts
// on the Neutron ports recorded in the ports' internal_info.
type DHCP interface {
	UpdateDHCPOptions(ctx context.Context, t *Task, opts []dhcpopt.Option) error
}

// NoDHCP is the "none" provider.
type NoDHCP struct{}

// UpdateDHCPOptions does nothing.
func (NoDHCP) UpdateDHCPOptions(context.Context, *Task, []dhcpopt.Option) error { return nil }

// Internal info keys shared by the network and boot interfaces.
const (
	// InspectionVIFKey holds the Neutron port id of a port's inspection VIF.
	InspectionVIFKey = "inspection_vif_port_id"
)
