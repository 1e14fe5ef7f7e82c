package ferrotest

import (
	"sync/atomic"
	"testing"
	"time"
)

// Repeat calls f until its test ends, and not once after.
func TestRepeat_StopsWithItsTest(t *testing.T) {
	var calls atomic.Int32
	called := make(chan struct{}, 1)
	t.Run("repeating", func(t *testing.T) {
		Repeat(t, time.Millisecond, func() {
			calls.Add(1)
			select {
			case called <- struct{}{}:
			default:
			}
		})
		for calls.Load() < 3 {
			<-called
		}
	})
	after := calls.Load()
	// The cleanup waited for the loop to end: no call can come later,
	// however long this waits.
	time.Sleep(20 * time.Millisecond)
	if got := calls.Load(); got != after {
		t.Errorf("%d calls after the test ended", got-after)
	}
}
