package network

import (
	"context"

	"github.com/ferrometal/ferro/internal/driver"
)

// Flat is the flat network interface: the node's ports stay on one flat
// network, and for inspection Neutron ports are made for them on the
// inspection network so that Neutron's DHCP answers them. Unlike neutron it
// needs no local_link_connection and applies no security groups.
type Flat struct{ n inspectionNet }

var _ driver.Network = (*Flat)(nil)

// NewFlat returns the flat interface. client may be nil when Neutron is not
// configured; then inspection falls back unless an inspection network is
// set, which is a validation error.
func NewFlat(client NeutronClient, o Options) *Flat {
	f := &Flat{n: inspectionNet{name: "flat", o: o}}
	f.n.client = nilIfTypedNil(client)
	return f
}

// Validate passes: a flat network needs nothing outside inspection.
func (f *Flat) Validate(context.Context, *driver.Task) error { return nil }

// ValidateInspection resolves the inspection network: unset is
// ErrUnsupported (fall back), not found or ambiguous wraps
// driver.ErrInvalidParameter.
func (f *Flat) ValidateInspection(ctx context.Context, t *driver.Task) error {
	return f.n.validateInspection(ctx, t)
}

// AddInspectionNetwork deletes stale ports, then creates and binds one
// Neutron port per PXE-enabled port (every port with [neutron]add_all_ports)
// and records its id in internal_info[inspection_vif_port_id].
func (f *Flat) AddInspectionNetwork(ctx context.Context, t *driver.Task) error {
	return f.n.addInspectionNetwork(ctx, t)
}

// RemoveInspectionNetwork deletes the node's ports on the inspection
// network and the recorded ones, and clears the records; idempotent.
func (f *Flat) RemoveInspectionNetwork(ctx context.Context, t *driver.Task) error {
	return f.n.removeInspectionNetwork(ctx, t)
}
