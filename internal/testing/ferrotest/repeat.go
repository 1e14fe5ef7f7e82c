package ferrotest

import (
	"testing"
	"time"
)

// Repeat calls f every period in the background until t ends; t's cleanup
// stops it and waits for a call under way.
func Repeat(t testing.TB, every time.Duration, f func()) {
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		tick := time.NewTicker(every)
		defer tick.Stop()
		for {
			select {
			case <-stop:
				return
			case <-tick.C:
				f()
			}
		}
	}()
	t.Cleanup(func() { close(stop); <-done })
}
