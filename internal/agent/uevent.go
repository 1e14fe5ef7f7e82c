package agent

import (
	"bytes"
	"errors"
	"strings"
)

// Uevent is one kernel device event as the kernel broadcasts it on
// NETLINK_KOBJECT_UEVENT: "ACTION@DEVPATH\0KEY=VALUE\0…".
type Uevent struct {
	Action  string // "add", "remove", "bind", …
	DevPath string // under /sys, "/devices/pci0000:00/…"
	Vars    map[string]string
}

// Uevents are at most a page long (the kernel's UEVENT_BUFFER_SIZE is 2048);
// anything longer is not the kernel's.
const maxUevent = 8 << 10

// ParseUevent decodes one uevent message. udev's own re-broadcasts (which
// start with "libudev\0" and are binary) and anything without the
// "ACTION@DEVPATH" header are errors; a variable without '=' is skipped.
func ParseUevent(b []byte) (Uevent, error) {
	if len(b) > maxUevent {
		return Uevent{}, errors.New("uevent: longer than a kernel event")
	}
	head, rest, _ := bytes.Cut(b, []byte{0})
	action, devpath, ok := strings.Cut(string(head), "@")
	if !ok || action == "" || !strings.HasPrefix(devpath, "/") {
		return Uevent{}, errors.New("uevent: no ACTION@DEVPATH header")
	}
	ev := Uevent{Action: action, DevPath: devpath, Vars: map[string]string{}}
	for len(rest) > 0 {
		var kv []byte
		kv, rest, _ = bytes.Cut(rest, []byte{0})
		if k, v, ok := strings.Cut(string(kv), "="); ok && k != "" {
			ev.Vars[k] = v
		}
	}
	return ev, nil
}

// deviceEvents is what one drain of the uevent socket taught: the
// modaliases of the devices that appeared and the network interfaces that
// were created.
type deviceEvents struct {
	modaliases []string
	netdevs    []string
}

// add records ev when it announces a new device.
func (d *deviceEvents) add(ev Uevent) {
	if ev.Action != "add" {
		return
	}
	if m := ev.Vars["MODALIAS"]; m != "" {
		d.modaliases = append(d.modaliases, m)
	}
	if ev.Vars["SUBSYSTEM"] == "net" && ev.Vars["INTERFACE"] != "" {
		d.netdevs = append(d.netdevs, ev.Vars["INTERFACE"])
	}
}
