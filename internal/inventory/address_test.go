package inventory

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestNormalizeMAC(t *testing.T) {
	tests := []struct {
		in   string
		want string
		ok   bool
	}{
		{"52:54:00:12:34:56", "52:54:00:12:34:56", true},
		{"3C:FD:FE:11:22:30", "3c:fd:fe:11:22:30", true},
		{"3c-fd-fe-11-22-30", "", false},
		{"3cfd.fe11.2230", "", false},
		{"3c:fd:fe:11:22", "", false},
		{"3c:fd:fe:11:22:3g", "", false},
		{"", "", false},
	}
	for _, tt := range tests {
		got, ok := NormalizeMAC(tt.in)
		if got != tt.want || ok != tt.ok {
			t.Errorf("NormalizeMAC(%q) = %q, %v; want %q, %v", tt.in, got, ok, tt.want, tt.ok)
		}
	}
}

func TestInventory_MACs(t *testing.T) {
	inv := &Inventory{Interfaces: []Interface{
		{Name: "lo", MACAddress: "00:00:00:00:00:00", IPv4Address: "127.0.0.1"},
		{Name: "eno1", MACAddress: "3C:FD:FE:11:22:30", IPv4Address: "192.0.2.1"},
		{Name: "eno2", MACAddress: "3c:fd:fe:11:22:31"},
		{Name: "dummy0", MACAddress: "3c:fd:fe:11:22:32", IPv4Address: "127.0.0.2"},
		{Name: "ib0", MACAddress: "80:00:02:08:fe:80:00:00:00:00:00:00:00:02:c9:03:00:0b:1d:51"},
		{Name: "eno3", MACAddress: ""},
		{Name: "eno1.100", MACAddress: "3c:fd:fe:11:22:30"},
	}}
	want := []string{"3c:fd:fe:11:22:30", "3c:fd:fe:11:22:31"}
	if diff := cmp.Diff(want, inv.MACs()); diff != "" {
		t.Errorf("MACs (-want +got):\n%s", diff)
	}
	var none *Inventory
	if got := none.MACs(); got != nil {
		t.Errorf("nil inventory: got %v", got)
	}
}

func TestInventory_BMCAddresses(t *testing.T) {
	tests := []struct {
		v4, v6 string
		want   []string
	}{
		{"10.0.0.21", "::/0", []string{"10.0.0.21"}},
		{"0.0.0.0", "fd00::21", []string{"fd00::21"}},
		{"", "", nil},
		{"0.0.0.0", "::/0", nil},
		{"10.0.0.21", "fd00::21", []string{"10.0.0.21", "fd00::21"}},
	}
	for _, tt := range tests {
		inv := &Inventory{BMCAddress: tt.v4, BMCV6Address: tt.v6}
		if diff := cmp.Diff(tt.want, inv.BMCAddresses()); diff != "" {
			t.Errorf("BMCAddresses(%q, %q) (-want +got):\n%s", tt.v4, tt.v6, diff)
		}
	}
}
