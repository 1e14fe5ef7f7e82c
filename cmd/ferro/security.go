package main

import (
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"sync/atomic"
	"time"

	inspectorapi "github.com/ferrometal/ferro/internal/api/inspector"
	"github.com/ferrometal/ferro/internal/api/ironic"
	"github.com/ferrometal/ferro/internal/auth"
	"github.com/ferrometal/ferro/internal/config"
)

// security is the inbound side of [DEFAULT]auth_strategy and [ssl]: the
// authenticator in front of both APIs and the listeners' TLS certificate,
// both reloaded on SIGHUP.
type security struct {
	strategy string
	authn    auth.Authenticator // nil: noauth
	basic    *auth.Basic
	cert     atomic.Pointer[tls.Certificate]
	certFile string
	keyFile  string
	tls      bool
	log      *slog.Logger
}

// newSecurity builds the authenticator and loads the certificate, and
// refuses a configuration that would serve the API open to the network.
func newSecurity(cfg *config.Config, listeners []string, log *slog.Logger) (*security, error) {
	s := &security{strategy: cfg.Default.AuthStrategy, log: log, tls: cfg.API.EnableSSLAPI,
		certFile: cfg.SSL.CertFile, keyFile: cfg.SSL.KeyFile}
	switch cfg.Default.AuthStrategy {
	case config.AuthNoauth:
		if !cfg.API.AllowInsecureNoauth {
			for _, addr := range listeners {
				if !isLoopback(addr) {
					return nil, fmt.Errorf("refusing to serve without authentication on %s: with [DEFAULT]auth_strategy=noauth anyone who reaches this address could power, boot and delete every node; "+
						"set auth_strategy to http_basic or keystone, bind to a loopback address, or set [api]allow_insecure_noauth=true if the network itself is trusted", addr)
				}
			}
		}
	case config.AuthHTTPBasic:
		b, err := auth.NewBasic(cfg.Default.HTTPBasicAuthUserFile)
		if err != nil {
			return nil, err
		}
		s.authn, s.basic = b, b
	case config.AuthKeystone:
		k := cfg.KeystoneAuthtoken
		uri := k.WWWAuthenticateURI
		if uri == "" {
			uri = k.AuthURI
		}
		ks, err := auth.NewKeystone(auth.KeystoneOptions{
			AuthURL: k.AuthURL, WWWAuthenticateURI: uri, Username: k.Username, Password: k.Password,
			ProjectName: k.ProjectName, UserDomainName: k.UserDomainName, ProjectDomainName: k.ProjectDomainName,
			ServiceTokenRolesRequired: k.ServiceTokenRolesRequired, ServiceTokenRoles: k.ServiceTokenRoles,
			CacheTime: time.Duration(k.TokenCacheTime) * time.Second, ServiceProjectName: k.ServiceProjectName,
			CAFile: k.CAFile, Insecure: k.Insecure, Timeout: time.Duration(k.HTTPConnectTimeout) * time.Second, Log: log,
		})
		if err != nil {
			return nil, err
		}
		s.authn = ks
	default:
		return nil, fmt.Errorf("unknown [DEFAULT]auth_strategy %q", cfg.Default.AuthStrategy)
	}
	if s.tls {
		if err := s.loadCert(); err != nil {
			return nil, err
		}
	}
	return s, nil
}

// isLoopback reports whether a host:port listens on loopback only.
func isLoopback(addr string) bool {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		host = addr
	}
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

func (s *security) loadCert() error {
	c, err := tls.LoadX509KeyPair(s.certFile, s.keyFile)
	if err != nil {
		return fmt.Errorf("load [ssl]cert_file and key_file: %w", err)
	}
	s.cert.Store(&c)
	return nil
}

// reload reads the certificate and the http_basic user file again; a
// failure keeps the previous ones.
func (s *security) reload() {
	if s.tls {
		if err := s.loadCert(); err != nil {
			s.log.Error("SIGHUP: certificate not reloaded, keeping the previous one", "error", err)
		} else {
			s.log.Info("SIGHUP: certificate reloaded", "cert_file", s.certFile)
		}
	}
	if s.basic != nil {
		if err := s.basic.Reload(); err != nil {
			s.log.Error("SIGHUP: http_basic user file not reloaded, keeping the previous one", "error", err)
		} else {
			s.log.Info("SIGHUP: http_basic user file reloaded")
		}
	}
}

// tlsConfig is the listeners' TLS configuration, nil without enable_ssl_api.
func (s *security) tlsConfig() *tls.Config {
	if !s.tls {
		return nil
	}
	return &tls.Config{
		MinVersion: tls.VersionTLS12,
		GetCertificate: func(*tls.ClientHelloInfo) (*tls.Certificate, error) {
			if c := s.cert.Load(); c != nil {
				return c, nil
			}
			return nil, errors.New("no certificate")
		},
	}
}

// apiHandler puts authentication in front of the API port's mux, which
// serves the Ironic API and (all-in-one) the inspector's routes: errors
// in the format of the API a path belongs to, and the inspector's routes
// admin-only.
func (s *security) apiHandler(h http.Handler) http.Handler {
	if s.authn == nil {
		return h
	}
	return auth.Middleware(h, auth.Options{
		Authenticator: s.authn, Log: s.log,
		Deny: func(w http.ResponseWriter, r *http.Request, status int, msg string) {
			if inspectorapi.IsPath(r.URL.Path) {
				inspectorapi.WriteError(w, status, msg)
				return
			}
			ironic.WriteError(w, status, msg)
		},
		AdminOnly: func(r *http.Request) bool { return inspectorapi.IsPath(r.URL.Path) },
	})
}

// inspectorHandler puts authentication in front of the inspector's own port.
func (s *security) inspectorHandler(h http.Handler) http.Handler {
	if s.authn == nil {
		return h
	}
	return auth.Middleware(h, auth.Options{
		Authenticator: s.authn, Log: s.log,
		Deny: func(w http.ResponseWriter, _ *http.Request, status int, msg string) {
			inspectorapi.WriteError(w, status, msg)
		},
		AdminOnly: func(*http.Request) bool { return true },
	})
}
