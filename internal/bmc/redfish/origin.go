package redfish

import (
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strings"
)

// ErrOffOrigin is wrapped when a BMC names a place that is not on the BMC
// itself: a link, a session Location, an action target or a redirect to
// another scheme, host or port, or one that smuggles credentials
// ("@127.0.0.1:6385/v1/nodes/…" appended to the BMC's address would be a
// user name and another host). Nothing is sent there.
var ErrOffOrigin = errors.New("refused: it leaves the BMC's origin")

// maxLink bounds a link the BMC sends.
const maxLink = 2048

// origin is the only place a BMC's client sends requests to: the scheme,
// host and port of redfish_address.
type origin struct {
	scheme string // http or https
	host   string // lower-case host:port, the port explicit
}

func newOrigin(address string) (origin, error) {
	u, err := url.Parse(address)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Hostname() == "" || u.User != nil {
		return origin{}, fmt.Errorf("redfish address %q is not http(s)://host[:port]", address)
	}
	return origin{scheme: u.Scheme, host: hostPort(u)}, nil
}

func (o origin) String() string { return o.scheme + "://" + o.host }

// hostPort is u's host, lower case, with the scheme's default port made
// explicit, so that https://BMC and https://bmc:443 are one origin.
func hostPort(u *url.URL) string {
	port := u.Port()
	if port == "" {
		switch strings.ToLower(u.Scheme) {
		case "http":
			port = "80"
		case "https":
			port = "443"
		}
	}
	return net.JoinHostPort(strings.ToLower(u.Hostname()), port)
}

// allows reports whether u is on the origin: the same scheme, host and
// port, and no credentials in the URL.
func (o origin) allows(u *url.URL) bool {
	return u != nil && u.User == nil && u.Opaque == "" && strings.EqualFold(u.Scheme, o.scheme) && hostPort(u) == o.host
}

// resolve turns a link the BMC sent (an @odata.id, a session Location, an
// action target, a virtual media path) into a path with its query on the
// origin, for gofish to append to the BMC's address; a fragment (a JSON
// pointer into the resource) is dropped. An absolute URL is accepted only
// on the origin; a relative link must be an absolute path. Anything else
// is refused before a request exists.
func (o origin) resolve(link string) (string, error) {
	refuse := func() (string, error) { return "", fmt.Errorf("link %q: %w %s", shorten(link, 120), ErrOffOrigin, o) }
	if link == "" || len(link) > maxLink {
		return refuse()
	}
	u, err := url.Parse(link)
	if err != nil || u.User != nil || u.Opaque != "" {
		return refuse()
	}
	if u.Scheme != "" || u.Host != "" {
		if !o.allows(u) {
			return refuse()
		}
	} else if !strings.HasPrefix(link, "/") {
		return refuse()
	}
	p := u.EscapedPath()
	if p == "" {
		p = "/"
	}
	// "//host/x" after the BMC's address would still be a path on it; a
	// path that does not start with "/" would not.
	if !strings.HasPrefix(p, "/") {
		return refuse()
	}
	if u.RawQuery != "" {
		p += "?" + u.RawQuery
	}
	return p, nil
}

// guard is the transport under every request to a BMC: it refuses a
// request for anywhere but the origin, whatever built it (gofish's own
// calls, a redirect, a link that escaped resolve), so the session token
// and the credentials go to the BMC only.
type guard struct {
	origin origin
	next   http.RoundTripper
}

func (g guard) RoundTrip(req *http.Request) (*http.Response, error) {
	if !g.origin.allows(req.URL) {
		if req.Body != nil {
			req.Body.Close()
		}
		return nil, fmt.Errorf("%s %s: %w %s", req.Method, req.URL.Redacted(), ErrOffOrigin, g.origin)
	}
	return g.next.RoundTrip(req)
}

// maxRedirects bounds the redirects followed on the origin.
const maxRedirects = 5

// checkRedirect follows a BMC's redirects only on its origin.
func (o origin) checkRedirect(req *http.Request, via []*http.Request) error {
	if len(via) >= maxRedirects {
		return fmt.Errorf("stopped after %d redirects", maxRedirects)
	}
	if !o.allows(req.URL) {
		return fmt.Errorf("redirect to %s: %w %s", req.URL.Redacted(), ErrOffOrigin, o)
	}
	return nil
}
