// Package ipmi is ferro's IPMI client, shared by the ipmitool driver and
// tooling: sessions per BMC and user kept open and reused, closed when idle
// and at shutdown; commands to one BMC serialised and spaced by a minimum
// interval; failed commands retried until a deadline. It speaks IPMI 2.0
// (RMCP+, "lanplus") and 1.5 ("lan") with github.com/bougou/go-ipmi, natively,
// without running ipmitool.
//
// An operation is what Ironic sends as one ipmitool call: a power status, a
// chassis control, a boot-parameter get, a "chassis bootdev" sequence. The
// minimum interval spaces operations to one BMC (address and port), as
// Ironic spaces ipmitool calls; the few requests of one bootdev sequence go
// back to back, as ipmitool sends them.
package ipmi

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/bougou/go-ipmi/pkg/client"
	"github.com/bougou/go-ipmi/pkg/types"
)

// Options configure a Client. Zero durations take the defaults below.
type Options struct {
	// CommandRetryTimeout is how long a failing operation is retried
	// ([ipmi]command_retry_timeout). Default 60 s.
	CommandRetryTimeout time.Duration
	// MinCommandInterval is the least time between two operations to one
	// BMC ([ipmi]min_command_interval). Zero means none; use
	// DefaultMinCommandInterval for Ironic's 5 s.
	MinCommandInterval time.Duration
	// IdleTimeout closes a session that has not been used this long.
	// Default 20 s: below the 60 s session inactivity timeout of the IPMI
	// specification, so a BMC never sees a session ferro thinks is open expire.
	IdleTimeout time.Duration
	// ExchangeTimeout bounds one UDP request/response exchange (go-ipmi
	// resends within it). Default 2 s.
	ExchangeTimeout time.Duration
	Log             *slog.Logger
	// Observe, when set, is told of every operation once it ended: its
	// step ("power status", "set boot device"), how long it took with
	// its retries, and its error (metrics).
	Observe func(op string, d time.Duration, err error)
}

// Defaults, as Ironic's [ipmi] options.
const (
	DefaultCommandRetryTimeout = 60 * time.Second
	DefaultMinCommandInterval  = 5 * time.Second
	defaultIdleTimeout         = 20 * time.Second
	defaultExchangeTimeout     = 2 * time.Second
)

// Protocol is the IPMI protocol version of a BMC, as Ironic's ipmi_protocol_version.
type Protocol string

// Protocol versions.
const (
	Protocol20 Protocol = "2.0" // RMCP+ (ipmitool -I lanplus)
	Protocol15 Protocol = "1.5" // IPMI 1.5 LAN (ipmitool -I lan)
)

// Target is one BMC and the credentials to use with it.
type Target struct {
	Address  string
	Port     int // 623 when zero
	Username string
	// Password is never logged nor put in an error: Target's String omits it.
	Password string
	// PrivLevel is ADMINISTRATOR (default), OPERATOR, USER or CALLBACK.
	PrivLevel string
	Protocol  Protocol // Protocol20 when empty
	// CipherSuite is the RMCP+ cipher suite (3 or 17); 0 lets the client
	// negotiate the best one the BMC offers.
	CipherSuite int
}

// String names the BMC for logs and errors, without the password.
func (t Target) String() string { return net.JoinHostPort(t.Address, strconv.Itoa(t.port())) }

func (t Target) port() int {
	if t.Port == 0 {
		return 623
	}
	return t.Port
}

func (t Target) protocol() Protocol {
	if t.Protocol == "" {
		return Protocol20
	}
	return t.Protocol
}

// Error is a failed operation: it names the BMC and the step.
type Error struct {
	BMC      string // address:port
	Step     string // e.g. "open session", "power on", "set boot device"
	Attempts int
	Err      error
}

func (e *Error) Error() string {
	s := fmt.Sprintf("IPMI %s on BMC %s failed", e.Step, e.BMC)
	if e.Attempts > 1 {
		s += fmt.Sprintf(" after %d attempts", e.Attempts)
	}
	return s + ": " + e.Err.Error()
}

