package states

import (
	"slices"
	"testing"
)

// The deployment paths of Ironic's state machine, walked event by event.
func TestNext_DeploymentPaths(t *testing.T) {
	paths := []struct {
		name   string
		from   string
		events []string
		want   []string
	}{
		{"deploy", Available, []string{EventActive, EventDone}, []string{Deploying, Active}},
		{"deploy fails, then retried", Available, []string{EventActive, EventFail, EventActive, EventDone}, []string{Deploying, DeployFailed, Deploying, Active}},
		{"undeploy through cleaning", Active, []string{EventDeleted, EventDone, EventDone}, []string{Deleting, Cleaning, Available}},
		{"rebuild", Active, []string{EventRebuild, EventDone}, []string{Deploying, Active}},
		{"rescue and back", Active, []string{EventRescue, EventDone, EventUnrescue, EventDone}, []string{Rescuing, Rescue, Unrescuing, Active}},
		{"delete a rescued node", Rescue, []string{EventDeleted}, []string{Deleting}},
		{"adopt", Manageable, []string{EventAdopt, EventDone}, []string{Adopting, Active}},
		{"adopt fails, back to manageable", Manageable, []string{EventAdopt, EventFail, EventManage}, []string{Adopting, AdoptFailed, Manageable}},
		{"manual clean", Manageable, []string{EventClean, EventManage}, []string{Cleaning, Manageable}},
		{"manual clean through clean wait", Manageable, []string{EventClean, EventWait, EventResume, EventManage}, []string{Cleaning, CleanWait, Cleaning, Manageable}},
		{"manual clean fails, back to manageable", Manageable, []string{EventClean, EventFail, EventManage}, []string{Cleaning, CleanFailed, Manageable}},
		{"manual clean aborted in clean wait", Manageable, []string{EventClean, EventWait, EventAbort}, []string{Cleaning, CleanWait, CleanFailed}},
		{"clean hold, unhold, resumed", Manageable, []string{EventClean, EventHold, EventUnhold, EventResume, EventManage}, []string{Cleaning, CleanHold, CleanWait, Cleaning, Manageable}},
		{"clean wait held", Cleaning, []string{EventWait, EventHold, EventAbort}, []string{CleanWait, CleanHold, CleanFailed}},
		{"deploy hold, unhold, wait call-back, resumed", Available, []string{EventActive, EventHold, EventUnhold, EventResume, EventDone}, []string{Deploying, DeployHold, DeployWait, Deploying, Active}},
		{"deploy aborted in wait call-back", Deploying, []string{EventWait, EventAbort}, []string{DeployWait, DeployFailed}},
		{"deploy aborted in deploy hold", Deploying, []string{EventHold, EventAbort}, []string{DeployHold, DeployFailed}},
		{"wait call-back torn down", Deploying, []string{EventWait, EventDeleted}, []string{DeployWait, Deleting}},
		{"service", Active, []string{EventService, EventDone}, []string{Servicing, Active}},
		{"service through service wait", Active, []string{EventService, EventWait, EventResume, EventDone}, []string{Servicing, ServiceWait, Servicing, Active}},
		{"service hold, unhold", Active, []string{EventService, EventHold, EventUnhold, EventResume, EventDone}, []string{Servicing, ServiceHold, ServiceWait, Servicing, Active}},
		{"service fails, retried", Active, []string{EventService, EventFail, EventService, EventDone}, []string{Servicing, ServiceFailed, Servicing, Active}},
		{"service wait aborted: failed, then back to active", Active, []string{EventService, EventWait, EventAbort, EventAbort}, []string{Servicing, ServiceWait, ServiceFailed, Active}},
		{"service hold aborted", ServiceHold, []string{EventAbort, EventAbort}, []string{ServiceFailed, Active}},
		{"service failed, rescued", ServiceFailed, []string{EventRescue}, []string{Rescuing}},
		{"service failed, torn down", ServiceFailed, []string{EventDeleted}, []string{Deleting}},
	}
	for _, p := range paths {
		state := p.from
		for i, ev := range p.events {
			next, err := Next(state, ev)
			if err != nil || next != p.want[i] {
				t.Errorf("%s: %s --%s--> %q, %v; want %q", p.name, state, ev, next, err, p.want[i])
				break
			}
			state = next
		}
	}
	for _, bad := range []struct{ from, event string }{
		{Available, EventRescue}, {Manageable, EventActive}, {Enroll, EventDeleted}, {Active, EventUnrescue},
		{Available, EventClean}, {Enroll, EventClean}, {Active, EventClean}, {CleanFailed, EventClean}, {Cleaning, EventAbort},
		// unhold only leaves a hold; service only starts from active (or a
		// held or failed service); abort in wait call-back needs no hold.
		{CleanWait, EventUnhold}, {Active, EventUnhold}, {ServiceWait, EventUnhold}, {DeployWait, EventUnhold},
		{Manageable, EventService}, {Available, EventService}, {ServiceWait, EventService}, {Servicing, EventAbort},
		{Deploying, EventAbort}, {ServiceHold, EventDone}, {ServiceWait, EventDone},
	} {
		if Can(bad.from, bad.event) {
			t.Errorf("%s accepts %s; Ironic's machine does not", bad.from, bad.event)
		}
	}
	for st, want := range map[string]string{Deploying: Active, Deleting: Available, Rescuing: Rescue, Unrescuing: Active, Adopting: Active, Servicing: Active} {
		if got := Target(st); got != want || !IsTransient(st) {
			t.Errorf("%s: target %q (want %q), transient %v", st, got, want, IsTransient(st))
		}
	}
	// Waits and holds are left to a callback or an operator: no task holds
	// the node there.
	for st, want := range map[string]string{DeployWait: Active, DeployHold: Active, CleanHold: Available, ServiceWait: Active, ServiceHold: Active, ServiceFailed: Active} {
		if got := Target(st); got != want || IsTransient(st) || !slices.Contains(All, st) {
			t.Errorf("%s: target %q (want %q), transient %v, listed %v", st, got, want, IsTransient(st), slices.Contains(All, st))
		}
	}
}
