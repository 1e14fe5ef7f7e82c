// Package openstack builds ferro's outbound OpenStack clients: one factory
// that turns a client section's options ([neutron], [inspector], [ironic]:
// auth_type none, http_basic, or Keystone password/token, plus cafile and
// insecure) into a gophercloud ServiceClient, so the conductor, the
// inspector and the Neutron client authenticate the same way.
package openstack

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/base64"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
	"time"

	"github.com/gophercloud/gophercloud/v2"
	"github.com/gophercloud/gophercloud/v2/openstack"

	"github.com/ferrometal/ferro/internal/scrub"
)

// Options is one client section.
type Options struct {
	// Section names the configuration section in errors ("[neutron]").
	Section string
	// AuthType is keystoneauth's plugin name: none (noauth), http_basic,
	// password (v3password) or token (v3token).
	AuthType string
	// Endpoint is the service's URL (endpoint_override, [neutron]url),
	// used as given. Empty means the Keystone service catalog.
	Endpoint string
	// ServiceType is the catalog type: network, baremetal, baremetal-introspection.
	ServiceType string
	// Username and Password are http_basic's or Keystone's.
	Username, Password string
	// Keystone: auth_url, project_name, user_domain_name, project_domain_name,
	// system_scope ("all" asks for a system-scoped token), token, region_name.
	AuthURL, ProjectName, UserDomainName, ProjectDomainName, SystemScope, Token, RegionName string
	// CAFile is a PEM bundle that verifies the servers' certificates; Insecure skips verification.
	CAFile   string
	Insecure bool
	// Timeout bounds each request (0: none).
	Timeout time.Duration
	// Transport, when set, carries the requests instead of a TLS transport
	// built from CAFile/Insecure (ferro's in-process handler).
	Transport http.RoundTripper
	// RetryFunc is gophercloud's retry hook.
	RetryFunc gophercloud.RetryFunc
	// Secrets are ferro's own (every password of its configuration),
	// scrubbed, with this client's password and tokens, from the error
	// answers of the servers it talks to.
	Secrets scrub.Secrets
}

// keystone reports whether the auth type is a Keystone one.
func (o *Options) keystone() bool {
	switch o.AuthType {
	case "password", "v3password", "token", "v3token":
		return true
	}
	return false
}

// HTTPClient returns an http.Client verifying servers with cafile (the
// system pool when empty) or not at all when insecure.
func HTTPClient(cafile string, insecure bool, timeout time.Duration) (*http.Client, error) {
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tc := &tls.Config{MinVersion: tls.VersionTLS12}
	if cafile != "" {
		pem, err := os.ReadFile(cafile)
		if err != nil {
			return nil, fmt.Errorf("read cafile: %w", err)
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("cafile %s holds no PEM certificate", cafile)
		}
		tc.RootCAs = pool
	}
	// The operator asked for it by name ([section]insecure=true).
	tc.InsecureSkipVerify = insecure //nolint:gosec
	tr.TLSClientConfig = tc
	return &http.Client{Transport: tr, Timeout: timeout}, nil
}

