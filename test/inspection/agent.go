// Package inspection is the end-to-end inspection lane: tests that run a
// real `ferro serve` process (and, for the neutron interface, a real
// neutron-server) through whole inspections, with a stand-in for the agent.
//
// The stand-in is this file, shared with bench/inspection: it does what the
// ramdisk would do after a PXE boot — read the boot configuration that ferro
// wrote for the node's MAC address, take the callback URL and the
// inspection token from its kernel command line, and post a hardware report
// there.
package inspection

import (
	"bytes"
	"context"
	_ "embed"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
)

// Kernel parameters the agent reads.
const (
	// CallbackParam is ironic-python-agent's callback URL parameter.
	CallbackParam = "ipa-inspection-callback-url"
	// TokenParam is ferro's per-inspection token.
	TokenParam = "ferro-inspection-token"
	// TokenHeader carries the token with the report.
	TokenHeader = "X-Ferro-Inspection-Token"
)

// BootConfig is what the agent learns from the boot configuration of its
// MAC address.
type BootConfig struct {
	// Path is the per-MAC entry that was read (a link to the node's config).
	Path string
	// Kernel is the kernel the configuration boots.
	Kernel string
	// Params are the kernel command line's key=value parameters; for a
	// repeated key the last one wins, as the agent reads them.
	Params map[string]string
	// Cmdline is the whole kernel command line, in order.
	Cmdline []string
	// Callback and Token are Params[CallbackParam] and Params[TokenParam].
	Callback, Token string
}

// MACEntry is the path of the per-MAC boot entry for mac
// (aa:bb:cc:dd:ee:ff) under root: pxelinux.cfg/01-aa-bb-… for kind "pxe"
// (PXELINUX), pxelinux.cfg/aa-bb-… for "ipxe" (iPXE's ${mac:hexhyp}).
func MACEntry(kind, root, mac string) string {
	name := strings.ReplaceAll(strings.ToLower(mac), ":", "-")
	if kind == "pxe" {
		name = "01-" + name
	}
	return filepath.Join(root, "pxelinux.cfg", name)
}

// ReadBootConfig reads and parses the boot entry of mac under root, the
// TFTP root for "pxe" and the HTTP root for "ipxe".
func ReadBootConfig(kind, root, mac string) (*BootConfig, error) {
	path := MACEntry(kind, root, mac)
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	bc, err := ParseBootConfig(kind, data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	bc.Path = path
	return bc, nil
}

// ParseBootConfig finds the kernel command line in a PXELINUX config (its
// append line), an iPXE script (its kernel line) or a GRUB config (kind
// "grub", its linux line) and requires the
// callback URL and the token on it.
func ParseBootConfig(kind string, data []byte) (*BootConfig, error) {
	bc := &BootConfig{Params: map[string]string{}}
	var line string
	for l := range strings.Lines(string(data)) {
		fields := strings.Fields(l)
		if len(fields) == 0 {
			continue
		}
		switch {
		case kind == "pxe" && fields[0] == "kernel" && len(fields) > 1:
			bc.Kernel = fields[1]
		case kind == "pxe" && fields[0] == "append":
			line = l
			bc.Cmdline = fields[1:]
		case kind == "grub" && fields[0] == "linux" && len(fields) > 1:
			// A virtual media ISO's grub.cfg: linux <kernel> <cmdline>.
			line = l
			bc.Kernel = fields[1]
			bc.Cmdline = fields[2:]
		case kind == "ipxe" && fields[0] == "kernel" && len(fields) > 1:
			line = l
			bc.Kernel = fields[1]
			// iPXE's own commands end at "||".
			rest := fields[2:]
			for i, f := range rest {
				if f == "||" {
					rest = rest[:i]
					break
				}
			}
			bc.Cmdline = rest
		}
	}
	if line == "" {
		return nil, fmt.Errorf("no kernel command line in the %s configuration:\n%s", kind, data)
	}
	for _, f := range bc.Cmdline {
		if k, v, ok := strings.Cut(f, "="); ok {
			bc.Params[k] = v
		}
	}
	bc.Callback, bc.Token = bc.Params[CallbackParam], bc.Params[TokenParam]
	if bc.Callback == "" {
		return nil, fmt.Errorf("no %s on the kernel command line %q", CallbackParam, strings.TrimSpace(line))
	}
	return bc, nil
}

//go:embed testdata/ipa-payload-example.json
var examplePayload []byte

// Report returns the example ironic-python-agent report (a Dell PowerEdge
// R6515: 32 CPUs, x86_64, 128 GiB, a 960 GB NVMe root disk, LLDP on its
// first NIC) with its NICs' MAC addresses replaced by macs: the first NIC,
// the one it booted from, gets macs[0], and so on; NICs beyond len(macs)
// are dropped.
func Report(macs ...string) (map[string]any, error) {
	if len(macs) == 0 {
		return nil, fmt.Errorf("a report needs at least one MAC address")
	}
	var r map[string]any
	if err := json.Unmarshal(examplePayload, &r); err != nil {
		return nil, err
	}
	inv := r["inventory"].(map[string]any)
	ifaces := inv["interfaces"].([]any)
	if len(macs) < len(ifaces) {
		ifaces = ifaces[:len(macs)]
	}
	for i, iface := range ifaces {
		iface.(map[string]any)["mac_address"] = strings.ToLower(macs[i])
	}
	inv["interfaces"] = ifaces
	inv["boot"].(map[string]any)["pxe_interface"] = strings.ToLower(macs[0])
	r["boot_interface"] = "01-" + strings.ReplaceAll(strings.ToLower(macs[0]), ":", "-")
	return r, nil
}

// Post sends report to the callback URL with the token (none when empty)
// and returns the answer's status and body.
func Post(ctx context.Context, c *http.Client, callback, token string, report any) (int, []byte, error) {
	body, err := json.Marshal(report)
	if err != nil {
		return 0, nil, err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, callback, bytes.NewReader(body))
	if err != nil {
		return 0, nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	if token != "" {
		req.Header.Set(TokenHeader, token)
	}
	resp, err := c.Do(req)
	if err != nil {
		return 0, nil, err
	}
	defer resp.Body.Close()
	out, err := io.ReadAll(resp.Body)
	return resp.StatusCode, out, err
}
