// Package states is the provision state machine: a pure transition table of
// Ironic's states and events, with no I/O.
package states

import (
	"fmt"
	"slices"
)

// Provision states, as Ironic names them on the wire.
const (
	Enroll        = "enroll"
	Verifying     = "verifying"
	Manageable    = "manageable"
	Inspecting    = "inspecting"
	InspectWait   = "inspect wait"
	InspectFailed = "inspect failed"
	Cleaning      = "cleaning"
	CleanWait     = "clean wait"
	CleanFailed   = "clean failed"
	Available     = "available"
	Active        = "active"
	Deploying     = "deploying"
	DeployFailed  = "deploy failed"
	Deleting      = "deleting"
	Adopting      = "adopting"
	AdoptFailed   = "adopt failed"
	Rescuing      = "rescuing"
	Rescue        = "rescue"
	RescueFailed  = "rescue failed"
	Unrescuing    = "unrescuing"
	UnrescueFail  = "unrescue failed"
	Error         = "error"
)

// Events drive transitions. The API verbs manage, inspect, provide and abort
// are events; wait, done, fail and resume come from the conductor.
const (
	EventManage  = "manage"
	EventInspect = "inspect"
	EventProvide = "provide"
	EventAbort   = "abort"
	EventWait    = "wait"
	EventDone    = "done"
	EventFail    = "fail"
	EventResume  = "resume"
	// The deployment verbs, as the API names them: with the fake deploy
	// and rescue interfaces each finishes at once (done).
	EventActive   = "active"
	EventDeleted  = "deleted"
	EventRebuild  = "rebuild"
	EventAdopt    = "adopt"
	EventRescue   = "rescue"
	EventUnrescue = "unrescue"
	// EventClean is manual cleaning from manageable; the conductor ends it
	// with manage (back to manageable), not done (available).
	EventClean = "clean"
)

type edge struct{ from, event string }

// transitions is the whole table. A transient state (verifying, inspecting,
// cleaning) is left by done or fail; inspect wait also by abort and resume.
var transitions = map[edge]string{
	{Enroll, EventManage}:         Verifying,
	{Verifying, EventDone}:        Manageable,
	{Verifying, EventFail}:        Enroll,
	{Manageable, EventInspect}:    Inspecting,
	{InspectFailed, EventInspect}: Inspecting,
	{InspectFailed, EventManage}:  Manageable,
	{Inspecting, EventWait}:       InspectWait,
	{Inspecting, EventDone}:       Manageable,
	{Inspecting, EventFail}:       InspectFailed,
	{InspectWait, EventDone}:      Manageable,
	{InspectWait, EventFail}:      InspectFailed,
	{InspectWait, EventAbort}:     InspectFailed,
	{InspectWait, EventResume}:    Inspecting,
	{Manageable, EventProvide}:    Cleaning,
	{Cleaning, EventDone}:         Available,
	{Cleaning, EventFail}:         CleanFailed,
	{Cleaning, EventWait}:         CleanWait,
	{CleanWait, EventDone}:        Available,
	{CleanWait, EventFail}:        CleanFailed,
	{CleanWait, EventAbort}:       CleanFailed,
	{CleanFailed, EventManage}:    Manageable,
	{Available, EventManage}:      Manageable,
	// Manual cleaning, as Ironic's machine has it: clean wait resumes into
	// cleaning, and cleaning ends with manage.
	{Manageable, EventClean}: Cleaning,
	{Cleaning, EventManage}:  Manageable,
	{CleanWait, EventResume}: Cleaning,

	// Deployment, as Ironic's machine has it: deploying ends active,
	// deleting goes through cleaning to available.
	{Available, EventActive}:      Deploying,
	{DeployFailed, EventActive}:   Deploying,
	{Active, EventRebuild}:        Deploying,
	{DeployFailed, EventRebuild}:  Deploying,
	{Deploying, EventDone}:        Active,
	{Deploying, EventFail}:        DeployFailed,
	{Active, EventDeleted}:        Deleting,
	{DeployFailed, EventDeleted}:  Deleting,
	{Error, EventDeleted}:         Deleting,
	{Rescue, EventDeleted}:        Deleting,
	{RescueFailed, EventDeleted}:  Deleting,
	{UnrescueFail, EventDeleted}:  Deleting,
	{Deleting, EventDone}:         Cleaning,
	{Deleting, EventFail}:         Error,
	{Manageable, EventAdopt}:      Adopting,
	{AdoptFailed, EventAdopt}:     Adopting,
	{Adopting, EventDone}:         Active,
	{Adopting, EventFail}:         AdoptFailed,
	{AdoptFailed, EventManage}:    Manageable,
	{Active, EventRescue}:         Rescuing,
	{Rescue, EventRescue}:         Rescuing,
	{RescueFailed, EventRescue}:   Rescuing,
	{Rescuing, EventDone}:         Rescue,
	{Rescuing, EventFail}:         RescueFailed,
	{Rescue, EventUnrescue}:       Unrescuing,
	{RescueFailed, EventUnrescue}: Unrescuing,
	{UnrescueFail, EventUnrescue}: Unrescuing,
	{Unrescuing, EventDone}:       Active,
	{Unrescuing, EventFail}:       UnrescueFail,
}

