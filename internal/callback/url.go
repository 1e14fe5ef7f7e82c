package callback

import (
	"errors"
	"fmt"
	"net"
	"net/url"
	"strconv"
	"strings"
)

// MDNS as the callback endpoint leaves finding the inspector to the
// agent (ironic-python-agent's mDNS lookup); it is passed on as is.
const MDNS = "mdns"

// Settings are the [inspector] options that decide where the agent posts
// its report.
type Settings struct {
	// CallbackEndpointOverride is [inspector]callback_endpoint_override.
	CallbackEndpointOverride string
	// EndpointOverride is [inspector]endpoint_override: an external
	// inspector, which then also takes the callback.
	EndpointOverride string
	// ListenAddress and ListenPort are the local inspector's listener
	// ([inspector]listen_address and listen_port).
	ListenAddress string
	ListenPort    int
}

// External reports whether the callback goes to an external inspector
// (endpoint_override without callback_endpoint_override).
func (s Settings) External() bool {
	return s.EndpointOverride != "" && s.CallbackEndpointOverride == ""
}

// Target is a resolved callback.
type Target struct {
	// Base is the inspector's base URL and Option the option(s) it came
	// from, for messages.
	Base, Option string
	// URL is where the agent posts its report: Base with /v1/continue or
	// /v1/continue_inspection appended (after a /v1 only the last
	// segment), or MDNS.
	URL string
	// HostPort is URL's host and port as written, Host its host name and
	// Port its port (the scheme's when it names none; -1 when it is not a
	// number).
	HostPort, Host string
	Port           int
	// Loopback says Host is a loopback address, which a ramdisk cannot
	// reach; whether that is allowed is the caller's to decide
	// ([inspector]allow_loopback_callback).
	Loopback bool
	// Unspecified says Host is 0.0.0.0 or ::, a listener's address no
	// ramdisk can post to.
	Unspecified bool
}

// ErrNotHTTP is returned (wrapped) by Resolve for a base that is not an
// http(s) URL with a host.
var ErrNotHTTP = errors.New("not an http(s) URL")

// Resolve returns the callback of s: callback_endpoint_override, else
// endpoint_override, else the local inspector's listener, with
// /v1/continue appended as upstream does. This is the one place the rule
// is written: the inspect interface builds kernel command lines with it
// and `ferro serve` checks it against its listeners at start.
func (s Settings) Resolve() (Target, error) {
	base, option := s.CallbackEndpointOverride, "[inspector]callback_endpoint_override"
	if base == "" {
		base, option = s.EndpointOverride, "[inspector]endpoint_override"
	}
	if base == "" {
		base = "http://" + net.JoinHostPort(s.ListenAddress, strconv.Itoa(s.ListenPort))
		option = "[inspector]listen_address and listen_port (no callback_endpoint_override)"
	}
	return resolve(base, option, ContinuePath, true)
}

// APISettings are the options that decide the bare metal API's URL the
// agent inspect interface's ramdisk reaches (Ironic's
// get_ironic_api_url, without a Keystone catalog).
type APISettings struct {
	// EndpointOverride is [service_catalog]endpoint_override.
	EndpointOverride string
	// HostIP and Port are the API's listener ([api]host_ip and port);
	// TLS is [api]enable_ssl_api.
	HostIP string
	Port   int
	TLS    bool
}

// Resolve returns the agent interface's callback:
// [service_catalog]endpoint_override, else the API's listener, with
// /v1/continue_inspection appended (after a /v1 only continue_inspection,
// as Ironic's get_inspection_callback). Target.Base is the API's URL,
// which fast track puts on the kernel line as ipa-api-url.
func (s APISettings) Resolve() (Target, error) {
	base, option := strings.TrimRight(s.EndpointOverride, "/"), "[service_catalog]endpoint_override"
	if base == "" {
		scheme := "http"
		if s.TLS {
			scheme = "https"
		}
		base = scheme + "://" + net.JoinHostPort(s.HostIP, strconv.Itoa(s.Port))
		option = "[api]host_ip and port (no [service_catalog]endpoint_override)"
	}
	return resolve(base, option, ContinueInspectionPath, false)
}

// resolve parses base and appends path (only its last segment after a
// /v1 base); mdns passes through when allowMDNS.
func resolve(base, option, path string, allowMDNS bool) (Target, error) {
	t := Target{Base: base, Option: option}
	if allowMDNS && t.Base == MDNS {
		t.URL = MDNS
		return t, nil
	}
	u, err := url.Parse(t.Base)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return t, fmt.Errorf("%q is %w", t.Base, ErrNotHTTP)
	}
	t.HostPort, t.Host = u.Host, u.Hostname()
	t.Port = 80
	if u.Scheme == "https" {
		t.Port = 443
	}
	if p := u.Port(); p != "" {
		if t.Port, err = strconv.Atoi(p); err != nil {
			t.Port = -1
		}
	}
	ip := net.ParseIP(t.Host)
	t.Loopback = t.Host == "localhost" || (ip != nil && ip.IsLoopback())
	t.Unspecified = t.Host == "" || (ip != nil && ip.IsUnspecified())
	p := strings.TrimRight(u.Path, "/")
	if strings.HasSuffix(p, "/v1") {
		p += strings.TrimPrefix(path, "/v1")
	} else {
		p += path
	}
	u.Path = p
	t.URL = u.String()
	return t, nil
}
