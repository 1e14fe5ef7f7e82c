// Package redfish is ferro's Redfish BMC client, shared by the redfish
// drivers and tooling: driver_info parsing as Ironic's, one connection (and
// session) per BMC kept in a bounded cache and re-created when the BMC
// answers 401, retries with backoff on connection errors and 5xx, System
// lookup, and tolerance for the sloppy BMCs that real hardware ships
// (counts sent as strings, no Memory collection, a one-time boot override
// that reads back as Continuous, a reset that takes seconds to show).
//
// Everything a BMC names stays on the BMC: each link (@odata.id, the
// session Location, action targets, redirects) is resolved against the
// origin of redfish_address before a request exists, and the transport
// refuses any request for another scheme, host or port, so credentials
// and the session token reach the BMC only. Every answer is bounded, and
// the BMC's error messages are quoted once, shortened and scrubbed of
// every secret the client knows.
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
	"path/filepath"
	"slices"
	"sync"
	"time"

	"github.com/stmcginnis/gofish"
	"github.com/stmcginnis/gofish/schemas"

	"github.com/ferrometal/ferro/internal/localfile"
	"github.com/ferrometal/ferro/internal/scrub"
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
	// Secrets are ferro's own (the passwords of its configuration), removed
	// from anything a BMC sends before it becomes an error or a log line;
	// each Endpoint adds its own.
	Secrets scrub.Secrets
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
	// thrashWarned is when the last warning that the cache is too small
	// was logged.
	thrashWarned time.Time
}

// thrashAge is how recently an evicted connection must have been used for
// its eviction to say the cache is too small for the BMCs in use: the
// power sync reaches every BMC within minutes, and an LRU cache smaller
// than that round then evicts, in turn, the session needed next, so every
// request logs in again.
const thrashAge = 10 * time.Minute

