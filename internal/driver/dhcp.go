package driver

import "context"

// DHCPOption is one DHCP option for a node's ports, as Neutron's
// extra_dhcp_opts carry them (opt_name "67", "tag:ipxe,67", "66", …).
type DHCPOption struct {
	Name      string
	Value     string
	IPVersion int
}

// DHCP is the DHCP provider ([dhcp]dhcp_provider): a boot interface calls
// it to point the node's ports at the boot files. "none" does nothing (the
// operator's DHCP server is set up by hand); "neutron" sets extra_dhcp_opts
// on the Neutron ports recorded in the ports' internal_info.
type DHCP interface {
	UpdateDHCPOptions(ctx context.Context, t *Task, opts []DHCPOption) error
}

// NoDHCP is the "none" provider.
type NoDHCP struct{}

// UpdateDHCPOptions does nothing.
func (NoDHCP) UpdateDHCPOptions(context.Context, *Task, []DHCPOption) error { return nil }

// Internal info keys shared by the network and boot interfaces.
const (
	// InspectionVIFKey holds the Neutron port id of a port's inspection VIF.
	InspectionVIFKey = "inspection_vif_port_id"
)
