package network_test

import (
	"context"
	"errors"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/ferrometal/ferro/internal/baremetal"
	"github.com/ferrometal/ferro/internal/dhcpopt"
	"github.com/ferrometal/ferro/internal/driver"
	"github.com/ferrometal/ferro/internal/driver/network"
	"github.com/ferrometal/ferro/internal/neutron"
)

const (
	nodeUUID = "1be26c0b-03f2-4d2e-ae87-c02d7f33c123"
	netID    = "4f1a3e3c-0a7f-4f63-9a0f-9f7b1d3c2e10"
	otherNet = "1d8c7c2e-5c2f-4f6f-8e52-0b4b3b1f0e21"
	sgID     = "8d7e3c1a-1c7e-4b0b-9c5d-6a3e2f1b0c44"
)

var (
	inspectionNet = neutron.Network{ID: netID, Name: "inspection"}
	llcA          = baremetal.JSON{"switch_id": "aa:bb:cc:dd:ee:ff", "port_id": "Ethernet1/1", "switch_info": "tor-1"}
	llcB          = baremetal.JSON{"switch_id": "aa:bb:cc:dd:ee:ff", "port_id": "Ethernet1/2", "switch_info": "tor-1"}
)

// kinds are the two interfaces that share the inspection-network code.
var kinds = []struct {
	name string
	make func(c network.NeutronClient, cfg network.Options) driver.Network
}{
	{"flat", func(c network.NeutronClient, cfg network.Options) driver.Network { return network.NewFlat(c, cfg) }},
	{"neutron", func(c network.NeutronClient, cfg network.Options) driver.Network { return network.NewNeutron(c, cfg) }},
}

func port(uuid, mac string, pxe bool, llc baremetal.JSON) *baremetal.Port {
	return &baremetal.Port{UUID: uuid, Address: mac, PXEEnabled: pxe, LocalLinkConnection: llc}
}

func twoPortTask() *driver.Task {
	return newTask(nodeUUID,
		port("port-a", "52:54:00:00:00:0a", true, llcA),
		port("port-b", "52:54:00:00:00:0b", true, llcB),
	)
}

func vifOf(p *baremetal.Port) string {
	v, _ := p.InternalInfo[driver.InspectionVIFKey].(string)
	return v
}

func TestValidateInspection(t *testing.T) {
	dup := []neutron.Network{{ID: "n1", Name: "dup"}, {ID: "n2", Name: "dup"}}
	for _, k := range kinds {
		for _, tc := range []struct {
			name       string
			nets       []neutron.Network
			driverInfo baremetal.JSON
			conf       string
			noClient   bool
			wantErr    error // nil, driver.ErrUnsupported or driver.ErrInvalidParameter
			wantLookup string
		}{
			{name: "FallsBackWhenUnset", wantErr: driver.ErrUnsupported},
			{name: "FallsBackWhenUnsetAndNoNeutron", noClient: true, wantErr: driver.ErrUnsupported},
			{name: "FallsBackWhenDriverInfoEmpty", driverInfo: baremetal.JSON{"inspection_network": ""}, wantErr: driver.ErrUnsupported},
			{name: "UsesConfig", nets: []neutron.Network{inspectionNet}, conf: "inspection", wantLookup: "inspection"},
			{name: "DriverInfoBeatsConfig", nets: []neutron.Network{inspectionNet, {ID: otherNet, Name: "other"}},
				driverInfo: baremetal.JSON{"inspection_network": otherNet}, conf: "inspection", wantLookup: otherNet},
			{name: "NotFound", conf: "missing", wantErr: driver.ErrInvalidParameter, wantLookup: "missing"},
			{name: "Ambiguous", nets: dup, driverInfo: baremetal.JSON{"inspection_network": "dup"}, wantErr: driver.ErrInvalidParameter, wantLookup: "dup"},
			{name: "DriverInfoNotAString", driverInfo: baremetal.JSON{"inspection_network": 42.0}, conf: "inspection", wantErr: driver.ErrInvalidParameter},
			{name: "SetButNoNeutron", noClient: true, conf: "inspection", wantErr: driver.ErrInvalidParameter},
		} {
			t.Run(k.name+"/"+tc.name, func(t *testing.T) {
				fake := newFake(tc.nets...)
				var client network.NeutronClient = fake
				if tc.noClient {
					client = (*neutron.Client)(nil) // what main passes when Neutron is not configured
				}
				iface := k.make(client, network.Options{InspectionNetwork: tc.conf})
				task := newTask(nodeUUID, port("port-a", "52:54:00:00:00:0a", true, llcA))
				for key, v := range tc.driverInfo {
					task.Node.DriverInfo[key] = v
				}
				err := iface.ValidateInspection(context.Background(), task)
				switch {
				case tc.wantErr == nil && err != nil:
					t.Fatalf("ValidateInspection: %v", err)
				case tc.wantErr != nil && !errors.Is(err, tc.wantErr):
					t.Fatalf("ValidateInspection = %v, want %v", err, tc.wantErr)
				case errors.Is(tc.wantErr, driver.ErrInvalidParameter) && errors.Is(err, driver.ErrUnsupported):
					t.Fatalf("ValidateInspection = %v: a validation error must not fall back", err)
				}
				var want []string
				if tc.wantLookup != "" {
					want = []string{tc.wantLookup}
				}
				if diff := cmp.Diff(want, fake.lookups); diff != "" {
					t.Errorf("network lookups (-want +got):\n%s", diff)
				}
			})
		}
	}
}