// New returns a service client for o. With Keystone and an Endpoint it
// authenticates on first use (a 401 makes gophercloud fetch a token and
// retry), so ferro starts while Keystone is down; without an Endpoint it
// authenticates now to read the catalog.
func New(ctx context.Context, o Options) (*gophercloud.ServiceClient, error) {
	var hc http.Client
	if o.Transport != nil {
		hc = http.Client{Transport: o.Transport, Timeout: o.Timeout}
	} else {
		c, err := HTTPClient(o.CAFile, o.Insecure, o.Timeout)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", o.Section, err)
		}
		hc = *c
	}
	hc.Transport = scrubbing{next: hc.Transport, secrets: o.Secrets.With(o.Token).WithBasic(o.Username, o.Password)}
	var pc *gophercloud.ProviderClient
	sc := &gophercloud.ServiceClient{Type: o.ServiceType}
	switch o.AuthType {
	case "", "none", "noauth":
		pc = &gophercloud.ProviderClient{}
	case "http_basic":
		if o.Username == "" || o.Password == "" {
			return nil, fmt.Errorf("%s: auth_type http_basic needs username and password", o.Section)
		}
		pc = &gophercloud.ProviderClient{}
		sc.MoreHeaders = map[string]string{"Authorization": "Basic " + base64.StdEncoding.EncodeToString([]byte(o.Username+":"+o.Password))}
	default:
		if !o.keystone() {
			return nil, fmt.Errorf("%s: unknown auth_type %q", o.Section, o.AuthType)
		}
		if o.AuthURL == "" {
			return nil, fmt.Errorf("%s: auth_type %s needs auth_url", o.Section, o.AuthType)
		}
		var err error
		pc, err = openstack.NewClient(o.AuthURL)
		if err != nil {
			return nil, fmt.Errorf("%s: auth_url: %w", o.Section, err)
		}
	}
	pc.HTTPClient = hc
	pc.RetryFunc = o.RetryFunc
	pc.UserAgent.Prepend("ferro")
	if o.Endpoint == "" && !o.keystone() {
		return nil, fmt.Errorf("%s: an endpoint is needed without Keystone auth", o.Section)
	}
	switch {
	case o.keystone() && o.Endpoint == "":
		// The catalog needs a token now; gophercloud re-authenticates by itself later.
		auth := o.authOptions()
		auth.AllowReauth = strings.HasSuffix(o.AuthType, "password")
		if err := openstack.Authenticate(ctx, pc, auth); err != nil {
			return nil, fmt.Errorf("%s: authenticate with Keystone at %s: %w", o.Section, o.AuthURL, err)
		}
		eo := gophercloud.EndpointOpts{Region: o.RegionName, Availability: gophercloud.AvailabilityInternal}
		eo.ApplyDefaults(o.ServiceType)
		url, err := pc.EndpointLocator(eo)
		if err != nil {
			eo.Availability = gophercloud.AvailabilityPublic
			url, err = pc.EndpointLocator(eo)
		}
		if err != nil {
			return nil, fmt.Errorf("%s: find the %s endpoint in the service catalog: %w", o.Section, o.ServiceType, err)
		}
		o.Endpoint = url
	case o.keystone():
		pc.UseTokenLock()
		auth := o.authOptions()
		pc.ReauthFunc = func(ctx context.Context) error {
			// A throw-away copy authenticates, so that its own requests
			// do not recurse into this function; its token is then adopted.
			tac := *pc
			tac.SetThrowaway(true)
			tac.ReauthFunc = nil
			if err := tac.SetTokenAndAuthResult(nil); err != nil {
				return err
			}
			if err := openstack.Authenticate(ctx, &tac, auth); err != nil {
				return fmt.Errorf("%s: authenticate with Keystone at %s: %w", o.Section, o.AuthURL, err)
			}
			pc.CopyTokenFrom(&tac)
			return nil
		}
	}
	sc.ProviderClient = pc
	sc.Endpoint = gophercloud.NormalizeURL(o.Endpoint)
	return sc, nil
}

// maxErrorBody bounds an error answer read from an OpenStack service.
const maxErrorBody = 1 << 20

// scrubbing is the transport under every OpenStack client: an error
// answer (Keystone's, Neutron's, the inspector's) reaches gophercloud, and
// so its errors, last_error and the logs, with the secrets this client
// sent (its password, the tokens of the request) and ferro's own replaced
// by ***, and at most 1 MiB of it.
type scrubbing struct {
	next    http.RoundTripper
	secrets scrub.Secrets
}

func (t scrubbing) RoundTrip(req *http.Request) (*http.Response, error) {
	next := t.next
	if next == nil {
		next = http.DefaultTransport
	}
	resp, err := next.RoundTrip(req)
	if err != nil || resp.StatusCode < 400 || resp.Body == nil {
		return resp, err
	}
	secrets := t.secrets
	for _, h := range []string{"X-Auth-Token", "X-Subject-Token", "X-Service-Token"} {
		secrets = secrets.With(req.Header.Get(h))
	}
	if u, p, ok := req.BasicAuth(); ok {
		secrets = secrets.WithBasic(u, p)
	}
	body, rerr := io.ReadAll(io.LimitReader(resp.Body, maxErrorBody))
	resp.Body.Close()
	if rerr != nil {
		body = append(body, []byte(" (the answer could not be read: "+rerr.Error()+")")...)
	}
	body = secrets.Bytes(body)
	resp.Body = io.NopCloser(bytes.NewReader(body))
	resp.ContentLength = int64(len(body))
	resp.Header.Del("Content-Length")
	return resp, nil
}

// authOptions are gophercloud's options for the Keystone auth types.
func (o *Options) authOptions() gophercloud.AuthOptions {
	a := gophercloud.AuthOptions{IdentityEndpoint: o.AuthURL}
	if strings.HasSuffix(o.AuthType, "token") {
		a.TokenID = o.Token
	} else {
		a.Username = o.Username
		a.Password = o.Password
		a.DomainName = o.UserDomainName
	}
	switch {
	case strings.EqualFold(o.SystemScope, "all"):
		a.Scope = &gophercloud.AuthScope{System: true}
	case o.ProjectName != "":
		a.Scope = &gophercloud.AuthScope{ProjectName: o.ProjectName, DomainName: o.ProjectDomainName}
	}
	if a.Scope != nil && a.Scope.DomainName == "" && a.Scope.ProjectName != "" {
		a.Scope.DomainName = "Default"
	}
	if a.DomainName == "" && a.Username != "" {
		a.DomainName = "Default"
	}
	return a
}
