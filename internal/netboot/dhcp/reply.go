// Package dhcp is the built-in DHCPv4 server: it answers only the ports of
// nodes whose ferro-prepared ramdisk is being booted, sends PXE ROMs to an
// iPXE or PXELINUX binary over TFTP and iPXE to the node's script over
// HTTP, either with an address from its range or, as proxyDHCP, with the
// boot options alone.
//
// Reply is a pure function of the request and the node record; Server is
// the sockets, the filter and the leases around it.
package dhcp

import (
	"bytes"
	"errors"
	"fmt"
	"net"
	"strings"
	"time"

	"github.com/insomniacslk/dhcp/dhcpv4"
	"github.com/insomniacslk/dhcp/iana"

	"github.com/ferrometal/ferro/internal/baremetal"
	"github.com/ferrometal/ferro/internal/states"
)

// ManageBootKey is driver_internal_info's record that ferro manages boot
// for the running inspection (internal/driver/inspect.ManageBootKey).
const ManageBootKey = "inspector_manage_boot"

// Active reports whether a node is booting a ramdisk that ferro should
// answer for: a managed inspection in progress (inspecting or inspect wait
// with driver_internal_info[inspector_manage_boot]), or any node in
// inspect wait (the unmanaged path, where the inspector expects the node).
func Active(n *baremetal.Node) bool {
	if n == nil {
		return false
	}
	switch n.ProvisionState {
	case states.InspectWait:
		return true
	case states.Inspecting:
		return managed(n)
	}
	return false
}

func managed(n *baremetal.Node) bool {
	v, _ := n.DriverInternalInfo[ManageBootKey].(bool)
	return v
}

// Params is the server's side of a reply.
type Params struct {
	// ServerIP is the server identifier and next-server (siaddr).
	ServerIP net.IP
	// Proxy makes replies proxyDHCP ones: boot options, no address.
	Proxy bool
	// Address options (not in proxy mode).
	Netmask   net.IPMask
	Router    net.IP
	DNS       []net.IP
	LeaseTime time.Duration
	// HTTPURL is [deploy]http_url, where iPXE fetches scripts.
	HTTPURL string
	// Boot files over TFTP: PXELINUX for the pxe boot interface ([pxe]pxe_bootfile_name),
	// iPXE for BIOS ([pxe]ipxe_bootfile_name) and UEFI ([pxe]uefi_ipxe_bootfile_name).
	PXEBootfile, IPXEBootfile, UEFIIPXEBootfile string
}

// ErrNoBoot is a PXE client that the node's boot interface cannot boot
// (a UEFI ROM of a pxe-boot node); the request is ignored.
var ErrNoBoot = errors.New("no boot file for this client")

// Client describes what kind of firmware sent a request.
type Client struct {
	PXE  bool // option 60 starts with PXEClient, or iPXE
	IPXE bool // option 77 contains iPXE
	UEFI bool // option 93 (else option 60's Arch) is an EFI architecture
	Arch iana.Arch
}

// Classify reads the client kind from a request.
func Classify(req *dhcpv4.DHCPv4) Client {
	var c Client
	vc := req.ClassIdentifier()
	c.IPXE = bytes.Contains(req.Options.Get(dhcpv4.OptionUserClassInformation), []byte("iPXE"))
	c.PXE = strings.HasPrefix(vc, "PXEClient") || c.IPXE
	if archs := req.ClientArch(); len(archs) > 0 {
		c.Arch = archs[0]
	} else if _, a, ok := strings.Cut(vc, ":Arch:"); ok {
		var n uint16
		if _, err := fmt.Sscanf(a, "%05d", &n); err == nil {
			c.Arch = iana.Arch(n)
		}
	}
	switch c.Arch {
	case iana.EFI_IA32, iana.EFI_X86_64, iana.EFI_BC, iana.EFI_X86_HTTP, iana.EFI_X86_64_HTTP, iana.EFI_BC_HTTP:
		c.UEFI = true
	}
	return c
}

// Boot is where a client is sent: a file name over TFTP from ServerIP, or
// an http:// URL for iPXE. Empty for a client that is not a PXE ROM.
type Boot struct {
	File string
	HTTP bool
}