func (e *Error) Unwrap() error { return e.Err }

// ErrAuthentication is wrapped by errors of a session the BMC refused:
// wrong user name or password, or a privilege level the user may not have.
// They are not retried.
var ErrAuthentication = errors.New("authentication failed")

// Client talks to many BMCs. It is safe for concurrent use.
type Client struct {
	o    Options
	log  *slog.Logger
	mu   sync.Mutex
	bmcs map[string]*bmc
	done bool
	// sessionsOpened counts sessions established, for tests and benchmarks.
	sessionsOpened int
}

// New returns a client with o's settings.
func New(o Options) *Client {
	if o.CommandRetryTimeout <= 0 {
		o.CommandRetryTimeout = DefaultCommandRetryTimeout
	}
	if o.IdleTimeout <= 0 {
		o.IdleTimeout = defaultIdleTimeout
	}
	if o.ExchangeTimeout <= 0 {
		o.ExchangeTimeout = defaultExchangeTimeout
	}
	log := o.Log
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Client{o: o, log: log, bmcs: map[string]*bmc{}}
}

// bmc is one BMC (address and port): one operation at a time, spaced by
// the minimum interval, with a session per user.
type bmc struct {
	key  string
	turn chan struct{} // one token: holding it is the right to send
	last time.Time     // end of the last operation
	// sessions by user name; guarded by holding turn.
	sessions map[string]*session
}

type session struct {
	target Target // what it was opened with (a changed password reconnects)
	c      *client.Client
	idle   *time.Timer
}

// SessionsOpened returns how many sessions the client has established.
func (c *Client) SessionsOpened() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.sessionsOpened
}

func (c *Client) bmc(t Target) (*bmc, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.done {
		return nil, errors.New("IPMI client is closed")
	}
	key := t.String()
	b := c.bmcs[key]
	if b == nil {
		b = &bmc{key: key, turn: make(chan struct{}, 1), sessions: map[string]*session{}}
		b.turn <- struct{}{}
		c.bmcs[key] = b
	}
	return b, nil
}

// acquire waits for b's turn and for the minimum interval since its last operation.
func (c *Client) acquire(ctx context.Context, b *bmc) error {
	select {
	case <-b.turn:
	case <-ctx.Done():
		return ctx.Err()
	}
	if wait := time.Until(b.last.Add(c.o.MinCommandInterval)); wait > 0 {
		tm := time.NewTimer(wait)
		defer tm.Stop()
		select {
		case <-tm.C:
		case <-ctx.Done():
			b.turn <- struct{}{}
			return ctx.Err()
		}
	}
	return nil
}

