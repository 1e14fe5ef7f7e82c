// Package network holds the network interfaces: noop, flat and neutron.
package network

import (
	"context"

	"github.com/ferrometal/ferro/internal/driver"
)

// Noop is the noop network interface: inspection is managed and the
// operator provides DHCP on the node's current network.
type Noop struct{}

// Validate always passes.
func (Noop) Validate(context.Context, *driver.Task) error { return nil }

// ValidateInspection passes: nothing to set up.
func (Noop) ValidateInspection(context.Context, *driver.Task) error { return nil }

// AddInspectionNetwork does nothing.
func (Noop) AddInspectionNetwork(context.Context, *driver.Task) error { return nil }

// RemoveInspectionNetwork does nothing.
func (Noop) RemoveInspectionNetwork(context.Context, *driver.Task) error { return nil }
