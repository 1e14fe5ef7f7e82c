package dhcp

import (
	"net"
	"testing"
	"time"

	"github.com/insomniacslk/dhcp/dhcpv4"
	"github.com/insomniacslk/dhcp/iana"

	"github.com/ferrometal/ferro/internal/baremetal"
	"github.com/ferrometal/ferro/internal/states"
)

const nodeUUID = "1be26c0b-03f2-4d2e-ae87-c02d7f33c123"

var (
	mac     = net.HardwareAddr{0x52, 0x54, 0x00, 0x12, 0x34, 0x56}
	server  = net.IPv4(192, 168, 77, 1).To4()
	leased  = net.IPv4(192, 168, 77, 10).To4()
	params  = Params{ServerIP: server, Netmask: net.CIDRMask(24, 32), Router: server, DNS: []net.IP{server}, LeaseTime: time.Hour, HTTPURL: "http://192.168.77.1:8080/httpboot/", PXEBootfile: "pxelinux.0", IPXEBootfile: "undionly.kpxe", UEFIIPXEBootfile: "snponly.efi"}
	proxied = func() Params { p := params; p.Proxy = true; return p }()
)

func node(boot string, state string, managed bool) *baremetal.Node {
	return &baremetal.Node{UUID: nodeUUID, ProvisionState: state,
		Interfaces:         map[string]string{"boot": boot},
		DriverInternalInfo: baremetal.JSON{ManageBootKey: managed}}
}

