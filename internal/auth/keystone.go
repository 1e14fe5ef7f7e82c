package auth

import (
	"context"
	"crypto/sha256"
	"fmt"
	"log/slog"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/gophercloud/gophercloud/v2"
	"github.com/gophercloud/gophercloud/v2/openstack/identity/v3/tokens"
	"golang.org/x/sync/singleflight"

	"github.com/ferrometal/ferro/internal/openstack"
)

// Keystone headers, keystonemiddleware's names.
const (
	hdrAuthToken    = "X-Auth-Token"
	hdrServiceToken = "X-Service-Token"
	// keystoneCacheSize bounds the validated-token cache (valid and invalid tokens).
	keystoneCacheSize = 10000
)

// KeystoneOptions configure NewKeystone: [keystone_authtoken].
type KeystoneOptions struct {
	// AuthURL is the identity service the tokens are validated against.
	AuthURL string
	// WWWAuthenticateURI is advertised to clients on a 401 (default AuthURL).
	WWWAuthenticateURI string
	// The service user's password credentials (auth_type=password).
	Username, Password, ProjectName, UserDomainName, ProjectDomainName string
	// ServiceTokenRolesRequired rejects an X-Service-Token holding none of ServiceTokenRoles.
	ServiceTokenRolesRequired bool
	ServiceTokenRoles         []string
	// CacheTime is how long a validation result is reused (token_cache_time); 0 asks Keystone every time.
	CacheTime time.Duration
	// ServiceProjectName is the project of Ironic's service_role rule.
	ServiceProjectName string
	CAFile             string
	Insecure           bool
	// Timeout bounds one request to Keystone.
	Timeout time.Duration
	Log     *slog.Logger
	// Now is the clock (tests).
	Now func() time.Time
}

// Keystone is the keystone strategy: X-Auth-Token validated with GET
// /v3/auth/tokens (X-Subject-Token) using a service token, as
// keystonemiddleware's auth_token does. Results are cached for at most
// CacheTime and never beyond the token's expiry, so a revoked token stops
// working within CacheTime and an expired one at once.
type Keystone struct {
	o        KeystoneOptions
	identity *gophercloud.ServiceClient
	cache    *ttlCache[*Credentials] // nil value: an invalid token
	now      func() time.Time
	// flight makes concurrent requests with one token share one validation.
	flight singleflight.Group
}

