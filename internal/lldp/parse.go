package lldp

import (
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"sort"
)

// Organisationally unique identifiers of the TLV sets Parse understands.
var (
	OUI8021 = [3]byte{0x00, 0x80, 0xc2}
	OUI8023 = [3]byte{0x00, 0x12, 0x0f}
)

// IEEE 802.1 subtypes.
const (
	Dot1PortVLANID         = 1
	Dot1PortProtocolVLANID = 2
	Dot1VLANName           = 3
	Dot1ProtocolIdentity   = 4
	Dot1ManagementVID      = 6
	Dot1LinkAggregation    = 7
)

// IEEE 802.3 subtypes.
const (
	Dot3MACPHYConfigStatus = 1
	Dot3LinkAggregation    = 3 // deprecated by 802.1 subtype 7, still sent
	Dot3MaxFrameSize       = 4
)

// Parse decodes tlvs into lldp_processed. TLVs that are not hexadecimal,
// too short, of the wrong length or otherwise malformed are skipped, and
// each is described in warnings; TLV types and subtypes it does not know are
// ignored silently, except an unknown OUI, which upstream warns about.
func Parse(tlvs []TLV) (p Processed, warnings []string) {
	warn := func(i int, t TLV, format string, args ...any) {
		warnings = append(warnings, fmt.Sprintf("TLV %d (type %d): ", i, t.Type)+fmt.Sprintf(format, args...))
	}
	for i, t := range tlvs {
		b, err := hex.DecodeString(t.Value)
		if err != nil {
			warn(i, t, "value is not hexadecimal")
			continue
		}
		if msg := p.add(t.Type, b); msg != "" {
			warn(i, t, "%s", msg)
		}
	}
	return p, warnings
}

// add stores one TLV; it returns why the TLV was skipped, or "".
func (p *Processed) add(typ int, b []byte) string {
	switch typ {
	case TypeChassisID:
		id, err := DecodeChassisID(b)
		if err != nil {
			return err.Error()
		}
		setString(&p.ChassisID, id.Value)
	case TypePortID:
		id, err := DecodePortID(b)
		if err != nil {
			return err.Error()
		}
		setString(&p.PortID, id.Value)
	case TypePortDescription, TypeSystemName, TypeSystemDescription:
		s, err := text(b)
		if err != nil {
			return err.Error()
		}
		dst := map[int]**string{
			TypePortDescription:   &p.PortDescription,
			TypeSystemName:        &p.SystemName,
			TypeSystemDescription: &p.SystemDescription,
		}[typ]
		setString(dst, s)
	case TypeSystemCapabilities:
		if len(b) != 4 {
			return fmt.Sprintf("system capabilities: expected 4 bytes, got %d", len(b))
		}
		setList(&p.CapabilitiesSupport, capabilityNames(binary.BigEndian.Uint16(b)))
		setList(&p.CapabilitiesEnabled, capabilityNames(binary.BigEndian.Uint16(b[2:])))
	case TypeManagementAddress:
		// address string length, family, address; the interface
		// numbering and OID that follow are not used.
		if len(b) < 2 {
			return "management address: too short"
		}
		addr, err := familyAddress(b[1], b[2:])
		if err != nil {
			if b[1] == familyIPv4 || b[1] == familyIPv6 || b[1] == familyMAC {
				return "management address: " + err.Error()
			}
			return "" // upstream silently ignores other families
		}
		p.MgmtAddresses = append(p.MgmtAddresses, addr)
	case TypeOrgSpecific:
		if len(b) < 4 {
			return "organisationally specific TLV: too short"
		}
		oui, sub, data := [3]byte(b[:3]), int(b[3]), b[4:]
		switch oui {
		case OUI8021:
			return p.addDot1(sub, data)
		case OUI8023:
			return p.addDot3(sub, data)
		}
		return fmt.Sprintf("organisationally unique ID %x not recognized", oui[:])
	}
	// End, TTL and unknown types carry nothing lldp_processed keeps.
	return ""
}

