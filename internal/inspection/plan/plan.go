// Package plan is what processing an inspection report wants done to a
// node: a snapshot of the node and its ports taken before processing, with
// every change planned so far applied to it, so that a later hook or rule
// sees what an earlier one did (as upstream sees its node after each save).
// Nothing is written until the caller applies the Changes, all at once, so
// a report whose processing fails changes nothing.
package plan

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/ferrometal/ferro/internal/baremetal"
	"github.com/ferrometal/ferro/internal/pyjson"
)

// Node is the bare metal node as hooks and rules see it; Changes returns
// the plan.
type Node struct {
	doc        map[string]any // the node in Ironic API JSON
	ports      []*port
	traits     []string
	origTraits []string
	ops        []PatchOp
	reset      bool
}

type port struct {
	doc     map[string]any // the port in Ironic API JSON
	created bool
	deleted bool
	ops     []PatchOp
}

// New snapshots a node and its ports.
func New(n baremetal.Node, ports []baremetal.Port) (*Node, error) {
	doc, err := toDoc(n)
	if err != nil {
		return nil, fmt.Errorf("node %s: %w", n.UUID, err)
	}
	for _, k := range []string{"properties", "extra", "driver_info", "driver_internal_info", "instance_info"} {
		if _, ok := doc[k].(map[string]any); !ok {
			doc[k] = map[string]any{}
		}
	}
	// Rules read the node as Ironic's node object: every field there, null
	// when unset, and each interface as <kind>_interface.
	for _, k := range optionalFields {
		if _, ok := doc[k]; !ok {
			doc[k] = nil
		}
	}
	for kind, name := range n.Interfaces {
		doc[kind+"_interface"] = name
	}
	node := &Node{doc: doc, traits: slices.Clone(n.Traits), origTraits: slices.Clone(n.Traits)}
	for _, p := range ports {
		pdoc, err := toDoc(p)
		if err != nil {
			return nil, fmt.Errorf("port %s: %w", p.UUID, err)
		}
		pdoc["address"] = strings.ToLower(p.Address)
		for _, k := range []string{"local_link_connection", "extra"} {
			if _, ok := pdoc[k].(map[string]any); !ok {
				pdoc[k] = map[string]any{}
			}
		}
		node.ports = append(node.ports, &port{doc: pdoc})
	}
	return node, nil
}

// optionalFields are the node fields the domain type leaves out when
// empty and Ironic's node object always has.
var optionalFields = []string{"name", "description", "resource_class", "owner", "lessee", "instance_uuid",
	"allocation_uuid", "chassis_uuid", "shard", "target_provision_state", "power_state", "target_power_state",
	"last_error", "maintenance_reason", "fault", "protected_reason", "retired_reason", "automated_clean",
	"boot_mode", "secure_boot", "conductor_affinity", "inspection_started_at", "inspection_finished_at",
	"provision_updated_at", "updated_at"}

// toDoc converts v to generic JSON values, numbers as json.Number.
func toDoc(v any) (map[string]any, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var doc map[string]any
	if err := dec.Decode(&doc); err != nil {
		return nil, err
	}
	return doc, nil
}

// UUID returns the node's UUID.
func (n *Node) UUID() string { s, _ := n.doc["uuid"].(string); return s }

// ProvisionState returns the node's provision state.
func (n *Node) ProvisionState() string { s, _ := n.doc["provision_state"].(string); return s }

// Properties returns the node's properties as planned so far. Read-only.
func (n *Node) Properties() map[string]any { m, _ := n.doc["properties"].(map[string]any); return m }

// Fields returns the whole node as Ironic's API shows it, as planned so
// far; rules resolve node:// paths in it. Read-only.
func (n *Node) Fields() map[string]any { return n.doc }

// GetByPath returns a field by an Ironic-style path, as upstream's
// get_by_path: "/name", or "/extra/key" (one level under a field; the rest
// of the path is the key).
func (n *Node) GetByPath(path string) (any, bool) {
	field, key, nested := strings.Cut(strings.Trim(path, "/"), "/")
	v, ok := n.doc[field]
	if !ok || !nested {
		return v, ok
	}
	m, ok := v.(map[string]any)
	if !ok {
		return nil, false
	}
	v, ok = m[key]
	return v, ok
}

