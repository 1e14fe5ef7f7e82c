package rules

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"strconv"

	"github.com/ferrometal/ferro/internal/baremetal"

	"go.yaml.in/yaml/v3"
)

// LoadBuiltIn reads [inspection_rules]built_in_rules: a YAML list of rules
// in the API's shape, each validated as a built-in rule (any priority, any
// UUID); a rule without a UUID gets 00000000-0000-0000-0000-<n>, n counting
// them from 0, as Ironic does. Any error refuses the whole file.
func LoadBuiltIn(path string) ([]*Rule, error) {
	if path == "" {
		return nil, nil
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("built-in rules file: %w", err)
	}
	return ParseBuiltIn(b, path)
}

// ParseBuiltIn is LoadBuiltIn of the file's content; name is for messages.
func ParseBuiltIn(b []byte, name string) ([]*Rule, error) {
	var doc any
	if err := yaml.Unmarshal(b, &doc); err != nil {
		return nil, fmt.Errorf("Error parsing YAML in built-in rules file %s: %w", name, err)
	}
	list, ok := jsonGeneric(doc).([]any)
	if !ok {
		return nil, fmt.Errorf("Built-in rules file (%s) should contain a list of rules", name)
	}
	var out []*Rule
	synthetic := 0
	for i, e := range list {
		m, ok := e.(map[string]any)
		if !ok {
			return nil, fmt.Errorf("Error parsing built-in rule %d of %s: not a mapping", i, name)
		}
		rule := map[string]any{
			"uuid": m["uuid"], "priority": m["priority"], "description": m["description"], "sensitive": m["sensitive"],
			"phase": m["phase"], "actions": m["actions"], "conditions": m["conditions"],
		}
		if rule["uuid"] == nil {
			rule["uuid"] = fmt.Sprintf("00000000-0000-0000-0000-%012x", synthetic)
			synthetic++
		}
		for k, def := range map[string]any{"priority": json.Number("0"), "sensitive": false, "phase": PhaseMain, "actions": []any{}, "conditions": []any{}} {
			if rule[k] == nil {
				rule[k] = def
			}
		}
		if rule["description"] == nil {
			delete(rule, "description")
		}
		r, err := FromMap(rule, true)
		if err != nil {
			return nil, fmt.Errorf("Error parsing built-in rule %d of %s: %w", i, name, err)
		}
		out = append(out, r)
	}
	return out, nil
}

// jsonGeneric turns decoded YAML into the values JSON decoding gives.
func jsonGeneric(v any) any {
	b, err := json.Marshal(v)
	if err != nil {
		return nil
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var out any
	if dec.Decode(&out) != nil {
		return nil
	}
	return out
}

// reprJSON is a value as JSON, for messages.
func reprJSON(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return string(b)
}

// FromStored parses a stored rule of the bare metal API.
func FromStored(s *baremetal.InspectionRule) (*Rule, error) {
	m := map[string]any{"uuid": s.UUID, "priority": json.Number(strconv.Itoa(s.Priority)), "sensitive": s.Sensitive, "phase": s.Phase}
	if s.Description != nil {
		m["description"] = *s.Description
	}
	conds := make([]any, len(s.Conditions))
	for i, c := range s.Conditions {
		conds[i] = c
	}
	acts := make([]any, len(s.Actions))
	for i, a := range s.Actions {
		acts[i] = a
	}
	m["conditions"], m["actions"] = conds, acts
	// Rules are validated when stored; a priority outside the user range
	// in the store is a built-in one's only if it came from the file.
	return FromMap(m, false)
}

// ToStored is the stored form of a rule Parse accepted, for the API to
// keep.
func (r *Rule) ToStored() *baremetal.InspectionRule {
	conds, acts := r.Stored()
	return &baremetal.InspectionRule{UUID: r.UUID, Description: r.Description, Priority: r.Priority, Sensitive: r.Sensitive,
		Phase: r.Phase, Conditions: conds, Actions: acts}
}
