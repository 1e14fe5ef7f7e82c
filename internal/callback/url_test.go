package callback

import (
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestResolve(t *testing.T) {
	listener := Settings{ListenAddress: "192.0.2.1", ListenPort: 5050}
	for _, tc := range []struct {
		name    string
		s       Settings
		want    Target
		wantErr bool
	}{
		{name: "the local listener", s: listener, want: Target{Base: "http://192.0.2.1:5050",
			Option: "[inspector]listen_address and listen_port (no callback_endpoint_override)",
			URL:    "http://192.0.2.1:5050/v1/continue", HostPort: "192.0.2.1:5050", Host: "192.0.2.1", Port: 5050}},
		{name: "the override wins", s: Settings{CallbackEndpointOverride: "https://insp.example.com/bm/", EndpointOverride: "http://x:5050", ListenAddress: "192.0.2.1", ListenPort: 5050},
			want: Target{Base: "https://insp.example.com/bm/", Option: "[inspector]callback_endpoint_override",
				URL: "https://insp.example.com/bm/v1/continue", HostPort: "insp.example.com", Host: "insp.example.com", Port: 443}},
		{name: "an external inspector's endpoint", s: Settings{EndpointOverride: "http://insp:5050/v1", ListenPort: 5050},
			want: Target{Base: "http://insp:5050/v1", Option: "[inspector]endpoint_override",
				URL: "http://insp:5050/v1/continue", HostPort: "insp:5050", Host: "insp", Port: 5050}},
		{name: "loopback is marked, not refused", s: Settings{ListenAddress: "127.0.0.1", ListenPort: 5050},
			want: Target{Base: "http://127.0.0.1:5050", Option: "[inspector]listen_address and listen_port (no callback_endpoint_override)",
				URL: "http://127.0.0.1:5050/v1/continue", HostPort: "127.0.0.1:5050", Host: "127.0.0.1", Port: 5050, Loopback: true}},
		{name: "localhost is loopback", s: Settings{CallbackEndpointOverride: "http://localhost"},
			want: Target{Base: "http://localhost", Option: "[inspector]callback_endpoint_override",
				URL: "http://localhost/v1/continue", HostPort: "localhost", Host: "localhost", Port: 80, Loopback: true}},
		{name: "mdns passes", s: Settings{CallbackEndpointOverride: MDNS},
			want: Target{Base: MDNS, Option: "[inspector]callback_endpoint_override", URL: MDNS}},
		{name: "not a URL", s: Settings{CallbackEndpointOverride: "192.0.2.1:5050"}, wantErr: true,
			want: Target{Base: "192.0.2.1:5050", Option: "[inspector]callback_endpoint_override"}},
		{name: "not http", s: Settings{CallbackEndpointOverride: "ftp://x"}, wantErr: true,
			want: Target{Base: "ftp://x", Option: "[inspector]callback_endpoint_override"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := tc.s.Resolve()
			if (err != nil) != tc.wantErr || (err != nil && !errors.Is(err, ErrNotHTTP)) {
				t.Errorf("err = %v, want error %t wrapping ErrNotHTTP", err, tc.wantErr)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("Resolve (-want +got):\n%s", diff)
			}
		})
	}
}

func TestSettings_External(t *testing.T) {
	if !(Settings{EndpointOverride: "http://insp:5050"}).External() {
		t.Error("endpoint_override alone is an external inspector's callback")
	}
	if (Settings{EndpointOverride: "http://insp:5050", CallbackEndpointOverride: "http://ferro:5050"}).External() {
		t.Error("callback_endpoint_override takes the callback back")
	}
}

// The agent interface's callback: [service_catalog]endpoint_override,
// else the API's listener, with /v1/continue_inspection (after a /v1,
// only continue_inspection), as Ironic's get_inspection_callback.
func TestAPISettings_Resolve(t *testing.T) {
	for _, tc := range []struct {
		s                 APISettings
		url, base         string
		loop, unspecified bool
	}{
		{APISettings{EndpointOverride: "http://192.0.2.1:6385"}, "http://192.0.2.1:6385/v1/continue_inspection", "http://192.0.2.1:6385", false, false},
		{APISettings{EndpointOverride: "https://api.example/baremetal/v1/"}, "https://api.example/baremetal/v1/continue_inspection", "https://api.example/baremetal/v1", false, false},
		{APISettings{HostIP: "127.0.0.1", Port: 6385}, "http://127.0.0.1:6385/v1/continue_inspection", "http://127.0.0.1:6385", true, false},
		{APISettings{HostIP: "0.0.0.0", Port: 6385, TLS: true}, "https://0.0.0.0:6385/v1/continue_inspection", "https://0.0.0.0:6385", false, true},
	} {
		got, err := tc.s.Resolve()
		if err != nil || got.URL != tc.url || got.Base != tc.base || got.Loopback != tc.loop || got.Unspecified != tc.unspecified {
			t.Errorf("%+v: %+v, %v", tc.s, got, err)
		}
	}
	if _, err := (APISettings{EndpointOverride: "ftp://x"}).Resolve(); err == nil {
		t.Error("an ftp URL resolved")
	}
}
