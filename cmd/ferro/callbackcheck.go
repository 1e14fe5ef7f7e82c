package main

import (
	"fmt"
	"log/slog"
	"net"
	"slices"
	"strconv"
	"strings"

	"github.com/ferrometal/ferro/internal/callback"
	"github.com/ferrometal/ferro/internal/config"
)

// listener is an address a ferro process serves the inspector's
// /v1/continue on.
type listener struct {
	name string // the options that set it
	ip   net.IP // nil for a host name
	host string
	port int
}

func (l listener) String() string {
	return net.JoinHostPort(l.host, strconv.Itoa(l.port)) + " (" + l.name + ")"
}

// callbackListeners are the addresses this process serves /v1/continue on:
// the inspector's own listener and, all-in-one, the API's.
func callbackListeners(cfg *config.Config, roles []string) []listener {
	var out []listener
	add := func(name, host string, port int) {
		out = append(out, listener{name: name, ip: net.ParseIP(host), host: host, port: port})
	}
	if slices.Contains(roles, roleInspector) {
		if cfg.Inspector.ListenPort != 0 {
			add("[inspector]listen_address:listen_port", cfg.Inspector.ListenAddress, cfg.Inspector.ListenPort)
		}
		if slices.Contains(roles, roleAPI) {
			add("[api]host_ip:port", cfg.API.HostIP, cfg.API.Port)
		}
	}
	return out
}

// checkCallback compares the callback URL the conductor puts on ramdisk
// kernel command lines with the addresses this process listens on, so that
// a URL the agent's report can never reach fails at start, not 30 minutes
// into every inspection. An obvious mismatch — an IP address no listener
// covers, while every listener binds loopback — is an error; a case it
// cannot judge (a host name, another port, a listener on another address:
// perhaps a proxy or NAT) is a warning. It checks nothing when the
// callback goes to an external inspector or this process runs no
// conductor.
func checkCallback(cfg *config.Config, roles []string, log *slog.Logger) error {
	if !slices.Contains(roles, roleConductor) && !slices.Contains(roles, roleAPI) {
		return nil
	}
	ic := cfg.Inspector
	cb := callbackSettings(cfg)
	target, err := cb.Resolve()
	base, option := target.Base, target.Option
	if target.URL == callback.MDNS || cb.External() {
		return nil // the agent finds it, or the callback is the external inspector's
	}
	if err != nil {
		return fmt.Errorf("%s %q is not an http(s) URL", option, base)
	}
	port := target.Port
	if port < 0 {
		return fmt.Errorf("%s %q has a bad port", option, base)
	}
	host := target.Host
	ip := net.ParseIP(host)
	if ip == nil && host == "localhost" {
		ip = net.IPv4(127, 0, 0, 1)
	}
	if target.Loopback && !ic.AllowLoopbackCallback {
		log.Warn("the inspection callback URL is a loopback address a ramdisk cannot reach: managed inspections will fail validation; set [inspector]callback_endpoint_override",
			"callback", base, "from", option)
		return nil
	}
	ls := callbackListeners(cfg, roles)
	if len(ls) == 0 {
		log.Warn("this process serves no /v1/continue; the agent's report must reach another inspector process", "callback", base)
		return nil
	}
	var names []string
	allLoopback := true
	for _, l := range ls {
		names = append(names, l.String())
		unspecified := l.ip != nil && l.ip.IsUnspecified()
		if l.port == port && (unspecified || (ip != nil && l.ip != nil && l.ip.Equal(ip)) || strings.EqualFold(l.host, host)) {
			return nil // served here
		}
		isLoop := l.host == "localhost" || (l.ip != nil && l.ip.IsLoopback())
		allLoopback = allLoopback && isLoop
	}
	if ip != nil && !ip.IsLoopback() && allLoopback {
		return fmt.Errorf("the inspection callback URL %s (from %s) points at %s, but ferro listens for it only on %s: "+
			"the ramdisk's report could never arrive and every inspection would time out. "+
			"Listen on an address the ramdisk can reach ([inspector]listen_address or [api]host_ip, e.g. %s or 0.0.0.0) "+
			"or fix the URL", base, option, target.HostPort, strings.Join(names, ", "), host)
	}
	log.Warn("cannot tell whether the inspection callback URL reaches this process (a proxy or NAT in between?); check it before inspecting",
		"callback", base, "from", option, "listeners", strings.Join(names, ", "))
	return nil
}

// callbackSettings are the [inspector] options that decide the callback URL.
func callbackSettings(cfg *config.Config) callback.Settings {
	ic := cfg.Inspector
	return callback.Settings{CallbackEndpointOverride: ic.CallbackEndpointOverride, EndpointOverride: ic.EndpointOverride,
		ListenAddress: ic.ListenAddress, ListenPort: ic.ListenPort}
}

// apiCallback are the options that decide the agent inspect interface's
// callback URL: [service_catalog]endpoint_override, else the API's listener.
func apiCallback(cfg *config.Config) callback.APISettings {
	return callback.APISettings{EndpointOverride: cfg.ServiceCatalog.EndpointOverride,
		HostIP: cfg.API.HostIP, Port: cfg.API.Port, TLS: cfg.API.EnableSSLAPI}
}

// warnAgentCallback warns at start when the agent inspect interface's
// callback (apiCallback) is one no ramdisk can reach: every managed agent
// inspection would then fail its validation.
func warnAgentCallback(cfg *config.Config, log *slog.Logger) {
	if !slices.Contains(cfg.Default.Enabled("inspect"), "agent") {
		return
	}
	t, err := apiCallback(cfg).Resolve()
	switch {
	case err != nil:
		log.Warn("the agent inspect interface's callback URL is not an http(s) URL; set [service_catalog]endpoint_override", "callback", t.Base)
	case t.Unspecified:
		log.Warn("the agent inspect interface's callback URL would be the API's unspecified listen address: managed agent inspections will fail validation; set [service_catalog]endpoint_override",
			"callback", t.URL)
	case t.Loopback && !cfg.Inspector.AllowLoopbackCallback:
		log.Warn("the agent inspect interface's callback URL is a loopback address a ramdisk cannot reach: managed agent inspections will fail validation; set [service_catalog]endpoint_override",
			"callback", t.URL)
	}
}
