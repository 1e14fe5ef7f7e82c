package main

import (
	"log/slog"
	"strings"
	"testing"

	"github.com/ferrometal/ferro/internal/config"
)

func TestNetbootOptions(t *testing.T) {
	valid := func() *config.Config {
		c := defaultConfig()
		c.DHCP.DHCPProvider = "builtin"
		c.Netboot.Interface = "br0"
		c.Netboot.ListenAddress = "192.168.77.1"
		c.Netboot.RangeStart, c.Netboot.RangeEnd, c.Netboot.Netmask = "192.168.77.100", "192.168.77.199", "255.255.255.0"
		c.Deploy.HTTPURL = "http://192.168.77.1:6385/httpboot"
		return c
	}
	for _, tc := range []struct {
		name    string
		change  func(c *config.Config)
		wantErr string
	}{
		{"valid", func(*config.Config) {}, ""},
		{"proxy needs no range", func(c *config.Config) { c.Netboot.Mode = "proxy"; c.Netboot.RangeStart = "" }, ""},
		{"separate http listener", func(c *config.Config) { c.Deploy.HTTPURL = "http://10.0.0.1:8080/"; c.Deploy.HTTPListen = ":8080" }, ""},
		{"no interface", func(c *config.Config) { c.Netboot.Interface = "" }, "[netboot]interface is required"},
		{"bad address", func(c *config.Config) { c.Netboot.ListenAddress = "fe80::1" }, `[netboot]listen_address "fe80::1" is not an IPv4 address`},
		{"no range", func(c *config.Config) { c.Netboot.RangeEnd = "" }, "[netboot]range_end is required"},
		{"https", func(c *config.Config) { c.Deploy.HTTPURL = "https://x/httpboot" }, "is not an http:// URL"},
		{"no http_url", func(c *config.Config) { c.Deploy.HTTPURL = "" }, "[deploy]http_url is required"},
		{"root path on the API port", func(c *config.Config) { c.Deploy.HTTPURL = "http://192.168.77.1:6385" }, "needs a path"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := valid()
			tc.change(c)
			o, err := netbootOptions(c, nil, nil, slog.New(slog.DiscardHandler))
			if tc.wantErr == "" {
				if err != nil {
					t.Fatal(err)
				}
				if o.ServerIP.String() != "192.168.77.1" || o.Interface != "br0" {
					t.Errorf("options %+v", o)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Errorf("error %v, want it to contain %q", err, tc.wantErr)
			}
		})
	}
}