// Patch applies JSON patch operations to the node and records them. A path
// without its leading slash gets one, as upstream does.
func (n *Node) Patch(ops ...PatchOp) error {
	for _, op := range ops {
		if !strings.HasPrefix(op.Path, "/") {
			op.Path = "/" + op.Path
		}
		if err := applyOp(n.doc, op); err != nil {
			return fmt.Errorf("patch node %s: %w", n.UUID(), err)
		}
		n.ops = append(n.ops, op)
	}
	return nil
}

// ResetInterfaces asks that the node patch be sent with reset_interfaces,
// which changing the driver needs.
func (n *Node) ResetInterfaces() { n.reset = true }

// SetProperty plans properties[key] = value, upstream's update_properties.
func (n *Node) SetProperty(key string, value any) error {
	return n.Patch(PatchOp{Op: "add", Path: "/properties/" + escapePointer(key), Value: value})
}

// Capability is one entry of properties.capabilities. A nil Value removes
// the capability.
type Capability struct {
	Name  string
	Value any
}

// UpdateCapabilities merges caps into properties.capabilities
// ("k:v,k:v"), keeping existing entries and their order, as upstream's
// update_capabilities. Values are written as Python's str() would.
func (n *Node) UpdateCapabilities(caps ...Capability) error {
	existing, err := parseCapabilities(n.Properties()["capabilities"])
	if err != nil {
		return err
	}
	for _, c := range caps {
		existing = setCapability(existing, c.Name, c.Value)
	}
	var parts []string
	for _, c := range existing {
		if c.Value != nil {
			parts = append(parts, c.Name+":"+pyjson.Str(c.Value))
		}
	}
	return n.SetProperty("capabilities", strings.Join(parts, ","))
}

func setCapability(caps []Capability, name string, value any) []Capability {
	for i := range caps {
		if caps[i].Name == name {
			caps[i].Value = value
			return caps
		}
	}
	return append(caps, Capability{Name: name, Value: value})
}

// parseCapabilities splits a capabilities string; an entry without a colon
// is an error, as in upstream.
func parseCapabilities(v any) ([]Capability, error) {
	if !pyjson.Truthy(v) {
		return nil, nil
	}
	s, ok := v.(string)
	if !ok {
		return nil, fmt.Errorf("properties/capabilities is not a string: %s", pyjson.Repr(v))
	}
	var caps []Capability
	for _, e := range strings.Split(s, ",") {
		k, val, ok := strings.Cut(e, ":")
		if !ok {
			return nil, fmt.Errorf("malformed properties/capabilities %q: entry %q has no colon", s, e)
		}
		caps = setCapability(caps, k, val)
	}
	return caps, nil
}

// Port is a port of the node as planned so far.
type Port struct {
	UUID                string // "" for a port the plan creates
	Address             string // lower case
	PXEEnabled          bool
	LocalLinkConnection map[string]any
	Extra               map[string]any
}

func (p *port) view() Port {
	v := Port{}
	v.UUID, _ = p.doc["uuid"].(string)
	v.Address, _ = p.doc["address"].(string)
	v.PXEEnabled, _ = p.doc["pxe_enabled"].(bool)
	v.LocalLinkConnection, _ = p.doc["local_link_connection"].(map[string]any)
	v.Extra, _ = p.doc["extra"].(map[string]any)
	return v
}

func (n *Node) port(mac string) *port {
	mac = strings.ToLower(mac)
	for _, p := range n.ports {
		if !p.deleted && p.doc["address"] == mac {
			return p
		}
	}
	return nil
}

// Ports returns the node's ports: the existing ones not planned for
// deletion, then those planned for creation.
func (n *Node) Ports() []Port {
	var out []Port
	for _, p := range n.ports {
		if !p.deleted {
			out = append(out, p.view())
		}
	}
	return out
}

// Port returns the port with a MAC address.
func (n *Node) Port(mac string) (Port, bool) {
	if p := n.port(mac); p != nil {
		return p.view(), true
	}
	return Port{}, false
}

// CreatePort plans a new port. It returns false, and plans nothing, when
// the node already has a port with that address.
func (n *Node) CreatePort(c PortCreate) bool {
	if n.port(c.Address) != nil {
		return false
	}
	doc := map[string]any{
		"address":               strings.ToLower(c.Address),
		"pxe_enabled":           c.PXEEnabled,
		"extra":                 jsonObject(c.Extra),
		"local_link_connection": jsonObject(c.LocalLinkConnection),
	}
	n.ports = append(n.ports, &port{doc: doc, created: true})
	return true
}

