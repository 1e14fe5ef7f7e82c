package network

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"slices"

	"github.com/ferrometal/ferro/internal/baremetal"
	"github.com/ferrometal/ferro/internal/dhcpopt"
	"github.com/ferrometal/ferro/internal/driver"
	"github.com/ferrometal/ferro/internal/neutron"
)

// NeutronClient is what the flat and neutron interfaces need from Neutron.
// *neutron.Client implements it.
type NeutronClient interface {
	FindNetwork(ctx context.Context, nameOrID string) (neutron.Network, error)
	CheckSecurityGroups(ctx context.Context, ids []string) error
	CreatePort(ctx context.Context, p neutron.PortCreate) (neutron.Port, error)
	UpdatePort(ctx context.Context, id string, u neutron.PortUpdate) (neutron.Port, error)
	ListPorts(ctx context.Context, f neutron.PortFilter) ([]neutron.Port, error)
	DeletePort(ctx context.Context, id string) error
}

// nilIfTypedNil turns a nil *neutron.Client into a nil interface, so that
// main can pass the result of a failed neutron.New as "not configured".
func nilIfTypedNil(c NeutronClient) NeutronClient {
	if nc, ok := c.(*neutron.Client); ok && nc == nil {
		return nil
	}
	return c
}

// Neutron port attributes Ironic sets on service-network ports.
const (
	deviceOwner   = "baremetal:none"
	vnicBaremetal = "baremetal"
	vnicSmartNIC  = "smart-nic"
	// dhcpClientID is DHCP option 61, set for InfiniBand ports (extra["client-id"]).
	dhcpClientID = "61"
)

// Options configure the flat and neutron interfaces ([neutron]).
type Options struct {
	// InspectionNetwork is [neutron]inspection_network: the network of a
	// node whose driver_info[inspection_network] names none.
	InspectionNetwork string
	// SecurityGroups is [neutron]inspection_network_security_groups, put
	// on the inspection ports by the neutron interface.
	SecurityGroups []string
	// AddAllPorts is [neutron]add_all_ports: every port gets an inspection
	// port, not only the PXE-enabled ones.
	AddAllPorts bool
}

// inspectionNet is the part flat and neutron share (Ironic's
// NeutronNetworkInterfaceMixin and common/neutron.py): find the inspection
// network, put the node's ports on it, take them off again.
type inspectionNet struct {
	name   string // "flat" or "neutron", for messages
	client NeutronClient
	o      Options
	// strict is the neutron interface: ports need local_link_connection and
	// get the inspection security groups.
	strict bool
}

// networkName returns driver_info[inspection_network], else
// [neutron]inspection_network; unset is ErrUnsupported (fall back).
func (n *inspectionNet) networkName(t *driver.Task) (string, error) {
	if v, ok := t.Node.DriverInfo["inspection_network"]; ok && v != nil {
		s, isString := v.(string)
		if !isString {
			return "", fmt.Errorf("%w: driver_info[inspection_network] must be a network name or UUID, not %T",
				driver.ErrInvalidParameter, v)
		}
		if s != "" {
			return s, nil
		}
	}
	if n.o.InspectionNetwork != "" {
		return n.o.InspectionNetwork, nil
	}
	return "", fmt.Errorf("%w: %s network interface: no inspection network in driver_info[inspection_network] or [neutron]inspection_network",
		driver.ErrUnsupported, n.name)
}

// network resolves the inspection network through Neutron.
func (n *inspectionNet) network(ctx context.Context, t *driver.Task) (neutron.Network, error) {
	name, err := n.networkName(t)
	if err != nil {
		return neutron.Network{}, err
	}
	if n.client == nil {
		return neutron.Network{}, fmt.Errorf("%w: %s network interface: inspection network %q is set but Neutron is not configured ([neutron]url or auth_url)",
			driver.ErrInvalidParameter, n.name, name)
	}
	net, err := n.client.FindNetwork(ctx, name)
	if _, ambiguous := errors.AsType[*neutron.AmbiguousError](err); ambiguous || errors.Is(err, neutron.ErrNotFound) {
		// The node or the configuration names a network Neutron cannot
		// resolve: a validation error, not Neutron failing.
		err = fmt.Errorf("%w: %w", driver.ErrInvalidParameter, err)
	}
	if err != nil {
		return neutron.Network{}, fmt.Errorf("inspection network %q: %w", name, err)
	}
	return net, nil
}

func (n *inspectionNet) validateInspection(ctx context.Context, t *driver.Task) error {
	_, err := n.network(ctx, t)
	return err
}

// candidates are the ports that get a Neutron port: the PXE-enabled ones,
// or all with [neutron]add_all_ports.
func (n *inspectionNet) candidates(t *driver.Task) []*baremetal.Port {
	if n.o.AddAllPorts {
		return t.Ports
	}
	return t.PXEPorts()
}

