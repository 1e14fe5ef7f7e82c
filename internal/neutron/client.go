// Package neutron is ferro's client for the OpenStack Networking API
// (Neutron v2.0), built on gophercloud's networking/v2 packages. It has the
// few calls the flat and neutron network interfaces need, and the neutron
// DHCP provider.
package neutron

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/google/uuid"
	"github.com/gophercloud/gophercloud/v2"
	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/extensions/extradhcpopts"
	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/extensions/portsbinding"
	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/extensions/security/groups"
	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/networks"
	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/ports"

	"github.com/ferrometal/ferro/internal/dhcpopt"
	ferrostack "github.com/ferrometal/ferro/internal/openstack"
)

// ErrNotFound is returned (wrapped) when Neutron has no such resource.
var ErrNotFound = errors.New("not found in neutron")

// ErrOptions is returned (wrapped) by New for options that cannot work.
var ErrOptions = errors.New("invalid [neutron] options")

// AmbiguousError is FindNetwork's answer for a name several networks share.
type AmbiguousError struct {
	Name string
	IDs  []string
}

func (e *AmbiguousError) Error() string {
	return fmt.Sprintf("network name %q is ambiguous: %d networks (%s); use the UUID", e.Name, len(e.IDs), strings.Join(e.IDs, ", "))
}

// Backoff bounds for retried requests: the first retry waits minBackoff,
// each further one twice as long, never more than maxBackoff.
const (
	minBackoff = 500 * time.Millisecond
	maxBackoff = 5 * time.Second
)

// Network is the part of a Neutron network ferro uses.
type Network struct {
	ID              string   `json:"id"`
	Name            string   `json:"name"`
	Subnets         []string `json:"subnets"`
	NetworkType     string   `json:"provider:network_type"`
	PhysicalNetwork string   `json:"provider:physical_network"`
}

// FixedIP is one address of a port.
type FixedIP struct {
	SubnetID  string `json:"subnet_id"`
	IPAddress string `json:"ip_address"`
}

// Port is the part of a Neutron port ferro uses.
type Port struct {
	ID             string         `json:"id"`
	NetworkID      string         `json:"network_id"`
	MACAddress     string         `json:"mac_address"`
	DeviceID       string         `json:"device_id"`
	DeviceOwner    string         `json:"device_owner"`
	Status         string         `json:"status"`
	FixedIPs       []FixedIP      `json:"fixed_ips"`
	SecurityGroups []string       `json:"security_groups"`
	HostID         string         `json:"binding:host_id"`
	VNICType       string         `json:"binding:vnic_type"`
	VIFType        string         `json:"binding:vif_type"`
	Profile        map[string]any `json:"binding:profile"`
	ExtraDHCPOpts  []DHCPOpt      `json:"extra_dhcp_opts"`
}

// DHCPOpt is one of a port's extra_dhcp_opts as Neutron returns it.
type DHCPOpt struct {
	Name      string `json:"opt_name"`
	Value     string `json:"opt_value"`
	IPVersion int    `json:"ip_version"`
}

// PortCreate is the body of a port creation: the fields any project may set.
type PortCreate struct {
	NetworkID string
	DeviceID  string
	// VNICType is binding:vnic_type ("baremetal", "smart-nic").
	VNICType       string
	AdminStateUp   bool
	SecurityGroups []string
	// NoFixedIPs creates the port without an address (fixed_ips: []).
	NoFixedIPs    bool
	ExtraDHCPOpts []dhcpopt.Option
}

// PortUpdate changes a port; nil or empty fields are left alone. The
// binding fields, device_owner and mac_address are admin-only.
type PortUpdate struct {
	DeviceOwner   *string
	HostID        *string
	MACAddress    *string
	Profile       map[string]any
	ExtraDHCPOpts []dhcpopt.Option
}

// PortFilter selects ports; empty fields do not filter. A filter with
// neither NetworkID nor DeviceID would list every port and is refused.
type PortFilter struct {
	NetworkID  string
	MACAddress string
	DeviceID   string
}

// Options configure a Client ([neutron]).
type Options struct {
	// URL is Neutron's endpoint ([neutron]url); empty means the Keystone
	// service catalog.
	URL string
	// Auth is how requests authenticate ([neutron]auth_type and the
	// options that go with it); its Section, Endpoint and ServiceType are
	// set here.
	Auth ferrostack.Options
	// Retries is how often a request failing with a connection error, a
	// 5xx or a 409 is sent again ([neutron]retries).
	Retries int
	// Timeout bounds each request ([neutron]timeout); 0 means none.
	Timeout time.Duration
	// Log may be nil.
	Log *slog.Logger
}