// request builds a client message as the firmware sends it.
func request(t *testing.T, typ dhcpv4.MessageType, mods ...dhcpv4.Modifier) *dhcpv4.DHCPv4 {
	t.Helper()
	m, err := dhcpv4.New(append([]dhcpv4.Modifier{dhcpv4.WithHwAddr(mac), dhcpv4.WithMessageType(typ)}, mods...)...)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

var (
	biosROM = []dhcpv4.Modifier{
		dhcpv4.WithOption(dhcpv4.OptClassIdentifier("PXEClient:Arch:00000:UNDI:002001")),
		dhcpv4.WithOption(dhcpv4.OptClientArch(iana.INTEL_X86PC)),
	}
	uefiROM = []dhcpv4.Modifier{
		dhcpv4.WithOption(dhcpv4.OptClassIdentifier("PXEClient:Arch:00007:UNDI:003016")),
		dhcpv4.WithOption(dhcpv4.OptClientArch(iana.EFI_X86_64)),
	}
	// uefiNoArch is a ROM that sends only option 60 (arch in its text).
	uefiNoArch = []dhcpv4.Modifier{dhcpv4.WithOption(dhcpv4.OptClassIdentifier("PXEClient:Arch:00009:UNDI:003016"))}
	// iPXE sends option 77 as the bare string "iPXE".
	ipxe = append([]dhcpv4.Modifier{dhcpv4.WithOption(dhcpv4.OptGeneric(dhcpv4.OptionUserClassInformation, []byte("iPXE")))}, biosROM...)
	// agent is the ramdisk's own DHCP client: no PXE options.
	agent = []dhcpv4.Modifier{}
)

func TestReply(t *testing.T) {
	for _, tc := range []struct {
		name     string
		typ      dhcpv4.MessageType
		mods     []dhcpv4.Modifier
		node     *baremetal.Node
		p        Params
		yiaddr   net.IP
		wantType dhcpv4.MessageType // 0: no reply
		wantFile string
		wantYI   net.IP
		wantPXE  bool // option 60 PXEClient and 43 discovery control
		wantErr  bool
	}{
		{"ipxe node, BIOS ROM", dhcpv4.MessageTypeDiscover, biosROM, node("ipxe", states.InspectWait, true), params, leased,
			dhcpv4.MessageTypeOffer, "undionly.kpxe", leased, true, false},
		{"ipxe node, UEFI ROM", dhcpv4.MessageTypeDiscover, uefiROM, node("ipxe", states.InspectWait, true), params, leased,
			dhcpv4.MessageTypeOffer, "snponly.efi", leased, true, false},
		{"ipxe node, UEFI ROM with option 60 only", dhcpv4.MessageTypeDiscover, uefiNoArch, node("ipxe", states.Inspecting, true), params, leased,
			dhcpv4.MessageTypeOffer, "snponly.efi", leased, true, false},
		{"ipxe node, iPXE, managed: the node's script", dhcpv4.MessageTypeDiscover, ipxe, node("ipxe", states.InspectWait, true), params, leased,
			dhcpv4.MessageTypeOffer, "http://192.168.77.1:8080/httpboot/" + nodeUUID + "/config", leased, true, false},
		{"ipxe node, iPXE, unmanaged: boot.ipxe", dhcpv4.MessageTypeDiscover, ipxe, node("ipxe", states.InspectWait, false), params, leased,
			dhcpv4.MessageTypeOffer, "http://192.168.77.1:8080/httpboot/boot.ipxe", leased, true, false},
		{"ipxe node, iPXE request: ack", dhcpv4.MessageTypeRequest, append([]dhcpv4.Modifier{dhcpv4.WithOption(dhcpv4.OptRequestedIPAddress(leased)), dhcpv4.WithOption(dhcpv4.OptServerIdentifier(server))}, ipxe...),
			node("ipxe", states.InspectWait, true), params, leased,
			dhcpv4.MessageTypeAck, "http://192.168.77.1:8080/httpboot/" + nodeUUID + "/config", leased, true, false},
		{"request for another address: nak", dhcpv4.MessageTypeRequest, append([]dhcpv4.Modifier{dhcpv4.WithOption(dhcpv4.OptRequestedIPAddress(net.IPv4(192, 168, 77, 99)))}, ipxe...),
			node("ipxe", states.InspectWait, true), params, leased,
			dhcpv4.MessageTypeNak, "", nil, false, false},
		{"request to another server: silence", dhcpv4.MessageTypeRequest, append([]dhcpv4.Modifier{dhcpv4.WithOption(dhcpv4.OptRequestedIPAddress(leased)), dhcpv4.WithOption(dhcpv4.OptServerIdentifier(net.IPv4(10, 0, 0, 1)))}, ipxe...),
			node("ipxe", states.InspectWait, true), params, leased,
			0, "", nil, false, false},
		{"pxe node, BIOS ROM: PXELINUX", dhcpv4.MessageTypeDiscover, biosROM, node("pxe", states.InspectWait, true), params, leased,
			dhcpv4.MessageTypeOffer, "pxelinux.0", leased, true, false},
		{"pxe node, iPXE: PXELINUX", dhcpv4.MessageTypeDiscover, ipxe, node("pxe", states.InspectWait, true), params, leased,
			dhcpv4.MessageTypeOffer, "pxelinux.0", leased, true, false},
		{"pxe node, UEFI: refused", dhcpv4.MessageTypeDiscover, uefiROM, node("pxe", states.InspectWait, true), params, leased,
			0, "", nil, false, true},
		{"the agent's DHCP: address only", dhcpv4.MessageTypeDiscover, agent, node("ipxe", states.InspectWait, true), params, leased,
			dhcpv4.MessageTypeOffer, "", leased, false, false},
		{"proxy, BIOS ROM: no address", dhcpv4.MessageTypeDiscover, biosROM, node("ipxe", states.InspectWait, true), proxied, nil,
			dhcpv4.MessageTypeOffer, "undionly.kpxe", nil, true, false},
		{"proxy, request on 4011: ack without address", dhcpv4.MessageTypeRequest, ipxe, node("ipxe", states.InspectWait, true), proxied, nil,
			dhcpv4.MessageTypeAck, "http://192.168.77.1:8080/httpboot/" + nodeUUID + "/config", nil, true, false},
		{"proxy, the agent: silence", dhcpv4.MessageTypeDiscover, agent, node("ipxe", states.InspectWait, true), proxied, nil,
			0, "", nil, false, false},
		{"release: silence", dhcpv4.MessageTypeRelease, ipxe, node("ipxe", states.InspectWait, true), params, leased,
			0, "", nil, false, false},
		{"ipxe without http_url: refused", dhcpv4.MessageTypeDiscover, ipxe, node("ipxe", states.InspectWait, true), Params{ServerIP: server}, leased,
			0, "", nil, false, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Reply(request(t, tc.typ, tc.mods...), tc.node, tc.yiaddr, tc.p)
			if (err != nil) != tc.wantErr {
				t.Fatalf("error = %v, want error %v", err, tc.wantErr)
			}
			if tc.wantType == 0 {
				if got != nil {
					t.Fatalf("got a reply, want none:\n%s", got.Summary())
				}
				return
			}
			if got == nil {
				t.Fatal("no reply")
			}
			if got.MessageType() != tc.wantType {
				t.Errorf("message type %v, want %v", got.MessageType(), tc.wantType)
			}
			if !got.ServerIdentifier().Equal(server) {
				t.Errorf("server identifier %v, want %v", got.ServerIdentifier(), server)
			}
			if tc.wantType == dhcpv4.MessageTypeNak {
				return
			}
			if !got.ServerIPAddr.Equal(server) {
				t.Errorf("siaddr %v, want %v", got.ServerIPAddr, server)
			}
			if f := got.BootFileNameOption(); f != tc.wantFile {
				t.Errorf("option 67 %q, want %q", f, tc.wantFile)
			}
			if got.BootFileName != tc.wantFile {
				t.Errorf("file %q, want %q", got.BootFileName, tc.wantFile)
			}
			if wantYI := tc.wantYI; wantYI == nil {
				if !got.YourIPAddr.IsUnspecified() {
					t.Errorf("yiaddr %v, want none", got.YourIPAddr)
				}
				if got.Options.Has(dhcpv4.OptionIPAddressLeaseTime) {
					t.Error("lease time in a reply without an address")
				}
			} else {
				if !got.YourIPAddr.Equal(wantYI) {
					t.Errorf("yiaddr %v, want %v", got.YourIPAddr, wantYI)
				}
				if got.IPAddressLeaseTime(0) != time.Hour || got.SubnetMask().String() != "ffffff00" || len(got.Router()) != 1 {
					t.Errorf("address options: lease %v mask %v router %v", got.IPAddressLeaseTime(0), got.SubnetMask(), got.Router())
				}
			}
			vc := got.ClassIdentifier()
			v43 := got.Options.Get(dhcpv4.OptionVendorSpecificInformation)
			if tc.wantPXE != (vc == "PXEClient") || tc.wantPXE != (string(v43) == "\x06\x01\x08\xff") {
				t.Errorf("PXE options: 60=%q 43=%x, want them %v", vc, v43, tc.wantPXE)
			}
		})
	}
}

