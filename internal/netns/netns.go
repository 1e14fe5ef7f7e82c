// Package netns runs code inside a Linux network namespace. A namespace
// belongs to an OS thread: Do switches the calling goroutine's thread in,
// runs fn, and switches it back, so sockets fn opens live in the
// namespace while the goroutines fn starts do not.
package netns

import (
	"fmt"
	"os"
	"runtime"

	"golang.org/x/sys/unix"
)

// Path is where `ip netns add NAME` puts a namespace.
func Path(name string) string { return "/run/netns/" + name }

// Do runs fn on the calling goroutine's thread switched into the network
// namespace at path, then switches the thread back. The thread goes back
// to the scheduler only once it is back in its own namespace: a thread that
// ended instead would fire the Pdeathsig of every process it had forked.
func Do(path string, fn func() error) error {
	runtime.LockOSThread()
	orig, err := os.Open("/proc/thread-self/ns/net")
	if err != nil {
		runtime.UnlockOSThread()
		return err
	}
	defer orig.Close()
	f, err := os.Open(path)
	if err != nil {
		runtime.UnlockOSThread()
		return err
	}
	defer f.Close()
	if err := unix.Setns(int(f.Fd()), unix.CLONE_NEWNET); err != nil {
		runtime.UnlockOSThread()
		return fmt.Errorf("enter network namespace %s: %w", path, err)
	}
	err = fn()
	if unix.Setns(int(orig.Fd()), unix.CLONE_NEWNET) == nil {
		runtime.UnlockOSThread()
	} // else the thread stays locked and ends with its goroutine
	return err
}
