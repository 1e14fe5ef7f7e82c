package agent

import (
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/ferrometal/ferro/internal/inventory"
	"github.com/ferrometal/ferro/internal/lldp"
)

// EtherTypeLLDP is 802.1AB's EtherType.
const EtherTypeLLDP = 0x88cc

// ParseLLDPFrame splits an Ethernet frame carrying an LLDPDU into its TLVs
// (lldp.SplitPDU), hex-encoded as IPA sends them in lldp_raw, up to and
// including the End TLV. A frame that is not LLDP, or whose TLV runs past
// its end, is an error.
func ParseLLDPFrame(frame []byte) ([]inventory.TLV, error) {
	if len(frame) < 14 {
		return nil, errors.New("LLDP frame: shorter than an Ethernet header")
	}
	off := 12
	et := binary.BigEndian.Uint16(frame[off:])
	if et == 0x8100 { // an 802.1Q tag before the EtherType
		if len(frame) < 18 {
			return nil, errors.New("LLDP frame: truncated VLAN tag")
		}
		off += 4
		et = binary.BigEndian.Uint16(frame[off:])
	}
	if et != EtherTypeLLDP {
		return nil, fmt.Errorf("LLDP frame: EtherType %#04x", et)
	}
	tlvs, err := lldp.SplitPDU(frame[off+2:])
	if err != nil {
		return nil, fmt.Errorf("LLDP frame: %w", err)
	}
	if len(tlvs) == 0 {
		return nil, errors.New("LLDP frame: no TLV")
	}
	out := make([]inventory.TLV, len(tlvs))
	for i, t := range tlvs {
		out[i] = inventory.TLV{Type: t.Type, Value: t.Value}
	}
	return out, nil
}
