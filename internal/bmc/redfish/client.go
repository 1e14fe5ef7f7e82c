// Package redfish is ferro's Redfish BMC client, shared by the redfish
// drivers and tooling: driver_info parsing as Ironic's, one connection (and
// session) per BMC kept in a bounded cache and re-created when the BMC
// answers 401, retries with backoff on connection errors and 5xx, System
// lookup, and tolerance for the sloppy BMCs that real hardware ships
// (counts sent as strings, no Memory collection, a one-time boot override
// that reads back as Continuous, a reset that takes seconds to show).
//
// It is built on gofish's generated schemas; what gofish decodes too
// strictly is repaired in the HTTP transport.
package redfish

import (
	"context"
	"crypto/sha256"
	"crypto/tls"
	"crypto/x509"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/stmcginnis/gofish"
	"github.com/stmcginnis/gofish/schemas"
)

// Options configure a Client. Zero values take Ironic's defaults.
type Options struct {
	// ConnectionAttempts is how many times an operation is tried when the
	// BMC cannot be reached or answers 5xx ([redfish]connection_attempts).
	ConnectionAttempts int
	// ConnectionRetryInterval is the first wait between attempts; it
	// doubles after each ([redfish]connection_retry_interval).
	ConnectionRetryInterval time.Duration
	// CacheSize bounds the connections kept ([redfish]connection_cache_size).
	CacheSize int
	// RequestTimeout bounds one HTTP exchange with a BMC.
	RequestTimeout time.Duration
	// Log receives retries and session renewals; never secrets.
	Log *slog.Logger
	// WrapTransport, when set, wraps every BMC connection's HTTP
	// transport (metrics count and time the requests there).
	WrapTransport func(http.RoundTripper) http.RoundTripper
}

// Defaults, as Ironic's [redfish] options.
const (
	DefaultConnectionAttempts      = 5
	DefaultConnectionRetryInterval = 4 * time.Second
	DefaultCacheSize               = 1000
	DefaultRequestTimeout          = 60 * time.Second
)

// Client talks to any number of BMCs. It is safe for concurrent use.
type Client struct {
	opts Options
	log  *slog.Logger

	mu    sync.Mutex
	conns map[string]*conn
}

// conn is one authenticated gofish client for one BMC and credentials.
type conn struct {
	key      string
	api      *gofish.APIClient
	st       *stats
	lastUsed time.Time
}

// New returns a Client.
func New(opts Options) *Client {
	if opts.ConnectionAttempts <= 0 {
		opts.ConnectionAttempts = DefaultConnectionAttempts
	}
	if opts.ConnectionRetryInterval <= 0 {
		opts.ConnectionRetryInterval = DefaultConnectionRetryInterval
	}
	if opts.CacheSize <= 0 {
		opts.CacheSize = DefaultCacheSize
	}
	if opts.RequestTimeout <= 0 {
		opts.RequestTimeout = DefaultRequestTimeout
	}
	log := opts.Log
	if log == nil {
		log = slog.Default()
	}
	return &Client{opts: opts, log: log, conns: map[string]*conn{}}
}

// Close logs out of every cached session.
func (c *Client) Close() {
	c.mu.Lock()
	conns := c.conns
	c.conns = map[string]*conn{}
	c.mu.Unlock()
	for _, cn := range conns {
		cn.api.Logout()
	}
}

// cacheKey identifies a connection: the same BMC with other credentials or
// TLS settings gets its own. The password enters only as a hash.
func cacheKey(ep Endpoint) string {
	h := sha256.New()
	for _, s := range []string{ep.Address, ep.Username, ep.Password, ep.AuthType, ep.CAFile, fmt.Sprint(ep.Insecure)} {
		h.Write([]byte(s))
		h.Write([]byte{0})
	}
	return hex.EncodeToString(h.Sum(nil))
}

// Error is a failed operation on a BMC: it names the BMC and the step.
type Error struct {
	BMC  string
	Step string
	Err  error
}

func (e *Error) Error() string { return fmt.Sprintf("redfish BMC %s: %s: %v", e.BMC, e.Step, e.Err) }
func (e *Error) Unwrap() error { return e.Err }

