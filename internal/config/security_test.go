package config

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func loadString(t *testing.T, conf string) (*Config, []string, error) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "ferro.conf")
	if err := os.WriteFile(path, []byte(conf), 0o600); err != nil {
		t.Fatal(err)
	}
	return Load(path, nil, testHardware)
}

func TestLoad_AuthStrategyDefaultsToNoauth(t *testing.T) {
	cfg, _, err := Load("", nil, testHardware)
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Default.AuthStrategy != AuthNoauth {
		t.Errorf("auth_strategy = %q", cfg.Default.AuthStrategy)
	}
}

func TestLoad_RefusesWhatWouldFailOpen(t *testing.T) {
	for _, tc := range []struct {
		name, conf, want string
	}{
		{"unknown strategy", "[DEFAULT]\nauth_strategy = keystonee\n", `auth_strategy "keystonee"`},
		{"keystone without auth_url", "[DEFAULT]\nauth_strategy = keystone\n[keystone_authtoken]\nusername=a\npassword=b\n", "needs [keystone_authtoken]auth_url"},
		{"keystone other plugin", "[DEFAULT]\nauth_strategy = keystone\n[keystone_authtoken]\nauth_url=http://k\nauth_type=v3oidc\nusername=a\npassword=b\n", "auth_type \"v3oidc\""},
		{"tls without cert", "[api]\nenable_ssl_api = true\n", "needs [ssl]cert_file"},
		{"client certificates", "[ssl]\ncert_file=/c\nkey_file=/k\nca_file=/ca\n", "[ssl]ca_file"},
		{"token bind", "[keystone_authtoken]\nenforce_token_bind = required\n", "enforce_token_bind"},
		{"policy file", "[oslo_policy]\npolicy_file = /etc/ironic/custom.yaml\n", "policy_file"},
		{"inspector use_ssl", "[DEFAULT]\nuse_ssl = true\n", "use_ssl"},
		{"bad client auth", "[ironic]\nauth_type = kerberos\n", `[ironic]auth_type "kerberos"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, _, err := loadString(t, tc.conf)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v, want it to mention %q", err, tc.want)
			}
		})
	}
}

func TestLoad_HarmlessKeystonemiddlewareOptionsPass(t *testing.T) {
	cfg, ignored, err := loadString(t, `[DEFAULT]
auth_strategy = keystone
ignored_options = [keystone_authtoken]enforce_token_bind, [keystone_authtoken]delay_auth_decision, [oslo_policy]
[keystone_authtoken]
www_authenticate_uri = http://k:5000
auth_url = http://k:5000
auth_type = password
username = ironic
password = pw
project_name = service
memcached_servers = localhost:11211
enforce_token_bind = permissive
service_token_roles_required = true
token_cache_time = 30
delay_auth_decision = false
[oslo_policy]
enforce_scope = true
`)
	if err != nil {
		t.Fatal(err)
	}
	if cfg.KeystoneAuthtoken.TokenCacheTime != 30 || !cfg.KeystoneAuthtoken.ServiceTokenRolesRequired {
		t.Errorf("keystone_authtoken = %+v", cfg.KeystoneAuthtoken)
	}
	if diff := cmp.Diff([]string{"[keystone_authtoken]enforce_token_bind", "[keystone_authtoken]delay_auth_decision", "[oslo_policy]"}, ignored); diff != "" {
		t.Errorf("ignored (-want +got):\n%s", diff)
	}
}
