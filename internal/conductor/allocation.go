package conductor

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"

	"github.com/ferrometal/ferro/internal/baremetal"
	"github.com/ferrometal/ferro/internal/states"
	"github.com/ferrometal/ferro/internal/store"
)

// StartAllocate processes an allocation in state allocating in the
// background, on one of the conductor's workers, as Ironic's conductor does
// once the API has answered with the allocating allocation. With no free
// worker (or while stopping) it returns the error and does nothing.
func (c *Conductor) StartAllocate(allocationUUID string) error {
	if err := c.takeWorker(); err != nil {
		return err
	}
	c.running.Add(1)
	go func() {
		defer c.running.Done()
		defer c.giveBackWorker()
		if err := c.Allocate(c.workCtx, allocationUUID); err != nil {
			c.log.Warn("allocation failed", "allocation", allocationUUID, "error", err)
		}
	}()
	return nil
}

// Allocate processes an allocation in state allocating: it picks an
// available node that matches the resource class, traits and candidate
// list, not in maintenance and not yet associated, and associates it. With
// no match the allocation goes to error with a last_error.
func (c *Conductor) Allocate(ctx context.Context, allocationUUID string) error {
	a, err := c.store.GetAllocation(ctx, allocationUUID)
	if err != nil {
		return err
	}
	if a.State != baremetal.AllocationAllocating {
		return nil
	}
	no := false
	candidates, err := c.store.ListNodes(ctx, store.NodeFilter{
		ProvisionState: []string{states.Available}, ResourceClass: a.ResourceClass,
		Maintenance: &no, Associated: &no,
	})
	if err != nil {
		return err
	}
	candidates = slices.DeleteFunc(candidates, func(n *baremetal.Node) bool {
		if len(a.CandidateNodes) > 0 && !slices.Contains(a.CandidateNodes, n.UUID) && !slices.Contains(a.CandidateNodes, n.Name) {
			return true
		}
		if a.Owner != "" && n.Owner != a.Owner && n.Lessee != a.Owner {
			return true
		}
		for _, tr := range a.Traits {
			if !slices.Contains(n.Traits, tr) {
				return true
			}
		}
		return n.Reservation != ""
	})
	// Spread concurrent allocations over the matching nodes.
	rand.Shuffle(len(candidates), func(i, j int) { candidates[i], candidates[j] = candidates[j], candidates[i] })
	for _, n := range candidates {
		var won bool
		err := c.WithNodeLock(ctx, n.UUID, func(ctx context.Context, tx store.Store, n *baremetal.Node) error {
			if n.InstanceUUID != "" || n.ProvisionState != states.Available || n.Maintenance {
				return nil
			}
			n.InstanceUUID = a.UUID
			n.AllocationUUID = a.UUID
			if err := tx.UpdateNode(ctx, n); err != nil {
				return err
			}
			a.NodeUUID = n.UUID
			a.State = baremetal.AllocationActive
			a.LastError = ""
			won = true
			return tx.UpdateAllocation(ctx, a)
		})
		if err != nil {
			continue // locked or gone: try the next node
		}
		if won {
			return nil
		}
	}
	a.State = baremetal.AllocationError
	a.LastError = fmt.Sprintf("No available nodes match the resource class %s", a.ResourceClass)
	if len(a.Traits) > 0 {
		a.LastError += fmt.Sprintf(" and traits %v", a.Traits)
	}
	return c.store.UpdateAllocation(ctx, a)
}
