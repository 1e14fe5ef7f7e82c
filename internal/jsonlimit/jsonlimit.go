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
	depth, values := 0, 1
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
			if l.MaxDepth > 0 && depth > l.MaxDepth {
				return fmt.Errorf("%w: more than %d levels of objects and arrays", ErrTooDeep, l.MaxDepth)
			}
		case '}', ']':
			depth--
		case ',':
			values++
			if l.MaxValues > 0 && values > l.MaxValues {
				return fmt.Errorf("%w: more than %d", ErrTooMany, l.MaxValues)
			}
		}
	}
	return nil
}
