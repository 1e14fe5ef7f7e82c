package rules

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// A Path is the JSONPath subset of upstream's jsonpath_rw that rules use:
// dotted field names (quoted when they hold other characters), "*" for
// every field of an object, "[n]" for an element of a list and "[*]" or
// "[a:b]" for a slice, after an optional "$" root.
type Path []step

type step struct {
	kind  stepKind
	name  string // field
	index int    // index
	start *int   // slice bounds
	end   *int
}

type stepKind int

const (
	stepField stepKind = iota
	stepAnyField
	stepIndex
	stepSlice
)

// ParsePath parses a JSONPath.
func ParsePath(s string) (Path, error) {
	p := &pathParser{s: s}
	return p.parse()
}

type pathParser struct {
	s   string
	pos int
}

func (p *pathParser) skipSpace() {
	for p.pos < len(p.s) && (p.s[p.pos] == ' ' || p.s[p.pos] == '\t') {
		p.pos++
	}
}

func (p *pathParser) errorf(format string, args ...any) error {
	return fmt.Errorf("at offset %d: %s", p.pos, fmt.Sprintf(format, args...))
}

func (p *pathParser) parse() (Path, error) {
	var out Path
	p.skipSpace()
	if strings.HasPrefix(p.s[p.pos:], "$") {
		p.pos++
		p.skipSpace()
		if p.pos == len(p.s) {
			return out, nil
		}
		if p.s[p.pos] != '.' && p.s[p.pos] != '[' {
			return nil, p.errorf("expected . or [ after $")
		}
		if p.s[p.pos] == '.' {
			p.pos++
		}
	}
	needField := true
	for {
		p.skipSpace()
		if p.pos == len(p.s) {
			if needField {
				return nil, p.errorf("expected a field name")
			}
			return out, nil
		}
		switch c := p.s[p.pos]; {
		case c == '[':
			if needField && len(out) > 0 {
				return nil, p.errorf("expected a field name")
			}
			st, err := p.bracket()
			if err != nil {
				return nil, err
			}
			out = append(out, st)
			needField = false
		case c == '.':
			if needField {
				return nil, p.errorf("unexpected .")
			}
			if strings.HasPrefix(p.s[p.pos:], "..") {
				return nil, p.errorf("descendant (..) paths are not supported")
			}
			p.pos++
			needField = true
		case needField:
			st, err := p.field()
			if err != nil {
				return nil, err
			}
			out = append(out, st)
			needField = false
		default:
			return nil, p.errorf("unexpected %q", c)
		}
	}
}

func isIDChar(c byte, first bool) bool {
	return c == '_' || c == '@' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' ||
		!first && ('0' <= c && c <= '9' || c == '-')
}

func (p *pathParser) field() (step, error) {
	c := p.s[p.pos]
	switch {
	case c == '*':
		p.pos++
		return step{kind: stepAnyField}, nil
	case c == '\'' || c == '"':
		end := strings.IndexByte(p.s[p.pos+1:], c)
		if end < 0 {
			return step{}, p.errorf("unterminated quoted field name")
		}
		name := p.s[p.pos+1 : p.pos+1+end]
		p.pos += end + 2
		return step{kind: stepField, name: name}, nil
	case isIDChar(c, true):
		start := p.pos
		for p.pos < len(p.s) && isIDChar(p.s[p.pos], false) {
			p.pos++
		}
		return step{kind: stepField, name: p.s[start:p.pos]}, nil
	}
	return step{}, p.errorf("unexpected %q", c)
}

func (p *pathParser) bracket() (step, error) {
	end := strings.IndexByte(p.s[p.pos:], ']')
	if end < 0 {
		return step{}, p.errorf("unterminated [")
	}
	inner := strings.TrimSpace(p.s[p.pos+1 : p.pos+end])
	p.pos += end + 1
	if inner == "*" {
		return step{kind: stepSlice}, nil
	}
	if lo, hi, ok := strings.Cut(inner, ":"); ok {
		st := step{kind: stepSlice}
		for _, b := range []struct {
			text string
			dst  **int
		}{{lo, &st.start}, {hi, &st.end}} {
			if t := strings.TrimSpace(b.text); t != "" {
				n, err := strconv.Atoi(t)
				if err != nil {
					return step{}, fmt.Errorf("slice bound %q is not an integer", t)
				}
				*b.dst = &n
			}
		}
		return st, nil
	}
	n, err := strconv.Atoi(inner)
	if err != nil || n < 0 {
		return step{}, fmt.Errorf("index %q is not a non-negative integer", inner)
	}
	return step{kind: stepIndex, index: n}, nil
}

// Find returns the values the path selects in doc, in document order
// (object fields of "*" sorted by name).
func (p Path) Find(doc any) []any {
	values := []any{doc}
	for _, st := range p {
		var next []any
		for _, v := range values {
			next = append(next, st.find(v)...)
		}
		values = next
	}
	return values
}

func (st step) find(v any) []any {
	switch st.kind {
	case stepField:
		if m, ok := v.(map[string]any); ok {
			if fv, ok := m[st.name]; ok {
				return []any{fv}
			}
		}
	case stepAnyField:
		if m, ok := v.(map[string]any); ok {
			keys := make([]string, 0, len(m))
			for k := range m {
				keys = append(keys, k)
			}
			slices.Sort(keys)
			out := make([]any, len(keys))
			for i, k := range keys {
				out[i] = m[k]
			}
			return out
		}
	case stepIndex:
		if l, ok := v.([]any); ok && st.index < len(l) {
			return []any{l[st.index]}
		}
	case stepSlice:
		l, ok := v.([]any)
		if !ok {
			if v == nil {
				return nil
			}
			l = []any{v} // jsonpath_rw treats a scalar or an object as a one-element list
		}
		lo, hi := 0, len(l)
		if st.start != nil {
			lo = bound(*st.start, len(l))
		}
		if st.end != nil {
			hi = bound(*st.end, len(l))
		}
		if lo >= hi {
			return nil
		}
		return slices.Clone(l[lo:hi])
	}
	return nil
}

// bound clamps a Python slice bound.
func bound(i, n int) int {
	if i < 0 {
		i += n
	}
	return min(max(i, 0), n)
}
