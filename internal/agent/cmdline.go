// Package agent is ferro-agent's library: it reads the kernel command line,
// brings the machine's network up, collects the hardware inventory in
// ironic-python-agent's schema and posts it to the inspection callback.
//
// Every collector takes a root directory, so plain `go test` runs them
// against fixture /sys and /proc trees; cmd/ferro-agent is a thin main over
// Run.
package agent

import (
	"fmt"
	"net"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/ferrometal/ferro/internal/callback"
)

// Kernel parameters the agent reads besides those in package callback. The
// names are ironic-python-agent's where it has one.
const (
	// LLDPTimeoutParam is how many seconds to listen for LLDP frames.
	LLDPTimeoutParam = "ipa-lldp-timeout"
	// DHCPAllParam makes the agent configure every NIC, not only BOOTIF's.
	DHCPAllParam = "ipa-inspection-dhcp-all-interfaces"
	// DHCPTimeoutParam bounds the wait for DHCP, in seconds.
	DHCPTimeoutParam = "ipa-inspection-dhcp-wait-timeout"
	// FastTrackParam keeps the machine up after the report instead of
	// powering it off.
	FastTrackParam = "ipa-fast-track"
	// BootIFParam is the MAC the machine PXE-booted from, pxelinux style
	// ("01-aa-bb-cc-dd-ee-ff").
	BootIFParam = "BOOTIF"
	// PostTimeoutParam bounds how long the agent retries the callback,
	// in seconds (ferro's own).
	PostTimeoutParam = "ferro-post-timeout"
	// ModulesParam names extra kernel modules to load, comma separated
	// (ferro's own; the ramdisk's list is always loaded).
	ModulesParam = "ferro-modules"
	// CollectLLDPParam puts each interface's LLDP TLVs into its inventory
	// entry (inventory.interfaces[].lldp), where ironic-inspector's
	// lldp_basic and local_link_connection hooks and Ironic read them.
	CollectLLDPParam = "ipa-collect-lldp"
)

// Params is what the kernel command line tells the agent.
type Params struct {
	CallbackURL string
	Token       string
	// Collectors is ipa-inspection-collectors; nil means IPA's default.
	Collectors []string
	Debug      bool
	// BootIF is the raw BOOTIF value; BootMAC the MAC it names.
	BootIF      string
	BootMAC     net.HardwareAddr
	LLDPTimeout time.Duration
	DHCPAll     bool
	DHCPTimeout time.Duration
	PostTimeout time.Duration
	FastTrack   bool
	Modules     []string
	// CollectLLDP is ipa-collect-lldp: LLDP also goes into the inventory's
	// interfaces, IPA's older dialect, besides lldp_raw.
	CollectLLDP bool
}

// Defaults for parameters the command line leaves out. IPA waits 30 s for
// LLDP; ferro's default is shorter because switches send every 30 s at most
// and a lab bridge every few.
const (
	DefaultLLDPTimeout = 5 * time.Second
	DefaultDHCPTimeout = 60 * time.Second
	DefaultPostTimeout = 10 * time.Minute
)

// ParseCmdline parses /proc/cmdline's content. Unknown words are ignored, as
// the kernel's own parameters share the line. A malformed value of a known
// parameter is an error naming it, so the agent can report it.
func ParseCmdline(line string) (Params, error) {
	p := Params{
		LLDPTimeout: DefaultLLDPTimeout,
		DHCPTimeout: DefaultDHCPTimeout,
		PostTimeout: DefaultPostTimeout,
	}
	var errs []string
	for _, word := range splitCmdline(line) {
		key, val, hasVal := strings.Cut(word, "=")
		switch key {
		case callback.URLParam:
			if u, err := url.Parse(val); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
				errs = append(errs, fmt.Sprintf("%s: not an http(s) URL: %q", key, val))
				continue
			}
			p.CallbackURL = val
		case callback.TokenParam:
			p.Token = val
		case callback.CollectorsParam:
			p.Collectors = splitList(val)
		case callback.DebugParam:
			p.Debug = !hasVal || truthy(val)
		case BootIFParam:
			mac, err := parseBootIF(val)
			if err != nil {
				errs = append(errs, fmt.Sprintf("%s: %v", key, err))
				continue
			}
			p.BootIF, p.BootMAC = val, mac
		case LLDPTimeoutParam, DHCPTimeoutParam, PostTimeoutParam:
			f, err := strconv.ParseFloat(val, 64)
			if err != nil || f < 0 || f > 86400 {
				errs = append(errs, fmt.Sprintf("%s: expected seconds, got %q", key, val))
				continue
			}
			d := time.Duration(f * float64(time.Second))
			switch key {
			case LLDPTimeoutParam:
				p.LLDPTimeout = d
			case DHCPTimeoutParam:
				p.DHCPTimeout = d
			default:
				p.PostTimeout = d
			}
		case DHCPAllParam:
			p.DHCPAll = !hasVal || truthy(val)
		case FastTrackParam:
			p.FastTrack = !hasVal || truthy(val)
		case CollectLLDPParam:
			p.CollectLLDP = !hasVal || truthy(val)
		case ModulesParam:
			p.Modules = append(p.Modules, splitList(val)...)
		}
	}
	if len(errs) > 0 {
		return p, fmt.Errorf("kernel command line: %s", strings.Join(errs, "; "))
	}
	return p, nil
}

// splitCmdline splits on white space, honouring double quotes as the kernel
// does (`foo="a b"`).
func splitCmdline(line string) []string {
	var words []string
	var cur strings.Builder
	inQuote, any := false, false
	for _, r := range line {
		switch {
		case r == '"':
			inQuote, any = !inQuote, true
		case !inQuote && (r == ' ' || r == '\t' || r == '\n'):
			if any {
				words = append(words, cur.String())
				cur.Reset()
				any = false
			}
		default:
			cur.WriteRune(r)
			any = true
		}
	}
	if any {
		words = append(words, cur.String())
	}
	return words
}

func splitList(s string) []string {
	var out []string
	for _, f := range strings.Split(s, ",") {
		if f = strings.TrimSpace(f); f != "" {
			out = append(out, f)
		}
	}
	return out
}

// truthy follows oslo.config's boolean strings.
func truthy(s string) bool {
	switch strings.ToLower(s) {
	case "1", "true", "yes", "on", "y", "t":
		return true
	}
	return false
}

// parseBootIF reads pxelinux's BOOTIF: a hardware type ("01" = Ethernet)
// and the MAC, dash separated. A bare MAC is accepted too.
func parseBootIF(v string) (net.HardwareAddr, error) {
	s := strings.ReplaceAll(v, "-", ":")
	if len(s) == len("01:aa:bb:cc:dd:ee:ff") && strings.HasPrefix(s, "01:") {
		s = s[3:]
	}
	mac, err := net.ParseMAC(s)
	if err != nil || len(mac) != 6 {
		return nil, fmt.Errorf("not a pxelinux BOOTIF (01-aa-bb-cc-dd-ee-ff): %q", v)
	}
	return mac, nil
}