func TestValidate(t *testing.T) {
	ctx := context.Background()
	task := twoPortTask()
	if err := network.NewFlat(nil, network.Options{}).Validate(ctx, task); err != nil {
		t.Errorf("flat without Neutron: %v", err)
	}
	if err := network.NewFlat(newFake(), network.Options{}).Validate(ctx, task); err != nil {
		t.Errorf("flat: %v", err)
	}
	if err := network.NewNeutron(newFake(), network.Options{}).Validate(ctx, task); err != nil {
		t.Errorf("neutron: %v", err)
	}
	if err := network.NewNeutron(nil, network.Options{}).Validate(ctx, task); !errors.Is(err, driver.ErrMissingParameter) {
		t.Errorf("neutron without Neutron = %v, want ErrMissingParameter", err)
	}
}

func TestAddInspectionNetwork_NeutronCreatesBoundPorts(t *testing.T) {
	fake := newFake(inspectionNet)
	fake.sgs[sgID] = true
	cfg := network.Options{InspectionNetwork: "inspection", SecurityGroups: []string{sgID}}
	task := twoPortTask()
	task.Ports = append(task.Ports, port("port-c", "52:54:00:00:00:0c", false, llcA)) // not PXE: left out

	if err := network.NewNeutron(fake, cfg).AddInspectionNetwork(context.Background(), task); err != nil {
		t.Fatalf("AddInspectionNetwork: %v", err)
	}
	wantCreate := neutron.PortCreate{NetworkID: netID, DeviceID: nodeUUID, VNICType: "baremetal",
		AdminStateUp: true, SecurityGroups: []string{sgID}}
	if diff := cmp.Diff([]neutron.PortCreate{wantCreate, wantCreate}, fake.created); diff != "" {
		t.Errorf("created (-want +got):\n%s", diff)
	}
	store := task.Store.(*memStore)
	for i, p := range task.Ports[:2] {
		vif := vifOf(p)
		if vif == "" {
			t.Fatalf("port %s has no %s", p.UUID, driver.InspectionVIFKey)
		}
		if got := store.savedVIF(p.UUID); got != vif {
			t.Errorf("port %s: saved VIF %q, want %q", p.UUID, got, vif)
		}
		owner, host, mac := "baremetal:none", nodeUUID, p.Address
		want := neutron.PortUpdate{DeviceOwner: &owner, HostID: &host, MACAddress: &mac,
			Profile: map[string]any{"local_link_information": []any{map[string]any(p.LocalLinkConnection)}}}
		if diff := cmp.Diff(want, fake.updated[vif]); diff != "" {
			t.Errorf("update of port %d (-want +got):\n%s", i, diff)
		}
	}
	if _, ok := task.Ports[2].InternalInfo[driver.InspectionVIFKey]; ok {
		t.Errorf("non-PXE port got a VIF")
	}
}

