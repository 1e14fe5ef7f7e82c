package deployimage

import (
	"fmt"
	"net/url"
	"path/filepath"
	"strings"
	"unicode/utf8"
)

// check validates the deploy kernel and ramdisk: both from
// driver_info, or, only when driver_info has neither, both from [conductor].
func (f *Fetcher) check(pr *Problems, info map[string]any) (kernel, ramdisk image) {
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
		dk, dr = f.o.DefaultKernel, f.o.DefaultRamdisk
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
		kernel = f.checkImage(pr, kSrc, KernelName, dk)
		ramdisk = f.checkImage(pr, rSrc, RamdiskName, dr)
	}
	return kernel, ramdisk
}

// stringField returns driver_info[key] when it is a non-empty string. An
// empty string or null counts as absent, as in Ironic; another type is
// invalid.
func stringField(pr *Problems, info map[string]any, key string) (string, bool) {
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
func (f *Fetcher) checkImage(pr *Problems, src, name, href string) image {
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
		if why := filePathProblem(img.path, f.o.AllowedPaths); why != "" {
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

// printable reports whether s is valid UTF-8 without control characters.
func printable(s string) bool {
	if !utf8.ValidString(s) {
		return false
	}
	for _, r := range s {
		if r < ' ' || r == 0x7f || (r >= 0x80 && r < 0xa0) {
			return false
		}
	}
	return true
}