func deviceID(node *baremetal.Node) string {
	if node.InstanceUUID != "" {
		return node.InstanceUUID
	}
	return node.UUID
}

func clientID(p *baremetal.Port) string {
	s, _ := p.Extra["client-id"].(string)
	return s
}

func (n *inspectionNet) addInspectionNetwork(ctx context.Context, t *driver.Task) error {
	log := taskLog(t)
	net, err := n.network(ctx, t)
	if err != nil {
		return fmt.Errorf("add inspection network for node %s: %w", t.Node.UUID, err)
	}
	// Ports left behind by an earlier attempt would make the MACs clash.
	if _, err := n.deleteStale(ctx, t, net.ID); err != nil {
		log.Warn("cannot remove stale inspection ports; continuing", "network", net.ID, "error", err)
	}
	var sgs []string
	if n.strict {
		sgs = n.o.SecurityGroups
		if err := n.client.CheckSecurityGroups(ctx, sgs); err != nil {
			return fmt.Errorf("add inspection network for node %s: %w", t.Node.UUID, err)
		}
	}
	cands := n.candidates(t)
	if len(cands) == 0 {
		what := "PXE-enabled ports"
		if n.o.AddAllPorts {
			what = "ports"
		}
		return fmt.Errorf("add inspection network for node %s: the node has no %s", t.Node.UUID, what)
	}
	var failures []error
	created := 0
	for _, p := range cands {
		if n.strict && len(p.LocalLinkConnection) == 0 && clientID(p) == "" {
			log.Warn("port has no local_link_connection; the neutron network interface skips it",
				"port", p.UUID, "address", p.Address)
			failures = append(failures, fmt.Errorf("port %s (%s): no local_link_connection", p.UUID, p.Address))
			continue
		}
		if err := n.addPort(ctx, t, net, p, sgs); err != nil {
			log.Warn("cannot create inspection port", "port", p.UUID, "address", p.Address, "network", net.ID, "error", err)
			failures = append(failures, fmt.Errorf("port %s (%s): %w", p.UUID, p.Address, err))
			continue
		}
		created++
	}
	if created == 0 {
		if err := n.removePorts(ctx, t, net.ID); err != nil {
			log.Warn("cannot roll back inspection ports", "network", net.ID, "error", err)
		}
		return fmt.Errorf("add inspection network for node %s: no port could be put on network %s: %w",
			t.Node.UUID, net.ID, errors.Join(failures...))
	}
	if len(failures) > 0 {
		log.Warn("some ports are not on the inspection network", "network", net.ID,
			"created", created, "failed", len(failures), "errors", errors.Join(failures...).Error())
	} else {
		log.Info("ports added to the inspection network", "network", net.ID, "created", created)
	}
	return nil
}

// addPort creates and binds the Neutron port for p, as Ironic does in two
// steps (the second with admin-only fields), and records its id.
func (n *inspectionNet) addPort(ctx context.Context, t *driver.Task, net neutron.Network, p *baremetal.Port, sgs []string) error {
	create := neutron.PortCreate{
		NetworkID:      net.ID,
		DeviceID:       deviceID(t.Node),
		VNICType:       vnicBaremetal,
		AdminStateUp:   true,
		SecurityGroups: sgs,
		NoFixedIPs:     !p.PXEEnabled,
	}
	hostID := t.Node.UUID
	llc := baremetal.JSON{}
	for k, v := range p.LocalLinkConnection {
		llc[k] = v
	}
	if p.IsSmartNIC {
		create.VNICType = vnicSmartNIC
		if h, _ := llc["hostname"].(string); h != "" {
			hostID = h
		}
	}
	if id := clientID(p); id != "" {
		create.ExtraDHCPOpts = []dhcpopt.Option{{Name: dhcpClientID, Value: id, IPVersion: 4}}
	}
	profile := map[string]any{"local_link_information": []any{llc}}
	for _, k := range []string{"vtep-logical-switch", "vtep-physical-switch"} {
		if v, ok := llc[k]; ok {
			profile[vtepKey(k)] = v
		}
	}
	owner, mac := deviceOwner, p.Address
	port, err := n.client.CreatePort(ctx, create)
	if err != nil {
		return err
	}
	if port.ID == "" {
		return errors.New("neutron created a port without an id")
	}
	_, err = n.client.UpdatePort(ctx, port.ID, neutron.PortUpdate{
		DeviceOwner: &owner, HostID: &hostID, MACAddress: &mac, Profile: profile,
	})
	if err == nil {
		old, had := p.InternalInfo[driver.InspectionVIFKey]
		if p.InternalInfo == nil {
			p.InternalInfo = baremetal.JSON{}
		}
		p.InternalInfo[driver.InspectionVIFKey] = port.ID
		if err = t.SavePort(ctx, p); err != nil {
			if had {
				p.InternalInfo[driver.InspectionVIFKey] = old
			} else {
				delete(p.InternalInfo, driver.InspectionVIFKey)
			}
			err = fmt.Errorf("record neutron port %s: %w", port.ID, err)
		}
	}
	if err != nil {
		if derr := n.client.DeletePort(ctx, port.ID); derr != nil {
			err = fmt.Errorf("%w (and deleting the half-made neutron port %s: %v)", err, port.ID, derr)
		}
		return err
	}
	return nil
}

