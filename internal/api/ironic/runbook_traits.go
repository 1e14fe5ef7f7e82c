package ironic

import (
	"context"
	"maps"
	"net/http"
	"slices"

	"github.com/ferrometal/ferro/internal/baremetal"
	"github.com/ferrometal/ferro/internal/store"
)

// The traits of a runbook (1.112): the nodes that may run it are those
// with one of them (RunbookTraitsController in runbook.py).

// runbookTraitsVersion refuses a traits request below its versions: the
// runbooks controller's below 1.92, its _lookup's below 1.112 (webob's 404
// for every method).
func runbookTraitsVersion(rq *request) error {
	if err := runbookResource.versionCheck(rq); err != nil {
		return err
	}
	if rq.minor < v112RunbookTraits {
		return &apiError{status: http.StatusNotFound, msg: "The API version does not allow runbook traits", webob: true}
	}
	return nil
}

// runbookOfPath reads the path's runbook as get_rpc_runbook (its
// identifier a UUID or a logical name) and checks the route's rule on it.
func (s *server) runbookOfPath(rq *request) (*baremetal.Runbook, error) {
	rb, err := s.lookupRunbook(rq, rq.r.PathValue("runbook"))
	if err != nil {
		return nil, err
	}
	if err := authorizeRunbook(rq, rb, rq.route.Rule); err != nil {
		return nil, err
	}
	return rb, nil
}

// lookupRunbook is Ironic's get_rpc_runbook.
func (s *server) lookupRunbook(rq *request, ident string) (*baremetal.Runbook, error) {
	if !isUUIDLike(ident) && !isValidLogicalName(ident) {
		return nil, badRequest("Expected a logical name or UUID but received %s.", ident)
	}
	return runbookResource.lookup(rq.ctx(), s.store, ident, rq.minor)
}

// getRunbookTraits is GET /v1/runbooks/{runbook}/traits.
func (s *server) getRunbookTraits(rq *request) error {
	if err := runbookTraitsVersion(rq); err != nil {
		return err
	}
	rb, err := s.runbookOfPath(rq)
	if err != nil {
		return err
	}
	o := newObj(nil)
	o.key("traits")
	o.b = appendStrings(o.b, rb.Traits)
	return rq.writeJSON(http.StatusOK, o.end())
}

// setRunbookTraits is PUT /v1/runbooks/{runbook}/traits (replace all, the
// body's) and PUT …/traits/{trait} (add one, no body).
func (s *server) setRunbookTraits(rq *request) error {
	if err := runbookTraitsVersion(rq); err != nil {
		return err
	}
	one := rq.r.PathValue("trait")
	if one != "" {
		if err := checkTraitSchema("trait", one); err != nil {
			return err
		}
	}
	v, err := rq.readJSON()
	if err != nil {
		return err
	}
	body, err := asObject(v, func(v any) *apiError {
		return schemaError("body", "%s is not of type 'object'", pyRepr(v))
	})
	if err != nil {
		return err
	}
	for _, k := range slices.Sorted(maps.Keys(body)) {
		if k != "traits" {
			return schemaError("body", "Additional properties are not allowed (%s was unexpected)", pyRepr(k))
		}
	}
	var replace []string
	tv, hasList := body["traits"]
	if hasList {
		l, ok := tv.([]any)
		if !ok {
			return schemaError("body", "%s is not of type 'array'", pyRepr(tv))
		}
		for _, t := range l {
			if err := checkTraitSchema("body", t); err != nil {
				return err
			}
			if !slices.Contains(replace, t.(string)) {
				replace = append(replace, t.(string))
			}
		}
	}
	rb, err := s.runbookOfPath(rq)
	if err != nil {
		return err
	}
	if (one != "") == hasList {
		return badRequest("A single runbook trait may be added via PUT /v1/runbooks/<runbook identifier>/traits/<trait> with no body, or all runbook traits may be replaced via PUT /v1/runbooks/<runbook identifier>/traits with the list of traits specified in the request body.")
	}
	if one != "" && len(body) > 0 {
		return badRequest("No body should be provided when adding a trait")
	}
	err = s.changeRunbookTraits(rq.ctx(), rb.UUID, func(traits []string) []string {
		if one != "" {
			if !slices.Contains(traits, one) {
				traits = append(traits, one)
			}
			return traits
		}
		return replace
	})
	if err != nil {
		return err
	}
	if one != "" {
		rq.location("runbooks/" + rq.r.PathValue("runbook") + "/traits/" + one)
	}
	return rq.writeEmpty(http.StatusNoContent)
}

// deleteRunbookTraits is DELETE /v1/runbooks/{runbook}/traits (all) and
// …/traits/{trait}; a trait the runbook does not have is no error.
func (s *server) deleteRunbookTraits(rq *request) error {
	if err := runbookTraitsVersion(rq); err != nil {
		return err
	}
	one := rq.r.PathValue("trait")
	rb, err := s.runbookOfPath(rq)
	if err != nil {
		return err
	}
	err = s.changeRunbookTraits(rq.ctx(), rb.UUID, func(traits []string) []string {
		if one == "" {
			return nil
		}
		return slices.DeleteFunc(traits, func(t string) bool { return t == one })
	})
	if err != nil {
		return err
	}
	return rq.writeEmpty(http.StatusNoContent)
}

// changeRunbookTraits replaces the runbook's traits with what change makes
// of them (kept sorted), in one transaction.
func (s *server) changeRunbookTraits(ctx context.Context, id string, change func([]string) []string) error {
	return s.store.InTx(ctx, func(tx store.Store) error {
		rb, err := tx.GetRunbook(ctx, id)
		if err != nil {
			return err
		}
		rb.Traits = change(slices.Clone(rb.Traits))
		if rb.Traits == nil {
			rb.Traits = []string{}
		}
		slices.Sort(rb.Traits)
		return tx.UpdateRunbook(ctx, rb)
	})
}
