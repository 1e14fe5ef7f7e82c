package inventory

import (
	"encoding/json"
	"errors"
)

// TLV is one LLDP TLV as IPA sends it: on the wire a pair
// [type, "hex-encoded value"]. The value is kept as the hex string; package
// lldp decodes it.
type TLV struct {
	Type  int
	Value string
}

// MarshalJSON encodes the TLV as a [type, "hex"] pair.
func (t TLV) MarshalJSON() ([]byte, error) {
	return json.Marshal([2]any{t.Type, t.Value})
}

// The ways a TLV pair can be malformed; DecodeBytes builds TLVs without
// UnmarshalJSON (see tlvFromJSON) and reports the same errors.
var (
	errPair     = errors.New("expected [type, hex] pair")
	errTLVType  = errors.New("TLV type: expected integer")
	errTLVValue = errors.New("TLV value: expected hex string")
)

// UnmarshalJSON decodes a [type, "hex"] pair.
func (t *TLV) UnmarshalJSON(b []byte) error {
	var pair []json.RawMessage
	if err := json.Unmarshal(b, &pair); err != nil || len(pair) != 2 {
		return errPair
	}
	var typ int
	if err := json.Unmarshal(pair[0], &typ); err != nil {
		return errTLVType
	}
	var val string
	if err := json.Unmarshal(pair[1], &val); err != nil {
		return errTLVValue
	}
	t.Type, t.Value = typ, val
	return nil
}