func (p *Processed) addDot1(sub int, b []byte) string {
	switch sub {
	case Dot1PortVLANID:
		if len(b) < 2 {
			return "802.1 port VLAN ID: too short"
		}
		setInt(&p.PortUntaggedVLANID, int(binary.BigEndian.Uint16(b)))
	case Dot1PortProtocolVLANID:
		if len(b) != 3 {
			return fmt.Sprintf("802.1 port and protocol VLAN ID: expected 3 bytes, got %d", len(b))
		}
		setBool(&p.PortProtocolVLANEnabled, b[0]&0x04 != 0)
		setBool(&p.PortProtocolVLANSupport, b[0]&0x02 != 0)
		p.PortProtocolVLANIDs = append(p.PortProtocolVLANIDs, int(binary.BigEndian.Uint16(b[1:])))
	case Dot1VLANName:
		if len(b) < 3 || len(b) < 3+int(b[2]) {
			return "802.1 VLAN name: too short"
		}
		name := b[3 : 3+int(b[2])]
		for len(name) > 0 && name[len(name)-1] == 0 { // padded string
			name = name[:len(name)-1]
		}
		s, err := text(name)
		if err != nil {
			return "802.1 VLAN name: " + err.Error()
		}
		p.PortVLANs = append(p.PortVLANs, VLAN{ID: int(binary.BigEndian.Uint16(b)), Name: s})
	case Dot1ProtocolIdentity:
		if len(b) < 1 || len(b) < 1+int(b[0]) {
			return "802.1 protocol identity: too short"
		}
		p.ProtocolIdentities = append(p.ProtocolIdentities, hex.EncodeToString(b[1:1+int(b[0])]))
	case Dot1ManagementVID:
		if len(b) < 2 {
			return "802.1 management VID: too short"
		}
		setInt(&p.PortManagementVLANID, int(binary.BigEndian.Uint16(b)))
	case Dot1LinkAggregation:
		return p.addLinkAggregation("802.1", b)
	}
	return ""
}

func (p *Processed) addDot3(sub int, b []byte) string {
	switch sub {
	case Dot3MACPHYConfigStatus:
		if len(b) != 5 {
			return fmt.Sprintf("802.3 MAC/PHY configuration: expected 5 bytes, got %d", len(b))
		}
		mau := int(binary.BigEndian.Uint16(b[3:]))
		if mau >= len(operMAUTypes) {
			return "802.3 MAC/PHY configuration: invalid index for mau type"
		}
		setBool(&p.PortAutonegotiationEnabled, b[0]&0x02 != 0)
		setBool(&p.PortAutonegotiationSupport, b[0]&0x01 != 0)
		setList(&p.PortPhysicalCapabilities, autonegCapabilities(binary.BigEndian.Uint16(b[1:])))
		setString(&p.PortMAUType, operMAUTypes[mau])
	case Dot3LinkAggregation:
		return p.addLinkAggregation("802.3", b)
	case Dot3MaxFrameSize:
		if len(b) < 2 {
			return "802.3 maximum frame size: too short"
		}
		setInt(&p.PortMTU, int(binary.BigEndian.Uint16(b)))
	}
	return ""
}

func (p *Processed) addLinkAggregation(set string, b []byte) string {
	if len(b) != 5 {
		return fmt.Sprintf("%s link aggregation: expected 5 bytes, got %d", set, len(b))
	}
	setBool(&p.PortLinkAggregationEnabled, b[0]&0x02 != 0)
	setBool(&p.PortLinkAggregationSupport, b[0]&0x01 != 0)
	id := int64(binary.BigEndian.Uint32(b[1:]))
	if p.PortLinkAggregationID == nil {
		p.PortLinkAggregationID = &id
	}
	return ""
}

func setString(dst **string, v string) {
	if *dst == nil {
		*dst = &v
	}
}

func setInt(dst **int, v int) {
	if *dst == nil {
		*dst = &v
	}
}

func setBool(dst **bool, v bool) {
	if *dst == nil {
		*dst = &v
	}
}

func setList(dst *[]string, v []string) {
	if *dst == nil {
		*dst = v
	}
}