// PatchPort applies JSON patch operations to the port with a MAC address.
// On a port the plan creates, they change what will be created.
func (n *Node) PatchPort(mac string, ops ...PatchOp) error {
	p := n.port(mac)
	if p == nil {
		return fmt.Errorf("node %s has no port %s", n.UUID(), mac)
	}
	for _, op := range ops {
		if err := applyOp(p.doc, op); err != nil {
			return fmt.Errorf("patch port %s: %w", mac, err)
		}
		p.ops = append(p.ops, op)
	}
	return nil
}

// DeletePort plans the deletion of the port with a MAC address; it reports
// whether there was one.
func (n *Node) DeletePort(mac string) bool {
	p := n.port(mac)
	if p == nil {
		return false
	}
	p.deleted = true
	return true
}

// Traits returns the node's traits as planned so far.
func (n *Node) Traits() []string { return slices.Clone(n.traits) }

// AddTrait plans adding a trait.
func (n *Node) AddTrait(t string) {
	if !slices.Contains(n.traits, t) {
		n.traits = append(n.traits, t)
	}
	n.syncTraits()
}

// syncTraits shows the planned traits in the node's fields.
func (n *Node) syncTraits() {
	list := make([]any, len(n.traits))
	for i, t := range n.traits {
		list[i] = t
	}
	n.doc["traits"] = list
}

// RemoveTrait plans removing a trait; removing one the node lacks is not
// an error, as upstream.
func (n *Node) RemoveTrait(t string) {
	n.traits = slices.DeleteFunc(n.traits, func(x string) bool { return x == t })
	n.syncTraits()
}

// Changes is the plan: what the hooks and rules want done to the node.
// Apply it in field order: create ports, delete ports, patch ports, patch
// the node (in one PATCH, with reset_interfaces if asked), then traits.
type Changes struct {
	CreatePorts     []PortCreate `json:"create_ports,omitempty"`
	DeletePorts     []PortRef    `json:"delete_ports,omitempty"`
	PatchPorts      []PortPatch  `json:"patch_ports,omitempty"`
	NodePatch       []PatchOp    `json:"node_patch,omitempty"`
	ResetInterfaces bool         `json:"reset_interfaces,omitempty"`
	AddTraits       []string     `json:"add_traits,omitempty"`
	RemoveTraits    []string     `json:"remove_traits,omitempty"`
}

// IsZero reports whether there is nothing to do.
func (c Changes) IsZero() bool {
	return len(c.CreatePorts)+len(c.DeletePorts)+len(c.PatchPorts)+len(c.NodePatch)+len(c.AddTraits)+len(c.RemoveTraits) == 0
}

// PortCreate is a port to create on the node.
type PortCreate struct {
	Address             string         `json:"address"`
	PXEEnabled          bool           `json:"pxe_enabled"`
	Extra               map[string]any `json:"extra,omitempty"` // client-id when DHCP used one
	LocalLinkConnection map[string]any `json:"local_link_connection,omitempty"`
}

// PortRef names an existing port.
type PortRef struct {
	UUID    string `json:"uuid"`
	Address string `json:"address"`
}

// PortPatch is a JSON patch for an existing port.
type PortPatch struct {
	PortRef
	Ops []PatchOp `json:"ops"`
}

// PatchOp is one JSON patch (RFC 6902) operation: add, replace or remove.
type PatchOp struct {
	Op    string `json:"op"`
	Path  string `json:"path"`
	Value any    `json:"value"`
}

// MarshalJSON leaves out the value of a remove.
func (op PatchOp) MarshalJSON() ([]byte, error) {
	if op.Op == "remove" {
		return json.Marshal(struct {
			Op   string `json:"op"`
			Path string `json:"path"`
		}{op.Op, op.Path})
	}
	type plain PatchOp
	return json.Marshal(plain(op))
}

