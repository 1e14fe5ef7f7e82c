package network_test

import (
	"context"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/ferrometal/ferro/internal/baremetal"
	"github.com/ferrometal/ferro/internal/dhcpopt"
	"github.com/ferrometal/ferro/internal/driver"
	"github.com/ferrometal/ferro/internal/driver/network"
	"github.com/ferrometal/ferro/internal/neutron"
)

// portsOnly is the part of Neutron the DHCP provider uses.
type portsOnly struct{ updated map[string][]dhcpopt.Option }

func (p *portsOnly) GetPort(_ context.Context, id string) (neutron.Port, error) {
	return neutron.Port{ID: id}, nil
}

func (p *portsOnly) UpdatePort(_ context.Context, id string, u neutron.PortUpdate) (neutron.Port, error) {
	p.updated[id] = u.ExtraDHCPOpts
	return neutron.Port{ID: id}, nil
}

// The provider finds the VIFs the flat and neutron interfaces recorded on
// the node's ports, and says which key it looked for when there are none.
func TestNeutronDHCP_UpdatesTheRecordedVIFs(t *testing.T) {
	ports := &portsOnly{updated: map[string][]dhcpopt.Option{}}
	d := network.NeutronDHCP{Provider: neutron.NewDHCPProvider(ports, 0)}
	opts := []dhcpopt.Option{{Name: "67", Value: "undionly.kpxe"}}
	task := &driver.Task{Node: &baremetal.Node{UUID: "node-1"}, Ports: []*baremetal.Port{
		{UUID: "p1", InternalInfo: baremetal.JSON{driver.InspectionVIFKey: "vif-1"}},
		{UUID: "p2", InternalInfo: baremetal.JSON{}},
	}}
	if err := d.UpdateDHCPOptions(context.Background(), task, opts); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(map[string][]dhcpopt.Option{"vif-1": opts}, ports.updated); diff != "" {
		t.Errorf("updates (-want +got):\n%s", diff)
	}
	task.Ports = task.Ports[1:]
	err := d.UpdateDHCPOptions(context.Background(), task, opts)
	if err == nil || !strings.Contains(err.Error(), "no port has a Neutron VIF (inspection_vif_port_id)") {
		t.Errorf("no VIF: %v", err)
	}
}
