package config

import (
	"fmt"
	"slices"
	"strings"

	"gopkg.in/ini.v1"
)

// Auth strategies of [DEFAULT]auth_strategy, Ironic's and ironic-inspector's names.
const (
	AuthNoauth    = "noauth"
	AuthHTTPBasic = "http_basic"
	AuthKeystone  = "keystone"
)

// KeystoneAuthtoken is [keystone_authtoken], keystonemiddleware's section:
// where user tokens are validated and with which service credentials.
// keystonemiddleware has many more options; the ones ferro does not
// implement are refused as unknown unless [DEFAULT]ignored_options lists
// them, and those whose omission would weaken security are refused even
// then (see insecureIfIgnored).
type KeystoneAuthtoken struct {
	// WWWAuthenticateURI is advertised in WWW-Authenticate on a 401.
	WWWAuthenticateURI string `ini:"www_authenticate_uri"`
	// AuthURI is the deprecated name of www_authenticate_uri.
	AuthURI           string `ini:"auth_uri"`
	AuthURL           string `ini:"auth_url"`
	AuthType          string `ini:"auth_type"`
	Username          string `ini:"username"`
	Password          string `ini:"password" secret:"true"`
	ProjectName       string `ini:"project_name"`
	UserDomainName    string `ini:"user_domain_name"`
	ProjectDomainName string `ini:"project_domain_name"`
	RegionName        string `ini:"region_name"`
	// ServiceTokenRolesRequired rejects an X-Service-Token without one of ServiceTokenRoles.
	ServiceTokenRolesRequired bool     `ini:"service_token_roles_required"`
	ServiceTokenRoles         []string `ini:"service_token_roles" delim:","`
	// TokenCacheTime is how long a validated token is trusted without asking Keystone again (s; 0 = never cached).
	TokenCacheTime int `ini:"token_cache_time"`
	// MemcachedServers is accepted and ignored: ferro's cache is in process.
	MemcachedServers []string `ini:"memcached_servers" delim:","`
	CAFile           string   `ini:"cafile"`
	Insecure         bool     `ini:"insecure"`
	// HTTPConnectTimeout bounds one request to Keystone (s).
	HTTPConnectTimeout int `ini:"http_connect_timeout"`
	// ServiceProjectName is the project of the service role (Ironic's [DEFAULT]… rule:service_role).
	ServiceProjectName string `ini:"service_project_name"`
}

// SSL is [ssl], Ironic's TLS options for its listeners.
type SSL struct {
	CertFile string `ini:"cert_file"`
	KeyFile  string `ini:"key_file"`
}

func defaultKeystoneAuthtoken() KeystoneAuthtoken {
	return KeystoneAuthtoken{
		AuthType:           "password",
		UserDomainName:     "Default",
		ProjectDomainName:  "Default",
		ServiceTokenRoles:  []string{"service"},
		TokenCacheTime:     300,
		HTTPConnectTimeout: 10,
		ServiceProjectName: "service",
	}
}

// insecureIfIgnored lists options ferro does not implement whose omission
// would leave it less safe than the operator asked for: set to anything
// but the listed harmless values, they stop the start even when
// [DEFAULT]ignored_options lists them.
var insecureIfIgnored = map[string][]string{
	"[ssl]ca_file":                           nil, // client certificates would not be verified
	"[ssl]version":                           nil,
	"[ssl]ciphers":                           nil,
	"[DEFAULT]use_ssl":                       {"false", "0", "no", "off", ""}, // ironic-inspector's switch; ferro's is [api]enable_ssl_api
	"[keystone_authtoken]enforce_token_bind": {"disabled", "permissive", ""},
	"[keystone_authtoken]certfile":           nil,
	"[keystone_authtoken]keyfile":            nil,
	"[oslo_policy]policy_file":               {"policy.yaml", "policy.json", ""},
	"[oslo_policy]policy_dirs":               {""},
}

// checkIgnoredSecurity returns an error naming every option of f that is
// in insecureIfIgnored with a value that matters.
func checkIgnoredSecurity(f *ini.File) error {
	var bad []string
	for _, sec := range f.Sections() {
		for _, key := range sec.Keys() {
			name := "[" + sectionName(sec.Name()) + "]" + key.Name()
			harmless, ok := insecureIfIgnored[name]
			if !ok {
				continue
			}
			v := strings.ToLower(strings.TrimSpace(key.String()))
			if harmless != nil && slices.Contains(harmless, v) {
				continue
			}
			bad = append(bad, name)
		}
	}
	if len(bad) == 0 {
		return nil
	}
	slices.Sort(bad)
	return fmt.Errorf("ferro does not implement %s; ignoring it would be less secure than the configuration asks, so it refuses to start (see docs/security.md)", strings.Join(bad, ", "))
}

// validateSecurity checks the auth and TLS options.
func (c *Config) validateSecurity(bad func(string, ...any)) {
	switch c.Default.AuthStrategy {
	case AuthNoauth, AuthHTTPBasic, AuthKeystone:
	default:
		bad("[DEFAULT]auth_strategy %q is not one of noauth, http_basic, keystone", c.Default.AuthStrategy)
	}
	if c.Default.AuthStrategy == AuthHTTPBasic && c.Default.HTTPBasicAuthUserFile == "" {
		bad("[DEFAULT]auth_strategy=http_basic needs [DEFAULT]http_basic_auth_user_file")
	}
	if c.Default.AuthStrategy == AuthKeystone {
		k := c.KeystoneAuthtoken
		if k.AuthURL == "" {
			bad("[DEFAULT]auth_strategy=keystone needs [keystone_authtoken]auth_url")
		}
		if k.AuthType != "password" && k.AuthType != "v3password" {
			bad("[keystone_authtoken]auth_type %q is not password (the only one ferro implements)", k.AuthType)
		}
		if k.Username == "" || k.Password == "" {
			bad("[keystone_authtoken] needs username and password for the service token")
		}
		if k.TokenCacheTime < 0 {
			bad("[keystone_authtoken]token_cache_time must not be negative")
		}
	}
	if c.API.EnableSSLAPI && (c.SSL.CertFile == "" || c.SSL.KeyFile == "") {
		bad("[api]enable_ssl_api needs [ssl]cert_file and [ssl]key_file")
	}
	for _, opt := range []struct{ name, val string }{
		{"[inspector]auth_type", c.Inspector.AuthType},
		{"[ironic]auth_type", c.Ironic.AuthType},
		{"[neutron]auth_type", c.Neutron.AuthType},
	} {
		if !slices.Contains(ClientAuthTypes, opt.val) {
			bad("%s %q is not one of %s", opt.name, opt.val, strings.Join(ClientAuthTypes, ", "))
		}
	}
}

// ClientAuthTypes are the auth_type values of a client section
// ([inspector], [ironic], [neutron]): keystoneauth's plugin names.
var ClientAuthTypes = []string{"none", "noauth", "http_basic", "password", "v3password", "token", "v3token"}
