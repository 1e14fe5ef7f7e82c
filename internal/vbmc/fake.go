package vbmc

import (
	"context"

	"github.com/google/uuid"
)

// fakeBackend is a machine whose power is a boolean: what it booted is
// recorded by the Machine (LastBoot), nothing runs.
type fakeBackend struct {
	on bool
}

func (f *fakeBackend) PowerState(context.Context) (bool, error) { return f.on, nil }

func (f *fakeBackend) PowerOn(context.Context, BootRequest) error {
	f.on = true
	return nil
}

func (f *fakeBackend) PowerOff(context.Context) error {
	f.on = false
	return nil
}

// Shutdown: the fake guest honours the power button at once.
func (f *fakeBackend) Shutdown(context.Context) error {
	f.on = false
	return nil
}

func (f *fakeBackend) Reset(context.Context, BootRequest) error { return nil }

func (f *fakeBackend) NMI(context.Context) error { return nil }

func (f *fakeBackend) Close() error {
	f.on = false
	return nil
}

// nameUUID is a machine's system UUID: stable for its name, so a lab's
// machines keep their identity across restarts.
func nameUUID(name string) string {
	return uuid.NewSHA1(uuid.NameSpaceURL, []byte("ferro-vbmc:"+name)).String()
}
