// Package lldp decodes LLDP TLVs (IEEE 802.1AB basic management set, plus
// the IEEE 802.1 and 802.3 organisationally specific TLVs) into the
// name/value pairs that ironic-inspector's lldp_basic hook stores as
// lldp_processed.
//
// TLVs come in the form IPA sends them, [type, "hex value"] pairs, or are
// split from a captured LLDPDU with SplitPDU. Malformed TLVs are skipped with
// a warning, never a panic. The package is shared by the agent and the
// inspector, so it imports nothing but the standard library.
package lldp

import (
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
)

// TLV types of the basic management set.
const (
	TypeEnd                = 0
	TypeChassisID          = 1
	TypePortID             = 2
	TypeTTL                = 3
	TypePortDescription    = 4
	TypeSystemName         = 5
	TypeSystemDescription  = 6
	TypeSystemCapabilities = 7
	TypeManagementAddress  = 8
	TypeOrgSpecific        = 127
)

// TLV is one TLV with its value hex-encoded, as IPA sends it. In JSON it is
// the pair [type, "hex"].
type TLV struct {
	Type  int
	Value string
}

// Bytes returns the decoded value.
func (t TLV) Bytes() ([]byte, error) {
	b, err := hex.DecodeString(t.Value)
	if err != nil {
		return nil, fmt.Errorf("value of TLV type %d is not hexadecimal: %w", t.Type, err)
	}
	return b, nil
}

// MarshalJSON encodes the TLV as a [type, "hex"] pair.
func (t TLV) MarshalJSON() ([]byte, error) {
	return json.Marshal([2]any{t.Type, t.Value})
}

// UnmarshalJSON decodes a [type, "hex"] pair.
func (t *TLV) UnmarshalJSON(b []byte) error {
	var pair []json.RawMessage
	if err := json.Unmarshal(b, &pair); err != nil || len(pair) != 2 {
		return errors.New("expected [type, hex] pair")
	}
	var typ int
	if err := json.Unmarshal(pair[0], &typ); err != nil {
		return errors.New("TLV type: expected integer")
	}
	var val string
	if err := json.Unmarshal(pair[1], &val); err != nil {
		return errors.New("TLV value: expected hex string")
	}
	t.Type, t.Value = typ, val
	return nil
}

// SplitPDU splits an LLDPDU (the Ethernet payload of an LLDP frame) into its
// TLVs, up to and including the End TLV, the way IPA builds lldp_raw.
func SplitPDU(pdu []byte) ([]TLV, error) {
	var out []TLV
	for len(pdu) > 0 {
		if len(pdu) < 2 {
			return out, errors.New("truncated TLV header")
		}
		typ := int(pdu[0] >> 1)
		n := int(pdu[0]&1)<<8 | int(pdu[1])
		if len(pdu) < 2+n {
			return out, fmt.Errorf("TLV type %d: length %d exceeds the %d bytes left", typ, n, len(pdu)-2)
		}
		out = append(out, TLV{Type: typ, Value: hex.EncodeToString(pdu[2 : 2+n])})
		pdu = pdu[2+n:]
		if typ == TypeEnd {
			break
		}
	}
	return out, nil
}