// BootFor chooses the boot file of a node for a client:
//
//	boot_interface pxe, BIOS (PXE ROM or iPXE)  → PXEBootfile (PXELINUX) over TFTP
//	boot_interface pxe, UEFI                    → ErrNoBoot: PXELINUX is BIOS only
//	other, iPXE                                 → <http_url>/<uuid>/config (managed) or <http_url>/boot.ipxe
//	other, BIOS PXE ROM                         → IPXEBootfile (undionly.kpxe) over TFTP
//	other, UEFI PXE ROM                         → UEFIIPXEBootfile (snponly.efi) over TFTP
//
// n is nil for a machine no port has (discovery): it boots as "other".
func BootFor(c Client, n *baremetal.Node, p Params) (Boot, error) {
	if !c.PXE {
		return Boot{}, nil
	}
	if n == nil {
		// An unknown machine (discovery): iPXE and the default script.
		n = &baremetal.Node{}
	}
	if n.Interface("boot") == "pxe" {
		if c.UEFI {
			return Boot{}, fmt.Errorf("%w: node %s has boot_interface pxe (PXELINUX, BIOS only) but its firmware is UEFI (arch %d); use ipxe",
				ErrNoBoot, n.UUID, c.Arch)
		}
		return Boot{File: p.PXEBootfile}, nil
	}
	if c.IPXE {
		base := strings.TrimRight(p.HTTPURL, "/")
		if base == "" {
			return Boot{}, fmt.Errorf("%w: [deploy]http_url is not set", ErrNoBoot)
		}
		if managed(n) {
			return Boot{File: base + "/" + n.UUID + "/config", HTTP: true}, nil
		}
		return Boot{File: base + "/boot.ipxe", HTTP: true}, nil
	}
	if c.UEFI {
		return Boot{File: p.UEFIIPXEBootfile}, nil
	}
	return Boot{File: p.IPXEBootfile}, nil
}

// pxeVendorOptions is option 43 with PXE discovery control (sub-option 6)
// = 8: use the boot file in this reply, do not wait for proxyDHCP.
var pxeVendorOptions = []byte{6, 1, 8, 255}

// Reply is the answer to req for node n, or nil when req gets none (a
// message type a server does not answer). yiaddr is the client's leased
// address (ignored in proxy mode); for a REQUEST whose address is not
// yiaddr the reply is a NAK.
func Reply(req *dhcpv4.DHCPv4, n *baremetal.Node, yiaddr net.IP, p Params) (*dhcpv4.DHCPv4, error) {
	c := Classify(req)
	boot, err := BootFor(c, n, p)
	if err != nil {
		return nil, err
	}
	var typ dhcpv4.MessageType
	switch req.MessageType() {
	case dhcpv4.MessageTypeDiscover:
		typ = dhcpv4.MessageTypeOffer
	case dhcpv4.MessageTypeRequest:
		typ = dhcpv4.MessageTypeAck
		if !p.Proxy {
			want := req.RequestedIPAddress()
			if want == nil {
				want = req.ClientIPAddr
			}
			if sid := req.ServerIdentifier(); sid != nil && !sid.Equal(p.ServerIP) {
				return nil, nil // the client chose another server
			}
			if !want.Equal(yiaddr) {
				return dhcpv4.NewReplyFromRequest(req,
					dhcpv4.WithMessageType(dhcpv4.MessageTypeNak),
					dhcpv4.WithOption(dhcpv4.OptServerIdentifier(p.ServerIP)))
			}
		}
	case dhcpv4.MessageTypeInform:
		typ = dhcpv4.MessageTypeAck
	default:
		return nil, nil
	}
	if p.Proxy && !c.PXE {
		return nil, nil
	}
	mods := []dhcpv4.Modifier{
		dhcpv4.WithMessageType(typ),
		dhcpv4.WithServerIP(p.ServerIP),
		dhcpv4.WithOption(dhcpv4.OptServerIdentifier(p.ServerIP)),
	}
	if !p.Proxy && req.MessageType() != dhcpv4.MessageTypeInform {
		mods = append(mods, dhcpv4.WithYourIP(yiaddr),
			dhcpv4.WithOption(dhcpv4.OptIPAddressLeaseTime(p.LeaseTime)))
		if p.Netmask != nil {
			mods = append(mods, dhcpv4.WithNetmask(p.Netmask))
		}
		if p.Router != nil {
			mods = append(mods, dhcpv4.WithRouter(p.Router))
		}
		if len(p.DNS) > 0 {
			mods = append(mods, dhcpv4.WithDNS(p.DNS...))
		}
	}
	if c.PXE {
		mods = append(mods,
			dhcpv4.WithOption(dhcpv4.OptClassIdentifier("PXEClient")),
			dhcpv4.WithOption(dhcpv4.OptGeneric(dhcpv4.OptionVendorSpecificInformation, pxeVendorOptions)),
		)
		if boot.File != "" {
			mods = append(mods, dhcpv4.WithOption(dhcpv4.OptBootFileName(boot.File)))
		}
	}
	reply, err := dhcpv4.NewReplyFromRequest(req, mods...)
	if err != nil {
		return nil, fmt.Errorf("build DHCP reply: %w", err)
	}
	if c.PXE && len(boot.File) < 128 {
		reply.BootFileName = boot.File
	}
	return reply, nil
}
