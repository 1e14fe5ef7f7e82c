package sql

import (
	"fmt"

	"github.com/ferrometal/ferro/internal/store"
)

// storeError wraps one of store's sentinel errors with a message written for
// API users ("node n1 could not be found"): the message does not repeat the
// sentinel's text, and errors.Is still finds the sentinel.
type storeError struct {
	sentinel error
	msg      string
}

func (e *storeError) Error() string { return e.msg }
func (e *storeError) Unwrap() error { return e.sentinel }

func notFound(format string, args ...any) error {
	return &storeError{store.ErrNotFound, fmt.Sprintf(format, args...)}
}

func conflict(format string, args ...any) error {
	return &storeError{store.ErrConflict, fmt.Sprintf(format, args...)}
}

func invalid(format string, args ...any) error {
	return &storeError{store.ErrInvalidInput, fmt.Sprintf(format, args...)}
}

func locked(node, holder string) error {
	return &storeError{store.ErrNodeLocked, fmt.Sprintf(
		"node %s is locked by host %s, please retry after the current operation is completed", node, holder)}
}

// writeError explains a failed insert or update of a kind ("node", "port")
// of object. values maps the object's unique columns to the values written,
// for the conflict message; parent is the message for a foreign key
// violation, the missing parent ("node X could not be found").
func (db *DB) writeError(err error, kind string, values map[string]string, parent string) error {
	switch v, col := db.d.constraintError(err); v {
	case uniqueViolation:
		if val, ok := values[col]; ok {
			return conflict("%s with %s %q already exists", kind, col, val)
		}
		return conflict("%s already exists: %v", kind, err)
	case foreignKeyViolation:
		if parent != "" {
			return notFound("%s", parent)
		}
		return notFound("%s refers to a missing object: %v", kind, err)
	}
	return fmt.Errorf("write %s: %w", kind, err)
}
