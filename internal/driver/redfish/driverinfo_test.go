package redfish_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/google/go-cmp/cmp"

	bmc "github.com/ferrometal/ferro/internal/bmc/redfish"
	"github.com/ferrometal/ferro/internal/driver"
	"github.com/ferrometal/ferro/internal/driver/redfish"
)

func TestParseDriverInfo(t *testing.T) {
	for _, tc := range []struct {
		name string
		info map[string]any
		want bmc.Endpoint
		err  error
		msg  string
	}{
		{"bare host is https", map[string]any{"redfish_address": "10.0.0.5"}, bmc.Endpoint{Address: "https://10.0.0.5", AuthType: "auto"}, nil, ""},
		{"http with port", map[string]any{"redfish_address": "http://bmc:8000", "redfish_system_id": "/redfish/v1/Systems/1",
			"redfish_username": "u", "redfish_password": "p", "redfish_auth_type": "session", "redfish_verify_ca": "false"},
			bmc.Endpoint{Address: "http://bmc:8000", SystemID: "/redfish/v1/Systems/1", Username: "u", Password: "p", AuthType: "session", Insecure: true,
				Secrets: []string{"p"}}, nil, ""},
		{"verify_ca bool", map[string]any{"redfish_address": "bmc", "redfish_verify_ca": false}, bmc.Endpoint{Address: "https://bmc", AuthType: "auto", Insecure: true}, nil, ""},
		{"missing address", map[string]any{"redfish_username": "u"}, bmc.Endpoint{}, driver.ErrMissingParameter, "redfish_address"},
		{"ftp", map[string]any{"redfish_address": "ftp://bmc"}, bmc.Endpoint{}, driver.ErrInvalidParameter, "must be http:// or https://"},
		{"path", map[string]any{"redfish_address": "https://bmc/redfish/v1"}, bmc.Endpoint{}, driver.ErrInvalidParameter, "without a path"},
		{"credentials in URL", map[string]any{"redfish_address": "https://u:secret@bmc"}, bmc.Endpoint{}, driver.ErrInvalidParameter, "must not carry credentials"},
		{"bad auth type", map[string]any{"redfish_address": "bmc", "redfish_auth_type": "kerberos"}, bmc.Endpoint{}, driver.ErrInvalidParameter, "redfish_auth_type"},
		{"bad verify_ca", map[string]any{"redfish_address": "bmc", "redfish_verify_ca": "/nonexistent/ca.pem"}, bmc.Endpoint{}, driver.ErrInvalidParameter, "redfish_verify_ca"},
		{"address not a string", map[string]any{"redfish_address": 5}, bmc.Endpoint{}, driver.ErrInvalidParameter, "must be a string"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := redfish.ParseDriverInfo(tc.info, "auto")
			if tc.err != nil {
				if !errors.Is(err, tc.err) || !strings.Contains(err.Error(), tc.msg) {
					t.Fatalf("got %v, want %v mentioning %q", err, tc.err, tc.msg)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if d := cmp.Diff(tc.want, got); d != "" {
				t.Errorf("(-want +got):\n%s", d)
			}
		})
	}
	_, err := redfish.ParseDriverInfo(map[string]any{"redfish_address": "ftp://x", "redfish_password": "hunter2-secret"}, "auto")
	if err == nil || strings.Contains(err.Error(), "hunter2-secret") {
		t.Errorf("error %v must not be nil or carry the password", err)
	}
}

// redfish_verify_ca names a path as Ironic accepts it (a regular file or a
// directory), is checked without being opened, and every refused path —
// missing, unreadable, a device, a FIFO, relative — gets the same text.
func TestParseDriverInfo_VerifyCAPathsAreNotAnOracle(t *testing.T) {
	dir := t.TempDir()
	bundle := filepath.Join(dir, "ca.pem")
	os.WriteFile(bundle, []byte("-----BEGIN CERTIFICATE-----\n"), 0o644)
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, ok := range []string{bundle, dir} {
		ep, err := redfish.ParseDriverInfo(map[string]any{"redfish_address": "bmc", "redfish_verify_ca": ok}, "auto")
		if err != nil || ep.CAFile != ok {
			t.Errorf("%s: %+v, %v", ok, ep, err)
		}
	}
	var texts []string
	for _, bad := range []string{"/dev/zero", fifo, filepath.Join(dir, "missing.pem"), "/proc/self/fd/0", "ca.pem", "/root/../dev/null"} {
		_, err := redfish.ParseDriverInfo(map[string]any{"redfish_address": "bmc", "redfish_verify_ca": bad}, "auto")
		if !errors.Is(err, driver.ErrInvalidParameter) {
			t.Fatalf("%s: %v", bad, err)
		}
		if strings.Contains(err.Error(), bad) {
			t.Errorf("%s: the error names the path: %v", bad, err)
		}
		texts = append(texts, err.Error())
	}
	for _, tx := range texts[1:] {
		if tx != texts[0] {
			t.Errorf("refusals differ:\n%s\n%s", texts[0], tx)
		}
	}
}

// The schema's required keys are what ParseDriverInfo requires, and its
// message is Ironic-shaped as before the parser moved here.
func TestHardwareType_RequiredKeysAreParsed(t *testing.T) {
	for _, p := range redfish.HardwareType.Properties {
		if !p.Required {
			continue
		}
		_, err := redfish.ParseDriverInfo(map[string]any{}, "auto")
		if !errors.Is(err, driver.ErrMissingParameter) || !strings.Contains(err.Error(), p.Name) {
			t.Errorf("without %s: %v, want a missing parameter naming it", p.Name, err)
		}
	}
	_, err := redfish.ParseDriverInfo(map[string]any{}, "auto")
	if want := "missing parameter value: missing redfish driver_info: driver_info[redfish_address] is required"; err == nil || err.Error() != want {
		t.Errorf("err = %v, want %q", err, want)
	}
	_, err = redfish.ParseDriverInfo(map[string]any{"redfish_address": "ftp://bmc"}, "auto")
	if want := `invalid parameter value: invalid redfish driver_info: driver_info[redfish_address] "ftp://bmc" must be http:// or https://`; err == nil || err.Error() != want {
		t.Errorf("err = %v, want %q", err, want)
	}
}
