// Package dhcpopt is the DHCP option a boot interface asks for on a node's
// ports, in the shape Neutron's extra_dhcp_opts carry it. It is a leaf, so
// that the boot interfaces, the DHCP providers and the Neutron client share
// it without the client depending on the drivers.
package dhcpopt

// Option is one DHCP option for a node's ports: opt_name "67",
// "tag:ipxe,67", "66", …, its value, and the IP version (0 means 4, as
// Neutron's default).
type Option struct {
	Name      string
	Value     string
	IPVersion int
}

// Version is o's IP version, 4 when unset.
func (o Option) Version() int {
	if o.IPVersion == 0 {
		return 4
	}
	return o.IPVersion
}
