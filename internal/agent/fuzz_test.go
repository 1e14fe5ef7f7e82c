package agent

import "testing"

// The command line and LLDP frames come from outside the agent: neither
// may panic it, whatever they hold.
func FuzzParseCmdline(f *testing.F) {
	f.Add(`console=ttyS0 ipa-inspection-callback-url=http://10.0.2.2:5050/v1/continue BOOTIF=01-52-54-00-12-34-56 ipa-lldp-timeout=2`)
	f.Add(`ipa-inspection-collectors="default, lldp" ipa-debug ferro-modules=a,,b ferro-inspection-token=x`)
	f.Add(`BOOTIF="01-zz`)
	f.Fuzz(func(t *testing.T, line string) {
		p, err := ParseCmdline(line)
		if err == nil && p.BootMAC != nil && len(p.BootMAC) != 6 {
			t.Errorf("BOOTIF MAC of %d bytes", len(p.BootMAC))
		}
	})
}

func FuzzParseLLDPFrame(f *testing.F) {
	hdr := append([]byte("\x01\x80\xc2\x00\x00\x0e\x52\x54\x00\x00\x00\x01"), 0x88, 0xcc)
	f.Add(append(append([]byte{}, hdr...), 0x02, 0x07, 0x04, 1, 2, 3, 4, 5, 6, 0x00, 0x00))
	f.Add(append(append([]byte{}, hdr...), 0xff, 0xff))
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, frame []byte) {
		tlvs, err := ParseLLDPFrame(frame)
		if err == nil && len(tlvs) == 0 {
			t.Error("no TLV and no error")
		}
	})
}