// targets is the target_provision_state a transient state reports.
var targets = map[string]string{
	Verifying:   Manageable,
	Inspecting:  Manageable,
	InspectWait: Manageable,
	Cleaning:    Available,
	CleanWait:   Available,
	Deploying:   Active,
	Deleting:    Available,
	Adopting:    Active,
	Rescuing:    Rescue,
	Unrescuing:  Active,
}

// ErrInvalidTransition is returned (wrapped) by Next for an event that the
// current state does not accept.
type ErrInvalidTransition struct{ From, Event string }

func (e *ErrInvalidTransition) Error() string {
	return fmt.Sprintf("the requested action %q cannot be performed on a node in state %q", e.Event, e.From)
}

// Next returns the state that event leads to from state from.
func Next(from, event string) (string, error) {
	to, ok := transitions[edge{from, event}]
	if !ok {
		return "", &ErrInvalidTransition{From: from, Event: event}
	}
	return to, nil
}

// Can reports whether event is accepted in state from.
func Can(from, event string) bool {
	_, ok := transitions[edge{from, event}]
	return ok
}

// Target returns the target_provision_state for a state, or "" for a stable one.
func Target(state string) string { return targets[state] }

// Transient lists the states a conductor works in, each held under the
// node's lock by a running task: a node left there by a dead conductor, or
// without a lock, must be failed.
var Transient = []string{Verifying, Inspecting, Cleaning, Deploying, Deleting, Adopting, Rescuing, Unrescuing}

// IsTransient reports whether a state is in Transient.
func IsTransient(state string) bool { return slices.Contains(Transient, state) }

// IsStable reports whether a node in this state waits for an operator.
func IsStable(state string) bool {
	switch state {
	case Enroll, Manageable, Available, Active, InspectFailed, CleanFailed, DeployFailed, Error,
		AdoptFailed, Rescue, RescueFailed, UnrescueFail:
		return true
	}
	return false
}

// DeletableStates are the states in which Ironic lets a node be deleted.
var DeletableStates = map[string]bool{
	Enroll: true, Manageable: true, Available: true, InspectFailed: true, CleanFailed: true, Error: true,
	AdoptFailed: true,
}

// All lists every state the API may report, for validation of filters.
var All = []string{
	Enroll, Verifying, Manageable, Inspecting, InspectWait, InspectFailed,
	Cleaning, CleanWait, CleanFailed, Available, Active, Deploying, DeployFailed, Error,
	Deleting, Adopting, AdoptFailed, Rescuing, Rescue, RescueFailed, Unrescuing, UnrescueFail,
}