func sleep(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return nil
	}
	tm := time.NewTimer(d)
	defer tm.Stop()
	select {
	case <-tm.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (c *Client) release(b *bmc) {
	b.last = time.Now()
	b.turn <- struct{}{}
}

// do runs op against t's BMC as one operation, retrying failures other than
// authentication and definite BMC answers until CommandRetryTimeout.
func (c *Client) do(ctx context.Context, t Target, step string, op func(context.Context, *client.Client) error) (err error) {
	if c.o.Observe != nil {
		defer func(start time.Time) { c.o.Observe(step, time.Since(start), err) }(time.Now())
	}
	b, err := c.bmc(t)
	if err != nil {
		return &Error{BMC: t.String(), Step: step, Err: err}
	}
	deadline := time.Now().Add(c.o.CommandRetryTimeout)
	backoff := 100 * time.Millisecond
	for attempt := 1; ; attempt++ {
		if err := c.acquire(ctx, b); err != nil {
			return &Error{BMC: b.key, Step: step, Attempts: attempt - 1, Err: err}
		}
		s, failedStep, err := c.session(ctx, b, t)
		if err == nil {
			if err = op(ctx, s.c); err != nil && !permanent(err) {
				// The session may be what broke: start a new one next time.
				c.dropSession(b, t.Username)
			}
		}
		c.release(b)
		if err == nil {
			return nil
		}
		if failedStep == "" {
			failedStep = step
		}
		// Wait at least the minimum interval (acquire does), and back off
		// when that is shorter, so a dead BMC is not hammered.
		pause := max(backoff-c.o.MinCommandInterval, 0)
		if permanent(err) || ctx.Err() != nil || time.Now().Add(max(backoff, c.o.MinCommandInterval)).After(deadline) {
			return &Error{BMC: b.key, Step: failedStep, Attempts: attempt, Err: err}
		}
		c.log.Warn("IPMI operation failed, retrying", "bmc", b.key, "step", failedStep, "attempt", attempt, "error", err)
		if err := sleep(ctx, pause); err != nil {
			return &Error{BMC: b.key, Step: failedStep, Attempts: attempt, Err: err}
		}
		backoff = min(2*backoff, 2*time.Second)
	}
}

// session returns the open session for t's user, opening one when there
// is none or t's credentials changed. Called holding b's turn.
func (c *Client) session(ctx context.Context, b *bmc, t Target) (*session, string, error) {
	if s := b.sessions[t.Username]; s != nil {
		if s.target == t {
			s.idle.Reset(c.o.IdleTimeout)
			return s, "", nil
		}
		c.closeSession(b, s)
	}
	ic, err := client.NewClient(t.Address, t.port(), t.Username, t.Password)
	if err != nil {
		return nil, "open session", err
	}
	ic.WithTimeout(c.o.ExchangeTimeout).WithRetry(1)
	priv, err := privilege(t.PrivLevel)
	if err != nil {
		return nil, "open session", err
	}
	ic.WithMaxPrivilegeLevel(priv)
	switch t.protocol() {
	case Protocol20:
		ic.WithInterface(client.InterfaceLanplus)
		if t.CipherSuite != 0 {
			ic.WithCipherSuiteID(types.CipherSuiteID(t.CipherSuite))
		}
	case Protocol15:
		ic.WithInterface(client.InterfaceLan)
	default:
		return nil, "open session", fmt.Errorf("unknown IPMI protocol version %q", t.Protocol)
	}
	cctx, cancel := context.WithTimeout(ctx, 4*c.o.ExchangeTimeout)
	err = ic.Connect(cctx)
	cancel()
	if err != nil {
		closeNow(ic)
		return nil, "open session", classifyConnect(err)
	}
	s := &session{target: t, c: ic}
	user := t.Username
	s.idle = time.AfterFunc(c.o.IdleTimeout, func() { c.closeIdle(b, user, s) })
	b.sessions[user] = s
	c.mu.Lock()
	c.sessionsOpened++
	c.mu.Unlock()
	c.log.Debug("IPMI session opened", "bmc", b.key, "user", user, "protocol", string(t.protocol()))
	return s, "", nil
}

// closeIdle closes s if it is still b's session for user once b is free.
func (c *Client) closeIdle(b *bmc, user string, s *session) {
	<-b.turn
	defer func() { b.turn <- struct{}{} }()
	if b.sessions[user] == s {
		c.closeSession(b, s)
	}
}

func (c *Client) dropSession(b *bmc, user string) {
	if s := b.sessions[user]; s != nil {
		c.closeSession(b, s)
	}
}

// closeSession ends s (Close Session sent, bounded) and forgets it.
func (c *Client) closeSession(b *bmc, s *session) {
	s.idle.Stop()
	delete(b.sessions, s.target.Username)
	ctx, cancel := context.WithTimeout(context.Background(), c.o.ExchangeTimeout)
	defer cancel()
	if err := s.c.Close(ctx); err != nil {
		c.log.Debug("IPMI close session", "bmc", b.key, "error", err)
	}
}

// closeNow releases a client whose session never opened, without sending.
func closeNow(ic *client.Client) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_ = ic.Close(ctx)
}

// Close ends every session. The client must not be used afterwards.
func (c *Client) Close() error {
	c.mu.Lock()
	c.done = true
	bmcs := c.bmcs
	c.bmcs = map[string]*bmc{}
	c.mu.Unlock()
	for _, b := range bmcs {
		<-b.turn
		for _, s := range b.sessions {
			c.closeSession(b, s)
		}
		b.turn <- struct{}{}
	}
	return nil
}

