package agent

import (
	"log/slog"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
)

const loaderList = "k/virtio.ko\t\t\n" +
	"k/virtio_pci.ko\tvirtio\tpci:v00001AF4d*sv*sd*bc*sc*i*\n" +
	"k/failover.ko\t\t\n" +
	"k/virtio_net.ko\tvirtio,failover\tvirtio:d00000001v*\n" +
	"k/libata.ko\t\t\n" +
	"k/ata_piix.ko\tlibata\tpci:v00008086d00007010sv*sd*bc*sc*i*\n" +
	"k/e1000.ko\t\tpci:v00008086d0000100Esv*sd*bc*sc*i*\n"

// fakeEvents is a uevent queue the fake loader fills as the kernel would.
type fakeEvents struct {
	queued deviceEvents
	lost   bool
}

func (f *fakeEvents) drain() (deviceEvents, bool, error) {
	ev, lost := f.queued, f.lost
	f.queued, f.lost = deviceEvents{}, false
	return ev, lost, nil
}

// pciRoot is a /sys with a virtio NIC and a PIIX IDE controller on PCI.
func pciRoot(t *testing.T) string {
	root := t.TempDir()
	writeFile(t, root, "sys/bus/pci/devices/0000:00:01.1/modalias", "pci:v00008086d00007010sv00001AF4sd00001100bc01sc01i80\n")
	writeFile(t, root, "sys/bus/pci/devices/0000:00:03.0/modalias", "pci:v00001AF4d00001000sv00001AF4sd00000001bc02sc00i00\n")
	return root
}

// The virtio devices virtio_pci creates are learnt from its uevents and
// their driver loads next, before the disk controller: the NIC is up
// while ata_piix probes.
func TestLoadModules_DepthFirstFromUevents(t *testing.T) {
	root := pciRoot(t)
	ev := &fakeEvents{}
	var order, netdevs []string
	finit := func(path string) error {
		order = append(order, ModuleName(path))
		switch filepath.Base(path) {
		case "virtio_pci.ko":
			ev.queued.add(Uevent{Action: "add", DevPath: "/devices/pci0000:00/0000:00:03.0/virtio0",
				Vars: map[string]string{"MODALIAS": "virtio:d00000001v00001AF4"}})
		case "virtio_net.ko":
			ev.queued.add(Uevent{Action: "add", DevPath: "/devices/pci0000:00/0000:00:03.0/virtio0/net/eth0",
				Vars: map[string]string{"SUBSYSTEM": "net", "INTERFACE": "eth0"}})
		}
		return nil
	}
	n, err := loadModules(slog.New(slog.DiscardHandler), root, ParseModuleList(loaderList), nil,
		func(name string) { netdevs = append(netdevs, name) }, finit, ev)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"virtio", "virtio_pci", "failover", "virtio_net", "libata", "ata_piix"}
	if diff := cmp.Diff(want, order); diff != "" {
		t.Errorf("load order (-want +got):\n%s", diff)
	}
	if n != len(want) || !cmp.Equal(netdevs, []string{"eth0"}) {
		t.Errorf("loaded %d, netdevs %v", n, netdevs)
	}
}

// Without events (no socket, or a queue that overflowed) the devices are
// found by scanning /sys again.
func TestLoadModules_RescansWhenEventsCannotTell(t *testing.T) {
	for name, events := range map[string]func() deviceEventSource{
		"no socket": func() deviceEventSource { return nil },
		"overflow":  func() deviceEventSource { return &fakeEvents{lost: true} },
	} {
		t.Run(name, func(t *testing.T) {
			root := pciRoot(t)
			src := events()
			var order []string
			finit := func(path string) error {
				order = append(order, ModuleName(path))
				if filepath.Base(path) == "virtio_pci.ko" {
					writeFile(t, root, "sys/bus/virtio/devices/virtio0/modalias", "virtio:d00000001v00001AF4\n")
					if f, ok := src.(*fakeEvents); ok {
						f.lost = true
					}
				}
				return nil
			}
			if _, err := loadModules(slog.New(slog.DiscardHandler), root, ParseModuleList(loaderList), []string{"e1000"}, nil, finit, src); err != nil {
				t.Fatal(err)
			}
			want := []string{"e1000", "virtio", "virtio_pci", "libata", "ata_piix", "failover", "virtio_net"}
			if diff := cmp.Diff(want, order); diff != "" {
				t.Errorf("load order (-want +got):\n%s", diff)
			}
		})
	}
}
