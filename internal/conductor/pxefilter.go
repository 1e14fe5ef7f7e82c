package conductor

import (
	"context"
	"time"

	"github.com/ferrometal/ferro/internal/pxefilter"
	"github.com/ferrometal/ferro/internal/states"
	"github.com/ferrometal/ferro/internal/store"
)

// PXEFilter is [pxe_filter]: the dhcp-hostsdir of an external dnsmasq
// that serves unmanaged inspection and discovery (Ironic's
// ironic-pxe-filter service, here a periodic task of every conductor).
type PXEFilter struct {
	// Dir is dhcp_hostsdir; "" syncs nothing.
	Dir string
	// SupportedInspectInterfaces are the interfaces of the nodes whose
	// ports are allowed while they are inspected.
	SupportedInspectInterfaces []string
	// Period is sync_period.
	Period time.Duration
}

// SyncPXEFilter writes the filter's decision for the nodes and ports as
// they are now (pxefilter.Decide, pxefilter.Sync). Failures are logged
// and the next period tries again, as Ironic's.
func (c *Conductor) SyncPXEFilter(ctx context.Context) {
	f := c.o.PXEFilter
	if f.Dir == "" {
		return
	}
	start := c.now()
	nodes, err := c.store.ListNodes(ctx, store.NodeFilter{ProvisionState: []string{states.Inspecting, states.InspectWait}})
	if err != nil {
		c.log.Error("PXE filter sync failed, will retry", "error", err)
		return
	}
	ports, err := c.store.ListPorts(ctx, store.PortFilter{})
	if err != nil {
		c.log.Error("PXE filter sync failed, will retry", "error", err)
		return
	}
	pn := make([]pxefilter.Node, len(nodes))
	for i, n := range nodes {
		pn[i] = pxefilter.Node{UUID: n.UUID, ProvisionState: n.ProvisionState, InspectInterface: n.Interface("inspect")}
	}
	pp := make([]pxefilter.Port, len(ports))
	for i, p := range ports {
		pp[i] = pxefilter.Port{Address: p.Address, NodeUUID: p.NodeUUID}
	}
	d := pxefilter.Decide(pn, pp, f.SupportedInspectInterfaces, c.o.Discovery.Enabled)
	written, err := pxefilter.Sync(f.Dir, d)
	if err != nil {
		c.log.Error("PXE filter sync failed, will retry", "error", err)
		return
	}
	c.log.Debug("PXE filter synced", "allowed", len(d.Allow), "denied", len(d.Deny), "unknown_allowed", d.AllowUnknown,
		"files_written", written, "took", c.now().Sub(start))
}
