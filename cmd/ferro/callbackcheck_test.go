package main

import (
	"bytes"
	"log/slog"
	"strings"
	"testing"

	"github.com/ferrometal/ferro/internal/config"
)

func TestCheckCallback(t *testing.T) {
	all := []string{roleAPI, roleConductor, roleInspector}
	for _, tc := range []struct {
		name     string
		roles    []string
		set      func(*config.Config)
		wantErr  string
		wantWarn string
	}{
		{name: "the issue's case: a LAN IP, everything on loopback", roles: all,
			set:     func(c *config.Config) { c.Inspector.CallbackEndpointOverride = "http://192.0.2.10:6385" },
			wantErr: "points at 192.0.2.10:6385, but ferro listens for it only on 127.0.0.1:5050"},
		{name: "inspector listener on all addresses covers it", roles: all,
			set: func(c *config.Config) {
				c.Inspector.CallbackEndpointOverride = "http://192.0.2.10:5050"
				c.Inspector.ListenAddress = "0.0.0.0"
			}},
		{name: "the API port serves the callback all-in-one", roles: all,
			set: func(c *config.Config) {
				c.Inspector.CallbackEndpointOverride = "http://192.0.2.10:6385/"
				c.API.HostIP = "192.0.2.10"
			}},
		{name: "api port without the inspector role does not", roles: []string{roleAPI, roleConductor},
			set: func(c *config.Config) {
				c.Inspector.CallbackEndpointOverride = "http://192.0.2.10:6385"
				c.API.HostIP = "192.0.2.10"
			},
			wantWarn: "serves no /v1/continue"},
		{name: "a host name cannot be judged", roles: all,
			set: func(c *config.Config) {
				c.Inspector.CallbackEndpointOverride = "http://inspector.example.org"
				c.Inspector.ListenAddress = "192.0.2.10"
			},
			wantWarn: "cannot tell"},
		{name: "another port on a reachable listener may be a proxy", roles: all,
			set: func(c *config.Config) {
				c.Inspector.CallbackEndpointOverride = "http://192.0.2.10:80"
				c.Inspector.ListenAddress = "192.0.2.10"
			},
			wantWarn: "cannot tell"},
		{name: "default: loopback callback", roles: all, wantWarn: "loopback address a ramdisk cannot reach"},
		{name: "external inspector: not ours to check", roles: all,
			set: func(c *config.Config) { c.Inspector.EndpointOverride = "http://192.0.2.99:5050" }},
		{name: "not a URL", roles: all,
			set:     func(c *config.Config) { c.Inspector.CallbackEndpointOverride = "192.0.2.10:5050" },
			wantErr: "is not an http(s) URL"},
		{name: "an inspector-only process builds no callback URLs", roles: []string{roleInspector},
			set: func(c *config.Config) { c.Inspector.CallbackEndpointOverride = "http://192.0.2.10:6385" }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := defaultConfig()
			if tc.set != nil {
				tc.set(cfg)
			}
			var logs bytes.Buffer
			err := checkCallback(cfg, tc.roles, slog.New(slog.NewTextHandler(&logs, nil)))
			switch {
			case tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)):
				t.Errorf("err = %v, want %q", err, tc.wantErr)
			case tc.wantErr == "" && err != nil:
				t.Errorf("err = %v, want none", err)
			}
			if tc.wantWarn != "" && !strings.Contains(logs.String(), tc.wantWarn) {
				t.Errorf("log %q, want a warning %q", logs.String(), tc.wantWarn)
			}
			if tc.wantWarn == "" && strings.Contains(logs.String(), "WARN") {
				t.Errorf("unexpected warning: %s", logs.String())
			}
		})
	}
}

func TestWarnAgentCallback(t *testing.T) {
	for _, tc := range []struct {
		name string
		set  func(*config.Config)
		want string
	}{
		{"the default loopback API", func(*config.Config) {}, "loopback address"},
		{"an API on every address", func(c *config.Config) { c.API.HostIP = "0.0.0.0" }, "unspecified listen address"},
		{"the override", func(c *config.Config) {
			c.API.HostIP = "0.0.0.0"
			c.ServiceCatalog.EndpointOverride = "http://192.0.2.10:6385"
		}, ""},
		{"loopback allowed", func(c *config.Config) { c.Inspector.AllowLoopbackCallback = true }, ""},
		{"agent not enabled", func(c *config.Config) { c.Default.EnabledInspectInterfaces = []string{"inspector"} }, ""},
	} {
		cfg := defaultConfig()
		tc.set(cfg)
		var buf bytes.Buffer
		warnAgentCallback(cfg, slog.New(slog.NewTextHandler(&buf, nil)))
		if got := buf.String(); (tc.want == "") != (got == "") || !strings.Contains(got, tc.want) {
			t.Errorf("%s: logged %q, want %q", tc.name, got, tc.want)
		}
	}
}
