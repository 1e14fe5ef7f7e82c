package driver

import "context"

// Inspection phases recorded in a node's history while it is inspected
// (GET /v1/nodes/{node}/history, event_type ProgressEventType), so an
// operator sees how far a node got and a timeout can say where it stopped.
// The netboot events (DHCP, boot files) come from the netboot service, the
// others from the conductor and the inspector.
const (
	PhasePoweredOn      = "powered on"
	PhaseDHCPAnswered   = "DHCP answered"
	PhaseBootScript     = "boot script fetched"
	PhaseKernel         = "kernel fetched"
	PhaseInitramfs      = "initramfs fetched"
	PhaseReport         = "report received"
	PhaseProcessed      = "processed"
	PhaseNetworkRemoved = "network removed"
	PhasePoweredOff     = "powered off"
	// PhaseAborted and PhaseFailed end an introspection started through
	// the inspector API (the conductor records the end of its own).
	PhaseAborted = "aborted"
	PhaseFailed  = "failed"
	// PhaseFallback records why an inspection took the unmanaged path.
	PhaseFallback = "fell back to unmanaged boot"
)

// ProgressEventType is the history event_type of inspection progress.
const ProgressEventType = "inspection progress"

// ProgressRecorder records an inspection phase of a node. It needs no node
// lock and never fails the caller: a phase that cannot be recorded is
// logged. Implementations drop a phase repeated right after itself.
type ProgressRecorder interface {
	Record(ctx context.Context, nodeUUID, phase, detail string)
}

// NoProgress records nothing.
type NoProgress struct{}

// Record does nothing.
func (NoProgress) Record(context.Context, string, string, string) {}
