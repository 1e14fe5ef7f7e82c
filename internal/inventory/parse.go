package inventory

import (
	"encoding/json"
	"unicode/utf8"
)

// parseObject decodes a JSON object into the generic values that
// encoding/json's Decoder with UseNumber produces: map[string]any, []any,
// string, json.Number, bool and nil. It exists for speed: a report is tens
// of kilobytes, and this single pass takes a fraction of encoding/json's
// time. Strings without escapes and numbers are substrings of s, not
// copies; a string with escapes is decoded by encoding/json.
//
// It only handles what it can decode exactly as encoding/json does. On
// anything else (invalid JSON, a top-level value that is not an object,
// data after it, objects and arrays nested deeper than maxDepth), ok is
// false and the caller decodes with encoding/json, which
// then also words the error.
func parseObject(s string, maxDepth, maxValues int) (obj map[string]any, ok bool) {
	p := parser{s: s, depth: maxDepth, values: maxValues}
	p.space()
	if p.i >= len(p.s) || p.s[p.i] != '{' {
		return nil, false
	}
	v, ok := p.value()
	if !ok {
		return nil, false
	}
	p.space()
	if p.i != len(p.s) {
		return nil, false
	}
	return v.(map[string]any), true
}

type parser struct {
	s      string
	i      int
	depth  int // how many more levels of objects and arrays may open
	values int // how many more values may be built
}

func (p *parser) space() {
	for p.i < len(p.s) {
		switch p.s[p.i] {
		case ' ', '\t', '\n', '\r':
			p.i++
		default:
			return
		}
	}
}

// value parses the value at p.i; the caller has skipped white space.
func (p *parser) value() (any, bool) {
	if p.i >= len(p.s) {
		return nil, false
	}
	if p.values--; p.values < 0 {
		return nil, false
	}
	switch c := p.s[p.i]; {
	case c == '{':
		if p.depth--; p.depth < 0 {
			return nil, false // a failed parse is not resumed: no need to restore depth
		}
		p.i++
		m := map[string]any{}
		p.space()
		if p.i < len(p.s) && p.s[p.i] == '}' {
			p.i++
			p.depth++
			return m, true
		}
		for {
			if p.i >= len(p.s) || p.s[p.i] != '"' {
				return nil, false
			}
			k, ok := p.str()
			if !ok {
				return nil, false
			}
			p.space()
			if p.i >= len(p.s) || p.s[p.i] != ':' {
				return nil, false
			}
			p.i++
			p.space()
			v, ok := p.value()
			if !ok {
				return nil, false
			}
			m[k] = v // the last of duplicate keys wins, as in encoding/json
			p.space()
			if p.i >= len(p.s) {
				return nil, false
			}
			switch p.s[p.i] {
			case ',':
				p.i++
				p.space()
			case '}':
				p.i++
				p.depth++
				return m, true
			default:
				return nil, false
			}
		}
	case c == '[':
		if p.depth--; p.depth < 0 {
			return nil, false // a failed parse is not resumed: no need to restore depth
		}
		p.i++
		a := []any{}
		p.space()
		if p.i < len(p.s) && p.s[p.i] == ']' {
			p.i++
			p.depth++
			return a, true
		}
		for {
			v, ok := p.value()
			if !ok {
				return nil, false
			}
			a = append(a, v)
			p.space()
			if p.i >= len(p.s) {
				return nil, false
			}
			switch p.s[p.i] {
			case ',':
				p.i++
				p.space()
			case ']':
				p.i++
				p.depth++
				return a, true
			default:
				return nil, false
			}
		}
	case c == '"':
		return p.str()
	case c == '-' || ('0' <= c && c <= '9'):
		return p.number()
	case c == 't':
		return true, p.literal("true")
	case c == 'f':
		return false, p.literal("false")
	case c == 'n':
		return nil, p.literal("null")
	}
	return nil, false
}

func (p *parser) literal(word string) bool {
	if len(p.s)-p.i < len(word) || p.s[p.i:p.i+len(word)] != word {
		return false
	}
	p.i += len(word)
	return true
}

// str parses a string. One without escapes, of valid UTF-8, is a
// substring of p.s; any other is decoded by encoding/json on its own.
func (p *parser) str() (string, bool) {
	start := p.i + 1
	ascii := true
	for i := start; i < len(p.s); i++ {
		switch c := p.s[i]; {
		case c == '"':
			v := p.s[start:i]
			if !ascii && !utf8.ValidString(v) {
				return p.strSlow(i)
			}
			p.i = i + 1
			return v, true
		case c == '\\':
			// Find the closing quote, stepping over escaped characters.
			for i < len(p.s) && p.s[i] != '"' {
				if p.s[i] == '\\' {
					i++
				}
				i++
			}
			return p.strSlow(i)
		case c < 0x20:
			return "", false
		case c >= utf8.RuneSelf:
			ascii = false
		}
	}
	return "", false
}

// strSlow decodes the string literal from p.i to the quote at end with
// encoding/json: escapes, and bytes that are not UTF-8 (which it replaces).
func (p *parser) strSlow(end int) (string, bool) {
	if end >= len(p.s) || p.s[end] != '"' {
		return "", false
	}
	var v string
	if err := json.Unmarshal([]byte(p.s[p.i:end+1]), &v); err != nil {
		return "", false
	}
	p.i = end + 1
	return v, true
}

// number parses a number by the JSON grammar (what encoding/json checks)
// and returns its text as a json.Number.
func (p *parser) number() (json.Number, bool) {
	s, i := p.s, p.i
	start := i
	if s[i] == '-' {
		i++
	}
	switch {
	case i < len(s) && s[i] == '0':
		i++
	case i < len(s) && '1' <= s[i] && s[i] <= '9':
		for i < len(s) && '0' <= s[i] && s[i] <= '9' {
			i++
		}
	default:
		return "", false
	}
	if i < len(s) && s[i] == '.' {
		i++
		if i >= len(s) || s[i] < '0' || s[i] > '9' {
			return "", false
		}
		for i < len(s) && '0' <= s[i] && s[i] <= '9' {
			i++
		}
	}
	if i < len(s) && (s[i] == 'e' || s[i] == 'E') {
		i++
		if i < len(s) && (s[i] == '+' || s[i] == '-') {
			i++
		}
		if i >= len(s) || s[i] < '0' || s[i] > '9' {
			return "", false
		}
		for i < len(s) && '0' <= s[i] && s[i] <= '9' {
			i++
		}
	}
	p.i = i
	return json.Number(s[start:i]), true
}
