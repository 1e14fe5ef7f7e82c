package plan

import (
	"fmt"
	"slices"
	"strings"

	"github.com/ferrometal/ferro/internal/pyjson"
)

// NodeFields are the node fields a processing plan may change, as Ironic's
// PATCH allows them; PortFields likewise for ports. The appliers refuse
// anything else, and rules find out at once (Set and friends check them).
var (
	NodeFields = map[string]bool{
		"driver": true, "properties": true, "extra": true, "driver_info": true, "instance_info": true, "name": true,
		"description": true, "resource_class": true, "owner": true, "lessee": true, "network_data": true,
	}
	PortFields = map[string]bool{
		"pxe_enabled": true, "local_link_connection": true, "extra": true, "physical_network": true,
		"is_smartnic": true, "address": true,
	}
)

// Get returns the node's value at path, a field name and keys below it.
func (n *Node) Get(path []string) (any, bool) { return get(n.doc, path) }

// Set plans the node's value at path, creating the objects on the way that
// are missing, as Ironic's set-attribute does.
func (n *Node) Set(path []string, value any) error {
	ops, err := setOps(n.doc, NodeFields, path, value)
	if err != nil {
		return err
	}
	return n.Patch(ops...)
}

// Delete plans removing the node's value at path; it must exist.
func (n *Node) Delete(path []string) error {
	op, err := deleteOp(n.doc, NodeFields, path)
	if err != nil {
		return err
	}
	return n.Patch(op)
}

// Extend plans appending value to the list at path, created empty when
// missing (unique: unless it is there already), as Ironic's
// extend-attribute does.
func (n *Node) Extend(path []string, value any, unique bool) error {
	ops, err := extendOps(n.doc, NodeFields, path, value, unique)
	if err != nil {
		return err
	}
	return n.Patch(ops...)
}

// PortAddress finds a port by its MAC address or its UUID and returns its
// address (lower case); ports the plan creates have no UUID yet.
func (n *Node) PortAddress(id string) (string, bool) {
	for _, p := range n.ports {
		if p.deleted {
			continue
		}
		addr, _ := p.doc["address"].(string)
		if uuid, _ := p.doc["uuid"].(string); uuid != "" && uuid == id || addr == strings.ToLower(id) {
			return addr, true
		}
	}
	return "", false
}

// PortFieldsOf returns the port with a MAC address as Ironic's API shows
// it, as planned so far. Read-only.
func (n *Node) PortFieldsOf(mac string) (map[string]any, bool) {
	if p := n.port(mac); p != nil {
		return p.doc, true
	}
	return nil, false
}

// SetPort is Set on the port with a MAC address.
func (n *Node) SetPort(mac string, path []string, value any) error {
	p := n.port(mac)
	if p == nil {
		return fmt.Errorf("node %s has no port %s", n.UUID(), mac)
	}
	ops, err := setOps(p.doc, PortFields, path, value)
	if err != nil {
		return err
	}
	return n.PatchPort(mac, ops...)
}

// DeletePortField is Delete on the port with a MAC address.
func (n *Node) DeletePortField(mac string, path []string) error {
	p := n.port(mac)
	if p == nil {
		return fmt.Errorf("node %s has no port %s", n.UUID(), mac)
	}
	op, err := deleteOp(p.doc, PortFields, path)
	if err != nil {
		return err
	}
	return n.PatchPort(mac, op)
}

// ExtendPort is Extend on the port with a MAC address.
func (n *Node) ExtendPort(mac string, path []string, value any, unique bool) error {
	p := n.port(mac)
	if p == nil {
		return fmt.Errorf("node %s has no port %s", n.UUID(), mac)
	}
	ops, err := extendOps(p.doc, PortFields, path, value, unique)
	if err != nil {
		return err
	}
	return n.PatchPort(mac, ops...)
}

func pointer(path []string) string {
	var b strings.Builder
	for _, p := range path {
		b.WriteByte('/')
		b.WriteString(escapePointer(p))
	}
	return b.String()
}

func checkField(allowed map[string]bool, path []string) error {
	if len(path) == 0 || path[0] == "" {
		return fmt.Errorf("empty path")
	}
	if !allowed[path[0]] {
		return fmt.Errorf("field %q cannot be changed (changeable: %s)", path[0], strings.Join(sortedKeys(allowed), ", "))
	}
	return nil
}

func get(doc map[string]any, path []string) (any, bool) {
	var cur any = doc
	for _, p := range path {
		m, ok := cur.(map[string]any)
		if !ok {
			return nil, false
		}
		if cur, ok = m[p]; !ok {
			return nil, false
		}
	}
	return cur, true
}

// setOps returns the operations that set doc's value at path: an empty
// object for each missing one on the way, then the value.
func setOps(doc map[string]any, allowed map[string]bool, path []string, value any) ([]PatchOp, error) {
	if err := checkField(allowed, path); err != nil {
		return nil, err
	}
	var ops []PatchOp
	cur := doc
	for i := 0; i < len(path)-1; i++ {
		next, exists := cur[path[i]]
		switch m, isMap := next.(map[string]any); {
		case isMap:
			cur = m
		case !exists && i > 0:
			ops = append(ops, PatchOp{Op: "add", Path: pointer(path[:i+1]), Value: map[string]any{}})
			cur = map[string]any{} // the rest is missing too
		default:
			return nil, fmt.Errorf("%s is %s, not an object", strings.Join(path[:i+1], "/"), pyjson.Repr(next))
		}
	}
	return append(ops, PatchOp{Op: "add", Path: pointer(path), Value: value}), nil
}

func deleteOp(doc map[string]any, allowed map[string]bool, path []string) (PatchOp, error) {
	if err := checkField(allowed, path); err != nil {
		return PatchOp{}, err
	}
	if _, ok := get(doc, path); !ok {
		return PatchOp{}, fmt.Errorf("%s does not exist", strings.Join(path, "/"))
	}
	return PatchOp{Op: "remove", Path: pointer(path)}, nil
}

func extendOps(doc map[string]any, allowed map[string]bool, path []string, value any, unique bool) ([]PatchOp, error) {
	current, found := get(doc, path)
	var list []any
	if found {
		l, ok := current.([]any)
		if !ok {
			return nil, fmt.Errorf("cannot extend %s: it is %s, not a list", strings.Join(path, "/"), pyjson.Repr(current))
		}
		list = l
	}
	value = normalize(value)
	if unique && slices.ContainsFunc(list, func(v any) bool { return pyjson.Equal(v, value) }) {
		if found {
			return nil, nil
		}
	} else {
		list = append(slices.Clone(list), value)
	}
	if list == nil {
		list = []any{}
	}
	return setOps(doc, allowed, path, list)
}

func sortedKeys(m map[string]bool) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
