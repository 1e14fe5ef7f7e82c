package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"

	"github.com/ferrometal/ferro/internal/inspector/rules"
)

// rulesConvertDetails follow `ferro rules convert --help`'s usage.
const rulesConvertDetails = `Reads ironic-inspector introspection rules (the JSON of the inspector API's
/v1/rules: one rule, a list of them, or {"rules": [...]}) from FILE, or
standard input without one, and prints them as Ironic inspection rules (a
JSON list, each to create with POST /v1/inspection_rules at API 1.96).
Where an Ironic rule would behave differently (Ironic formats values as
strings, and cannot loop over the data), a warning on standard error says
so. Exits 1 when a rule cannot be converted; the others are printed.`

// rulesCmd is `ferro rules convert [FILE]`.
func rulesCmd(_ context.Context, c command, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet(c.name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			printUsage(fs, c, stdout)
			fmt.Fprintf(stdout, "\n%s\n", rulesConvertDetails)
			return 0
		}
		fmt.Fprintln(stderr)
		printUsage(fs, c, stderr)
		return 2
	}
	if fs.NArg() > 1 {
		return usageError(fs, c, stderr, "unexpected argument %q", fs.Arg(1))
	}
	in := io.Reader(os.Stdin)
	if fs.NArg() == 1 {
		f, err := os.Open(fs.Arg(0))
		if err != nil {
			fmt.Fprintf(stderr, "ferro rules convert: %v\n", err)
			return 1
		}
		defer f.Close()
		in = f
	}
	out, warnings, err := convertRules(io.LimitReader(in, 64<<20))
	for _, w := range warnings {
		fmt.Fprintf(stderr, "warning: %s\n", w)
	}
	if out != nil {
		b, _ := json.MarshalIndent(out, "", "  ")
		fmt.Fprintf(stdout, "%s\n", b)
	}
	if err != nil {
		fmt.Fprintf(stderr, "ferro rules convert: %v\n", err)
		return 1
	}
	return 0
}

// convertRules converts the rules JSON read from r.
func convertRules(r io.Reader) (out []any, warnings []string, err error) {
	b, err := io.ReadAll(r)
	if err != nil {
		return nil, nil, err
	}
	var doc any
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	if err := dec.Decode(&doc); err != nil {
		return nil, nil, fmt.Errorf("invalid JSON: %w", err)
	}
	var list []any
	switch d := doc.(type) {
	case []any:
		list = d
	case map[string]any:
		if rs, ok := d["rules"].([]any); ok && d["conditions"] == nil && d["actions"] == nil {
			list = rs
		} else {
			list = []any{d}
		}
	default:
		return nil, nil, errors.New("expected a rule, a list of rules or {\"rules\": [...]}")
	}
	out = []any{}
	var errs []error
	for i, e := range list {
		body, _ := json.Marshal(e)
		rule, err := rules.Parse(body)
		if err == nil {
			m, _ := e.(map[string]any)
			if id, ok := m["uuid"].(string); ok {
				rule.UUID = id
			}
			var c *rules.Converted
			if c, err = rules.Convert(rule); err == nil {
				if rule.UUID == "" {
					delete(c.Ironic, "uuid")
				}
				out = append(out, c.Ironic)
				for _, w := range c.Warnings {
					warnings = append(warnings, fmt.Sprintf("rule %d (%s): %s", i, label(rule), w))
				}
				continue
			}
		}
		errs = append(errs, fmt.Errorf("rule %d: %w", i, err))
	}
	return out, warnings, errors.Join(errs...)
}

func label(r *rules.Rule) string {
	if r.Description != "" {
		return r.Description
	}
	if r.UUID != "" {
		return r.UUID
	}
	return "no description"
}
