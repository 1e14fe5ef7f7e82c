package ironic

import (
	"context"
	"net/http"
	"slices"

	"github.com/ferrometal/ferro/internal/baremetal"
	"github.com/ferrometal/ferro/internal/store"
)

func (s *server) traitsAllowed(rq *request) error {
	if rq.minor >= v37NodeTraits {
		return nil
	}
	// What Ironic's routing answers below 1.37, per method: the node
	// controller's own GET refuses the version, PUT reaches a controller
	// without put (405), DELETE finds no resource.
	switch rq.r.Method {
	case http.MethodGet:
		return notAcceptable()
	case http.MethodPut:
		rq.w.Header().Set("Allow", "DELETE, GET, PATCH, POST")
		return webobError(http.StatusMethodNotAllowed)
	}
	return notFound("Resource could not be found.")
}

// getTraits is GET /v1/nodes/{node}/traits.
func (s *server) getTraits(rq *request) error {
	if err := s.traitsAllowed(rq); err != nil {
		return err
	}
	n, err := s.node(rq)
	if err != nil {
		return err
	}
	t := slices.Sorted(slices.Values(n.Traits))
	if t == nil {
		t = []string{}
	}
	o := newObj(nil)
	o.key("traits")
	o.b = appendStrings(o.b, t)
	return rq.writeJSON(http.StatusOK, o.end())
}

func invalidTrait(t string) error {
	return badRequest("Schema error for trait: %s does not match any of the acceptable trait names", pyRepr(t))
}

// setTraits is PUT /v1/nodes/{node}/traits (replace all) and
// PUT /v1/nodes/{node}/traits/{trait} (add one).
func (s *server) setTraits(rq *request) error {
	if err := s.traitsAllowed(rq); err != nil {
		return err
	}
	one := rq.r.PathValue("trait")
	var replace []string
	v, err := rq.readJSON()
	if err != nil {
		return err
	}
	m, _ := v.(map[string]any)
	if v != nil && m == nil {
		return badRequest("Schema error for body: %s is not of type 'object'", pyRepr(v))
	}
	if one != "" {
		if len(m) > 0 {
			return badRequest("No body should be provided when adding a trait")
		}
		if !validTrait(one) {
			return invalidTrait(one)
		}
	} else {
		for k := range m {
			if k != "traits" {
				return badRequest("Schema error for body: Additional properties are not allowed (%s was unexpected)", pyRepr(k))
			}
		}
		tv, ok := m["traits"]
		if !ok {
			return badRequest("A single node trait may be added via PUT /v1/nodes/<node identifier>/traits/<trait> with no body, or all node traits may be replaced via PUT /v1/nodes/<node identifier>/traits with the list of traits specified in the request body.")
		}
		if err := checkKind("body", "traits", tv, kStringList); err != nil || tv == nil {
			return badRequest("Schema error for body: %s is not of type 'array'", pyRepr(tv))
		}
		replace = strList(tv)
		for _, t := range replace {
			if !validTrait(t) {
				return invalidTrait(t)
			}
		}
	}
	if _, err := s.node(rq); err != nil {
		return err
	}
	err = s.withNodeLock(rq, rq.r.PathValue("node"), func(ctx context.Context, tx store.Store, n *baremetal.Node) error {
		if one != "" {
			if !slices.Contains(n.Traits, one) {
				n.Traits = append(n.Traits, one)
			}
		} else {
			n.Traits = nil
			for _, t := range replace {
				if !slices.Contains(n.Traits, t) {
					n.Traits = append(n.Traits, t)
				}
			}
		}
		slices.Sort(n.Traits)
		if len(n.Traits) > 50 {
			return badRequest("Could not add traits to node %s: a node can have at most 50 traits", n.UUID)
		}
		return tx.UpdateNode(ctx, n)
	})
	if err != nil {
		return err
	}
	if one != "" {
		rq.location("nodes/" + rq.r.PathValue("node") + "/traits/" + one)
	}
	return rq.writeEmpty(http.StatusNoContent)
}

// deleteTraits is DELETE /v1/nodes/{node}/traits and …/traits/{trait}.
func (s *server) deleteTraits(rq *request) error {
	if err := s.traitsAllowed(rq); err != nil {
		return err
	}
	one := rq.r.PathValue("trait")
	if _, err := s.node(rq); err != nil {
		return err
	}
	err := s.withNodeLock(rq, rq.r.PathValue("node"), func(ctx context.Context, tx store.Store, n *baremetal.Node) error {
		if one == "" {
			n.Traits = nil
		} else {
			i := slices.Index(n.Traits, one)
			if i < 0 {
				return notFound("Node %s doesn't have a trait '%s'", n.UUID, one)
			}
			n.Traits = slices.Delete(n.Traits, i, i+1)
		}
		return tx.UpdateNode(ctx, n)
	})
	if err != nil {
		return err
	}
	return rq.writeEmpty(http.StatusNoContent)
}