func TestAddInspectionNetwork_AddAllPortsIncludesNonPXEWithoutAddress(t *testing.T) {
	fake := newFake(inspectionNet)
	task := newTask(nodeUUID, port("port-a", "52:54:00:00:00:0a", true, llcA), port("port-b", "52:54:00:00:00:0b", false, llcB))
	iface := network.NewNeutron(fake, network.Options{InspectionNetwork: netID, AddAllPorts: true})
	if err := iface.AddInspectionNetwork(context.Background(), task); err != nil {
		t.Fatal(err)
	}
	if len(fake.created) != 2 || fake.created[0].NoFixedIPs || !fake.created[1].NoFixedIPs {
		t.Errorf("created = %+v, want the PXE port with an address and the other one without", fake.created)
	}
}

func TestAddInspectionNetwork_SkipsPortsWithoutLocalLinkConnection(t *testing.T) {
	for _, k := range kinds {
		t.Run(k.name, func(t *testing.T) {
			fake := newFake(inspectionNet)
			task := newTask(nodeUUID, port("port-a", "52:54:00:00:00:0a", true, llcA), port("port-b", "52:54:00:00:00:0b", true, nil))
			if err := k.make(fake, network.Options{InspectionNetwork: "inspection"}).AddInspectionNetwork(context.Background(), task); err != nil {
				t.Fatalf("AddInspectionNetwork: %v", err)
			}
			wantB := k.name == "flat" // flat does not need the link
			if vifOf(task.Ports[0]) == "" {
				t.Errorf("port with local_link_connection has no VIF")
			}
			if got := vifOf(task.Ports[1]) != ""; got != wantB {
				t.Errorf("port without local_link_connection has a VIF: %v, want %v", got, wantB)
			}
			if k.name == "flat" {
				profile := fake.updated[vifOf(task.Ports[1])].Profile
				if diff := cmp.Diff(map[string]any{"local_link_information": []any{map[string]any{}}}, profile); diff != "" {
					t.Errorf("flat binding profile without a link (-want +got):\n%s", diff)
				}
			}
		})
	}
}

func TestAddInspectionNetwork_NeutronFailsWhenNoPortHasALink(t *testing.T) {
	fake := newFake(inspectionNet)
	task := newTask(nodeUUID, port("port-a", "52:54:00:00:00:0a", true, nil), port("port-b", "52:54:00:00:00:0b", true, baremetal.JSON{}))
	err := network.NewNeutron(fake, network.Options{InspectionNetwork: "inspection"}).AddInspectionNetwork(context.Background(), task)
	if err == nil {
		t.Fatal("AddInspectionNetwork succeeded with no local_link_connection on any port")
	}
	if len(fake.created) != 0 {
		t.Errorf("created %d ports", len(fake.created))
	}
}

func TestAddInspectionNetwork_FailsWithoutPXEPorts(t *testing.T) {
	for _, k := range kinds {
		t.Run(k.name, func(t *testing.T) {
			fake := newFake(inspectionNet)
			task := newTask(nodeUUID, port("port-a", "52:54:00:00:00:0a", false, llcA))
			if err := k.make(fake, network.Options{InspectionNetwork: "inspection"}).AddInspectionNetwork(context.Background(), task); err == nil {
				t.Fatal("AddInspectionNetwork succeeded without PXE-enabled ports")
			}
		})
	}
}