// capabilityNames lists the system capability bits (IEEE 802.1AB 8.5.8.1)
// in upstream's order. Bit 0 is "other", which upstream does not report.
func capabilityNames(bits uint16) []string {
	names := []struct {
		bit  uint16
		name string
	}{
		{0x0002, "Repeater"},
		{0x0004, "Bridge"},
		{0x0008, "WLAN"},
		{0x0010, "Router"},
		{0x0020, "Telephone"},
		{0x0040, "DOCSIS cable device"},
		{0x0080, "Station only"},
		{0x0100, "C-Vlan"},
		{0x0200, "S-Vlan"},
		{0x0400, "TPMR"},
	}
	out := []string{}
	for _, n := range names {
		if bits&n.bit != 0 {
			out = append(out, n.name)
		}
	}
	return out
}

// autonegCapabilities lists the PMD auto-negotiation advertised capability
// bits (RFC 4836 IANAifMauAutoNegCapBits, most significant bit first),
// sorted, as upstream does. Upstream derives "10BASE-T fdx" from the
// 10BASE-T half duplex bit; ferro keeps that so lldp_processed matches.
func autonegCapabilities(bits uint16) []string {
	names := []struct {
		bit  uint16
		name string
	}{
		{0x4000, "10BASE-T hdx"},
		{0x4000, "10BASE-T fdx"}, // sic: upstream tests the hdx bit
		{0x1000, "10BASE-T4"},
		{0x0800, "100BASE-TX hdx"},
		{0x0400, "100BASE-TX fdx"},
		{0x0200, "100BASE-T2 hdx"},
		{0x0100, "100BASE-T2 fdx"},
		{0x0080, "PAUSE fdx"},
		{0x0040, "Asym PAUSE fdx"},
		{0x0020, "Sym PAUSE fdx"},
		{0x0010, "Asym and Sym PAUSE fdx"},
		{0x0008, "1000BASE-X hdx"},
		{0x0004, "1000BASE-X fdx"},
		{0x0002, "1000BASE-T hdx"},
		{0x0001, "1000BASE-T fdx"},
	}
	out := []string{}
	for _, n := range names {
		if bits&n.bit != 0 {
			out = append(out, n.name)
		}
	}
	sort.Strings(out)
	return out
}

// operMAUTypes is ifMauTypeList of RFC 4836, as far as upstream knows it;
// a MAC/PHY TLV with a later type is skipped.
var operMAUTypes = []string{
	"Unknown", "AUI", "10BASE-5", "FOIRL", "10BASE-2",
	"10BASE-T duplex mode unknown", "10BASE-FP", "10BASE-FB",
	"10BASE-FL duplex mode unknown", "10BROAD36", "10BASE-T half duplex",
	"10BASE-T full duplex", "10BASE-FL half duplex", "10BASE-FL full duplex",
	"100 BASE-T4", "100BASE-TX half duplex", "100BASE-TX full duplex",
	"100BASE-FX half duplex", "100BASE-FX full duplex",
	"100BASE-T2 half duplex", "100BASE-T2 full duplex",
	"1000BASE-X half duplex", "1000BASE-X full duplex",
	"1000BASE-LX half duplex", "1000BASE-LX full duplex",
	"1000BASE-SX half duplex", "1000BASE-SX full duplex",
	"1000BASE-CX half duplex", "1000BASE-CX full duplex",
	"1000BASE-T half duplex", "1000BASE-T full duplex", "10GBASE-X",
	"10GBASE-LX4", "10GBASE-R", "10GBASE-ER", "10GBASE-LR", "10GBASE-SR",
	"10GBASE-W", "10GBASE-EW", "10GBASE-LW", "10GBASE-SW", "10GBASE-CX4",
	"2BASE-TL", "10PASS-TS", "100BASE-BX10D", "100BASE-BX10U",
	"100BASE-LX10", "1000BASE-BX10D", "1000BASE-BX10U", "1000BASE-LX10",
	"1000BASE-PX10D", "1000BASE-PX10U", "1000BASE-PX20D", "1000BASE-PX20U",
}
