package inspector

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"strings"

	"github.com/gophercloud/gophercloud/v2"
	"github.com/gophercloud/gophercloud/v2/openstack/baremetal/v1/nodes"
	"github.com/gophercloud/gophercloud/v2/openstack/baremetal/v1/ports"
	"github.com/gophercloud/gophercloud/v2/pagination"

	"github.com/ferrometal/ferro/internal/baremetal"
	"github.com/ferrometal/ferro/internal/driver"
	"github.com/ferrometal/ferro/internal/inspection"
	"github.com/ferrometal/ferro/internal/inspection/plan"
	"github.com/ferrometal/ferro/internal/openstack"
)

// ironicMicroversion is the API version the HTTP client asks for: the
// highest Debian's Ironic 21.4 and ferro both serve.
const ironicMicroversion = "1.82"

// HTTPBareMetal is the BareMetal client over the Ironic v1 API with
// gophercloud; it works against ferro and a real Ironic.
type HTTPBareMetal struct {
	sc *gophercloud.ServiceClient
}

// HTTPOptions configure NewHTTPBareMetal ([ironic] section).
type HTTPOptions struct {
	Endpoint string // root URL, e.g. http://ironic:6385
	// Auth is how requests authenticate ([ironic]auth_type and the options
	// that go with it); its Endpoint and ServiceType are set here.
	Auth       openstack.Options
	HTTPClient *http.Client
}

// NewHTTPBareMetal returns a client for the bare metal API at o.Endpoint.
func NewHTTPBareMetal(o HTTPOptions) (*HTTPBareMetal, error) {
	endpoint := strings.TrimRight(o.Endpoint, "/")
	if !strings.HasSuffix(endpoint, "/v1") {
		endpoint += "/v1"
	}
	a := o.Auth
	a.Section, a.Endpoint, a.ServiceType = "[ironic]", endpoint, "baremetal"
	if o.HTTPClient != nil {
		a.Transport, a.Timeout = o.HTTPClient.Transport, o.HTTPClient.Timeout
	}
	sc, err := openstack.New(context.Background(), a)
	if err != nil {
		return nil, fmt.Errorf("bare metal client: %w", err)
	}
	sc.Microversion = ironicMicroversion
	return &HTTPBareMetal{sc: sc}, nil
}

