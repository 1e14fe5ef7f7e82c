package conductor

import (
	"context"
	"errors"
	"slices"
	"sync"
	"testing"

	"github.com/ferrometal/ferro/internal/baremetal"
	"github.com/ferrometal/ferro/internal/states"
	"github.com/ferrometal/ferro/internal/store"
)

// savedStates records every provision state and target a node is saved with.
type savedStates struct {
	store.Store
	mu   *sync.Mutex
	seen map[string][]string
}

func (s savedStates) UpdateNode(ctx context.Context, n *baremetal.Node) error {
	s.mu.Lock()
	s.seen[n.UUID] = append(s.seen[n.UUID], n.ProvisionState+"/"+n.TargetProvisionState)
	s.mu.Unlock()
	return s.Store.UpdateNode(ctx, n)
}

func (s savedStates) InTx(ctx context.Context, fn func(tx store.Store) error) error {
	return s.Store.InTx(ctx, func(tx store.Store) error { return fn(savedStates{Store: tx, mu: s.mu, seen: s.seen}) })
}

// Manual cleaning, case by case: the state it ends in and its last_error,
// or the synchronous error that leaves the node as it was.
func TestDoNodeClean(t *testing.T) {
	r := newRig(t)
	saved := savedStates{Store: r.store, mu: &sync.Mutex{}, seen: map[string][]string{}}
	r.c.store = saved
	ctx := context.Background()
	factoryReset := CleanStep{Interface: "bios", Step: "factory_reset"}
	tests := []struct {
		name      string
		state     string
		ifs       map[string]string
		maint     bool
		steps     []CleanStep
		wantErr   error
		wantState string
		wantError string // last_error, after the node's UUID
	}{
		{"fake steps", states.Manageable, nil, false,
			[]CleanStep{factoryReset, {Interface: "bios", Step: "apply_configuration", Args: map[string]any{"settings": []any{}}}}, nil, states.Manageable, ""},
		{"step not offered", states.Manageable, nil, false,
			[]CleanStep{{Interface: "deploy", Step: "erase_devices"}}, nil, states.CleanFailed,
			": node does not support this clean step: {'interface': 'deploy', 'step': 'erase_devices'}"},
		{"bios not fake", states.Manageable, map[string]string{"bios": "no-bios"}, false,
			[]CleanStep{factoryReset}, nil, states.CleanFailed,
			": node does not support this clean step: {'interface': 'bios', 'step': 'factory_reset'}"},
		{"required argument missing", states.Manageable, nil, false,
			[]CleanStep{{Interface: "bios", Step: "apply_configuration"}}, nil, states.CleanFailed,
			": clean step {'interface': 'bios', 'step': 'apply_configuration'} is missing these required arguments: settings (List of BIOS settings, each item needs to contain a dictionary with name/value pairs)"},
		{"from available", states.Available, nil, false, []CleanStep{factoryReset}, ErrInvalidState, states.Available, ""},
		{"in maintenance", states.Manageable, nil, true, []CleanStep{factoryReset}, ErrInvalidState, states.Manageable, ""},
		{"direct deploy", states.Manageable, map[string]string{"deploy": "direct"}, false, []CleanStep{factoryReset}, ErrUnsupportedVerb, states.Manageable, ""},
	}
	for _, tc := range tests {
		n := r.node(t, tc.state, tc.ifs)
		if tc.maint {
			n.Maintenance = true
			if err := r.store.UpdateNode(ctx, n); err != nil {
				t.Fatal(err)
			}
		}
		err := r.c.DoNodeClean(ctx, n.UUID, tc.steps)
		if !errors.Is(err, tc.wantErr) || (tc.wantErr == nil) != (err == nil) {
			t.Errorf("%s: error %v, want %v", tc.name, err, tc.wantErr)
			continue
		}
		got := r.waitState(t, n.UUID, tc.wantState)
		want, wantTarget := "", ""
		if tc.wantError != "" {
			// A failed manual cleaning keeps its target, as Ironic's
			// cleaning_error_handler.
			want, wantTarget = "Cannot clean node "+n.UUID+tc.wantError, states.Manageable
		}
		if tc.wantErr != nil {
			want, wantTarget = "", ""
		}
		if got.LastError != want || got.TargetProvisionState != wantTarget {
			t.Errorf("%s: last_error %q, target %q; want %q, %q", tc.name, got.LastError, got.TargetProvisionState, want, wantTarget)
		}
		saved.mu.Lock()
		path := saved.seen[n.UUID]
		saved.mu.Unlock()
		// Manual cleaning's target is manageable, not automated cleaning's available.
		if tc.wantErr == nil && !slices.Contains(path, "cleaning/manageable") {
			t.Errorf("%s: saved as %v, want cleaning with target manageable on the way", tc.name, path)
		}
	}

	// abort in clean wait ends in clean failed, as Ironic's machine.
	n := r.node(t, states.CleanWait, nil)
	if err := r.c.DoProvisionAction(ctx, n.UUID, VerbAbort); err != nil {
		t.Fatal(err)
	}
	if got := r.waitState(t, n.UUID, states.CleanFailed); got.LastError != "By request, the clean operation was aborted" {
		t.Errorf("after abort: last_error %q", got.LastError)
	}
}