// ErrUnauthorized is wrapped when the BMC refuses the credentials.
var ErrUnauthorized = errors.New("the BMC refused the credentials (HTTP 401)")

// ErrNotFound is wrapped when a System, Manager or device does not exist.
var ErrNotFound = errors.New("not found")

// status returns the HTTP status of a gofish error, or 0.
func status(err error) int {
	var re *schemas.Error
	if errors.As(err, &re) {
		return re.HTTPReturnedStatusCode
	}
	return 0
}

// retryable reports whether another attempt may succeed: the connection
// failed or the BMC answered 5xx.
func retryable(err error) bool {
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) || certError(err) {
		return false
	}
	if s := status(err); s >= 500 {
		return true
	} else if s != 0 {
		return false
	}
	var ne net.Error
	var oe *net.OpError
	return errors.As(err, &ne) || errors.As(err, &oe) || errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF)
}

// certError reports a TLS verification failure: trying again cannot help.
func certError(err error) bool {
	var cv *tls.CertificateVerificationError
	var ua x509.UnknownAuthorityError
	var he x509.HostnameError
	var ci x509.CertificateInvalidError
	return errors.As(err, &cv) || errors.As(err, &ua) || errors.As(err, &he) || errors.As(err, &ci)
}

// do runs fn against the BMC with a connected client: connection errors
// and 5xx are retried with backoff up to ConnectionAttempts; a 401 on a
// cached connection (an expired session) drops it and reconnects once.
// What the transport saw decides, not only the error: gofish folds the
// errors of collection members into a plain message.
func (c *Client) do(ctx context.Context, ep Endpoint, step string, fn func(api *gofish.APIClient) error) error {
	wait := c.opts.ConnectionRetryInterval
	renewed := false
	var err error
	for attempt := 1; ; attempt++ {
		cn, cached, st, cerr := c.conn(ctx, ep)
		before := st.snapshot()
		err = cerr
		if err == nil {
			err = fn(cn.api.WithContext(ctx))
		}
		seen := st.snapshot().since(before)
		unauthorized := err != nil && (status(err) == http.StatusUnauthorized || seen.unauthorized > 0)
		if unauthorized && cn != nil {
			c.drop(cn)
			if cached && !renewed {
				renewed = true
				c.log.InfoContext(ctx, "redfish session refused, logging in again", "bmc", ep.Address)
				attempt--
				continue
			}
		}
		if err == nil {
			return nil
		}
		if unauthorized {
			return &Error{BMC: ep.Address, Step: step, Err: fmt.Errorf("%w: check redfish_username and redfish_password", ErrUnauthorized)}
		}
		again := retryable(err) || (ctx.Err() == nil && (seen.serverErrors > 0 || seen.netErrors > 0))
		if !again || attempt >= c.opts.ConnectionAttempts {
			if again {
				err = fmt.Errorf("after %d attempts: %w", c.opts.ConnectionAttempts, err)
			}
			break
		}
		c.log.WarnContext(ctx, "redfish request failed, retrying", "bmc", ep.Address, "step", step,
			"attempt", attempt, "wait", wait, "error", err)
		select {
		case <-ctx.Done():
			return &Error{BMC: ep.Address, Step: step, Err: fmt.Errorf("%w (last error: %v)", ctx.Err(), err)}
		case <-time.After(wait):
		}
		wait = min(2*wait, 30*time.Second)
	}
	return &Error{BMC: ep.Address, Step: step, Err: err}
}

// conn returns the cached connection for ep or makes one; cached says
// which, so that a 401 on a fresh login is not retried.
func (c *Client) conn(ctx context.Context, ep Endpoint) (*conn, bool, *stats, error) {
	key := cacheKey(ep)
	c.mu.Lock()
	if cn, ok := c.conns[key]; ok {
		cn.lastUsed = time.Now()
		c.mu.Unlock()
		return cn, true, cn.st, nil
	}
	c.mu.Unlock()

	st := &stats{}
	api, err := c.connect(ctx, ep, st)
	if err != nil {
		return nil, false, st, err
	}
	cn := &conn{key: key, api: api, st: st, lastUsed: time.Now()}
	c.mu.Lock()
	if old, ok := c.conns[key]; ok {
		// Another task logged in meanwhile: keep one session.
		c.mu.Unlock()
		go api.Logout()
		return old, false, old.st, nil
	}
	if len(c.conns) >= c.opts.CacheSize {
		var oldest *conn
		for _, o := range c.conns {
			if oldest == nil || o.lastUsed.Before(oldest.lastUsed) {
				oldest = o
			}
		}
		delete(c.conns, oldest.key)
		go oldest.api.Logout()
	}
	c.conns[key] = cn
	c.mu.Unlock()
	return cn, false, st, nil
}

