package inventory

import (
	"encoding/json"
	"fmt"
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

// UnmarshalJSON decodes a [type, "hex"] pair.
func (t *TLV) UnmarshalJSON(b []byte) error {
	var pair []json.RawMessage
	if err := json.Unmarshal(b, &pair); err != nil || len(pair) != 2 {
		return fmt.Errorf("expected [type, hex] pair")
	}
	var typ int
	if err := json.Unmarshal(pair[0], &typ); err != nil {
		return fmt.Errorf("TLV type: expected integer")
	}
	var val string
	if err := json.Unmarshal(pair[1], &val); err != nil {
		return fmt.Errorf("TLV value: expected hex string")
	}
	t.Type, t.Value = typ, val
	return nil
}
