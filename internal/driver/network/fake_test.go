package network_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/ferrometal/ferro/internal/driver/network"
	"github.com/ferrometal/ferro/internal/neutron"
)

// fakeNeutron is an in-memory network.NeutronClient with the semantics of
// the real client (404 on delete is fine, not found and ambiguous network
// names wrap driver.ErrInvalidParameter) and knobs to make calls fail.
type fakeNeutron struct {
	mu       sync.Mutex
	networks []neutron.Network
	sgs      map[string]bool
	ports    map[string]neutron.Port
	next     int

	lookups []string                      // FindNetwork arguments
	created []neutron.PortCreate          // CreatePort arguments
	updated map[string]neutron.PortUpdate // last update by port id
	deleted []string                      // ids given to DeletePort that existed

	findErr    error            // FindNetwork fails
	sgErr      error            // CheckSecurityGroups fails (beyond missing groups)
	createErr  error            // CreatePort fails
	updateErr  map[string]error // UpdatePort fails for this MAC
	deleteErr  map[string]error // DeletePort fails for this port id
	listErr    error            // ListPorts fails
	emptyIDOut bool             // CreatePort returns a port without id
}

var _ network.NeutronClient = (*fakeNeutron)(nil)

func newFake(nets ...neutron.Network) *fakeNeutron {
	return &fakeNeutron{networks: nets, sgs: map[string]bool{}, ports: map[string]neutron.Port{},
		updated: map[string]neutron.PortUpdate{}, updateErr: map[string]error{}, deleteErr: map[string]error{}}
}

func (f *fakeNeutron) FindNetwork(_ context.Context, nameOrID string) (neutron.Network, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.lookups = append(f.lookups, nameOrID)
	if f.findErr != nil {
		return neutron.Network{}, f.findErr
	}
	var byName []neutron.Network
	for _, n := range f.networks {
		if n.ID == nameOrID {
			return n, nil
		}
		if n.Name == nameOrID {
			byName = append(byName, n)
		}
	}
	switch len(byName) {
	case 0:
		return neutron.Network{}, fmt.Errorf("network %q: %w", nameOrID, neutron.ErrNotFound)
	case 1:
		return byName[0], nil
	}
	ids := make([]string, len(byName))
	for i, n := range byName {
		ids[i] = n.ID
	}
	return neutron.Network{}, &neutron.AmbiguousError{Name: nameOrID, IDs: ids}
}

func (f *fakeNeutron) CheckSecurityGroups(_ context.Context, ids []string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.sgErr != nil {
		return f.sgErr
	}
	for _, id := range ids {
		if !f.sgs[id] {
			return fmt.Errorf("could not find these security groups in neutron: %s: %w", id, neutron.ErrNotFound)
		}
	}
	return nil
}

func (f *fakeNeutron) CreatePort(_ context.Context, p neutron.PortCreate) (neutron.Port, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.createErr != nil {
		return neutron.Port{}, f.createErr
	}
	f.created = append(f.created, p)
	f.next++
	port := neutron.Port{
		ID: fmt.Sprintf("vif-%d", f.next), NetworkID: p.NetworkID, DeviceID: p.DeviceID,
		MACAddress: fmt.Sprintf("fa:16:3e:00:00:%02x", f.next), VNICType: p.VNICType,
		SecurityGroups: p.SecurityGroups,
	}
	f.ports[port.ID] = port
	if f.emptyIDOut {
		port.ID = ""
	}
	return port, nil
}

func (f *fakeNeutron) UpdatePort(_ context.Context, id string, u neutron.PortUpdate) (neutron.Port, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	port, ok := f.ports[id]
	if !ok {
		return neutron.Port{}, fmt.Errorf("port %s: %w", id, neutron.ErrNotFound)
	}
	if u.MACAddress != nil {
		if err := f.updateErr[*u.MACAddress]; err != nil {
			return neutron.Port{}, err
		}
		port.MACAddress = *u.MACAddress
	}
	if u.DeviceOwner != nil {
		port.DeviceOwner = *u.DeviceOwner
	}
	if u.HostID != nil {
		port.HostID = *u.HostID
	}
	if u.Profile != nil {
		port.Profile = u.Profile
	}
	f.ports[id] = port
	f.updated[id] = u
	return port, nil
}

func (f *fakeNeutron) ListPorts(_ context.Context, flt neutron.PortFilter) ([]neutron.Port, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.listErr != nil {
		return nil, f.listErr
	}
	if flt.NetworkID == "" && flt.DeviceID == "" {
		return nil, errors.New("unfiltered port list")
	}
	var out []neutron.Port
	for _, p := range f.ports {
		if (flt.NetworkID == "" || p.NetworkID == flt.NetworkID) &&
			(flt.MACAddress == "" || p.MACAddress == flt.MACAddress) &&
			(flt.DeviceID == "" || p.DeviceID == flt.DeviceID) {
			out = append(out, p)
		}
	}
	slices.SortFunc(out, func(a, b neutron.Port) int { return strings.Compare(a.ID, b.ID) })
	return out, nil
}

func (f *fakeNeutron) DeletePort(_ context.Context, id string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := f.deleteErr[id]; err != nil {
		return err
	}
	if _, ok := f.ports[id]; ok {
		delete(f.ports, id)
		f.deleted = append(f.deleted, id)
	}
	return nil // a missing port is a 404, which the real client ignores
}

// add puts a port into Neutron directly, as something left behind.
func (f *fakeNeutron) add(p neutron.Port) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.ports[p.ID] = p
}

func (f *fakeNeutron) portIDs() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	var ids []string
	for id := range f.ports {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	return ids
}