// Changes returns the plan so far.
func (n *Node) Changes() Changes {
	c := Changes{NodePatch: slices.Clone(n.ops), ResetInterfaces: n.reset}
	for _, p := range n.ports {
		v := p.view()
		switch {
		case p.created && !p.deleted:
			pc := PortCreate{Address: v.Address, PXEEnabled: v.PXEEnabled}
			if len(v.Extra) > 0 {
				pc.Extra = v.Extra
			}
			if len(v.LocalLinkConnection) > 0 {
				pc.LocalLinkConnection = v.LocalLinkConnection
			}
			c.CreatePorts = append(c.CreatePorts, pc)
		case p.created:
		case p.deleted:
			c.DeletePorts = append(c.DeletePorts, PortRef{UUID: v.UUID, Address: v.Address})
		case len(p.ops) > 0:
			c.PatchPorts = append(c.PatchPorts, PortPatch{PortRef: PortRef{UUID: v.UUID, Address: v.Address}, Ops: slices.Clone(p.ops)})
		}
	}
	for _, t := range n.traits {
		if !slices.Contains(n.origTraits, t) {
			c.AddTraits = append(c.AddTraits, t)
		}
	}
	for _, t := range n.origTraits {
		if !slices.Contains(n.traits, t) {
			c.RemoveTraits = append(c.RemoveTraits, t)
		}
	}
	return c
}

func jsonObject(m map[string]any) map[string]any {
	if m == nil {
		return map[string]any{}
	}
	return maps.Clone(m)
}

// escapePointer escapes a key for a JSON pointer.
func escapePointer(s string) string {
	return strings.ReplaceAll(strings.ReplaceAll(s, "~", "~0"), "/", "~1")
}

// applyOp applies one operation to doc, in place.
func applyOp(doc map[string]any, op PatchOp) error {
	if op.Path == "" || op.Path[0] != '/' {
		return fmt.Errorf("invalid path %q", op.Path)
	}
	var tokens []string
	for _, t := range strings.Split(op.Path[1:], "/") {
		tokens = append(tokens, strings.ReplaceAll(strings.ReplaceAll(t, "~1", "/"), "~0", "~"))
	}
	switch op.Op {
	case "add", "replace", "remove":
	default:
		return fmt.Errorf("unsupported patch operation %q", op.Op)
	}
	var value any
	if op.Op != "remove" {
		value = normalize(op.Value)
	}
	_, err := applyAt(doc, tokens, op.Op, value, op.Path)
	return err
}

// normalize turns a value into generic JSON, so that views hold the same
// types whoever planned the change.
func normalize(v any) any {
	switch v.(type) {
	case nil, string, bool, json.Number:
		return v
	}
	b, err := json.Marshal(v)
	if err != nil {
		return v
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var out any
	if dec.Decode(&out) != nil {
		return v
	}
	return out
}

// applyAt applies an operation below container and returns the container,
// which is new when it is a slice that grew or shrank.
func applyAt(container any, tokens []string, op string, value any, path string) (any, error) {
	key := tokens[0]
	last := len(tokens) == 1
	switch c := container.(type) {
	case map[string]any:
		if !last {
			child, ok := c[key]
			if !ok {
				return nil, fmt.Errorf("path %s does not exist", path)
			}
			child, err := applyAt(child, tokens[1:], op, value, path)
			if err != nil {
				return nil, err
			}
			c[key] = child
			return c, nil
		}
		_, exists := c[key]
		switch {
		case op == "add":
			c[key] = value
		case !exists:
			return nil, fmt.Errorf("path %s does not exist", path)
		case op == "replace":
			c[key] = value
		default:
			delete(c, key)
		}
		return c, nil
	case []any:
		if last && op == "add" && key == "-" {
			return append(c, value), nil
		}
		i, err := strconv.Atoi(key)
		if err != nil || i < 0 || i > len(c) || i == len(c) && !(last && op == "add") {
			return nil, fmt.Errorf("path %s: no element %q", path, key)
		}
		if !last {
			child, err := applyAt(c[i], tokens[1:], op, value, path)
			if err != nil {
				return nil, err
			}
			c[i] = child
			return c, nil
		}
		switch op {
		case "add":
			return slices.Insert(c, i, value), nil
		case "replace":
			c[i] = value
			return c, nil
		default:
			return slices.Delete(c, i, i+1), nil
		}
	}
	return nil, fmt.Errorf("path %s: %s is not an object or array", path, key)
}
