package agent

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// A virtio NIC appearing after virtio_pci loaded, as the kernel words it.
const virtioAdd = "add@/devices/pci0000:00/0000:00:03.0/virtio0\x00ACTION=add\x00DEVPATH=/devices/pci0000:00/0000:00:03.0/virtio0\x00SUBSYSTEM=virtio\x00MODALIAS=virtio:d00000001v00001AF4\x00SEQNUM=1042\x00"

func TestParseUevent_KernelMessage(t *testing.T) {
	ev, err := ParseUevent([]byte(virtioAdd))
	if err != nil {
		t.Fatal(err)
	}
	want := Uevent{Action: "add", DevPath: "/devices/pci0000:00/0000:00:03.0/virtio0", Vars: map[string]string{
		"ACTION": "add", "DEVPATH": "/devices/pci0000:00/0000:00:03.0/virtio0", "SUBSYSTEM": "virtio",
		"MODALIAS": "virtio:d00000001v00001AF4", "SEQNUM": "1042"}}
	if diff := cmp.Diff(want, ev); diff != "" {
		t.Errorf("uevent (-want +got):\n%s", diff)
	}
}

func TestParseUevent_RejectsUdevAndGarbage(t *testing.T) {
	for _, msg := range []string{
		"libudev\x00\xfe\xed\xca\xfe", // udev's own broadcast
		"", "add", "add@relative\x00", "@/devices/x\x00",
		"add@/x\x00" + strings.Repeat("A", maxUevent),
	} {
		if _, err := ParseUevent([]byte(msg)); err == nil {
			t.Errorf("%q: accepted", msg)
		}
	}
}

func TestDeviceEvents_AddsModaliasesAndNetdevs(t *testing.T) {
	var d deviceEvents
	for _, msg := range []string{
		virtioAdd,
		"add@/devices/pci0000:00/0000:00:03.0/virtio0/net/eth0\x00ACTION=add\x00SUBSYSTEM=net\x00INTERFACE=eth0\x00IFINDEX=2\x00",
		"add@/module/virtio_net\x00ACTION=add\x00SUBSYSTEM=module\x00",
		"bind@/devices/pci0000:00/0000:00:03.0/virtio0\x00ACTION=bind\x00MODALIAS=virtio:d00000001v00001AF4\x00",
		"remove@/devices/virtual/net/eth9\x00ACTION=remove\x00SUBSYSTEM=net\x00INTERFACE=eth9\x00",
	} {
		ev, err := ParseUevent([]byte(msg))
		if err != nil {
			t.Fatalf("%q: %v", msg, err)
		}
		d.add(ev)
	}
	want := deviceEvents{modaliases: []string{"virtio:d00000001v00001AF4"}, netdevs: []string{"eth0"}}
	if diff := cmp.Diff(want, d, cmp.AllowUnexported(deviceEvents{})); diff != "" {
		t.Errorf("events (-want +got):\n%s", diff)
	}
}

// Uevents come from the kernel, but a bug there (or a message from
// another sender) must not panic PID 1.
func FuzzParseUevent(f *testing.F) {
	f.Add([]byte(virtioAdd))
	f.Add([]byte("libudev\x00\xfe\xed"))
	f.Add([]byte("add@/\x00=\x00A=\x00=B\x00"))
	f.Fuzz(func(t *testing.T, b []byte) {
		ev, err := ParseUevent(b)
		if err != nil {
			return
		}
		if ev.Action == "" || !strings.HasPrefix(ev.DevPath, "/") {
			t.Errorf("accepted %q as %+v", b, ev)
		}
		for k := range ev.Vars {
			if k == "" || strings.ContainsRune(k, 0) {
				t.Errorf("variable name %q", k)
			}
		}
	})
}