// conn is one authenticated gofish client for one BMC and credentials.
type conn struct {
	key      string
	api      *gofish.APIClient
	origin   origin
	st       *stats
	lastUsed time.Time
	// session is the path to DELETE at logout ("": basic auth, or a
	// Location that was not on the origin).
	session string
	// token is the session's, scrubbed from what the BMC sends back.
	token string
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
		cn.logout()
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

// retryable reports whether another attempt may succeed: the connection
// failed or the BMC answered 5xx.
func retryable(err error) bool {
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) || certError(err) ||
		errors.Is(err, ErrOffOrigin) || errors.Is(err, errBodyTooLarge) {
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
// errors of collection members into a plain message. m, when not nil,
// remembers the reads across the attempts (only failures are asked again).
func (c *Client) do(ctx context.Context, ep Endpoint, step string, m *memo, fn func(r *remote) error) error {
	wait := c.opts.ConnectionRetryInterval
	renewed := false
	secrets := c.secrets(ep)
	fail := func(err error) error { return &Error{BMC: ep.Address, Step: step, Err: err, secrets: secrets} }
	var err error
	for attempt := 1; ; attempt++ {
		cn, cached, st, cerr := c.conn(ctx, ep)
		before := st.snapshot()
		err = cerr
		if err == nil {
			secrets = secrets.With(cn.token)
			if m != nil {
				m.forgetFailures()
			}
			err = flatten(fn(newRemote(cn.api.WithContext(ctx), cn.origin, m)))
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
			return fail(fmt.Errorf("%w: check redfish_username and redfish_password", ErrUnauthorized))
		}
		again := retryable(err) || (ctx.Err() == nil && (seen.serverErrors > 0 || seen.netErrors > 0))
		if !again || attempt >= c.opts.ConnectionAttempts {
			if again {
				err = fmt.Errorf("after %d attempts: %w", c.opts.ConnectionAttempts, err)
			}
			break
		}
		c.log.WarnContext(ctx, "redfish request failed, retrying", "bmc", ep.Address, "step", step,
			"attempt", attempt, "wait", wait, "error", secrets.Text(err.Error()))
		select {
		case <-ctx.Done():
			return fail(fmt.Errorf("%w (last error: %v)", ctx.Err(), err))
		case <-time.After(wait):
		}
		wait = min(2*wait, 30*time.Second)
	}
	return fail(err)
}

// secrets are what the client must never repeat from a BMC of ep: ferro's
// own, the node's driver_info secrets and its credentials, also as a Basic
// Authorization header.
func (c *Client) secrets(ep Endpoint) scrub.Secrets {
	return scrub.Join(c.opts.Secrets, scrub.New(ep.Secrets...).WithBasic(ep.Username, ep.Password))
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
	cn, err := c.connect(ctx, ep, st)
	if err != nil {
		return nil, false, st, err
	}
	cn.key, cn.lastUsed = key, time.Now()
	c.mu.Lock()
	if old, ok := c.conns[key]; ok {
		// Another task logged in meanwhile: keep one session.
		c.mu.Unlock()
		go cn.logout()
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
		go oldest.logout()
		if now := time.Now(); now.Sub(oldest.lastUsed) < thrashAge && now.Sub(c.thrashWarned) > thrashAge {
			c.thrashWarned = now
			c.log.WarnContext(ctx, "the Redfish connection cache is full and evicts sessions still in use, so BMCs are logged in to again and again: "+
				"raise [redfish]connection_cache_size to the number of Redfish BMCs this conductor manages",
				"connection_cache_size", c.opts.CacheSize, "evicted_idle", now.Sub(oldest.lastUsed).Round(time.Second).String())
		}
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
func (c *Client) connect(ctx context.Context, ep Endpoint, st *stats) (*conn, error) {
	o, err := newOrigin(ep.Address)
	if err != nil {
		return nil, err
	}
	hc, err := c.httpClient(ep, o, st)
	if err != nil {
		return nil, err
	}
	cn := &conn{origin: o, st: st}
	secrets := c.secrets(ep)
	cfg := gofish.ClientConfig{
		Endpoint: ep.Address, HTTPClient: hc, NoModifyTransport: true, ReuseConnections: true,
		// Nodes behind one service (a chassis manager, ferro-vbmc) share
		// this connection; gofish's default of 1 would serialise them.
		MaxConcurrentRequests: 16,
	}
	basic := ep.AuthType == AuthBasic
	if ep.Username != "" && !basic {
		s, err := login(ctx, hc, o, ep)
		switch {
		case err == nil:
			cn.token, cn.session = s.token, s.path
			if s.refusedLocation != nil {
				c.log.WarnContext(ctx, "redfish session kept without logout", "bmc", ep.Address, "error", secrets.With(s.token).Text(s.refusedLocation.Error()))
			}
			cfg.Session = &gofish.Session{ID: s.path, Token: s.token}
		case ep.AuthType == AuthAuto && status(err) != http.StatusUnauthorized && !retryable(err) && !errors.Is(err, ErrOffOrigin):
			// No usable SessionService: Ironic's auto falls back to basic.
			c.log.InfoContext(ctx, "redfish session login failed, using basic auth", "bmc", ep.Address, "error", secrets.Text(err.Error()))
			basic = true
		default:
			return nil, fmt.Errorf("log in: %w", err)
		}
	}
	if basic && ep.Username != "" {
		cfg.Username, cfg.Password, cfg.BasicAuth = ep.Username, ep.Password, true
	}
	api, err := gofish.ConnectContext(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("connect: %w", httpError(http.MethodGet, "/redfish/v1/", err))
	}
	cn.api = api
	return cn, nil
}

// logout deletes the session, when there is one on the origin.
func (cn *conn) logout() {
	if cn.session == "" || cn.api == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	resp, _ := newRemote(cn.api.WithContext(ctx), cn.origin, nil).Delete(cn.session)
	schemas.DeferredCleanupHTTPResponse(resp)
	cn.api.HTTPClient.CloseIdleConnections()
}

func (c *Client) httpClient(ep Endpoint, o origin, st *stats) (*http.Client, error) {
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
	var rt http.RoundTripper = guard{origin: o, next: tr}
	if c.opts.WrapTransport != nil {
		rt = c.opts.WrapTransport(rt)
	}
	return &http.Client{
		Transport:     tolerantTransport{next: rt, st: st},
		CheckRedirect: o.checkRedirect,
		Timeout:       c.opts.RequestTimeout,
	}, nil
}

// Bounds of a CA directory (redfish_verify_ca naming one): entries looked
// at, and the size of each file and of all of them.
const (
	maxCAEntries   = 1024
	maxCAFile      = 1 << 20
	maxCADirectory = 16 << 20
)

// ErrCABundle is every failure of redfish_verify_ca's path: the message
// does not say whether the path is missing, unreadable, a device or
// without certificates.
var ErrCABundle = fmt.Errorf("driver_info[redfish_verify_ca] does not name a readable CA bundle: "+
	"a regular file of PEM certificates of at most %d MiB, or a directory of at most %d such files", maxCAFile>>20, maxCAEntries)

// caPool reads a CA bundle file, or the regular files of a directory of
// them (as OpenSSL's CApath, which Ironic hands the directory to; ferro
// reads every regular file, not only the hashed names, within the bounds
// above). Devices, FIFOs and subdirectories are skipped, never opened.
func caPool(path string) (*x509.CertPool, error) {
	kind, err := localfile.Stat(path)
	if err != nil {
		return nil, ErrCABundle
	}
	files := []string{path}
	if kind == localfile.Directory {
		names, err := localfile.Names(path, maxCAEntries)
		if err != nil {
			return nil, ErrCABundle
		}
		slices.Sort(names)
		files = files[:0]
		for _, n := range names {
			files = append(files, filepath.Join(path, n))
		}
	}
	pool := x509.NewCertPool()
	found := false
	total := 0
	for _, f := range files {
		if k, err := localfile.Stat(f); err != nil || k != localfile.Regular {
			continue
		}
		pem, err := localfile.Read(f, maxCAFile)
		if err != nil {
			if kind == localfile.Directory {
				continue
			}
			return nil, ErrCABundle
		}
		if total += len(pem); total > maxCADirectory {
			return nil, ErrCABundle
		}
		found = pool.AppendCertsFromPEM(pem) || found
	}
	if !found {
		return nil, ErrCABundle
	}
	return pool, nil
}