// vtepKey is the binding:profile name of an OVN VTEP field
// (vtep-logical-switch → vtep_logical_switch).
func vtepKey(k string) string {
	b := []byte(k)
	for i := range b {
		if b[i] == '-' {
			b[i] = '_'
		}
	}
	return string(b)
}

// staleFilters select the node's ports on the network: by each of its MACs
// (what Ironic does) and by device_id, which also finds a port whose
// creation succeeded but whose update (setting the MAC) did not.
func staleFilters(t *driver.Task, networkID string) []neutron.PortFilter {
	fs := []neutron.PortFilter{{NetworkID: networkID, DeviceID: deviceID(t.Node)}}
	seen := map[string]bool{}
	for _, p := range t.Ports {
		if p.Address != "" && !seen[p.Address] {
			seen[p.Address] = true
			fs = append(fs, neutron.PortFilter{NetworkID: networkID, MACAddress: p.Address})
		}
	}
	return fs
}

// deleteStale deletes the node's Neutron ports on the network. Every
// filter and port is tried; the errors are joined. It returns the ids it
// deleted.
func (n *inspectionNet) deleteStale(ctx context.Context, t *driver.Task, networkID string) (map[string]bool, error) {
	var errs []error
	done := map[string]bool{}
	for _, f := range staleFilters(t, networkID) {
		ports, err := n.client.ListPorts(ctx, f)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		for _, p := range ports {
			if done[p.ID] {
				continue
			}
			if err := n.client.DeletePort(ctx, p.ID); err != nil {
				errs = append(errs, err)
				continue
			}
			done[p.ID] = true
		}
	}
	return done, errors.Join(errs...)
}

// removePorts deletes the node's ports on the network and the recorded
// VIFs, then clears the records of the VIFs that are gone.
func (n *inspectionNet) removePorts(ctx context.Context, t *driver.Task, networkID string) error {
	var errs []error
	deleted := map[string]bool{}
	if networkID != "" {
		var err error
		if deleted, err = n.deleteStale(ctx, t, networkID); err != nil {
			errs = append(errs, err)
		}
	}
	for _, p := range t.Ports {
		v, ok := p.InternalInfo[driver.InspectionVIFKey]
		if !ok {
			continue
		}
		// A recorded port not found on the network (moved, or the network
		// is gone) is deleted by id; a 404 means it is gone already.
		if id, _ := v.(string); id != "" && !deleted[id] {
			if err := n.client.DeletePort(ctx, id); err != nil {
				errs = append(errs, err)
				continue
			}
		}
		delete(p.InternalInfo, driver.InspectionVIFKey)
		if err := t.SavePort(ctx, p); err != nil {
			errs = append(errs, fmt.Errorf("port %s: clear %s: %w", p.UUID, driver.InspectionVIFKey, err))
		}
	}
	return errors.Join(errs...)
}

func (n *inspectionNet) removeInspectionNetwork(ctx context.Context, t *driver.Task) error {
	networkID := ""
	net, err := n.network(ctx, t)
	switch {
	case err == nil:
		networkID = net.ID
	case errors.Is(err, driver.ErrUnsupported) && !hasVIF(t):
		return nil // never had an inspection network
	default:
		// The network is gone or unset now; the recorded VIFs still go.
		taskLog(t).Warn("cannot resolve the inspection network; deleting the recorded ports only", "error", err)
	}
	if n.client == nil {
		return fmt.Errorf("remove inspection network for node %s: Neutron is not configured", t.Node.UUID)
	}
	if err := n.removePorts(ctx, t, networkID); err != nil {
		return fmt.Errorf("remove inspection network for node %s: %w", t.Node.UUID, err)
	}
	return nil
}

func hasVIF(t *driver.Task) bool {
	return slices.ContainsFunc(t.Ports, func(p *baremetal.Port) bool {
		_, ok := p.InternalInfo[driver.InspectionVIFKey]
		return ok
	})
}

var discard = slog.New(slog.NewTextHandler(io.Discard, nil))

func taskLog(t *driver.Task) *slog.Logger {
	if t.Log != nil {
		return t.Log.With("phase", "network")
	}
	return discard
}
