package inspection

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"reflect"
	"slices"
	"strings"

	jsonpatch "github.com/evanphx/json-patch/v5"
	"github.com/google/uuid"

	"github.com/ferrometal/ferro/internal/baremetal"
	"github.com/ferrometal/ferro/internal/inspection/plan"
	"github.com/ferrometal/ferro/internal/store"
)

// ApplyOptions say how Apply treats what needs more than the store.
type ApplyOptions struct {
	// Interfaces returns the interfaces a node of a hardware type gets by
	// default: a plan that changes the driver resets the node's interfaces
	// to them, as Ironic's PATCH with reset_interfaces. Nil refuses a
	// change of the driver.
	Interfaces func(driver string) (map[string]string, error)
	// Log receives the ports skipped because their MAC belongs to
	// another node; nil is slog's default.
	Log *slog.Logger
}

// Apply carries out a processing plan on the node n (as read under its
// lock) in tx, in upstream's order: create ports, delete ports, patch
// ports, patch the node, then traits. The caller holds the node's lock
// and runs Apply in one transaction, so a plan is applied whole or not at
// all. n is updated in place when the node changes.
func Apply(ctx context.Context, tx store.Store, n *baremetal.Node, ch plan.Changes, o ApplyOptions) error {
	log := o.Log
	if log == nil {
		log = slog.Default()
	}
	for _, pc := range ch.CreatePorts {
		p := &baremetal.Port{
			UUID: uuid.NewString(), Address: strings.ToLower(pc.Address), NodeUUID: n.UUID, PXEEnabled: pc.PXEEnabled,
			Extra: orEmpty(pc.Extra), LocalLinkConnection: orEmpty(pc.LocalLinkConnection), InternalInfo: baremetal.JSON{},
		}
		// A MAC already registered on another node is skipped with a
		// warning, as upstream does, rather than failing the report.
		if other, err := tx.GetPortByAddress(ctx, p.Address); err == nil {
			log.Warn("port not created: its MAC belongs to another node", "node", n.UUID, "mac", p.Address, "other_node", other.NodeUUID)
			continue
		} else if !errors.Is(err, store.ErrNotFound) {
			return fmt.Errorf("look up port %s: %w", p.Address, err)
		}
		if err := tx.CreatePort(ctx, p); err != nil {
			return fmt.Errorf("create port %s: %w", p.Address, err)
		}
	}
	for _, ref := range ch.DeletePorts {
		if err := tx.DeletePort(ctx, ref.UUID); err != nil && !errors.Is(err, store.ErrNotFound) {
			return fmt.Errorf("delete port %s: %w", ref.Address, err)
		}
	}
	for _, pp := range ch.PatchPorts {
		p, err := tx.GetPort(ctx, pp.UUID)
		if err != nil {
			return fmt.Errorf("patch port %s: %w", pp.Address, err)
		}
		if err := patchJSON(p, pp.Ops, plan.PortFields); err != nil {
			return fmt.Errorf("patch port %s: %w", pp.Address, err)
		}
		p.UUID, p.NodeUUID = pp.UUID, n.UUID
		if err := tx.UpdatePort(ctx, p); err != nil {
			return fmt.Errorf("patch port %s: %w", pp.Address, err)
		}
	}
	if len(ch.NodePatch) == 0 && len(ch.AddTraits) == 0 && len(ch.RemoveTraits) == 0 {
		return nil
	}
	reservation, oldDriver := n.Reservation, n.Driver
	if err := patchJSON(n, ch.NodePatch, plan.NodeFields); err != nil {
		return fmt.Errorf("patch node %s: %w", n.UUID, err)
	}
	n.Reservation = reservation
	if n.Driver != oldDriver {
		if o.Interfaces == nil {
			return fmt.Errorf("patch node %s: the driver cannot be changed here", n.UUID)
		}
		ifaces, err := o.Interfaces(n.Driver)
		if err != nil {
			return fmt.Errorf("patch node %s: driver %q: %w", n.UUID, n.Driver, err)
		}
		n.Interfaces = ifaces
	}
	n.Traits = slices.Clone(n.Traits) // n may share its traits with the caller's copy
	for _, t := range ch.AddTraits {
		if !slices.Contains(n.Traits, t) {
			n.Traits = append(n.Traits, t)
		}
	}
	for _, t := range ch.RemoveTraits {
		n.Traits = slices.DeleteFunc(n.Traits, func(x string) bool { return x == t })
	}
	if err := tx.UpdateNode(ctx, n); err != nil {
		return fmt.Errorf("update node %s: %w", n.UUID, err)
	}
	return nil
}

// patchJSON applies RFC 6902 operations to v (a pointer to a struct)
// through its JSON form, refusing fields not in allowed, and replaces v
// with the result, JSON types kept; fields JSON does not carry are zeroed.
func patchJSON(v any, ops []plan.PatchOp, allowed map[string]bool) error {
	if len(ops) == 0 {
		return nil
	}
	for _, op := range ops {
		field, _, _ := strings.Cut(strings.TrimPrefix(op.Path, "/"), "/")
		if !allowed[field] {
			return fmt.Errorf("path %s cannot be changed", op.Path)
		}
	}
	doc, err := json.Marshal(v)
	if err != nil {
		return err
	}
	rawOps, err := json.Marshal(ops)
	if err != nil {
		return err
	}
	p, err := jsonpatch.DecodePatch(rawOps)
	if err != nil {
		return err
	}
	out, err := p.ApplyWithOptions(doc, &jsonpatch.ApplyOptions{EnsurePathExistsOnAdd: true, SupportNegativeIndices: true})
	if err != nil {
		return err
	}
	// Into a fresh value: decoding into v would merge maps, keeping the
	// keys the patch removed.
	fresh := reflect.New(reflect.TypeOf(v).Elem())
	dec := json.NewDecoder(bytes.NewReader(out))
	dec.UseNumber()
	if err := dec.Decode(fresh.Interface()); err != nil {
		return err
	}
	reflect.ValueOf(v).Elem().Set(fresh.Elem())
	return nil
}

func orEmpty(m map[string]any) baremetal.JSON {
	if m == nil {
		return baremetal.JSON{}
	}
	return m
}
