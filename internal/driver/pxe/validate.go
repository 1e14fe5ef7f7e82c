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
)

// plan is everything validation learned that PrepareRamdisk needs.
type plan struct {
	uuid    string
	root    string   // tftp_root (pxe) or http_root (ipxe), absolute
	httpURL string   // ipxe: [deploy]http_url without a trailing slash
	macs    []string // PXE-enabled ports' MACs, aa:bb:cc:dd:ee:ff
	kernel  image
	ramdisk image
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
		p.root = b.checkRoot(&pr, "[deploy]http_root", b.cfg.Deploy.HTTPRoot)
		p.httpURL = checkHTTPURL(&pr, b.cfg.Deploy.HTTPURL)
		checkDHCPValue(&pr, "[pxe]ipxe_bootfile_name", b.cfg.PXE.IPXEBootfileName, true)
		checkDHCPValue(&pr, "[pxe]ipxe_boot_script", b.bootScriptName(), true)
	} else {
		p.root = b.checkRoot(&pr, "[pxe]tftp_root", b.cfg.PXE.TFTPRoot)
		checkDHCPValue(&pr, "[pxe]pxe_bootfile_name", b.cfg.PXE.PXEBootfileName, true)
	}
	checkDHCPValue(&pr, "[pxe]tftp_server", b.cfg.PXE.TFTPServer, false)

	p.kernel, p.ramdisk = b.checkDeployImages(&pr, n.DriverInfo)

	p.appendParams = b.checkAppendParams(&pr, t)
	if err := pr.err(); err != nil {
		return nil, err
	}
	return p, nil
}

// checkDeployImages validates the deploy kernel and ramdisk: both from
// driver_info, or, only when driver_info has neither, both from [conductor].
func (b *Boot) checkDeployImages(pr *problems, info map[string]any) (kernel, ramdisk image) {
	dk, dkOK := stringField(pr, info, "deploy_kernel")
	dr, drOK := stringField(pr, info, "deploy_ramdisk")
	kSrc, rSrc := "driver_info[deploy_kernel]", "driver_info[deploy_ramdisk]"
	switch {
	case dkOK && drOK:
	case dkOK || drOK:
		set, unset := kSrc, rSrc
		if drOK {
			set, unset = rSrc, kSrc
		}
		pr.invalidf("%s is set but %s is not: set both or neither", set, unset)
	default:
		dk, dr = b.cfg.Conductor.DeployKernel, b.cfg.Conductor.DeployRamdisk
		kSrc, rSrc = "[conductor]deploy_kernel", "[conductor]deploy_ramdisk"
		switch {
		case dk == "" && dr == "":
			pr.missingf("no deploy_kernel and deploy_ramdisk in driver_info or [conductor]")
		case dk == "" || dr == "":
			set, unset := kSrc, rSrc
			if dk == "" {
				set, unset = rSrc, kSrc
			}
			pr.invalidf("%s is set but %s is not: set both or neither", set, unset)
		}
	}
	if dk != "" && dr != "" {
		kernel = b.checkImage(pr, kSrc, "deploy_kernel", dk)
		ramdisk = b.checkImage(pr, rSrc, "deploy_ramdisk", dr)
	}
	return kernel, ramdisk
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

// stringField returns driver_info[key] when it is a non-empty string. An
// empty string or null counts as absent, as in Ironic; another type is
// invalid.
func stringField(pr *problems, info map[string]any, key string) (string, bool) {
	v, ok := info[key]
	if !ok || v == nil {
		return "", false
	}
	s, isStr := v.(string)
	if !isStr {
		pr.invalidf("driver_info[%s] must be a string, not %T", key, v)
		return "", false
	}
	return s, s != ""
}

// image is a validated deploy image reference.
type image struct {
	name string // file name in the node directory: deploy_kernel or deploy_ramdisk
	href string
	url  *url.URL
	path string // file://: the cleaned absolute path
}

// display is the reference with any credentials masked, for messages.
func (i image) display() string {
	if i.url != nil {
		return i.url.Redacted()
	}
	return i.href
}

// checkImage validates a deploy image reference: http(s):// URLs, and
// file:// URLs inside [conductor]file_url_allowed_paths and outside the
// system directories (Ironic since CVE-2025-44021).
func (b *Boot) checkImage(pr *problems, src, name, href string) image {
	img := image{name: name, href: href}
	if !printable(href) || strings.ContainsAny(href, " \t") {
		pr.invalidf("%s %q contains whitespace or control characters", src, truncate(href))
		return img
	}
	u, err := url.Parse(href)
	if err != nil {
		pr.invalidf("%s %q is not a URL: %v", src, truncate(href), err)
		return img
	}
	switch strings.ToLower(u.Scheme) {
	case "http", "https":
		if u.Host == "" {
			pr.invalidf("%s %q has no host", src, u.Redacted())
			return img
		}
		img.url = u
	case "file":
		if u.Opaque != "" || (u.Host != "" && u.Host != "localhost") || !strings.HasPrefix(u.Path, "/") {
			pr.invalidf("%s %q is not an absolute file URL: use file:///absolute/path", src, href)
			return img
		}
		if u.RawQuery != "" || u.Fragment != "" {
			pr.invalidf("%s %q must not have a query or a fragment", src, href)
			return img
		}
		img.url = u
		img.path = filepath.Clean(u.Path)
		if why := filePathProblem(img.path, b.cfg.Conductor.FileURLAllowedPaths); why != "" {
			pr.invalidf("%s %q: %s", src, href, why)
		}
	case "":
		if strings.HasPrefix(href, "/") || strings.HasPrefix(href, ".") {
			pr.invalidf("%s %q is a path, not a URL: use file:///absolute/path", src, href)
		} else {
			pr.invalidf("%s %q is not an http://, https:// or file:// URL (image service references are not supported)", src, truncate(href))
		}
	default:
		pr.invalidf("%s %q has scheme %q: only http, https and file are supported", src, u.Redacted(), u.Scheme)
	}
	return img
}

// deniedPaths are never served from file:// URLs, whatever the allow list
// says (Ironic's BLOCKED_FILE_URL_PATHS).
var deniedPaths = []string{"/dev", "/sys", "/proc", "/boot", "/run", "/etc"}

// filePathProblem says why a clean absolute path may not be used, or "".
func filePathProblem(path string, allowed []string) string {
	for _, d := range deniedPaths {
		if within(path, d) {
			return fmt.Sprintf("files under %s are never allowed in file:// URLs", d)
		}
	}
	if len(allowedDirs(allowed)) == 0 {
		return "file:// URLs are disabled: [conductor]file_url_allowed_paths is empty"
	}
	for _, a := range allowedDirs(allowed) {
		if within(path, a) {
			return ""
		}
	}
	return fmt.Sprintf("%s is not under [conductor]file_url_allowed_paths (%s)", path, strings.Join(allowed, ", "))
}

// allowedDirs returns the usable entries of file_url_allowed_paths:
// absolute paths, cleaned. Ironic refuses relative ones at start-up.
func allowedDirs(allowed []string) []string {
	var out []string
	for _, a := range allowed {
		if filepath.IsAbs(a) {
			out = append(out, filepath.Clean(a))
		}
	}
	return out
}

// within reports whether path is dir or inside it; both are clean.
func within(path, dir string) bool {
	if dir == "/" {
		return true
	}
	return path == dir || strings.HasPrefix(path, dir+"/")
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
