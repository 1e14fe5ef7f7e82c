package inspector

import (
	"bytes"
	"context"
	"log/slog"
	"sync"

	irules "github.com/ferrometal/ferro/internal/inspection/rules"
	"github.com/ferrometal/ferro/internal/inspector/rules"
	"github.com/ferrometal/ferro/internal/store"
)

// storedRules gives the pipeline the introspection rules of /v1/rules,
// converted into the rule engine at load (see rules.Convert for why), in
// the order they apply in. Conversions are cached by the stored body.
type storedRules struct {
	store store.Store
	log   *slog.Logger
	cache sync.Map // rule UUID → cachedRule
}

type cachedRule struct {
	body []byte
	rule *irules.Rule // nil: the stored rule does not convert
}

// Rules implements inspection.RuleSource.
func (s *storedRules) Rules(ctx context.Context) ([]*irules.Rule, error) {
	stored, err := s.store.ListRules(ctx)
	if err != nil {
		return nil, err
	}
	out := make([]*irules.Rule, 0, len(stored))
	for _, sr := range stored {
		if c, ok := s.cache.Load(sr.UUID); ok && bytes.Equal(c.(cachedRule).body, sr.Body) {
			if r := c.(cachedRule).rule; r != nil {
				out = append(out, r)
			}
			continue
		}
		r, err := convertStored(sr)
		if err != nil {
			s.log.Warn("stored introspection rule does not parse; skipped", "rule", sr.UUID, "error", err)
		}
		s.cache.Store(sr.UUID, cachedRule{body: sr.Body, rule: r})
		if r != nil {
			out = append(out, r)
		}
	}
	return out, nil
}

func convertStored(sr *store.Rule) (*irules.Rule, error) {
	r, err := rules.Parse(sr.Body)
	if err != nil {
		return nil, err
	}
	r.UUID = sr.UUID
	c, err := rules.Convert(r)
	if err != nil {
		return nil, err
	}
	return c.Rule, nil
}