func TestAddInspectionNetwork_SecurityGroups(t *testing.T) {
	cfg := network.Options{InspectionNetwork: "inspection", SecurityGroups: []string{sgID}}
	t.Run("NeutronFailsWhenMissing", func(t *testing.T) {
		fake := newFake(inspectionNet)
		task := twoPortTask()
		err := network.NewNeutron(fake, cfg).AddInspectionNetwork(context.Background(), task)
		if !errors.Is(err, neutron.ErrNotFound) {
			t.Fatalf("AddInspectionNetwork = %v, want a missing security group error", err)
		}
		if len(fake.created) != 0 {
			t.Errorf("created %d ports despite the missing security group", len(fake.created))
		}
	})
	t.Run("FlatIgnoresThem", func(t *testing.T) {
		fake := newFake(inspectionNet)
		task := twoPortTask()
		if err := network.NewFlat(fake, cfg).AddInspectionNetwork(context.Background(), task); err != nil {
			t.Fatalf("AddInspectionNetwork: %v", err)
		}
		for _, c := range fake.created {
			if len(c.SecurityGroups) != 0 {
				t.Errorf("flat port created with security groups %v", c.SecurityGroups)
			}
		}
	})
}

func TestAddInspectionNetwork_DeletesStalePortsFirst(t *testing.T) {
	fake := newFake(inspectionNet)
	fake.add(neutron.Port{ID: "stale-mac", NetworkID: netID, MACAddress: "52:54:00:00:00:0a", DeviceID: "someone"})
	fake.add(neutron.Port{ID: "stale-device", NetworkID: netID, MACAddress: "fa:16:3e:99:99:99", DeviceID: nodeUUID})
	fake.add(neutron.Port{ID: "other-node", NetworkID: netID, MACAddress: "52:54:00:99:99:99", DeviceID: "another-node"})
	fake.add(neutron.Port{ID: "other-network", NetworkID: otherNet, MACAddress: "52:54:00:00:00:0a", DeviceID: nodeUUID})
	task := twoPortTask()
	if err := network.NewNeutron(fake, network.Options{InspectionNetwork: "inspection"}).AddInspectionNetwork(context.Background(), task); err != nil {
		t.Fatal(err)
	}
	want := []string{"other-network", "other-node", vifOf(task.Ports[0]), vifOf(task.Ports[1])}
	if diff := cmp.Diff(slices.Sorted(slices.Values(want)), fake.portIDs()); diff != "" {
		t.Errorf("ports in Neutron (-want +got):\n%s", diff)
	}
}

func TestAddInspectionNetwork_StaleCleanupErrorsAreIgnored(t *testing.T) {
	fake := newFake(inspectionNet)
	fake.listErr = errors.New("neutron is having a bad day")
	task := twoPortTask()
	if err := network.NewNeutron(fake, network.Options{InspectionNetwork: "inspection"}).AddInspectionNetwork(context.Background(), task); err != nil {
		t.Fatalf("AddInspectionNetwork = %v; stale-port cleanup errors must only be logged", err)
	}
	if vifOf(task.Ports[0]) == "" || vifOf(task.Ports[1]) == "" {
		t.Errorf("ports not added: %v %v", task.Ports[0].InternalInfo, task.Ports[1].InternalInfo)
	}
}