// NewKeystone returns the strategy. It does not contact Keystone yet: the
// service token is fetched with the first validation.
func NewKeystone(o KeystoneOptions) (*Keystone, error) {
	if o.AuthURL == "" {
		return nil, fmt.Errorf("[keystone_authtoken]auth_url is not set")
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Log == nil {
		o.Log = slog.New(slog.DiscardHandler)
	}
	if len(o.ServiceTokenRoles) == 0 {
		o.ServiceTokenRoles = []string{"service"}
	}
	endpoint := gophercloud.NormalizeURL(o.AuthURL)
	if !strings.HasSuffix(endpoint, "/v3/") {
		endpoint += "v3/"
	}
	sc, err := openstack.New(context.Background(), openstack.Options{
		Section: "[keystone_authtoken]", AuthType: "password", Endpoint: endpoint, ServiceType: "identity",
		AuthURL: o.AuthURL, Username: o.Username, Password: o.Password, ProjectName: o.ProjectName,
		UserDomainName: o.UserDomainName, ProjectDomainName: o.ProjectDomainName,
		CAFile: o.CAFile, Insecure: o.Insecure, Timeout: o.Timeout,
	})
	if err != nil {
		return nil, err
	}
	return &Keystone{o: o, identity: sc, cache: newTTLCache[*Credentials](keystoneCacheSize, o.Now), now: o.Now}, nil
}

// Challenge implements Authenticator.
func (k *Keystone) Challenge() string {
	uri := k.o.WWWAuthenticateURI
	if uri == "" {
		uri = k.o.AuthURL
	}
	return fmt.Sprintf("Keystone uri=%q", uri)
}

// Authenticate implements Authenticator.
func (k *Keystone) Authenticate(ctx context.Context, r *http.Request) (*Credentials, error) {
	token := strings.TrimSpace(r.Header.Get(hdrAuthToken))
	if token == "" {
		return nil, fmt.Errorf("%w: no X-Auth-Token", ErrUnauthorized)
	}
	c, err := k.validate(ctx, token)
	if err != nil {
		return nil, err
	}
	if st := strings.TrimSpace(r.Header.Get(hdrServiceToken)); st != "" {
		sc, err := k.validate(ctx, st)
		if err != nil {
			return nil, fmt.Errorf("service token: %w", err)
		}
		if k.o.ServiceTokenRolesRequired && !slices.ContainsFunc(k.o.ServiceTokenRoles, sc.HasRole) {
			return nil, fmt.Errorf("%w: the service token has none of the roles %v", ErrUnauthorized, k.o.ServiceTokenRoles)
		}
	}
	return c, nil
}

// validate asks Keystone about token, or the cache.
func (k *Keystone) validate(ctx context.Context, token string) (*Credentials, error) {
	key := sha256.Sum256([]byte(token))
	if c, ok := k.cache.get(key); ok {
		if c == nil {
			return nil, fmt.Errorf("%w: invalid token", ErrUnauthorized)
		}
		return c, nil
	}
	v, err, _ := k.flight.Do(string(key[:]), func() (any, error) {
		// The first caller's cancellation must not fail the others.
		return k.ask(context.WithoutCancel(ctx), key, token)
	})
	if err != nil {
		return nil, err
	}
	return v.(*Credentials), nil
}

// ask validates token with Keystone and caches the verdict.
func (k *Keystone) ask(ctx context.Context, key [32]byte, token string) (*Credentials, error) {
	res := tokens.Get(ctx, k.identity, token)
	if res.Err != nil {
		if gophercloud.ResponseCodeIs(res.Err, http.StatusNotFound) || gophercloud.ResponseCodeIs(res.Err, http.StatusBadRequest) {
			// Unknown, expired or revoked: remember the verdict too, so a
			// client repeating a bad token does not reach Keystone each time.
			k.cache.put(key, nil, k.o.CacheTime)
			return nil, fmt.Errorf("%w: invalid token", ErrUnauthorized)
		}
		return nil, fmt.Errorf("validate a token with Keystone at %s: %w", k.o.AuthURL, res.Err)
	}
	// ExtractInto reads the "token" object.
	var t struct {
		ExpiresAt string `json:"expires_at"`
		User      struct {
			ID   string `json:"id"`
			Name string `json:"name"`
		} `json:"user"`
		Project *struct {
			ID   string `json:"id"`
			Name string `json:"name"`
		} `json:"project"`
		Roles []struct {
			Name string `json:"name"`
		} `json:"roles"`
		System map[string]any `json:"system"`
	}
	if err := res.ExtractInto(&t); err != nil {
		return nil, fmt.Errorf("decode Keystone's token: %w", err)
	}
	exp, err := parseExpiry(t.ExpiresAt)
	if err != nil {
		return nil, fmt.Errorf("decode Keystone's token expiry %q: %w", t.ExpiresAt, err)
	}
	now := k.now()
	if !now.Before(exp) {
		return nil, fmt.Errorf("%w: expired token", ErrUnauthorized)
	}
	c := &Credentials{UserID: t.User.ID, UserName: t.User.Name}
	if t.Project != nil {
		c.ProjectID, c.ProjectName = t.Project.ID, t.Project.Name
		c.ServiceProject = c.ProjectName != "" && c.ProjectName == k.o.ServiceProjectName
	}
	if all, _ := t.System["all"].(bool); all {
		c.System = true
	}
	for _, r := range t.Roles {
		c.Roles = append(c.Roles, r.Name)
	}
	k.cache.put(key, c, min(k.o.CacheTime, exp.Sub(now)))
	return c, nil
}

// parseExpiry reads a token's expires_at: RFC 3339, or without a zone
// (which Keystone writes for tokens of application credentials), as UTC.
func parseExpiry(s string) (time.Time, error) {
	if t, err := time.Parse(time.RFC3339Nano, s); err == nil {
		return t, nil
	}
	return time.ParseInLocation("2006-01-02T15:04:05.999999999", s, time.UTC)
}