// Client calls Neutron. It is safe for concurrent use. With Keystone auth
// it authenticates on first use, so ferro starts while Keystone is down.
type Client struct {
	o       Options
	log     *slog.Logger
	backoff time.Duration // first retry delay; tests shorten it

	mu sync.Mutex
	sc *gophercloud.ServiceClient // nil until the first successful setup
}

// New returns a client for o: endpoint [neutron]url, and no auth
// (auth_type none or noauth, the default) or Keystone (password or token,
// needing auth_url). Requests time out after o.Timeout each and are
// retried o.Retries times on connection errors, 5xx and 409.
func New(o Options) (*Client, error) {
	log := o.Log
	if log == nil {
		log = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	switch o.Auth.AuthType {
	case "", "none", "noauth", "http_basic":
		if o.URL == "" {
			return nil, fmt.Errorf("%w: [neutron]url is required with auth_type %q", ErrOptions, o.Auth.AuthType)
		}
	case "password", "v3password", "token", "v3token":
		if o.Auth.AuthURL == "" {
			return nil, fmt.Errorf("%w: [neutron]auth_url is required with auth_type %q", ErrOptions, o.Auth.AuthType)
		}
	default:
		return nil, fmt.Errorf("%w: [neutron]auth_type %q", ErrOptions, o.Auth.AuthType)
	}
	o.Retries = max(o.Retries, 0)
	o.Timeout = max(o.Timeout, 0) // 0: no timeout
	return &Client{o: o, log: log, backoff: minBackoff}, nil
}

// service returns the gophercloud service client, authenticating first if needed.
func (c *Client) service(ctx context.Context) (*gophercloud.ServiceClient, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.sc != nil {
		return c.sc, nil
	}
	a := c.o.Auth
	a.Section, a.Endpoint, a.ServiceType = "[neutron]", c.o.URL, "network"
	a.Timeout, a.RetryFunc = c.o.Timeout, c.retry
	sc, err := ferrostack.New(ctx, a)
	if err != nil {
		return nil, fmt.Errorf("neutron: %w", err)
	}
	// Neutron's resources are under v2.0/ of its root.
	base := sc.Endpoint + "v2.0/"
	if strings.HasSuffix(sc.Endpoint, "/v2.0/") {
		base = sc.Endpoint
	}
	sc.ResourceBase = base
	c.sc = sc
	return sc, nil
}

// retry is gophercloud's RetryFunc: nil means "send the request again".
// Connection errors, 5xx and 409 are retried up to [neutron]retries times
// with a doubling, bounded delay; everything else is returned at once.
func (c *Client) retry(ctx context.Context, method, url string, _ *gophercloud.RequestOpts, err error, failCount uint) error {
	if ctx.Err() != nil || int(failCount) > c.o.Retries || !retryable(err) {
		return err
	}
	d := c.backoff << (failCount - 1)
	if d > maxBackoff || d <= 0 {
		d = maxBackoff
	}
	c.log.Warn("neutron request failed; retrying", "method", method, "url", url,
		"attempt", failCount, "of", c.o.Retries, "delay", d, "error", err)
	timer := time.NewTimer(d)
	defer timer.Stop()
	select {
	case <-ctx.Done():
		return err
	case <-timer.C:
		return nil
	}
}

func retryable(err error) bool {
	var code gophercloud.ErrUnexpectedResponseCode
	if errors.As(err, &code) {
		return code.Actual >= 500 || code.Actual == http.StatusConflict
	}
	var netErr net.Error
	var opErr *net.OpError
	return errors.As(err, &netErr) || errors.As(err, &opErr) || errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF)
}

// wrap turns a gophercloud error into ferro's: a 404 wraps ErrNotFound.
func wrap(err error, format string, args ...any) error {
	if err == nil {
		return nil
	}
	msg := fmt.Sprintf(format, args...)
	if gophercloud.ResponseCodeIs(err, http.StatusNotFound) {
		return fmt.Errorf("%s: %w: %w", msg, ErrNotFound, compact(err))
	}
	return fmt.Errorf("%s: %w", msg, compact(err))
}

// compact keeps Neutron's own message from an error response instead of
// gophercloud's long rendering of the whole exchange.
func compact(err error) error {
	var code gophercloud.ErrUnexpectedResponseCode
	if !errors.As(err, &code) {
		return err
	}
	return &APIError{Status: code.Actual, Method: code.Method, URL: code.URL, Body: string(code.Body), err: err}
}

