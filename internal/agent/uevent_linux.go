package agent

import (
	"errors"
	"fmt"

	"golang.org/x/sys/unix"
)

// ueventSocket receives the kernel's device events, so that after loading
// drivers the agent learns which devices they created without rescanning
// /sys (slow under emulation).
type ueventSocket struct{ fd int }

// openUevents subscribes to the kernel's uevent broadcast group. Open it
// before scanning /sys: a device created after the scan is then in the
// socket's queue.
func openUevents() (*ueventSocket, error) {
	fd, err := unix.Socket(unix.AF_NETLINK, unix.SOCK_RAW|unix.SOCK_CLOEXEC|unix.SOCK_NONBLOCK, unix.NETLINK_KOBJECT_UEVENT)
	if err != nil {
		return nil, fmt.Errorf("uevent socket: %w", err)
	}
	// A driver can create hundreds of devices at once; a queue that
	// overflows costs a rescan, not a lost device (see drain).
	if unix.SetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_RCVBUFFORCE, 4<<20) != nil {
		_ = unix.SetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_RCVBUF, 4<<20)
	}
	if err := unix.Bind(fd, &unix.SockaddrNetlink{Family: unix.AF_NETLINK, Groups: 1}); err != nil {
		unix.Close(fd)
		return nil, fmt.Errorf("uevent socket: bind: %w", err)
	}
	return &ueventSocket{fd: fd}, nil
}

// maxDrain bounds one drain: a kernel announcing more devices than this
// at once is treated as an overflow (rescan).
const maxDrain = 1 << 16

// drain reads the events queued so far without waiting. lost says events
// were dropped (the queue overflowed), so the caller must rescan /sys.
// Messages not sent by the kernel (port id 0) are ignored.
func (s *ueventSocket) drain() (ev deviceEvents, lost bool, err error) {
	buf := make([]byte, maxUevent)
	for range maxDrain {
		n, from, err := unix.Recvfrom(s.fd, buf, 0)
		switch {
		case errors.Is(err, unix.EAGAIN):
			return ev, lost, nil
		case errors.Is(err, unix.ENOBUFS):
			lost = true
			continue
		case errors.Is(err, unix.EINTR):
			continue
		case err != nil:
			return ev, lost, fmt.Errorf("uevent socket: %w", err)
		}
		if nl, ok := from.(*unix.SockaddrNetlink); !ok || nl.Pid != 0 {
			continue
		}
		if u, err := ParseUevent(buf[:n]); err == nil {
			ev.add(u)
		}
	}
	return ev, true, nil
}

func (s *ueventSocket) Close() error { return unix.Close(s.fd) }
