package agent

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"github.com/u-root/u-root/pkg/smbios"
)

// slotUnknown marks a PCI device SMBIOS says nothing about; slot 0 is
// "embedded" (an onboard device, SMBIOS type 41).
const slotUnknown = -1

// pciFunc is what biosdevname's naming needs to know about one PCI function.
type pciFunc struct {
	name                 string // 0000:00:03.0
	domain, bus, dev, fn int
	network              bool // class 02xxxx
	secondaryBus         int  // a bridge's; -1 otherwise
	parent               string
	slot                 int // slotUnknown, 0 (embedded) or the SMBIOS slot ID
	onboardEthernet      bool
	instance             int // type 41 device type instance
	smbiosSet            bool
	sysfsIndex           int // the kernel's "index" attribute (from type 41), -1 if absent
	pf                   *pciFunc
	vfIndex              int
	indexInSlot          int
	embeddedIndex        int
}

// BIOSDevNames returns, by interface name, the name biosdevname's default
// "physical" policy (`biosdevname -i <if>`, which IPA runs) gives each PCI
// network interface from the SMBIOS tables: em<instance> for an onboard
// device (type 41, enabled, kind Ethernet; the embedded ports' order when
// the instance is 0), p<slot>p<port> for a card in a slot (type 9; ports
// numbered from 1 in PCI address order), "_<n>" after it for SR-IOV
// virtual function n, and for multi-port drivers (mlx4, cxgb, exanic, nfp)
// the port from dev_id. An interface SMBIOS says nothing about has no
// name, as biosdevname prints nothing. Unlike biosdevname, which refuses
// to run under a hypervisor (exit 4), it names a VM's NICs too when the
// VM's SMBIOS describes them. The $PIR table, PCIe slot capabilities and
// Dell's VPD, which biosdevname also reads, are not used.
func BIOSDevNames(root string, smb *smbios.Info) map[string]string {
	out := map[string]string{}
	if smb == nil {
		return out
	}
	devs := readPCIFuncs(root)
	if len(devs) == 0 {
		return out
	}
	byAddr := map[[4]int]*pciFunc{}
	byName := map[string]*pciFunc{}
	for _, d := range devs {
		byAddr[[4]int{d.domain, d.bus, d.dev, d.fn}] = d
		byName[d.name] = d
	}
	for _, t := range smb.Tables {
		switch t.Type {
		case 9: // System Slots, segment/bus/devfn since SMBIOS 2.6
			if t.Len() < 0x11 {
				continue
			}
			id, _ := t.GetWordAt(0x09)
			seg, _ := t.GetWordAt(0x0d)
			bus, _ := t.GetByteAt(0x0f)
			devfn, _ := t.GetByteAt(0x10)
			fn := int(devfn & 7)
			// a slot names every function of the device in it, except
			// on a multi-function root port
			if d := byAddr[[4]int{int(seg), int(bus), int(devfn >> 3), fn}]; d == nil || !d.isBridge() || d.bus != 0 {
				fn = -1
			}
			setSlot(devs, int(seg), int(bus), int(devfn>>3), fn, int(id), false, 0, 0)
		case 41: // Onboard Devices Extended Information
			if t.Len() < 0x0b {
				continue
			}
			kind, _ := t.GetByteAt(0x05)
			if kind != 0x80|0x05 { // enabled, Ethernet
				continue
			}
			inst, _ := t.GetByteAt(0x06)
			seg, _ := t.GetWordAt(0x07)
			bus, _ := t.GetByteAt(0x09)
			devfn, _ := t.GetByteAt(0x0a)
			setSlot(devs, int(seg), int(bus), int(devfn>>3), int(devfn&7), 0, true, int(inst), 0)
		}
	}
	// a device SMBIOS does not name takes its nearest named bridge's slot
	for _, d := range devs {
		for p, depth := d, 0; d.slot == slotUnknown && p != nil && depth < 32; depth++ {
			if p.slot != slotUnknown {
				d.slot = p.slot
			}
			p = byName[p.parent]
		}
	}
	// SR-IOV virtual functions belong to their physical function
	for _, pf := range devs {
		links, _ := filepath.Glob(filepath.Join(root, "sys/bus/pci/devices", pf.name, "virtfn*"))
		for _, l := range links {
			n, err := strconv.Atoi(strings.TrimPrefix(filepath.Base(l), "virtfn"))
			vf := byName[linkBase(l)]
			if err != nil || vf == nil {
				continue
			}
			vf.pf, vf.vfIndex = pf, n
			if pf.smbiosSet {
				vf.slot, vf.instance, vf.onboardEthernet = pf.slot, pf.instance, pf.onboardEthernet
			}
		}
	}
	embedded, prevSlot, inSlot := 0, slotUnknown-1, 0
	for _, d := range devs {
		if !d.network || d.pf != nil {
			continue
		}
		if d.slot == 0 {
			embedded++
			d.embeddedIndex = embedded
			continue
		}
		if d.slot != prevSlot {
			prevSlot, inSlot = d.slot, 0
		}
		inSlot++
		d.indexInSlot = inSlot
	}

	ifs, _ := os.ReadDir(filepath.Join(root, "sys/class/net"))
	for _, e := range ifs {
		dir := filepath.Join(root, "sys/class/net", e.Name())
		d := pciParent(byName, filepath.Join(dir, "device"))
		if d == nil || !d.network || readString(filepath.Join(dir, "type")) != "1" {
			continue // not PCI, or not Ethernet (InfiniBand, …)
		}
		if name := d.biosName(dir); name != "" {
			out[e.Name()] = name
		}
	}
	return out
}

