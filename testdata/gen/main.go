// Command gen writes the generated inspection payload fixtures:
//
//	go run ./testdata/gen
//
// large-40nic-24disk.json is a storage server with 40 NICs, every one of
// them cabled to one of two leaf switches that send a full LLDP frame, and
// 24 disks. bad/too-deep.json nests arrays past the decoder's limit. The
// output is deterministic; the JSON files are committed.
package main

import (
	"encoding/hex"
	"encoding/json"
	"fmt"
	"log"
	"os"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/ferrometal/ferro/internal/inventory"
)

func main() {
	dir := "testdata/ipa"
	if len(os.Args) > 1 {
		dir = os.Args[1]
	}
	write(filepath.Join(dir, "large-40nic-24disk.json"), large())
	deep := `{"inventory":{"interfaces":[]},"data":` + strings.Repeat("[", 40) + strings.Repeat("]", 40) + "}\n"
	if err := os.WriteFile(filepath.Join(dir, "bad", "too-deep.json"), []byte(deep), 0o644); err != nil {
		log.Fatal(err)
	}
}

// tlvPair matches an indented [type, "hex"] pair, to put it on one line.
var tlvPair = regexp.MustCompile(`\[\n\s+(\d+),\n\s+("[0-9a-f]*")\n\s+\]`)

func write(path string, v any) {
	b, err := json.MarshalIndent(v, "", " ")
	if err != nil {
		log.Fatal(err)
	}
	b = tlvPair.ReplaceAll(b, []byte("[$1, $2]"))
	if err := os.WriteFile(path, append(b, '\n'), 0o644); err != nil {
		log.Fatal(err)
	}
}

func large() *inventory.Report {
	var ifaces []inventory.Interface
	lldpRaw := map[string][]inventory.TLV{}
	for i := range 40 {
		var name, driver string
		speed := 25000
		switch {
		case i < 4:
			name, driver, speed = fmt.Sprintf("eno%d", i+1), "igb", 1000
		default:
			name, driver = fmt.Sprintf("ens%df%d", 1+(i-4)/4, (i-4)%4), "ice"
		}
		iface := inventory.Interface{
			Name:       name,
			MACAddress: fmt.Sprintf("3c:fd:fe:a0:%02x:%02x", i/256, i%256),
			HasCarrier: true,
			Vendor:     "0x8086",
			Product:    map[bool]string{true: "0x1521", false: "0x159b"}[i < 4],
			SpeedMbps:  speed,
			PCIAddress: fmt.Sprintf("0000:%02x:00.%d", 0x18+i/4, i%4),
			Driver:     driver,
		}
		switch {
		case i == 0:
			iface.IPv4Address = "10.20.0.57" // PXE
		case i%4 == 0:
			iface.IPv4Address = fmt.Sprintf("10.40.%d.57", i/4)
			iface.IPv6Address = fmt.Sprintf("fd00:40:%x::57%%%s", i/4, name)
		}
		ifaces = append(ifaces, iface)
		lldpRaw[name] = frame(i)
	}

	var disks []inventory.Disk
	for i := range 24 {
		d := inventory.Disk{
			Name:            "/dev/sd" + string(rune('a'+i)),
			Size:            16000900661248,
			Rotational:      true,
			Model:           "ST16000NM004J",
			Vendor:          "SEAGATE",
			Serial:          fmt.Sprintf("ZL2%05d", 1000+i),
			WWN:             fmt.Sprintf("0x5000c500d%07x", 0x1000+i),
			HCTL:            fmt.Sprintf("0:0:%d:0", i),
			ByPath:          fmt.Sprintf("/dev/disk/by-path/pci-0000:3b:00.0-sas-phy%d-lun-0", i),
			LogicalSectors:  512,
			PhysicalSectors: 4096,
			Tran:            "sas",
		}
		if i < 2 {
			d.Size, d.Rotational, d.Model, d.Vendor = 480103981056, false, "MZ7KH480HAHQ", "ATA"
			d.Serial = fmt.Sprintf("S47MNA0R90%04d", i)
			d.Tran, d.PhysicalSectors = "sata", 512
		}
		d.WWNWithExtension = d.WWN
		disks = append(disks, d)
	}
	root := disks[0]

	numa0, numa1 := 0, 1
	extra := `[["cpu","logical","number","64"],["cpu","physical","number","2"],` +
		`["memory","total","size","549755813888"],["disk","logical","count","24"],` +
		`["system","product","name","SYS-6029P-E1CR24L"]]`
	return &inventory.Report{
		Inventory: &inventory.Inventory{
			Interfaces: ifaces,
			CPU: &inventory.CPU{
				ModelName: "Intel(R) Xeon(R) Gold 6338 CPU @ 2.00GHz", Frequency: "3200.0000",
				Count: 64, Architecture: "x86_64", SocketCount: 2,
				Flags: []string{"fpu", "vme", "de", "pse", "tsc", "msr", "pae", "mce", "vmx", "smx", "est", "aes", "avx", "pdpe1gb", "avx2", "avx512f"},
			},
			Disks:        disks,
			Memory:       &inventory.Memory{Total: 540950380544, PhysicalMB: 524288},
			BMCAddress:   "10.30.0.57",
			BMCV6Address: "fd00:30::57",
			BMCMAC:       "3c:ec:ef:30:00:57",
			SystemVendor: &inventory.SystemVendor{
				ProductName: "SYS-6029P-E1CR24L", SerialNumber: "S349871X1A25013", Manufacturer: "Supermicro",
				Firmware: &inventory.Firmware{Vendor: "American Megatrends International, LLC.", Version: "3.8a", BuildDate: "10/18/2023"},
			},
			Boot:     &inventory.Boot{CurrentBootMode: "uefi", PXEInterface: "3c:fd:fe:a0:00:00"},
			Hostname: "localhost.localdomain",
		},
		RootDisk:      &root,
		BootInterface: "01-3c-fd-fe-a0-00-00",
		Configuration: &inventory.Configuration{
			Collectors: []string{"default", "logs", "lldp", "pci-devices", "extra-hardware"},
			Managers:   []inventory.Manager{{Name: "generic_hardware_manager", Version: "1.2"}},
		},
		LLDPRaw: lldpRaw,
		PCIDevices: []inventory.PCIDevice{
			{VendorID: "8086", ProductID: "1521", Class: "020000", Revision: "01", Bus: "0000:18:00.0", NUMANodeID: &numa0},
			{VendorID: "8086", ProductID: "159b", Class: "020000", Revision: "02", Bus: "0000:19:00.0", NUMANodeID: &numa0},
			{VendorID: "10de", ProductID: "20b5", Class: "030200", Revision: "a1", Bus: "0000:af:00.0", NUMANodeID: &numa1},
			{VendorID: "10de", ProductID: "20b5", Class: "030200", Revision: "a1", Bus: "0000:d8:00.0", NUMANodeID: &numa1},
		},
		Data: json.RawMessage(extra),
	}
}