// decodeAPI decodes an API object into a domain struct, keeping JSON
// number types and folding the *_interface fields into Interfaces.
func decodeAPI(raw map[string]any, v any) error {
	b, err := json.Marshal(raw)
	if err != nil {
		return err
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	return dec.Decode(v)
}

// Node implements BareMetal.
func (c *HTTPBareMetal) Node(ctx context.Context, ident string) (*baremetal.Node, []*baremetal.Port, error) {
	var raw map[string]any
	// The gophercloud.Result's ExtractInto: the node result's own only takes a struct.
	if err := nodes.Get(ctx, c.sc, ident).Result.ExtractInto(&raw); err != nil {
		if gophercloud.ResponseCodeIs(err, http.StatusNotFound) {
			return nil, nil, fmt.Errorf("%w: %s", ErrNodeNotFound, ident)
		}
		return nil, nil, fmt.Errorf("get node %s: %w", ident, err)
	}
	n := &baremetal.Node{}
	if err := decodeAPI(raw, n); err != nil {
		return nil, nil, fmt.Errorf("decode node %s: %w", ident, err)
	}
	n.Interfaces = map[string]string{}
	for _, k := range driver.Kinds {
		if v, ok := raw[k+"_interface"].(string); ok {
			n.Interfaces[k] = v
		}
	}
	var out []*baremetal.Port
	pager := ports.ListDetail(c.sc, ports.ListOpts{NodeUUID: n.UUID})
	err := pager.EachPage(ctx, func(_ context.Context, page pagination.Page) (bool, error) {
		var body struct {
			Ports []map[string]any `json:"ports"`
		}
		if err := page.(ports.PortPage).ExtractInto(&body); err != nil {
			return false, err
		}
		for _, rp := range body.Ports {
			p := &baremetal.Port{}
			if err := decodeAPI(rp, p); err != nil {
				return false, err
			}
			out = append(out, p)
		}
		return true, nil
	})
	if err != nil {
		return nil, nil, fmt.Errorf("list ports of node %s: %w", n.UUID, err)
	}
	return n, out, nil
}

// patchOps adapts plan.PatchOp to gophercloud's patch interfaces, keeping
// values such as false and 0 that gophercloud's own type would drop.
type patchOps []plan.PatchOp

func (p patchOps) node() nodes.UpdateOpts {
	out := make(nodes.UpdateOpts, len(p))
	for i, op := range p {
		out[i] = patchOp(op)
	}
	return out
}

func (p patchOps) port() ports.UpdateOpts {
	out := make(ports.UpdateOpts, len(p))
	for i, op := range p {
		out[i] = patchOp(op)
	}
	return out
}

type patchOp plan.PatchOp

func (op patchOp) m() map[string]any {
	m := map[string]any{"op": op.Op, "path": op.Path}
	if op.Op != "remove" {
		m["value"] = op.Value
	}
	return m
}

func (op patchOp) ToNodeUpdateMap() (map[string]any, error) { return op.m(), nil }
func (op patchOp) ToPortUpdateMap() map[string]any          { return op.m() }

// conflict reports a 409: Ironic (and ferro) answer it while a conductor
// holds the node's lock, and its clients retry.
func conflict(err error) bool { return gophercloud.ResponseCodeIs(err, http.StatusConflict) }

// Apply implements BareMetal: one API call per change, in upstream's order,
// each retried while the node is locked.
func (c *HTTPBareMetal) Apply(ctx context.Context, nodeUUID string, ch plan.Changes) error {
	call := func(fn func() error) error { return retryWhileLocked(ctx, conflict, fn) }
	for _, pc := range ch.CreatePorts {
		pxe := pc.PXEEnabled
		opts := ports.CreateOpts{NodeUUID: nodeUUID, Address: pc.Address, PXEEnabled: &pxe, Extra: pc.Extra,
			LocalLinkConnection: pc.LocalLinkConnection}
		if owner, err := c.portOwner(ctx, pc.Address); err != nil {
			return err
		} else if owner != "" {
			slog.Warn("port not created: its MAC belongs to another node", "node", nodeUUID, "mac", pc.Address, "other_node", owner)
			continue
		}
		if err := call(func() error { return ports.Create(ctx, c.sc, opts).Err }); err != nil {
			return fmt.Errorf("create port %s: %w", pc.Address, err)
		}
	}
	for _, ref := range ch.DeletePorts {
		err := call(func() error { return ports.Delete(ctx, c.sc, ref.UUID).ExtractErr() })
		if err != nil && !gophercloud.ResponseCodeIs(err, http.StatusNotFound) {
			return fmt.Errorf("delete port %s: %w", ref.Address, err)
		}
	}
	for _, pp := range ch.PatchPorts {
		if err := call(func() error { return ports.Update(ctx, c.sc, pp.UUID, patchOps(pp.Ops).port()).Err }); err != nil {
			return fmt.Errorf("patch port %s: %w", pp.Address, err)
		}
	}
	if len(ch.NodePatch) > 0 {
		update := func() error { return nodes.Update(ctx, c.sc, nodeUUID, patchOps(ch.NodePatch).node()).Err }
		if ch.ResetInterfaces {
			// A change of the driver (a rule's set-attribute): gophercloud's
			// Update has no query, so the PATCH is built here.
			update = func() error {
				body := make([]map[string]any, len(ch.NodePatch))
				for i, op := range ch.NodePatch {
					body[i] = patchOp(op).m()
				}
				_, err := c.sc.Patch(ctx, c.sc.ServiceURL("nodes", nodeUUID)+"?reset_interfaces=True", body, nil,
					&gophercloud.RequestOpts{OkCodes: []int{http.StatusOK}})
				return err
			}
		}
		if err := call(update); err != nil {
			return fmt.Errorf("patch node %s: %w", nodeUUID, err)
		}
	}
	for _, t := range ch.AddTraits {
		err := call(func() error {
			_, err := c.sc.Put(ctx, c.sc.ServiceURL("nodes", nodeUUID, "traits", t), nil, nil, &gophercloud.RequestOpts{OkCodes: []int{204}})
			return err
		})
		if err != nil {
			return fmt.Errorf("add trait %s: %w", t, err)
		}
	}
	for _, t := range ch.RemoveTraits {
		err := call(func() error {
			_, err := c.sc.Delete(ctx, c.sc.ServiceURL("nodes", nodeUUID, "traits", t), &gophercloud.RequestOpts{OkCodes: []int{204}})
			return err
		})
		if err != nil && !gophercloud.ResponseCodeIs(err, http.StatusNotFound) {
			return fmt.Errorf("remove trait %s: %w", t, err)
		}
	}
	return nil
}

// portOwner returns the node a MAC is registered on, or "".
func (c *HTTPBareMetal) portOwner(ctx context.Context, mac string) (string, error) {
	var owner string
	err := ports.ListDetail(c.sc, ports.ListOpts{Address: mac}).EachPage(ctx, func(_ context.Context, page pagination.Page) (bool, error) {
		ps, err := ports.ExtractPorts(page)
		if err != nil {
			return false, err
		}
		if len(ps) > 0 {
			owner = ps[0].NodeUUID
		}
		return false, nil
	})
	if err != nil {
		return "", fmt.Errorf("look up port %s: %w", mac, err)
	}
	return owner, nil
}

// SetBootDevice implements BareMetal.
func (c *HTTPBareMetal) SetBootDevice(ctx context.Context, nodeUUID, device string, persistent bool) error {
	err := retryWhileLocked(ctx, conflict, func() error {
		return nodes.SetBootDevice(ctx, c.sc, nodeUUID, nodes.BootDeviceOpts{BootDevice: device, Persistent: persistent}).ExtractErr()
	})
	if err != nil {
		return fmt.Errorf("set boot device of node %s: %w", nodeUUID, err)
	}
	return nil
}

// SetPowerState implements BareMetal.
func (c *HTTPBareMetal) SetPowerState(ctx context.Context, nodeUUID, target string) error {
	err := retryWhileLocked(ctx, conflict, func() error {
		return nodes.ChangePowerState(ctx, c.sc, nodeUUID, nodes.PowerStateOpts{Target: nodes.TargetPowerState(target)}).ExtractErr()
	})
	if err != nil {
		return fmt.Errorf("set power state of node %s to %s: %w", nodeUUID, target, err)
	}
	return nil
}

// Previous is GET /v1/nodes/{node}/inventory (1.81); a node without one
// answers 404, which is no previous inspection.
func (c *HTTPBareMetal) Previous(ctx context.Context, nodeUUID string) (*inspection.Previous, error) {
	r := nodes.GetInventory(ctx, c.sc, nodeUUID)
	if gophercloud.ResponseCodeIs(r.Err, http.StatusNotFound) {
		return nil, nil
	}
	if r.Err != nil {
		return nil, r.Err
	}
	body, _ := r.Body.(map[string]any)
	inv, _ := body["inventory"].(map[string]any)
	data, _ := body["plugin_data"].(map[string]any)
	return &inspection.Previous{Inventory: inv, PluginData: data}, nil
}
