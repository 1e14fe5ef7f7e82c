package lldp

import (
	"errors"
	"fmt"
	"net/netip"
	"unicode/utf8"
)

// Chassis ID subtypes (IEEE 802.1AB table 8-2).
const (
	ChassisComponent     = 1
	ChassisIfAlias       = 2
	ChassisPortComponent = 3
	ChassisMAC           = 4
	ChassisNetworkAddr   = 5
	ChassisIfName        = 6
	ChassisLocal         = 7
)

// Port ID subtypes (IEEE 802.1AB table 8-3).
const (
	PortIfAlias      = 1
	PortComponent    = 2
	PortMAC          = 3
	PortNetworkAddr  = 4
	PortIfName       = 5
	PortAgentCircuit = 6
	PortLocal        = 7
)

// IANA address families used in network-address IDs and management
// addresses.
const (
	familyIPv4 = 1
	familyIPv6 = 2
	familyMAC  = 6
)

// ID is a decoded chassis or port ID: its subtype and its value as text (a
// MAC as aa:bb:cc:dd:ee:ff, an address in its usual notation, names as is).
type ID struct {
	Subtype int
	Value   string
}

// DecodeChassisID decodes the value of a chassis ID TLV.
func DecodeChassisID(b []byte) (ID, error) {
	if len(b) == 0 {
		return ID{}, errors.New("chassis ID: empty")
	}
	id := ID{Subtype: int(b[0])}
	var err error
	switch id.Subtype {
	case ChassisComponent, ChassisIfAlias, ChassisPortComponent, ChassisIfName, ChassisLocal:
		id.Value, err = text(b[1:])
	case ChassisMAC:
		id.Value, err = macString(b[1:])
	case ChassisNetworkAddr:
		id.Value, err = ianaAddress(b[1:])
	default:
		err = fmt.Errorf("unknown subtype %d", id.Subtype)
	}
	if err != nil {
		return ID{}, fmt.Errorf("chassis ID: %w", err)
	}
	return id, nil
}

// DecodePortID decodes the value of a port ID TLV. Agent circuit IDs
// (subtype 6) are refused, as upstream has no decoder for them.
func DecodePortID(b []byte) (ID, error) {
	if len(b) == 0 {
		return ID{}, errors.New("port ID: empty")
	}
	id := ID{Subtype: int(b[0])}
	var err error
	switch id.Subtype {
	case PortIfAlias, PortComponent, PortIfName, PortLocal:
		id.Value, err = text(b[1:])
	case PortMAC:
		id.Value, err = macString(b[1:])
	case PortNetworkAddr:
		id.Value, err = ianaAddress(b[1:])
	default:
		err = fmt.Errorf("unsupported subtype %d", id.Subtype)
	}
	if err != nil {
		return ID{}, fmt.Errorf("port ID: %w", err)
	}
	return id, nil
}

// text decodes a UTF-8 string field; upstream drops TLVs that do not decode.
func text(b []byte) (string, error) {
	if !utf8.Valid(b) {
		return "", errors.New("not valid UTF-8")
	}
	return string(b), nil
}

// macString formats the first six bytes of b; extra bytes are ignored, as
// upstream's parser does.
func macString(b []byte) (string, error) {
	if len(b) < 6 {
		return "", fmt.Errorf("MAC address needs 6 bytes, got %d", len(b))
	}
	const digits = "0123456789abcdef"
	out := make([]byte, 0, 17)
	for i := range 6 {
		if i > 0 {
			out = append(out, ':')
		}
		out = append(out, digits[b[i]>>4], digits[b[i]&0xf])
	}
	return string(out), nil
}

// ianaAddress decodes an IANA address family byte followed by the address.
func ianaAddress(b []byte) (string, error) {
	if len(b) == 0 {
		return "", errors.New("missing address family")
	}
	return familyAddress(b[0], b[1:])
}

func familyAddress(family byte, b []byte) (string, error) {
	switch family {
	case familyIPv4:
		if len(b) < 4 {
			return "", fmt.Errorf("IPv4 address needs 4 bytes, got %d", len(b))
		}
		return netip.AddrFrom4([4]byte(b[:4])).String(), nil
	case familyIPv6:
		if len(b) < 16 {
			return "", fmt.Errorf("IPv6 address needs 16 bytes, got %d", len(b))
		}
		return netip.AddrFrom16([16]byte(b[:16])).String(), nil
	case familyMAC:
		return macString(b)
	}
	return "", fmt.Errorf("unsupported address family %d", family)
}
