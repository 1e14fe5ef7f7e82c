// Package jsonlimit bounds what decoding a JSON body may build before any
// decoder runs: the nesting of objects and arrays (a decoder recurses once
// per level) and the number of values (a 1 MiB body of "[{},{},…]" decodes to
// hundreds of thousands of maps). One linear scan, no allocation. It imports
// only the standard library, so the agent's wire packages can use it.
package jsonlimit

import (
	"errors"
	"fmt"
)

// Errors Check wraps; callers branch on them.
var (
	ErrTooDeep = errors.New("JSON nesting too deep")
	ErrTooMany = errors.New("too many JSON values")
)

// Limits for Check. A zero field is no limit.
type Limits struct {
	// MaxDepth is the deepest nesting of objects and arrays.
	MaxDepth int
	// MaxValues bounds the number of values (objects, arrays, strings,
	// numbers, literals; object keys are not counted).
	MaxValues int
}

// Check scans b and returns an error when it nests deeper or holds more
// values than l allows. It does not validate the JSON: a decoder does that
// afterwards, within the bounds Check established. The value count is an
// upper bound (every value but the first in a container follows a comma),
// which is what a limit needs.
func Check(b []byte, l Limits) error {
	_, _, err := scan(b, l)
	return err
}

// Values is an upper bound on the number of values in b (each one but the
// first of a container follows a comma), for estimating what decoding b
// will build. Like Check it does not validate b.
func Values(b []byte) int {
	n, containers, _ := scan(b, Limits{})
	return n + containers
}

// scan is Check's pass; it also returns the number of values Check
// counts and the number of objects and arrays.
func scan(b []byte, l Limits) (values, containers int, err error) {
	depth := 0
	values = 1
	inString, escaped := false, false
	for _, c := range b {
		if inString {
			switch {
			case escaped:
				escaped = false
			case c == '\\':
				escaped = true
			case c == '"':
				inString = false
			}
			continue
		}
		switch c {
		case '"':
			inString = true
		case '{', '[':
			depth++
			containers++
			if l.MaxDepth > 0 && depth > l.MaxDepth {
				return values, containers, fmt.Errorf("%w: more than %d levels of objects and arrays", ErrTooDeep, l.MaxDepth)
			}
		case '}', ']':
			depth--
		case ',':
			values++
			if l.MaxValues > 0 && values > l.MaxValues {
				return values, containers, fmt.Errorf("%w: more than %d", ErrTooMany, l.MaxValues)
			}
		}
	}
	return values, containers, nil
}

// Member returns the raw bytes of the value of key in the top-level
// object b, as a decoder would take it (the last one when the key
// repeats), so that a caller that stores that member as sent need not
// encode its decoded form again. ok is false when b is not an object,
// has no such member, or names a top-level key with an escape (which
// could spell key): the caller then encodes the decoded value. b must be
// valid JSON (decoded already); Member does not validate it.
func Member(b []byte, key string) (value []byte, ok bool) {
	i := skipSpace(b, 0)
	if i >= len(b) || b[i] != '{' {
		return nil, false
	}
	i++
	for {
		i = skipSpace(b, i)
		if i >= len(b) || b[i] != '"' {
			return value, ok
		}
		end, escaped := stringEnd(b, i)
		if escaped {
			return nil, false
		}
		name := b[i+1 : end-1]
		i = skipSpace(b, end)
		if i >= len(b) || b[i] != ':' {
			return nil, false
		}
		i = skipSpace(b, i+1)
		start := i
		i = valueEnd(b, i)
		if string(name) == key {
			value, ok = b[start:i], true
		}
		i = skipSpace(b, i)
		if i >= len(b) || b[i] != ',' {
			return value, ok
		}
		i++
	}
}

func skipSpace(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r') {
		i++
	}
	return i
}

// stringEnd returns the index after the string starting at b[i] (a
// quote) and whether it holds an escape.
func stringEnd(b []byte, i int) (int, bool) {
	escaped := false
	for j := i + 1; j < len(b); j++ {
		switch b[j] {
		case '\\':
			escaped = true
			j++
		case '"':
			return j + 1, escaped
		}
	}
	return len(b), escaped
}

// valueEnd returns the index after the value starting at b[i].
func valueEnd(b []byte, i int) int {
	if i >= len(b) {
		return i
	}
	switch b[i] {
	case '"':
		end, _ := stringEnd(b, i)
		return end
	case '{', '[':
		depth := 0
		for j := i; j < len(b); j++ {
			switch b[j] {
			case '"':
				end, _ := stringEnd(b, j)
				j = end - 1
			case '{', '[':
				depth++
			case '}', ']':
				depth--
				if depth == 0 {
					return j + 1
				}
			}
		}
		return len(b)
	}
	for j := i; j < len(b); j++ {
		switch b[j] {
		case ',', '}', ']', ' ', '\t', '\n', '\r':
			return j
		}
	}
	return len(b)
}
