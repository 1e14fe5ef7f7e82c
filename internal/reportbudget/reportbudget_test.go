package reportbudget

import (
	"context"
	"errors"
	"strings"
	"testing"
)

func newBudget(t *testing.T, bytes int64) *Budget {
	t.Helper()
	b, err := New(Options{Bytes: bytes, MaxBody: 16 << 20, MaxValues: 1 << 19})
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestReserve_WorstCaseThenFit: a reservation holds the worst a body of
// its length may cost, lowered once the body is known; a report that
// does not fit waits, in order, and gives up with its context.
func TestReserve_WorstCaseThenFit(t *testing.T) {
	b := newBudget(t, 160<<20)
	ctx := context.Background()
	// A 16 MiB body may hold the decoder's 524,288 values: 32 MiB + 96 MiB.
	r, err := b.Reserve(ctx, 16<<20)
	if err != nil {
		t.Fatal(err)
	}
	if want := int64(2*(16<<20) + 192*(1<<19)); r.Bytes() != want {
		t.Errorf("reserved %d, want %d", r.Bytes(), want)
	}
	// An unknown length counts as the largest body.
	timeout, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := b.Reserve(timeout, -1); !errors.Is(err, context.Canceled) {
		t.Errorf("a second worst case in a full budget: %v, want to wait until its context ends", err)
	}
	// Once read, a body of one long string costs about twice its size.
	body := []byte(`{"logs":"` + strings.Repeat("A", 16<<20-20) + `"}`)
	r.Fit(body)
	if want := Cost(int64(len(body)), 2); r.Bytes() != want {
		t.Errorf("after Fit: %d, want %d", r.Bytes(), want)
	}
	// Now a second large report fits beside it.
	r2, err := b.Reserve(ctx, 8<<20)
	if err != nil {
		t.Fatal(err)
	}
	r.Release()
	r.Release() // twice is once
	r2.Release()
	// All of it is free again.
	if !b.sem.TryAcquire(b.Bytes()) {
		t.Error("the budget was not all returned")
	}
}

// TestReserve_LargerThanTheBudgetRunsAlone: a report that would cost more
// than the whole budget takes all of it instead of waiting forever.
func TestReserve_LargerThanTheBudgetRunsAlone(t *testing.T) {
	b := newBudget(t, 1<<20)
	r, err := b.Reserve(context.Background(), 16<<20)
	if err != nil {
		t.Fatal(err)
	}
	if r.Bytes() != 1<<20 {
		t.Errorf("reserved %d, want the whole budget", r.Bytes())
	}
	r.Fit([]byte(`{}`))
	if r.Bytes() != Cost(2, 2) {
		t.Errorf("after Fit: %d", r.Bytes())
	}
	r.Release()
	if _, err := New(Options{Bytes: -1, MaxBody: 1, MaxValues: 1}); err == nil {
		t.Error("a negative budget was accepted")
	}
}
