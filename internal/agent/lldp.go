package agent

import (
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"

	"github.com/ferrometal/ferro/internal/inventory"
)

// EtherTypeLLDP is 802.1AB's EtherType.
const EtherTypeLLDP = 0x88cc

// maxTLVs bounds how many TLVs one frame may yield; an LLDPDU fits in
// 1500 bytes, so at most 750 two-byte TLVs.
const maxTLVs = 750

// ParseLLDPFrame splits an Ethernet frame carrying an LLDPDU into its TLVs,
// hex-encoded as IPA sends them in lldp_raw, up to and including the End
// TLV. A frame that is not LLDP, or whose TLV runs past its end, is an
// error.
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
	buf := frame[off+2:]
	var tlvs []inventory.TLV
	for len(buf) >= 2 && len(tlvs) < maxTLVs {
		hdr := binary.BigEndian.Uint16(buf)
		typ, n := int(hdr>>9), int(hdr&0x1ff)
		if 2+n > len(buf) {
			return nil, fmt.Errorf("LLDP frame: TLV type %d of %d bytes runs past the frame", typ, n)
		}
		tlvs = append(tlvs, inventory.TLV{Type: typ, Value: hex.EncodeToString(buf[2 : 2+n])})
		buf = buf[2+n:]
		if typ == 0 { // End of LLDPDU; what follows is padding
			break
		}
	}
	if len(tlvs) == 0 {
		return nil, errors.New("LLDP frame: no TLV")
	}
	return tlvs, nil
}