func TestAddInspectionNetwork_PartialFailureIsAWarning(t *testing.T) {
	for _, tc := range []struct {
		name  string
		setup func(f *fakeNeutron, task *driver.Task)
	}{
		{"UpdateFails", func(f *fakeNeutron, _ *driver.Task) {
			f.updateErr["52:54:00:00:00:0b"] = errors.New("409 MacAddressInUse")
		}},
		{"SaveFails", func(_ *fakeNeutron, task *driver.Task) {
			task.Store.(*memStore).fail = map[string]error{"port-b": errors.New("database is locked")}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fake := newFake(inspectionNet)
			task := twoPortTask()
			tc.setup(fake, task)
			if err := network.NewNeutron(fake, network.Options{InspectionNetwork: "inspection"}).AddInspectionNetwork(context.Background(), task); err != nil {
				t.Fatalf("AddInspectionNetwork = %v, want success with one port", err)
			}
			if vifOf(task.Ports[0]) == "" {
				t.Errorf("the good port has no VIF")
			}
			if _, ok := task.Ports[1].InternalInfo[driver.InspectionVIFKey]; ok {
				t.Errorf("the failed port has a VIF: %v", task.Ports[1].InternalInfo)
			}
			// The failed port's half-made Neutron port is deleted at once.
			if diff := cmp.Diff([]string{vifOf(task.Ports[0])}, fake.portIDs()); diff != "" {
				t.Errorf("ports in Neutron (-want +got):\n%s", diff)
			}
		})
	}
}

func TestAddInspectionNetwork_TotalFailureRollsBack(t *testing.T) {
	for _, tc := range []struct {
		name  string
		setup func(f *fakeNeutron)
	}{
		{"UpdateFails", func(f *fakeNeutron) {
			f.updateErr["52:54:00:00:00:0a"] = errors.New("boom")
			f.updateErr["52:54:00:00:00:0b"] = errors.New("boom")
		}},
		{"UpdateFailsAndDeleteToo", func(f *fakeNeutron) {
			// The immediate delete fails; the rollback's own pass (by
			// device_id) must still get rid of the ports.
			f.updateErr["52:54:00:00:00:0a"] = errors.New("boom")
			f.updateErr["52:54:00:00:00:0b"] = errors.New("boom")
			f.deleteErr["vif-1"] = errors.New("503")
		}},
		{"CreateFails", func(f *fakeNeutron) { f.createErr = errors.New("quota exceeded") }},
		{"CreateReturnsNoID", func(f *fakeNeutron) { f.emptyIDOut = true }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fake := newFake(inspectionNet)
			tc.setup(fake)
			task := twoPortTask()
			err := network.NewNeutron(fake, network.Options{InspectionNetwork: "inspection"}).AddInspectionNetwork(context.Background(), task)
			if err == nil {
				t.Fatal("AddInspectionNetwork succeeded with every port failing")
			}
			for _, p := range task.Ports {
				if _, ok := p.InternalInfo[driver.InspectionVIFKey]; ok {
					t.Errorf("port %s has a VIF after a failed add: %v", p.UUID, p.InternalInfo)
				}
			}
			delete(fake.deleteErr, "vif-1")
			left := fake.portIDs()
			if tc.name == "UpdateFailsAndDeleteToo" {
				// vif-1 could be deleted neither at once nor on rollback
				// (the same failing call); it is the one left, and
				// RemoveInspectionNetwork finds it by device_id later.
				if diff := cmp.Diff([]string{"vif-1"}, left); diff != "" {
					t.Errorf("ports left (-want +got):\n%s", diff)
				}
				return
			}
			if len(left) != 0 {
				t.Errorf("ports left in Neutron after rollback: %v", left)
			}
		})
	}
}

