package inspector

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"time"

	jsonpatch "github.com/evanphx/json-patch/v5"
	"github.com/google/uuid"

	"github.com/ferrometal/ferro/internal/baremetal"
	"github.com/ferrometal/ferro/internal/inspection/plan"
	"github.com/ferrometal/ferro/internal/store"
)

// ErrNodeNotFound is returned by a BareMetal client for an unknown node.
var ErrNodeNotFound = errors.New("node not found")

// BareMetal is what the inspector needs from the bare metal API. It has an
// in-process implementation (all-in-one) and an HTTP one (gophercloud) that
// works against ferro or a real Ironic.
type BareMetal interface {
	// Node returns a node (by UUID or name) with its ports.
	Node(ctx context.Context, ident string) (*baremetal.Node, []*baremetal.Port, error)
	// Apply carries out a processing plan on the node and its ports.
	Apply(ctx context.Context, nodeUUID string, ch plan.Changes) error
	SetBootDevice(ctx context.Context, nodeUUID, device string, persistent bool) error
	SetPowerState(ctx context.Context, nodeUUID, target string) error
}

// NodeLocker runs fn under a node's exclusive lock in one transaction; the
// conductor implements it.
type NodeLocker interface {
	WithNodeLock(ctx context.Context, ident string, fn func(ctx context.Context, tx store.Store, n *baremetal.Node) error) error
}

// PowerManager is the conductor's power and boot device control, used by the
// in-process client for manage_boot=true introspections.
type PowerManager interface {
	ChangePowerState(ctx context.Context, ident, target string, timeout time.Duration) error
	SetBootDevice(ctx context.Context, ident, device string, persistent bool) error
}

// Local is the in-process BareMetal client: it reads the store directly and
// applies a whole plan in one transaction under the node's lock.
type Local struct {
	Store  store.Store
	Locker NodeLocker
	Power  PowerManager
	// LockedNodeErr tells a locked node apart from other errors, so Apply can retry.
	LockedNodeErr error
}

// Node implements BareMetal.
func (l *Local) Node(ctx context.Context, ident string) (*baremetal.Node, []*baremetal.Port, error) {
	n, err := l.Store.GetNode(ctx, ident)
	if errors.Is(err, store.ErrNotFound) {
		return nil, nil, fmt.Errorf("%w: %s", ErrNodeNotFound, ident)
	}
	if err != nil {
		return nil, nil, err
	}
	ports, err := l.Store.ListPorts(ctx, store.PortFilter{NodeUUID: n.UUID})
	if err != nil {
		return nil, nil, err
	}
	return n, ports, nil
}

// Apply implements BareMetal.
func (l *Local) Apply(ctx context.Context, nodeUUID string, ch plan.Changes) error {
	if ch.IsZero() {
		return nil
	}
	return l.retryLocked(ctx, func() error {
		return l.Locker.WithNodeLock(ctx, nodeUUID, func(ctx context.Context, tx store.Store, n *baremetal.Node) error {
			return applyChanges(ctx, tx, n, ch)
		})
	})
}

// retryLocked calls fn again while it fails because the node is locked.
func (l *Local) retryLocked(ctx context.Context, fn func() error) error {
	return retryWhileLocked(ctx, func(err error) bool {
		return l.LockedNodeErr != nil && errors.Is(err, l.LockedNodeErr)
	}, fn)
}

// retryWhileLocked calls fn again while locked(err), for about 2.5 s: the
// conductor holds a node's lock briefly (moving it to inspect wait,
// switching its power, polling the inspector), and Ironic's clients retry
// its 409 the same way.
func retryWhileLocked(ctx context.Context, locked func(error) bool, fn func() error) error {
	delay := 5 * time.Millisecond
	for {
		err := fn()
		if err == nil || !locked(err) || delay > 2*time.Second {
			return err
		}
		select {
		case <-ctx.Done():
			return err
		case <-time.After(delay):
			delay *= 2
		}
	}
}

// applyChanges applies a plan in upstream's order: create ports, delete
// ports, patch ports, patch the node, then traits.
func applyChanges(ctx context.Context, tx store.Store, n *baremetal.Node, ch plan.Changes) error {
	for _, pc := range ch.CreatePorts {
		p := &baremetal.Port{
			UUID: uuid.NewString(), Address: strings.ToLower(pc.Address), NodeUUID: n.UUID, PXEEnabled: pc.PXEEnabled,
			Extra: orEmpty(pc.Extra), LocalLinkConnection: orEmpty(pc.LocalLinkConnection), InternalInfo: baremetal.JSON{},
		}
		// A MAC already registered on another node is skipped with a
		// warning, as ironic-inspector does, rather than failing the report.
		if other, err := tx.GetPortByAddress(ctx, p.Address); err == nil {
			slog.Warn("port not created: its MAC belongs to another node", "node", n.UUID, "mac", p.Address, "other_node", other.NodeUUID)
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
		if err := patch(p, pp.Ops, portPatchable); err != nil {
			return fmt.Errorf("patch port %s: %w", pp.Address, err)
		}
		p.UUID, p.NodeUUID = pp.UUID, n.UUID
		if err := tx.UpdatePort(ctx, p); err != nil {
			return fmt.Errorf("patch port %s: %w", pp.Address, err)
		}
	}
	if len(ch.NodePatch) > 0 || len(ch.AddTraits) > 0 || len(ch.RemoveTraits) > 0 {
		reservation := n.Reservation
		if err := patch(n, ch.NodePatch, nodePatchable); err != nil {
			return fmt.Errorf("patch node %s: %w", n.UUID, err)
		}
		n.Reservation = reservation
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
	}
	return nil
}

// Fields a processing plan may change, as Ironic's PATCH allows.
var (
	nodePatchable = plan.NodeFields
	portPatchable = plan.PortFields
)

// patch applies RFC 6902 operations to v's JSON form, refusing fields not
// in allowed, and decodes the result back into v with JSON types kept.
func patch(v any, ops []plan.PatchOp, allowed map[string]bool) error {
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
	dec := json.NewDecoder(bytes.NewReader(out))
	dec.UseNumber()
	return dec.Decode(v)
}

// SetBootDevice implements BareMetal.
func (l *Local) SetBootDevice(ctx context.Context, nodeUUID, device string, persistent bool) error {
	return l.retryLocked(ctx, func() error { return l.Power.SetBootDevice(ctx, nodeUUID, device, persistent) })
}

// SetPowerState implements BareMetal. The conductor switches power in a
// worker that holds the node's lock, so a power-off right after the
// reboot this client asked for finds the node locked and is retried.
func (l *Local) SetPowerState(ctx context.Context, nodeUUID, target string) error {
	return l.retryLocked(ctx, func() error { return l.Power.ChangePowerState(ctx, nodeUUID, target, 0) })
}

func orEmpty(m map[string]any) baremetal.JSON {
	if m == nil {
		return baremetal.JSON{}
	}
	return m
}
