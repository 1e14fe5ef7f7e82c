package agent

import (
	"strings"
	"testing"
	"time"
)

func TestParseCmdline_ReadsIPANamesAndToken(t *testing.T) {
	line := `BOOT_IMAGE=/vmlinuz console=ttyS0,115200n8 ipa-inspection-callback-url=http://10.0.2.2:5050/v1/continue ` +
		`ferro-inspection-token=s3cret ipa-inspection-collectors=default,pci-devices,lldp ipa-debug=1 ` +
		`BOOTIF=01-52-54-00-12-34-56 ipa-lldp-timeout=2.5 ipa-fast-track ferro-modules=e1000e,igb quiet` + "\n"
	p, err := ParseCmdline(line)
	if err != nil {
		t.Fatal(err)
	}
	if p.CallbackURL != "http://10.0.2.2:5050/v1/continue" || p.Token != "s3cret" {
		t.Errorf("url/token = %q/%q", p.CallbackURL, p.Token)
	}
	if strings.Join(p.Collectors, ",") != "default,pci-devices,lldp" {
		t.Errorf("collectors = %q", p.Collectors)
	}
	if !p.Debug || !p.FastTrack || p.DHCPAll {
		t.Errorf("debug/fasttrack/dhcpall = %v/%v/%v", p.Debug, p.FastTrack, p.DHCPAll)
	}
	if p.BootIF != "01-52-54-00-12-34-56" || p.BootMAC.String() != "52:54:00:12:34:56" {
		t.Errorf("bootif = %q %v", p.BootIF, p.BootMAC)
	}
	if p.LLDPTimeout != 2500*time.Millisecond {
		t.Errorf("lldp timeout = %v", p.LLDPTimeout)
	}
	if strings.Join(p.Modules, ",") != "e1000e,igb" {
		t.Errorf("modules = %q", p.Modules)
	}
}

func TestParseCmdline_Defaults(t *testing.T) {
	p, err := ParseCmdline("console=ttyS0")
	if err != nil {
		t.Fatal(err)
	}
	if p.LLDPTimeout != DefaultLLDPTimeout || p.DHCPTimeout != DefaultDHCPTimeout || p.PostTimeout != DefaultPostTimeout {
		t.Errorf("defaults = %+v", p)
	}
	if p.Collectors != nil || p.CallbackURL != "" || p.FastTrack {
		t.Errorf("unexpected values: %+v", p)
	}
}

func TestParseCmdline_QuotedValue(t *testing.T) {
	p, err := ParseCmdline(`ipa-inspection-collectors="default, lldp" ipa-debug=0`)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(p.Collectors, ",") != "default,lldp" || p.Debug {
		t.Errorf("got %+v", p)
	}
}

func TestParseCmdline_BadValuesNameTheParameter(t *testing.T) {
	for _, tc := range []struct{ line, want string }{
		{"BOOTIF=01-zz-54-00-12-34-56", "BOOTIF"},
		{"ipa-inspection-callback-url=ftp://x/", "ipa-inspection-callback-url"},
		{"ipa-lldp-timeout=soon", "ipa-lldp-timeout"},
		{"ferro-post-timeout=-3", "ferro-post-timeout"},
	} {
		_, err := ParseCmdline(tc.line)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: err = %v, want it to name %s", tc.line, err, tc.want)
		}
	}
}

func TestParseCmdline_TokenNeverInError(t *testing.T) {
	_, err := ParseCmdline("ferro-inspection-token=hunter2 BOOTIF=bad")
	if err == nil || strings.Contains(err.Error(), "hunter2") {
		t.Errorf("err = %v", err)
	}
}