func TestAddInspectionNetwork_SmartNICAndInfiniBand(t *testing.T) {
	fake := newFake(inspectionNet)
	smart := port("port-s", "52:54:00:00:00:51", true, baremetal.JSON{"hostname": "dpu-host-1", "port_id": "rep0-0"})
	smart.IsSmartNIC = true
	ib := port("port-ib", "52:54:00:00:00:1b", true, nil)
	ib.Extra = baremetal.JSON{"client-id": "ff:00:00:00:00:00:02:00:00:02:c9:00:00:02:c9:03:00:00:10:39"}
	task := newTask(nodeUUID, smart, ib)
	task.Node.InstanceUUID = "5f1b8e0c-6a4e-4b7e-9a1e-0c4b2b5e7d31"
	if err := network.NewNeutron(fake, network.Options{InspectionNetwork: "inspection"}).AddInspectionNetwork(context.Background(), task); err != nil {
		t.Fatal(err)
	}
	if len(fake.created) != 2 {
		t.Fatalf("created %d ports, want 2 (InfiniBand needs no local_link_connection)", len(fake.created))
	}
	if c := fake.created[0]; c.VNICType != "smart-nic" || c.DeviceID != task.Node.InstanceUUID {
		t.Errorf("smart NIC port created as %+v, want vnic smart-nic and device_id = instance_uuid", c)
	}
	if h := fake.updated[vifOf(smart)].HostID; h == nil || *h != "dpu-host-1" {
		t.Errorf("smart NIC binding:host_id = %v, want the link's hostname", h)
	}
	want := []dhcpopt.Option{{Name: "61", Value: ib.Extra["client-id"].(string), IPVersion: 4}}
	if diff := cmp.Diff(want, fake.created[1].ExtraDHCPOpts); diff != "" {
		t.Errorf("InfiniBand extra_dhcp_opts (-want +got):\n%s", diff)
	}
}

func TestAddInspectionNetwork_BindingProfileCarriesOVNVTEP(t *testing.T) {
	fake := newFake(inspectionNet)
	llc := baremetal.JSON{"port_id": "Ethernet1/3", "switch_id": "aa:bb:cc:dd:ee:ff",
		"vtep-logical-switch": "ls-1", "vtep-physical-switch": "ps-1"}
	task := newTask(nodeUUID, port("port-a", "52:54:00:00:00:0a", true, llc))
	if err := network.NewNeutron(fake, network.Options{InspectionNetwork: "inspection"}).AddInspectionNetwork(context.Background(), task); err != nil {
		t.Fatal(err)
	}
	want := map[string]any{
		"local_link_information": []any{map[string]any(llc)},
		"vtep_logical_switch":    "ls-1",
		"vtep_physical_switch":   "ps-1",
	}
	if diff := cmp.Diff(want, fake.updated[vifOf(task.Ports[0])].Profile); diff != "" {
		t.Errorf("binding:profile (-want +got):\n%s", diff)
	}
}

func TestAddInspectionNetwork_PropagatesValidationErrors(t *testing.T) {
	fake := newFake()
	task := twoPortTask()
	err := network.NewNeutron(fake, network.Options{}).AddInspectionNetwork(context.Background(), task)
	if !errors.Is(err, driver.ErrUnsupported) {
		t.Errorf("unset network: %v, want ErrUnsupported", err)
	}
	err = network.NewNeutron(fake, network.Options{InspectionNetwork: "nope"}).AddInspectionNetwork(context.Background(), task)
	if !errors.Is(err, driver.ErrInvalidParameter) {
		t.Errorf("unknown network: %v, want ErrInvalidParameter", err)
	}
}

