package inventory_test

import (
	"bytes"
	"encoding/json"
	"io"
	"reflect"
	"testing"

	"github.com/ferrometal/ferro/internal/inventory"
	"github.com/ferrometal/ferro/internal/testing/iparelease"
)

// Every IPA release from 9.4 to 12.0 is accepted as it posts its report,
// its new fields decoded where ferro reads them and every field kept in
// the raw form, which is what is stored.
func TestDecode_EveryIPARelease(t *testing.T) {
	for _, rel := range iparelease.All(t) {
		t.Run(rel.Release, func(t *testing.T) {
			body := rel.Body(t)
			rep, raw, err := inventory.DecodeBytes(body, inventory.Limits{MaxDepth: 25})
			if err != nil {
				t.Fatal(err)
			}
			inv := rep.Inventory
			if got := inv.MACs(); !reflect.DeepEqual(got, rel.MACs) {
				t.Errorf("MACs = %v, want %v", got, rel.MACs)
			}
			if rel.BMCAddress == nil {
				if inv.BMCAddress != "" || len(inv.BMCAddresses()) != 0 {
					t.Errorf("bmc_address null decoded as %q (%v)", inv.BMCAddress, inv.BMCAddresses())
				}
			} else if got := inv.BMCAddresses(); len(got) != 1 || got[0] != *rel.BMCAddress {
				t.Errorf("BMC addresses = %v, want [%s] (bmc_v6address ::/0 is no address)", got, *rel.BMCAddress)
			}
			if rep.Error != nil {
				t.Errorf("error = %q", *rep.Error)
			}
			if inv.CPU.Count != 4 || inv.Memory.PhysicalMB != 8192 || len(inv.Disks) != 2 || inv.Boot.PXEInterface == "" {
				t.Errorf("inventory: %+v", inv)
			}
			checkNewFields(t, rel, rep)

			// The raw form is the report as sent: re-encoding it gives the
			// same JSON values, null and unknown fields included.
			var want map[string]any
			dec := json.NewDecoder(bytes.NewReader(body))
			dec.UseNumber()
			if err := dec.Decode(&want); err != nil {
				t.Fatal(err)
			}
			if _, err := dec.Token(); err != io.EOF {
				t.Fatal("data after the report")
			}
			if !reflect.DeepEqual(want, raw) {
				t.Error("the raw report differs from what was sent")
			}
		})
	}
}

// checkNewFields checks the fields releases added, where ferro decodes them.
func checkNewFields(t *testing.T, rel iparelease.Release, rep *inventory.Report) {
	t.Helper()
	inv := rep.Inventory
	pxe := inv.Interfaces[0]
	if got, want := pxe.SpeedMbps != 0, rel.AtLeast(9, 5); got != want {
		t.Errorf("speed_mbps decoded: %v, want %v (%d)", got, want, pxe.SpeedMbps)
	}
	if got, want := inv.SystemVendor.Firmware != nil, rel.AtLeast(9, 5); got != want {
		t.Errorf("system_vendor.firmware decoded: %v, want %v", got, want)
	}
	if got, want := inv.CPU.SocketCount, map[bool]int{true: 1}[rel.AtLeast(9, 9)]; got != want {
		t.Errorf("cpu.socket_count = %d, want %d", got, want)
	}
	if got, want := inv.Disks[1].PhysicalSectors, map[bool]int{true: 4096}[rel.AtLeast(10, 0)]; got != want {
		t.Errorf("disks[1].physical_sectors = %d, want %d", got, want)
	}
	if got, want := pxe.Driver != "" && pxe.PCIAddress != "", rel.AtLeast(10, 1); got != want {
		t.Errorf("NIC driver/pci_address decoded: %v, want %v (%+v)", got, want, pxe)
	}
	if got, want := inv.Disks[1].Tran, map[bool]string{true: "sata"}[rel.AtLeast(11, 2)]; got != want {
		t.Errorf("disks[1].tran = %q, want %q", got, want)
	}
	if got, want := len(rep.LLDPRaw) > 0, rel.AtLeast(9, 5); got != want {
		t.Errorf("lldp_raw decoded: %v, want %v", got, want)
	}
	if got, want := len(rep.USBDevices), map[bool]int{true: 1}[rel.AtLeast(9, 12)]; got != want {
		t.Errorf("usb_devices: %d, want %d", got, want)
	}
	if len(rep.PCIDevices) != 2 {
		t.Fatalf("pci_devices: %+v", rep.PCIDevices)
	}
	// numa_node_id is sysfs' text from 9.8: "0", and "-1" for none.
	if rel.AtLeast(9, 8) {
		if n := rep.PCIDevices[0].NUMANodeID; n == nil || *n != 0 {
			t.Errorf("pci_devices[0].numa_node_id = %v, want 0", n)
		}
		if n := rep.PCIDevices[1].NUMANodeID; n == nil || *n != -1 {
			t.Errorf("pci_devices[1].numa_node_id = %v, want -1", n)
		}
	} else if rep.PCIDevices[0].NUMANodeID != nil {
		t.Errorf("numa_node_id before 9.8: %v", *rep.PCIDevices[0].NUMANodeID)
	}
}
