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
	// The waits and holds of steps (1.85): a hold step stops the flow
	// until unhold; a wait leaves it to a callback (or abort).
	DeployWait = "wait call-back"
	DeployHold = "deploy hold"
	CleanHold  = "clean hold"
	// Servicing an active node with service steps (1.87).
	Servicing     = "servicing"
	ServiceWait   = "service wait"
	ServiceFailed = "service failed"
	ServiceHold   = "service hold"
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
	// EventHold is a hold step; EventUnhold the API verb that leaves the
	// hold for the flow's wait state (1.85).
	EventHold   = "hold"
	EventUnhold = "unhold"
	// EventService starts servicing an active node (1.87).
	EventService = "service"
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

	// Waits and holds of steps, as Ironic's machine has them.
	{Deploying, EventWait}:     DeployWait,
	{Deploying, EventHold}:     DeployHold,
	{DeployWait, EventHold}:    DeployHold,
	{DeployWait, EventResume}:  Deploying,
	{DeployWait, EventFail}:    DeployFailed,
	{DeployWait, EventAbort}:   DeployFailed,
	{DeployWait, EventDeleted}: Deleting,
	{DeployHold, EventUnhold}:  DeployWait,
	{DeployHold, EventAbort}:   DeployFailed,
	{Cleaning, EventHold}:      CleanHold,
	{CleanWait, EventHold}:     CleanHold,
	{CleanHold, EventUnhold}:   CleanWait,
	{CleanHold, EventAbort}:    CleanFailed,

	// Servicing. Ironic aborts a running service by failing it first and
	// then aborting from service failed, which returns to active.
	{Active, EventService}:        Servicing,
	{Servicing, EventDone}:        Active,
	{Servicing, EventFail}:        ServiceFailed,
	{Servicing, EventWait}:        ServiceWait,
	{Servicing, EventHold}:        ServiceHold,
	{ServiceWait, EventHold}:      ServiceHold,
	{ServiceWait, EventResume}:    Servicing,
	{ServiceWait, EventFail}:      ServiceFailed,
	{ServiceWait, EventAbort}:     ServiceFailed,
	{ServiceWait, EventDeleted}:   Deleting,
	{ServiceHold, EventService}:   Servicing,
	{ServiceHold, EventUnhold}:    ServiceWait,
	{ServiceHold, EventFail}:      ServiceFailed,
	{ServiceHold, EventAbort}:     ServiceFailed,
	{ServiceFailed, EventService}: Servicing,
	{ServiceFailed, EventRescue}:  Rescuing,
	{ServiceFailed, EventWait}:    ServiceWait,
	{ServiceFailed, EventHold}:    ServiceHold,
	{ServiceFailed, EventDeleted}: Deleting,
	{ServiceFailed, EventAbort}:   Active,
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
	DeployWait:  Active,
	DeployHold:  Active,
	CleanHold:   Available,
	// Ironic's service failed keeps target active: abort returns there.
	Servicing:     Active,
	ServiceWait:   Active,
	ServiceHold:   Active,
	ServiceFailed: Active,
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
var Transient = []string{Verifying, Inspecting, Cleaning, Deploying, Deleting, Adopting, Rescuing, Unrescuing, Servicing}

// IsTransient reports whether a state is in Transient.
func IsTransient(state string) bool { return slices.Contains(Transient, state) }

// IsStable reports whether a node in this state waits for an operator.
func IsStable(state string) bool {
	switch state {
	case Enroll, Manageable, Available, Active, InspectFailed, CleanFailed, DeployFailed, Error,
		AdoptFailed, Rescue, RescueFailed, UnrescueFail, ServiceFailed, CleanHold, DeployHold, ServiceHold:
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
	DeployWait, DeployHold, CleanHold, Servicing, ServiceWait, ServiceFailed, ServiceHold,
}