func privilege(level string) (types.PrivilegeLevel, error) {
	switch level {
	case "", "ADMINISTRATOR":
		return types.PrivilegeLevelAdministrator, nil
	case "OPERATOR":
		return types.PrivilegeLevelOperator, nil
	case "USER":
		return types.PrivilegeLevelUser, nil
	case "CALLBACK":
		return types.PrivilegeLevelCallback, nil
	}
	return 0, fmt.Errorf("invalid privilege level %q", level)
}

// classifyConnect marks session set-up failures where the BMC answered and
// refused as permanent (authentication errors among them), so they are not
// retried; no answer at all is transient. go-ipmi joins the errors of the
// cipher suites it tried with %v, so part of this goes by the message.
func classifyConnect(err error) error {
	if errors.Is(err, client.ErrRAKPAuthentication) || strings.Contains(err.Error(), client.ErrRAKPAuthentication.Error()) {
		return fmt.Errorf("%w (wrong user name or password?): %w", ErrAuthentication, err)
	}
	if noAnswer(err) {
		return err
	}
	var st *types.RmcpStatusError
	if errors.As(err, &st) {
		switch st.StatusCode() {
		case types.RmcpStatusCodeUnauthorizedName, types.RmcpStatusCodeInvalidIntegrityCheckValue,
			types.RmcpStatusCodeUnauthorizedRoleOfPriLevel, types.RmcpStatusCodeInvalidRole:
			return fmt.Errorf("%w: %w", ErrAuthentication, err)
		case types.RmcpStatusCodeInvalidAuthAlg, types.RmcpStatusCodeInvalidIntegrityAlg,
			types.RmcpStatusCodeInvalidConfidentAlg, types.RmcpStatusCodeNoCipherSuiteMatch,
			types.RmcpStatusCodeNoMatchingAuthPayload, types.RmcpStatusCodeNoMatchingIntegrityPayload:
			return &unsupportedError{fmt.Errorf("the BMC does not support the requested cipher suite: %w", err)}
		}
	}
	var re *types.ResponseError
	if errors.As(err, &re) {
		// IPMI 1.5 Activate Session / Get Session Challenge refusals.
		switch uint8(re.CompletionCode()) {
		case 0x81, 0x82, 0x86: // invalid user name, null user disabled, privilege exceeds limit
			return fmt.Errorf("%w: %w", ErrAuthentication, err)
		}
	}
	if strings.Contains(err.Error(), "Open Session failed with cipher suite") {
		// ipmi_sim answers an unsupported suite (17) with a bare status
		// that go-ipmi cannot unpack: the BMC answered and refused.
		return &unsupportedError{fmt.Errorf("the BMC refused the session (unsupported cipher suite?): %w", err)}
	}
	return err
}

// noAnswer reports errors where the BMC did not answer: timeouts, port
// unreachable, cancelled waits.
func noAnswer(err error) bool {
	var ne *net.OpError
	if errors.As(err, &ne) || errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled) {
		return true
	}
	s := err.Error()
	return strings.Contains(s, "no datagram matched") || strings.Contains(s, "timed out") ||
		strings.Contains(s, "connection refused") || strings.Contains(s, "no matching IPMI response")
}

// unsupportedError is a permanent refusal of what was asked (not a fault).
type unsupportedError struct{ error }

func (e *unsupportedError) Unwrap() error { return e.error }

// permanent reports errors that a retry will not fix: authentication, a
// cipher suite the BMC lacks, and completion codes other than "busy" ones.
func permanent(err error) bool {
	if errors.Is(err, ErrAuthentication) {
		return true
	}
	var ue *unsupportedError
	if errors.As(err, &ue) {
		return true
	}
	var re *types.ResponseError
	if errors.As(err, &re) {
		switch uint8(re.CompletionCode()) {
		case 0xc0, 0xc3, 0xce, 0xff: // node busy, timeout, response unavailable, unspecified
			return false
		}
		return true
	}
	return false
}
