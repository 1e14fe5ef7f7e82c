package states

import "testing"

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
	} {
		if Can(bad.from, bad.event) {
			t.Errorf("%s accepts %s; Ironic's machine does not", bad.from, bad.event)
		}
	}
	for st, want := range map[string]string{Deploying: Active, Deleting: Available, Rescuing: Rescue, Unrescuing: Active, Adopting: Active} {
		if got := Target(st); got != want || !IsTransient(st) {
			t.Errorf("%s: target %q (want %q), transient %v", st, got, want, IsTransient(st))
		}
	}
}