// APIError is an error response from Neutron.
type APIError struct {
	Status int
	Method string
	URL    string
	// Body is the response body, e.g. {"NeutronError": {"type": …, "message": …}}.
	Body string
	err  error
}

func (e *APIError) Error() string {
	body := strings.TrimSpace(e.Body)
	if len(body) > 512 {
		body = body[:512] + "…"
	}
	return fmt.Sprintf("%s %s: HTTP %d: %s", e.Method, e.URL, e.Status, body)
}

// Unwrap gives gophercloud's error, so gophercloud.ResponseCodeIs works.
func (e *APIError) Unwrap() error { return e.err }

// FindNetwork resolves a network by UUID or by name, as openstacksdk's
// find_network does: an id first, then a unique name. Not found wraps
// ErrNotFound; a name shared by several networks is an *AmbiguousError.
func (c *Client) FindNetwork(ctx context.Context, nameOrID string) (Network, error) {
	sc, err := c.service(ctx)
	if err != nil {
		return Network{}, err
	}
	if nameOrID == "" {
		return Network{}, fmt.Errorf("network %q: %w", nameOrID, ErrNotFound)
	}
	if _, perr := uuid.Parse(nameOrID); perr == nil {
		var nw Network
		r := networks.Get(ctx, sc, nameOrID)
		if r.Err == nil {
			if err := r.ExtractInto(&nw); err != nil {
				return Network{}, fmt.Errorf("neutron: decode network %s: %w", nameOrID, err)
			}
			return nw, nil
		}
		if !gophercloud.ResponseCodeIs(r.Err, http.StatusNotFound) {
			return Network{}, wrap(r.Err, "neutron: get network %s", nameOrID)
		}
		// A name may look like a UUID: fall through to the name lookup.
	}
	pages, err := networks.List(sc, networks.ListOpts{Name: nameOrID}).AllPages(ctx)
	if err != nil {
		return Network{}, wrap(err, "neutron: list networks named %q", nameOrID)
	}
	var found []Network
	if err := networks.ExtractNetworksInto(pages, &found); err != nil {
		return Network{}, fmt.Errorf("neutron: decode networks: %w", err)
	}
	switch len(found) {
	case 0:
		return Network{}, fmt.Errorf("network %q: %w", nameOrID, ErrNotFound)
	case 1:
		return found[0], nil
	default:
		ids := make([]string, len(found))
		for i, n := range found {
			ids[i] = n.ID
		}
		return Network{}, &AmbiguousError{Name: nameOrID, IDs: ids}
	}
}

// CheckSecurityGroups returns an error naming the security groups (by
// UUID) that Neutron does not have.
func (c *Client) CheckSecurityGroups(ctx context.Context, ids []string) error {
	if len(ids) == 0 {
		return nil
	}
	sc, err := c.service(ctx)
	if err != nil {
		return err
	}
	var missing []string
	for _, id := range ids {
		r := groups.Get(ctx, sc, id)
		if r.Err == nil {
			continue
		}
		if gophercloud.ResponseCodeIs(r.Err, http.StatusNotFound) {
			missing = append(missing, id)
			continue
		}
		return wrap(r.Err, "neutron: get security group %s", id)
	}
	if len(missing) > 0 {
		return fmt.Errorf("could not find these security groups ([neutron]inspection_network_security_groups) in neutron: %s: %w",
			strings.Join(missing, ", "), ErrNotFound)
	}
	return nil
}

func createDHCPOpts(opts []dhcpopt.Option) []extradhcpopts.CreateExtraDHCPOpt {
	if opts == nil {
		return nil
	}
	out := make([]extradhcpopts.CreateExtraDHCPOpt, len(opts))
	for i, o := range opts {
		out[i] = extradhcpopts.CreateExtraDHCPOpt{OptName: o.Name, OptValue: o.Value, IPVersion: gophercloud.IPVersion(o.Version())}
	}
	return out
}

