package network

import (
	"context"
	"fmt"

	"github.com/ferrometal/ferro/internal/driver"
)

// Neutron is the neutron network interface: the switch ports are
// configured by Neutron's ML2 mechanism drivers from the binding profile,
// so every port needs local_link_connection, and the inspection ports get
// [neutron]inspection_network_security_groups.
type Neutron struct{ n inspectionNet }

var _ driver.Network = (*Neutron)(nil)

// NewNeutron returns the neutron interface. client may be nil when Neutron
// is not configured; Validate then fails.
func NewNeutron(client NeutronClient, o Options) *Neutron {
	n := &Neutron{n: inspectionNet{name: "neutron", o: o, strict: true}}
	n.n.client = nilIfTypedNil(client)
	return n
}

// Validate checks that Neutron is configured.
func (n *Neutron) Validate(context.Context, *driver.Task) error {
	if n.n.client == nil {
		return fmt.Errorf("%w: the neutron network interface needs [neutron]url or [neutron]auth_url", driver.ErrMissingParameter)
	}
	return nil
}

// ValidateInspection resolves the inspection network: unset is
// ErrUnsupported (fall back), not found or ambiguous wraps
// driver.ErrInvalidParameter.
func (n *Neutron) ValidateInspection(ctx context.Context, t *driver.Task) error {
	return n.n.validateInspection(ctx, t)
}

// AddInspectionNetwork deletes stale ports, checks the security groups,
// then creates and binds one Neutron port per PXE-enabled port (every port
// with [neutron]add_all_ports) that has a local_link_connection, and
// records its id in internal_info[inspection_vif_port_id]. Some ports
// failing is a warning; all failing rolls back and is an error.
func (n *Neutron) AddInspectionNetwork(ctx context.Context, t *driver.Task) error {
	return n.n.addInspectionNetwork(ctx, t)
}

// RemoveInspectionNetwork deletes the node's ports on the inspection
// network and the recorded ones, and clears the records; idempotent.
func (n *Neutron) RemoveInspectionNetwork(ctx context.Context, t *driver.Task) error {
	return n.n.removeInspectionNetwork(ctx, t)
}
