package inventory

import (
	"net/netip"
	"strings"
)

// NormalizeMAC returns mac in lower case if it is a MAC address written as
// six colon-separated hex pairs (the only form IPA sends, the inspector
// accepts and Ironic takes for a port address), and false otherwise.
func NormalizeMAC(mac string) (string, bool) {
	if len(mac) != 17 {
		return "", false
	}
	for i := 0; i < 17; i++ {
		c := mac[i]
		if i%3 == 2 {
			if c != ':' {
				return "", false
			}
			continue
		}
		if !isHex(c) {
			return "", false
		}
	}
	return strings.ToLower(mac), true
}

func isHex(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
}

// MACs returns the valid MAC addresses of the inventory's interfaces, lower
// case, in inventory order, without duplicates. The loopback interface, an
// all-zero MAC and interfaces with a loopback address are skipped: these are
// the addresses worth looking a node up by.
func (inv *Inventory) MACs() []string {
	if inv == nil {
		return nil
	}
	var out []string
	seen := map[string]bool{}
	for _, iface := range inv.Interfaces {
		mac, ok := NormalizeMAC(iface.MACAddress)
		if !ok || mac == "00:00:00:00:00:00" || iface.Name == "lo" || seen[mac] {
			continue
		}
		if ip, err := netip.ParseAddr(iface.IPv4Address); err == nil && ip.IsLoopback() {
			continue
		}
		seen[mac] = true
		out = append(out, mac)
	}
	return out
}

// BMCv4 returns the BMC's IPv4 address, or "" when the agent did not know
// it ("", "0.0.0.0").
func (inv *Inventory) BMCv4() string {
	if inv == nil || unknownBMC(inv.BMCAddress) {
		return ""
	}
	return inv.BMCAddress
}

// BMCv6 returns the BMC's IPv6 address, or "" when the agent did not know it
// ("", "::/0").
func (inv *Inventory) BMCv6() string {
	if inv == nil || unknownBMC(inv.BMCV6Address) {
		return ""
	}
	return inv.BMCV6Address
}

// BMCAddresses returns the known BMC addresses, IPv4 first: the lookup
// attribute bmc_address.
func (inv *Inventory) BMCAddresses() []string {
	var out []string
	for _, a := range []string{inv.BMCv4(), inv.BMCv6()} {
		if a != "" {
			out = append(out, a)
		}
	}
	return out
}

// unknownBMC reports the placeholders ipmitool prints for an unset address.
func unknownBMC(a string) bool {
	return a == "" || a == "0.0.0.0" || a == "::/0"
}
