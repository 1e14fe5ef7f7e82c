package pxe

import (
	"errors"
	"fmt"
	"net"
	"net/url"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/ferrometal/ferro/internal/driver"
	"github.com/ferrometal/ferro/internal/driver/deployimage"
)

// plan is everything validation learned that PrepareRamdisk needs.
type plan struct {
	uuid    string
	root    string   // tftp_root (pxe) or http_root (ipxe), absolute
	httpURL string   // ipxe: [deploy]http_url without a trailing slash
	macs    []string // PXE-enabled ports' MACs, aa:bb:cc:dd:ee:ff
	images  *deployimage.Images
	// appendParams are the kernel_append_params tokens, validated.
	appendParams []string
}

// problems collects what is missing and what is invalid, so that one
// validation reports everything at once.
type problems struct{ missing, invalid []string }

func (p *problems) missingf(format string, a ...any) {
	p.missing = append(p.missing, fmt.Sprintf(format, a...))
}

func (p *problems) invalidf(format string, a ...any) {
	p.invalid = append(p.invalid, fmt.Sprintf(format, a...))
}

// err reports invalid values first: a node with a bad value must fail
// validation rather than silently fall back because something else is
// missing.
func (p *problems) err() error {
	if len(p.invalid) > 0 {
		return fmt.Errorf("%w: %s", driver.ErrInvalidParameter, strings.Join(p.invalid, "; "))
	}
	if len(p.missing) > 0 {
		return &missingError{strings.Join(p.missing, "; ")}
	}
	return nil
}

// missingError is a missing-parameter error whose detail ValidateInspection
// can reuse under ErrUnsupported.
type missingError struct{ detail string }

func (e *missingError) Error() string { return driver.ErrMissingParameter.Error() + ": " + e.detail }
func (e *missingError) Unwrap() error { return driver.ErrMissingParameter }

func missingDetail(err error) string {
	if me, ok := errors.AsType[*missingError](err); ok {
		return me.detail
	}
	return err.Error()
}

// uuidRE is a canonical UUID; the node UUID becomes a directory name.
var uuidRE = regexp.MustCompile(`^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$`)

// plan validates the node and the configuration for booting the deploy
// ramdisk and returns what preparing it needs.
func (b *Boot) plan(t *driver.Task) (*plan, error) {
	var pr problems
	n := t.Node
	p := &plan{uuid: n.UUID}
	if !uuidRE.MatchString(n.UUID) {
		pr.invalidf("node UUID %q is not a UUID", n.UUID)
	}

	// Ports.
	if len(t.Ports) == 0 {
		pr.missingf("node has no ports")
	} else {
		for _, port := range t.PXEPorts() {
			mac, ok := parseMAC(port.Address)
			if !ok {
				pr.invalidf("port %s address %q is not a 48-bit MAC address", port.UUID, port.Address)
				continue
			}
			p.macs = append(p.macs, mac)
		}
		if len(t.PXEPorts()) == 0 {
			pr.missingf("none of the node's ports is PXE-enabled")
		}
	}

	// Boot root and, for iPXE, the HTTP server.
	if b.kind == IPXE {
		p.root = b.checkRoot(&pr, "[deploy]http_root", b.o.HTTPRoot)
		p.httpURL = checkHTTPURL(&pr, b.o.HTTPURL)
		checkDHCPValue(&pr, "[pxe]ipxe_bootfile_name", b.o.IPXEBootfile, true)
		checkDHCPValue(&pr, "[pxe]ipxe_boot_script", b.bootScriptName(), true)
	} else {
		p.root = b.checkRoot(&pr, "[pxe]tftp_root", b.o.TFTPRoot)
		checkDHCPValue(&pr, "[pxe]pxe_bootfile_name", b.o.PXEBootfile, true)
	}
	checkDHCPValue(&pr, "[pxe]tftp_server", b.o.TFTPServer, false)

	images, ipr := b.o.Images.Check(n.DriverInfo)
	pr.missing = append(pr.missing, ipr.Missing...)
	pr.invalid = append(pr.invalid, ipr.Invalid...)
	p.images = images

	p.appendParams = b.checkAppendParams(&pr, t)
	if err := pr.err(); err != nil {
		return nil, err
	}
	return p, nil
}

// checkDHCPValue validates a value that goes into a DHCP option (and so,
// with Neutron, into dnsmasq's option file).
func checkDHCPValue(pr *problems, name, v string, required bool) {
	switch {
	case v == "" && required:
		pr.invalidf("%s is empty", name)
	case !safeValue(v):
		pr.invalidf("%s %q contains whitespace, control or script characters", name, v)
	}
}

func (b *Boot) checkRoot(pr *problems, name, dir string) string {
	switch {
	case dir == "":
		pr.missingf("%s is not set", name)
	case !filepath.IsAbs(dir):
		pr.invalidf("%s %q is not an absolute path", name, dir)
	case !safeValue(dir):
		pr.invalidf("%s %q contains whitespace, control or shell characters", name, dir)
	default:
		return filepath.Clean(dir)
	}
	return ""
}

// checkHTTPURL validates [deploy]http_url, which is pasted into iPXE
// scripts and DHCP options, and returns it without a trailing slash.
func checkHTTPURL(pr *problems, raw string) string {
	if raw == "" {
		pr.missingf("[deploy]http_url is not set")
		return ""
	}
	if !safeValue(raw) {
		pr.invalidf("[deploy]http_url %q contains whitespace, control or script characters", raw)
		return ""
	}
	u, err := url.Parse(raw)
	switch {
	case err != nil:
		pr.invalidf("[deploy]http_url %q is not a URL: %v", raw, err)
	case u.Scheme != "http" && u.Scheme != "https":
		pr.invalidf("[deploy]http_url %q must be an http:// or https:// URL", raw)
	case u.Host == "":
		pr.invalidf("[deploy]http_url %q has no host", raw)
	case u.User != nil || u.RawQuery != "" || u.Fragment != "":
		pr.invalidf("[deploy]http_url %q must not have credentials, a query or a fragment", raw)
	default:
		return strings.TrimRight(raw, "/")
	}
	return ""
}

func truncate(s string) string {
	if len(s) > 120 {
		return s[:120] + "…"
	}
	return s
}

// parseMAC returns a 48-bit MAC address as aa:bb:cc:dd:ee:ff.
func parseMAC(s string) (string, bool) {
	hw, err := net.ParseMAC(s)
	if err != nil || len(hw) != 6 {
		return "", false
	}
	return hw.String(), true
}