// frame returns the LLDP TLVs the leaf switch port cabled to NIC i sends.
// Even NICs go to leaf-r12a, odd ones to leaf-r12b; NICs 4 and up are bonded
// in pairs across the two leaves (MLAG), one port-channel per pair.
func frame(i int) []inventory.TLV {
	leaf := i % 2
	chassis := []string{"001c73aa0001", "001c73bb0001"}[leaf]
	sysName := []string{"leaf-r12a", "leaf-r12b"}[leaf]
	port := fmt.Sprintf("Ethernet%d/1", 1+i/2)
	mgmt := []string{"0a1e0001", "0a1e0002"}[leaf]
	mtu := "2400" // 9216
	if i < 4 {
		mtu = "05ee" // 1518
	}

	tlvs := []inventory.TLV{
		{Type: 1, Value: "04" + chassis},
		{Type: 2, Value: "05" + hexs(port)},
		{Type: 3, Value: "0078"},
		{Type: 4, Value: hexs(fmt.Sprintf("server r12u17 nic %d", i))},
		{Type: 5, Value: hexs(sysName)},
		{Type: 6, Value: hexs("Arista Networks EOS version 4.28.3M running on an Arista Networks DCS-7050SX3-48YC8")},
		{Type: 7, Value: "00140014"},                               // bridge, router
		{Type: 8, Value: "0501" + mgmt + "02" + "000f4241" + "00"}, // IPv4, ifIndex 999999
		{Type: 127, Value: "0080c201" + vid(pvid(i))},
	}
	for _, v := range vlans(i) {
		tlvs = append(tlvs, org("0080c2", 3, vid(v.id)+fmt.Sprintf("%02x", len(v.name))+hexs(v.name)))
	}
	if i >= 4 {
		tlvs = append(tlvs, org("0080c2", 7, "03"+fmt.Sprintf("%08x", 1000+(i-4)/2))) // capable, in a LAG
	} else {
		tlvs = append(tlvs, org("0080c2", 7, "01"+"00000000")) // capable, not aggregated
	}
	tlvs = append(tlvs,
		org("00120f", 1, "03"+"6c01"+"001e"), // autoneg on, 10/100/1000-T caps, MAU 30 (1000BASE-T fdx)
		org("00120f", 4, mtu),
		inventory.TLV{Type: 0, Value: ""},
	)
	return tlvs
}

type vlan struct {
	id   int
	name string
}

func pvid(i int) int {
	if i < 4 {
		return 100
	}
	return 1
}

func vlans(i int) []vlan {
	if i < 4 {
		return []vlan{{100, "provisioning"}}
	}
	return []vlan{{1, "default"}, {2000 + (i-4)/8, fmt.Sprintf("storage-%d", (i-4)/8)}, {3000, "tenant-a"}}
}

func org(oui string, sub int, payload string) inventory.TLV {
	return inventory.TLV{Type: 127, Value: fmt.Sprintf("%s%02x%s", oui, sub, payload)}
}

func vid(v int) string { return fmt.Sprintf("%04x", v) }

func hexs(s string) string { return hex.EncodeToString([]byte(s)) }
