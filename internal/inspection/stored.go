package inspection

import (
	"context"
	"fmt"

	"github.com/ferrometal/ferro/internal/baremetal"
	"github.com/ferrometal/ferro/internal/inspection/rules"
	"github.com/ferrometal/ferro/internal/store"
)

// RuleStore lists the bare metal API's inspection rules.
type RuleStore interface {
	ListInspectionRules(ctx context.Context, f store.InspectionRuleFilter) ([]*baremetal.InspectionRule, error)
}

// StoredRules is the agent path's RuleSource: the rules of
// /v1/inspection_rules of one phase ("" is main), in the order they were
// created (Apply then orders them by priority).
type StoredRules struct {
	Store RuleStore
	Phase string
}

// Rules implements RuleSource. A stored rule that no longer parses fails
// the report, as Ironic would fail running it.
func (s StoredRules) Rules(ctx context.Context) ([]*rules.Rule, error) {
	phase := s.Phase
	if phase == "" {
		phase = rules.PhaseMain
	}
	stored, err := s.Store.ListInspectionRules(ctx, store.InspectionRuleFilter{Phase: phase})
	if err != nil {
		return nil, err
	}
	out := make([]*rules.Rule, 0, len(stored))
	for _, sr := range stored {
		r, err := rules.FromStored(sr)
		if err != nil {
			return nil, fmt.Errorf("inspection rule %s: %w", sr.UUID, err)
		}
		out = append(out, r)
	}
	return out, nil
}