func TestActive(t *testing.T) {
	for _, tc := range []struct {
		state   string
		managed bool
		want    bool
	}{
		{states.Inspecting, true, true},
		{states.InspectWait, true, true},
		{states.InspectWait, false, true},
		{states.Inspecting, false, false},
		{states.Manageable, true, false},
		{states.InspectFailed, true, false},
		{states.Active, true, false},
	} {
		if got := Active(node("ipxe", tc.state, tc.managed)); got != tc.want {
			t.Errorf("Active(%s, managed=%v) = %v, want %v", tc.state, tc.managed, got, tc.want)
		}
	}
	if Active(nil) {
		t.Error("Active(nil)")
	}
}

// TestAnswers is the PXE filter's table: a port is answered while its
// node boots a ramdisk now, a MAC no port has only with discovery.
func TestAnswers(t *testing.T) {
	for _, tc := range []struct {
		name      string
		n         *baremetal.Node
		isPort    bool
		discovery bool
		want      bool
	}{
		{"managed inspection starting", node("ipxe", states.Inspecting, true), true, false, true},
		{"managed, waiting for the report", node("ipxe", states.InspectWait, true), true, false, true},
		{"unmanaged, waiting for the report", node("ipxe", states.InspectWait, false), true, false, true},
		{"unmanaged, not booted yet", node("ipxe", states.Inspecting, false), true, false, false},
		{"not inspected", node("ipxe", states.Manageable, false), true, true, false},
		{"inspection failed", node("ipxe", states.InspectFailed, true), true, true, false},
		{"deployed", node("ipxe", states.Active, false), true, true, false},
		{"a port whose node is gone", nil, true, true, false},
		{"unknown MAC, discovery off", nil, false, false, false},
		{"unknown MAC, discovery on", nil, false, true, true},
	} {
		if got := Answers(tc.n, tc.isPort, tc.discovery); got != tc.want {
			t.Errorf("%s: Answers = %v, want %v", tc.name, got, tc.want)
		}
	}
}
