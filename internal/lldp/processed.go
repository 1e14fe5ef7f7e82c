package lldp

import (
	"encoding/json"
	"reflect"
	"strings"
)

// Processed holds what the TLVs of one interface say about the switch port
// at the other end, under the names upstream's lldp_basic hook uses in
// lldp_processed. A nil field was not received. For single values the
// first TLV wins; list fields collect every TLV.
type Processed struct {
	ChassisID         *string `json:"switch_chassis_id,omitempty"`
	PortID            *string `json:"switch_port_id,omitempty"`
	PortDescription   *string `json:"switch_port_description,omitempty"`
	SystemName        *string `json:"switch_system_name,omitempty"`
	SystemDescription *string `json:"switch_system_description,omitempty"`

	// Capability names: Repeater, Bridge, WLAN, Router, Telephone, DOCSIS
	// cable device, Station only, C-Vlan, S-Vlan, TPMR.
	CapabilitiesSupport []string `json:"switch_capabilities_support,omitempty"`
	CapabilitiesEnabled []string `json:"switch_capabilities_enabled,omitempty"`
	MgmtAddresses       []string `json:"switch_mgmt_addresses,omitempty"`

	// IEEE 802.1.
	PortUntaggedVLANID      *int     `json:"switch_port_untagged_vlan_id,omitempty"`
	PortProtocolVLANEnabled *bool    `json:"switch_port_protocol_vlan_enabled,omitempty"`
	PortProtocolVLANSupport *bool    `json:"switch_port_protocol_vlan_support,omitempty"`
	PortProtocolVLANIDs     []int    `json:"switch_port_protocol_vlan_ids,omitempty"`
	PortVLANs               []VLAN   `json:"switch_port_vlans,omitempty"`
	ProtocolIdentities      []string `json:"switch_protocol_identities,omitempty"` // hex
	PortManagementVLANID    *int     `json:"switch_port_management_vlan_id,omitempty"`

	// Link aggregation comes from IEEE 802.1 subtype 7 or the deprecated
	// IEEE 802.3 subtype 3, whichever comes first.
	PortLinkAggregationEnabled *bool  `json:"switch_port_link_aggregation_enabled,omitempty"`
	PortLinkAggregationSupport *bool  `json:"switch_port_link_aggregation_support,omitempty"`
	PortLinkAggregationID      *int64 `json:"switch_port_link_aggregation_id,omitempty"`

	// IEEE 802.3.
	PortAutonegotiationEnabled *bool    `json:"switch_port_autonegotiation_enabled,omitempty"`
	PortAutonegotiationSupport *bool    `json:"switch_port_autonegotiation_support,omitempty"`
	PortPhysicalCapabilities   []string `json:"switch_port_physical_capabilities,omitempty"`
	PortMAUType                *string  `json:"switch_port_mau_type,omitempty"`
	PortMTU                    *int     `json:"switch_port_mtu,omitempty"`
}

// VLAN is one VLAN name TLV.
type VLAN struct {
	ID   int    `json:"id"`
	Name string `json:"name"`
}

// IsZero reports whether no field was set: upstream then stores nothing.
func (p Processed) IsZero() bool {
	v := reflect.ValueOf(p)
	for i := range v.NumField() {
		if !v.Field(i).IsNil() {
			return false
		}
	}
	return true
}

// MarshalJSON writes the fields that were received. Unlike omitempty it
// keeps an empty list that was received (a capabilities TLV with no bit
// set), as upstream does.
func (p Processed) MarshalJSON() ([]byte, error) {
	v := reflect.ValueOf(p)
	t := v.Type()
	m := make(map[string]any, t.NumField())
	for i := range t.NumField() {
		f := v.Field(i)
		if f.IsNil() {
			continue
		}
		name, _, _ := strings.Cut(t.Field(i).Tag.Get("json"), ",")
		m[name] = f.Interface()
	}
	return json.Marshal(m)
}
