package conductor

import (
	"errors"

	"github.com/ferrometal/ferro/internal/store"
)

// Errors the API maps to status codes.
var (
	// ErrNodeLocked: another task holds the node (409 NodeLocked).
	ErrNodeLocked = store.ErrNodeLocked
	// ErrInvalidState: the verb is not allowed in the node's state (400 InvalidStateRequested).
	ErrInvalidState = errors.New("invalid state requested")
	// ErrNoFreeWorker: the worker pool is full (503 NoFreeConductorWorker).
	ErrNoFreeWorker = errors.New("no free conductor worker")
	// ErrShuttingDown: the conductor stopped taking work (503).
	ErrShuttingDown = errors.New("conductor is shutting down")
	// ErrTemporaryFailure: the node cannot act now (503 TemporaryFailure).
	ErrTemporaryFailure = errors.New("temporary failure")
)

// ValidationResult is one interface's line in GET /v1/nodes/{node}/validate.
// Result is false with a reason when the interface failed or cannot do it.
type ValidationResult struct {
	Result *bool  `json:"result"`
	Reason string `json:"reason,omitempty"`
}