// CreatePort creates a port and returns it as Neutron reports it.
func (c *Client) CreatePort(ctx context.Context, p PortCreate) (Port, error) {
	sc, err := c.service(ctx)
	if err != nil {
		return Port{}, err
	}
	up := p.AdminStateUp
	base := ports.CreateOpts{NetworkID: p.NetworkID, DeviceID: p.DeviceID, AdminStateUp: &up}
	if len(p.SecurityGroups) > 0 {
		sgs := p.SecurityGroups
		base.SecurityGroups = &sgs
	}
	if p.NoFixedIPs {
		base.FixedIPs = []ports.IP{}
	}
	var opts ports.CreateOptsBuilder = portsbinding.CreateOptsExt{CreateOptsBuilder: base, VNICType: p.VNICType}
	if len(p.ExtraDHCPOpts) > 0 {
		opts = extradhcpopts.CreateOptsExt{CreateOptsBuilder: opts, ExtraDHCPOpts: createDHCPOpts(p.ExtraDHCPOpts)}
	}
	var port Port
	r := ports.Create(ctx, sc, opts)
	if r.Err != nil {
		return Port{}, wrap(r.Err, "neutron: create port on network %s", p.NetworkID)
	}
	if err := r.ExtractInto(&port); err != nil {
		return Port{}, fmt.Errorf("neutron: decode created port: %w", err)
	}
	return port, nil
}

// UpdatePort changes a port and returns it as Neutron reports it.
func (c *Client) UpdatePort(ctx context.Context, id string, u PortUpdate) (Port, error) {
	sc, err := c.service(ctx)
	if err != nil {
		return Port{}, err
	}
	var opts ports.UpdateOptsBuilder = ports.UpdateOpts{DeviceOwner: u.DeviceOwner, MACAddress: u.MACAddress}
	if u.HostID != nil || u.Profile != nil {
		opts = portsbinding.UpdateOptsExt{UpdateOptsBuilder: opts, HostID: u.HostID, Profile: u.Profile}
	}
	if len(u.ExtraDHCPOpts) > 0 {
		eo := make([]extradhcpopts.UpdateExtraDHCPOpt, len(u.ExtraDHCPOpts))
		for i, o := range u.ExtraDHCPOpts {
			v := o.Value
			eo[i] = extradhcpopts.UpdateExtraDHCPOpt{OptName: o.Name, OptValue: &v, IPVersion: gophercloud.IPVersion(o.Version())}
		}
		opts = extradhcpopts.UpdateOptsExt{UpdateOptsBuilder: opts, ExtraDHCPOpts: eo}
	}
	var port Port
	r := ports.Update(ctx, sc, id, opts)
	if r.Err != nil {
		return Port{}, wrap(r.Err, "neutron: update port %s", id)
	}
	if err := r.ExtractInto(&port); err != nil {
		return Port{}, fmt.Errorf("neutron: decode updated port: %w", err)
	}
	return port, nil
}

// GetPort returns a port; a missing one wraps ErrNotFound.
func (c *Client) GetPort(ctx context.Context, id string) (Port, error) {
	sc, err := c.service(ctx)
	if err != nil {
		return Port{}, err
	}
	var port Port
	r := ports.Get(ctx, sc, id)
	if r.Err != nil {
		return Port{}, wrap(r.Err, "neutron: get port %s", id)
	}
	if err := r.ExtractInto(&port); err != nil {
		return Port{}, fmt.Errorf("neutron: decode port: %w", err)
	}
	return port, nil
}

// ListPorts returns the ports matching f.
func (c *Client) ListPorts(ctx context.Context, f PortFilter) ([]Port, error) {
	if f.NetworkID == "" && f.DeviceID == "" {
		return nil, errors.New("neutron: refusing to list ports without a network_id or device_id filter")
	}
	sc, err := c.service(ctx)
	if err != nil {
		return nil, err
	}
	pages, err := ports.List(sc, ports.ListOpts{NetworkID: f.NetworkID, MACAddress: f.MACAddress, DeviceID: f.DeviceID}).AllPages(ctx)
	if err != nil {
		return nil, wrap(err, "neutron: list ports (network_id=%q mac_address=%q device_id=%q)", f.NetworkID, f.MACAddress, f.DeviceID)
	}
	var out []Port
	if err := ports.ExtractPortsInto(pages, &out); err != nil {
		return nil, fmt.Errorf("neutron: decode ports: %w", err)
	}
	return out, nil
}

// DeletePort deletes a port; one that is already gone is not an error.
func (c *Client) DeletePort(ctx context.Context, id string) error {
	sc, err := c.service(ctx)
	if err != nil {
		return err
	}
	r := ports.Delete(ctx, sc, id)
	if r.Err != nil && !gophercloud.ResponseCodeIs(r.Err, http.StatusNotFound) {
		return wrap(r.Err, "neutron: delete port %s", id)
	}
	return nil
}