func TestRemoveInspectionNetwork(t *testing.T) {
	for _, k := range kinds {
		t.Run(k.name, func(t *testing.T) {
			ctx := context.Background()
			fake := newFake(inspectionNet)
			iface := k.make(fake, network.Options{InspectionNetwork: "inspection"})
			task := twoPortTask()
			if err := iface.AddInspectionNetwork(ctx, task); err != nil {
				t.Fatal(err)
			}
			// A port that only the record knows about (e.g. the network was
			// renamed) and one Neutron lost already (404).
			task.Ports[0].InternalInfo[driver.InspectionVIFKey] = "vif-only-recorded"
			fake.add(neutron.Port{ID: "vif-only-recorded", NetworkID: otherNet, MACAddress: "fa:16:3e:12:34:56"})
			if err := fake.DeletePort(ctx, vifOf(task.Ports[1])); err != nil {
				t.Fatal(err)
			}
			store := task.Store.(*memStore)

			if err := iface.RemoveInspectionNetwork(ctx, task); err != nil {
				t.Fatalf("RemoveInspectionNetwork: %v", err)
			}
			if left := fake.portIDs(); len(left) != 0 {
				t.Errorf("ports left in Neutron: %v", left)
			}
			for _, p := range task.Ports {
				if _, ok := p.InternalInfo[driver.InspectionVIFKey]; ok {
					t.Errorf("port %s still has %s", p.UUID, driver.InspectionVIFKey)
				}
				if store.savedVIF(p.UUID) != "" {
					t.Errorf("port %s: the cleared record was not saved", p.UUID)
				}
			}

			saves, deletes := store.saves, len(fake.deleted)
			if err := iface.RemoveInspectionNetwork(ctx, task); err != nil {
				t.Fatalf("second RemoveInspectionNetwork: %v", err)
			}
			if store.saves != saves || len(fake.deleted) != deletes {
				t.Errorf("second removal saved %d ports and deleted %d Neutron ports, want none",
					store.saves-saves, len(fake.deleted)-deletes)
			}
		})
	}
}

func TestRemoveInspectionNetwork_ReportsErrorsAfterTryingAll(t *testing.T) {
	ctx := context.Background()
	fake := newFake(inspectionNet)
	iface := network.NewNeutron(fake, network.Options{InspectionNetwork: "inspection"})
	task := twoPortTask()
	if err := iface.AddInspectionNetwork(ctx, task); err != nil {
		t.Fatal(err)
	}
	bad := vifOf(task.Ports[0])
	fake.deleteErr[bad] = errors.New("HTTP 500")
	if err := iface.RemoveInspectionNetwork(ctx, task); err == nil {
		t.Fatal("RemoveInspectionNetwork succeeded although a delete failed")
	}
	if diff := cmp.Diff([]string{bad}, fake.portIDs()); diff != "" {
		t.Errorf("ports left (-want +got): the other port must still be deleted\n%s", diff)
	}
	if vifOf(task.Ports[0]) != bad {
		t.Errorf("the record of the port that could not be deleted was cleared")
	}
	if vifOf(task.Ports[1]) != "" {
		t.Errorf("the record of the deleted port was kept")
	}
	delete(fake.deleteErr, bad)
	if err := iface.RemoveInspectionNetwork(ctx, task); err != nil {
		t.Fatalf("retry: %v", err)
	}
	if left := fake.portIDs(); len(left) != 0 {
		t.Errorf("ports left after retry: %v", left)
	}
}

func TestRemoveInspectionNetwork_WithoutNetwork(t *testing.T) {
	ctx := context.Background()
	t.Run("NothingRecordedIsANoop", func(t *testing.T) {
		fake := newFake()
		task := twoPortTask()
		if err := network.NewFlat(fake, network.Options{}).RemoveInspectionNetwork(ctx, task); err != nil {
			t.Fatal(err)
		}
		if err := network.NewFlat(nil, network.Options{}).RemoveInspectionNetwork(ctx, task); err != nil {
			t.Fatalf("without Neutron: %v", err)
		}
		if len(fake.lookups) != 0 {
			t.Errorf("looked up %v", fake.lookups)
		}
	})
	t.Run("RecordedPortsStillGo", func(t *testing.T) {
		fake := newFake() // the network is gone
		fake.add(neutron.Port{ID: "vif-1", NetworkID: netID})
		task := twoPortTask()
		task.Ports[0].InternalInfo[driver.InspectionVIFKey] = "vif-1"
		if err := network.NewNeutron(fake, network.Options{InspectionNetwork: "inspection"}).RemoveInspectionNetwork(ctx, task); err != nil {
			t.Fatal(err)
		}
		if left := fake.portIDs(); len(left) != 0 {
			t.Errorf("ports left: %v", left)
		}
		if _, ok := task.Ports[0].InternalInfo[driver.InspectionVIFKey]; ok {
			t.Error("record not cleared")
		}
	})
}