// pciParent is the PCI function a network interface's device is, or sits
// on: virtio_net's device is the virtio device on the PCI function, as
// ethtool's bus_info (what biosdevname matches) says.
func pciParent(byName map[string]*pciFunc, device string) *pciFunc {
	p, err := filepath.EvalSymlinks(device)
	if err != nil {
		return nil
	}
	for range 4 {
		if d := byName[filepath.Base(p)]; d != nil {
			return d
		}
		p = filepath.Dir(p)
	}
	return nil
}

// biosName is biosdevname's physical policy for the interface in dir.
func (d *pciFunc) biosName(dir string) string {
	port, pfi := -1, -1
	if multiPortDriver(linkBase(filepath.Join(dir, "device/driver"))) {
		id, err := strconv.ParseInt(readString(filepath.Join(dir, "dev_id")), 0, 32)
		if err == nil {
			port = int(id) + 1
			if d.pf != nil {
				pfi = d.vfIndex
			}
		}
	}
	var name string
	switch {
	case d.slot == 0:
		m := d
		if m.pf != nil {
			m = m.pf
		}
		switch {
		case port >= 0:
		case m.sysfsIndex >= 0:
			port = m.sysfsIndex
		case m.onboardEthernet && m.instance != 0:
			port = m.instance
		case m.embeddedIndex > 0:
			port = m.embeddedIndex
		default:
			return ""
		}
		name = "em" + strconv.Itoa(port)
	case d.slot > 0:
		if port < 0 {
			port = d.indexInSlot
			if d.pf != nil {
				port = d.pf.indexInSlot
			}
		}
		name = fmt.Sprintf("p%dp%d", d.slot, port)
	default:
		return ""
	}
	switch {
	case pfi >= 0:
		name += "_" + strconv.Itoa(pfi)
	case d.pf != nil:
		name += "_" + strconv.Itoa(d.vfIndex)
	}
	return name
}

func (d *pciFunc) isBridge() bool { return d.secondaryBus >= 0 }

// setSlot records an SMBIOS slot or onboard device on the functions at
// that address (fn or dev -1: any) and, through bridges, on everything
// behind them, as biosdevname does.
func setSlot(devs []*pciFunc, seg, bus, dev, fn, slot int, onboard bool, inst, depth int) {
	if seg == 0xffff || (bus == 0 && dev == 0 && fn == 0) || (bus == 0xff && dev == 0x1f && fn == 7) || depth > 32 {
		return // disabled entries, as firmware writes them
	}
	for _, d := range devs {
		if d.domain != seg || d.bus != bus || (dev >= 0 && d.dev != dev) || (fn >= 0 && d.fn != fn) {
			continue
		}
		d.slot, d.onboardEthernet, d.instance, d.smbiosSet = slot, onboard, inst, true
		if d.secondaryBus > bus {
			setSlot(devs, seg, d.secondaryBus, -1, -1, slot, onboard, inst, depth+1)
		}
	}
}

// readPCIFuncs lists root/sys/bus/pci/devices sorted by address, as
// biosdevname orders them.
func readPCIFuncs(root string) []*pciFunc {
	base := filepath.Join(root, "sys/bus/pci/devices")
	entries, _ := os.ReadDir(base)
	var devs []*pciFunc
	for _, e := range entries {
		d := &pciFunc{name: e.Name(), slot: slotUnknown, sysfsIndex: -1, secondaryBus: -1}
		if _, err := fmt.Sscanf(e.Name(), "%x:%x:%x.%x", &d.domain, &d.bus, &d.dev, &d.fn); err != nil {
			continue
		}
		dir := filepath.Join(base, e.Name())
		class, err := strconv.ParseUint(readString(filepath.Join(dir, "class")), 0, 32)
		d.network = err == nil && class>>16 == 0x02
		if n, err := strconv.ParseInt(readString(filepath.Join(dir, "secondary_bus_number")), 10, 32); err == nil && class>>8 == 0x0604 {
			d.secondaryBus = int(n)
		}
		if n, ok := readInt(filepath.Join(dir, "index")); ok {
			d.sysfsIndex = int(n)
		}
		if target, err := os.Readlink(dir); err == nil {
			d.parent = filepath.Base(filepath.Dir(target))
		}
		devs = append(devs, d)
	}
	sort.Slice(devs, func(i, j int) bool {
		a, b := devs[i], devs[j]
		if a.domain != b.domain {
			return a.domain < b.domain
		}
		if a.bus != b.bus {
			return a.bus < b.bus
		}
		if a.dev != b.dev {
			return a.dev < b.dev
		}
		return a.fn < b.fn
	})
	return devs
}

// multiPortDriver: drivers whose PCI function carries several ports,
// told apart by dev_id (biosdevname's list).
func multiPortDriver(driver string) bool {
	for _, p := range []string{"mlx4", "cxgb", "exanic", "nfp"} {
		if strings.HasPrefix(driver, p) {
			return true
		}
	}
	return false
}