// drop forgets a connection whose session the BMC no longer accepts.
func (c *Client) drop(cn *conn) {
	c.mu.Lock()
	if c.conns[cn.key] == cn {
		delete(c.conns, cn.key)
	}
	c.mu.Unlock()
}

// connect logs in: basic auth, a session, or (auto) a session when the
// service offers one and basic auth otherwise.
func (c *Client) connect(ctx context.Context, ep Endpoint, st *stats) (*gofish.APIClient, error) {
	hc, err := c.httpClient(ep, st)
	if err != nil {
		return nil, err
	}
	cfg := gofish.ClientConfig{
		Endpoint: ep.Address, Username: ep.Username, Password: ep.Password,
		HTTPClient: hc, NoModifyTransport: true, ReuseConnections: true,
		// Nodes behind one service (a chassis manager, ferro-vbmc) share
		// this connection; gofish's default of 1 would serialise them.
		MaxConcurrentRequests: 16,
		BasicAuth:             ep.AuthType == AuthBasic || ep.Username == "",
	}
	api, err := gofish.ConnectContext(ctx, cfg)
	if err != nil && ep.AuthType == AuthAuto && !cfg.BasicAuth && status(err) != http.StatusUnauthorized && !retryable(err) {
		// No usable SessionService: Ironic's auto falls back to basic.
		c.log.InfoContext(ctx, "redfish session login failed, using basic auth", "bmc", ep.Address, "error", err)
		cfg.BasicAuth = true
		api, err = gofish.ConnectContext(ctx, cfg)
	}
	if err != nil {
		return nil, fmt.Errorf("connect: %w", err)
	}
	return api, nil
}

func (c *Client) httpClient(ep Endpoint, st *stats) (*http.Client, error) {
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.ResponseHeaderTimeout = c.opts.RequestTimeout
	tr.MaxIdleConnsPerHost = 4
	tlsCfg := &tls.Config{MinVersion: tls.VersionTLS12, InsecureSkipVerify: ep.Insecure} //nolint:gosec // redfish_verify_ca=false asks for it
	if ep.CAFile != "" {
		pool, err := caPool(ep.CAFile)
		if err != nil {
			return nil, err
		}
		tlsCfg.RootCAs = pool
	}
	tr.TLSClientConfig = tlsCfg
	var rt http.RoundTripper = tr
	if c.opts.WrapTransport != nil {
		rt = c.opts.WrapTransport(rt)
	}
	return &http.Client{Transport: tolerantTransport{next: rt, st: st}, Timeout: c.opts.RequestTimeout}, nil
}

// caPool reads a CA bundle file, or every file of a directory of them.
func caPool(path string) (*x509.CertPool, error) {
	files := []string{path}
	if fi, err := os.Stat(path); err == nil && fi.IsDir() {
		entries, err := os.ReadDir(path)
		if err != nil {
			return nil, fmt.Errorf("read CA directory %s: %w", path, err)
		}
		files = files[:0]
		for _, e := range entries {
			if e.Type().IsRegular() {
				files = append(files, filepath.Join(path, e.Name()))
			}
		}
	}
	pool := x509.NewCertPool()
	found := false
	for _, f := range files {
		pem, err := os.ReadFile(f)
		if err != nil {
			return nil, fmt.Errorf("read CA bundle %s: %w", f, err)
		}
		found = pool.AppendCertsFromPEM(pem) || found
	}
	if !found {
		return nil, fmt.Errorf("CA bundle %s has no PEM certificate", path)
	}
	return pool, nil
}
