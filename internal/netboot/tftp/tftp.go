// Package tftp is the built-in read-only TFTP server over [pxe]tftp_root:
// RFC 1350 read requests with the option extension (RFC 2347) and the
// blksize (RFC 2348), tsize and timeout (RFC 2349) and windowsize
// (RFC 7440) options. Requests are confined to the root (bootfs), a
// node's own files are served only to the addresses Access allows,
// transfers are bounded in number, memory (one packet buffer each) and
// time, and fetches of a node's boot files are reported.
//
// A request's source address may be forged, so until the client has
// acknowledged something the server holds little and sends little: one
// packet for each request packet (the OACK when options were asked, else
// block 1; never retransmitted — the client's own retransmission asks
// again), none larger than MaxAmplification times the request, and the
// transfer is forgotten after FirstACKTimeout whatever timeout the client
// asked. Such unacknowledged transfers are bounded apart from the others
// (the oldest gives way to a new one), as are each client address's
// transfers and request rate; an acknowledged transfer that stops making
// progress ends after StallTimeout.
//
// Write requests are refused. Mode netascii is served as octet: boot
// files are binary, and the clients that ask netascii (tftp-hpa's
// default) only translate line ends.
package tftp

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/netip"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/ferrometal/ferro/internal/netboot/bootfs"
)

// Options configure a Server.
type Options struct {
	Root   *bootfs.Root
	Events bootfs.Events
	// Access decides whether a client may read a node's own files
	// (bootfs.Root.Owner); nil lets every client read them.
	Access bootfs.Access
	Log    *slog.Logger
	// MaxTransfers bounds acknowledged transfers in progress; one more is
	// refused with a TFTP error.
	MaxTransfers int
	// Timeout is the per-packet timeout unless the client asks another
	// (option timeout, granted up to Limits.MaxClientTimeout); it doubles
	// on each retransmission, twice at most. Retries is how often a
	// window is sent again before giving up.
	Timeout time.Duration
	Retries int
	// TransferTimeout bounds one whole transfer.
	TransferTimeout time.Duration
	// BlockSize caps the negotiated blksize; it is also clamped so that a
	// block fits the interface MTU.
	BlockSize int
	// WindowSize caps the negotiated windowsize (RFC 7440).
	WindowSize int
	// SinglePort serves every transfer from the listening socket (one
	// port for a firewall; and the only way when the listener was opened
	// on a network namespace's thread that later goroutines are not on)
	// instead of a new socket per transfer.
	SinglePort bool
	Limits
}

// Limits are the bounds that keep forged, abandoned and flooding clients
// from holding the server or using it to amplify; zero fields take the
// defaults.
type Limits struct {
	// MaxPending bounds the transfers whose client has not acknowledged
	// anything yet; a new request past it replaces the oldest. Such a
	// transfer holds a goroutine, its request and its first packet, no
	// file; a client is replaced only if MaxPending requests arrive before
	// its first ACK does.
	MaxPending int
	// MaxTransfersPerClient bounds one client address's transfers in
	// progress (acknowledged or not); past it the address's oldest
	// unacknowledged one gives way, else the request is refused.
	MaxTransfersPerClient int
	// ClientRequestRate is how many requests a second one client address
	// may send, in bursts of twice that; more are dropped unanswered.
	ClientRequestRate int
	// MaxClientTimeout is the largest timeout option granted.
	MaxClientTimeout time.Duration
	// FirstACKTimeout is how long a transfer waits for the client's first
	// acknowledgement; StallTimeout how long an acknowledged one may go
	// without progress.
	FirstACKTimeout, StallTimeout time.Duration
	// WindowBytes caps the bytes of one window.
	WindowBytes int
	// MaxAmplification bounds what is sent before the client acknowledged
	// anything to this many times the bytes of its requests: block 1 of a
	// request without options that would exceed it is refused with a
	// short error asking for options. Negative: no bound.
	MaxAmplification int
}

// Defaults of Options.
const (
	DefaultMaxTransfers          = 64
	DefaultMaxPending            = 1024
	DefaultMaxTransfersPerClient = 4
	DefaultClientRequestRate     = 20
	DefaultTimeout               = 5 * time.Second
	DefaultMaxClientTimeout      = 5 * time.Second
	DefaultRetries               = 5
	DefaultFirstACKTimeout       = 3 * time.Second
	DefaultStallTimeout          = 10 * time.Second
	DefaultTransferTimeout       = 10 * time.Minute
	DefaultBlockSize             = 1468
	DefaultWindowSize            = 16
	DefaultWindowBytes           = 64 << 10
	DefaultMaxAmplification      = 10
)

// Largest blksize (RFC 2348) and windowsize (RFC 7440).
const (
	maxBlockSize  = 65464
	maxWindowSize = 65535
	// maxServerWindow caps Options.WindowSize.
	maxServerWindow = 1024
)

// Stats count transfers.
type Stats struct {
	// Served transfers ended with the last block acknowledged; Refused
	// were answered with an error (missing, outside the root, not this
	// client's, busy, write, too large an answer); Failed ended early
	// (client error, no answer, stall, transfer timeout); Unacknowledged
	// (among Failed) never heard from their client, and Replaced (among
	// those) made room for a newer request. Limited requests were dropped
	// by the per-client rate. Retransmits counts windows sent again. Busy are the
	// refusals for MaxTransfers, Bytes the size of the files served.
	Served, Refused, Failed, Unacknowledged, Replaced, Limited, Retransmits, Busy, Bytes uint64
}

// Server serves one boot root.
type Server struct {
	o        Options
	conn     *net.UDPConn
	maxBlock int
	limiter  *rateLimiter // the read loop's alone

	mu        sync.Mutex
	transfers map[netip.AddrPort]*transfer
	// pending are the unacknowledged transfers, oldest first; active
	// counts the others; perClient every transfer of an address.
	pending   []*transfer
	active    int
	perClient map[netip.Addr]int
	wg        sync.WaitGroup

	served, refused, failed, unacked, replaced, limited, retransmits, busy, bytes atomic.Uint64
}

// New returns a server; Listen then Serve starts it.
func New(o Options) (*Server, error) {
	if o.Root == nil {
		return nil, errors.New("tftp: no root")
	}
	if o.Log == nil {
		o.Log = slog.Default()
	}
	def := func(v *int, d int) {
		if *v <= 0 {
			*v = d
		}
	}
	defDur := func(v *time.Duration, d time.Duration) {
		if *v <= 0 {
			*v = d
		}
	}
	def(&o.MaxTransfers, DefaultMaxTransfers)
	def(&o.MaxPending, DefaultMaxPending)
	def(&o.MaxTransfersPerClient, DefaultMaxTransfersPerClient)
	def(&o.ClientRequestRate, DefaultClientRequestRate)
	def(&o.Retries, DefaultRetries)
	def(&o.BlockSize, DefaultBlockSize)
	def(&o.WindowSize, DefaultWindowSize)
	def(&o.WindowBytes, DefaultWindowBytes)
	if o.MaxAmplification == 0 {
		o.MaxAmplification = DefaultMaxAmplification
	}
	defDur(&o.Timeout, DefaultTimeout)
	defDur(&o.MaxClientTimeout, DefaultMaxClientTimeout)
	defDur(&o.FirstACKTimeout, DefaultFirstACKTimeout)
	defDur(&o.StallTimeout, DefaultStallTimeout)
	defDur(&o.TransferTimeout, DefaultTransferTimeout)
	o.BlockSize = min(max(o.BlockSize, 8), maxBlockSize)
	// A window past half the block number space would make ACKs ambiguous.
	o.WindowSize = min(o.WindowSize, maxServerWindow)
	return &Server{o: o, transfers: map[netip.AddrPort]*transfer{}, perClient: map[netip.Addr]int{},
		limiter:  newRateLimiter(float64(o.ClientRequestRate), 2*o.ClientRequestRate, time.Now),
		maxBlock: o.BlockSize}, nil
}

// Listen opens the UDP socket (call it in the right network namespace)
// and reads the MTU of the interface that holds its address.
func (s *Server) Listen(addr string) error {
	ua, err := net.ResolveUDPAddr("udp4", addr)
	if err != nil {
		return fmt.Errorf("tftp: listen on %s: %w", addr, err)
	}
	c, err := net.ListenUDP("udp4", ua)
	if err != nil {
		return fmt.Errorf("tftp: listen on %s: %w", addr, err)
	}
	s.conn = c
	// IPv4 and UDP headers and the TFTP DATA header.
	s.maxBlock = min(s.o.BlockSize, interfaceMTU(ua.IP)-20-8-4)
	return nil
}

// interfaceMTU is the MTU of the interface holding ip, or for an
// unspecified ip the smallest of the non-loopback interfaces that are up
// (1500 if none says).
func interfaceMTU(ip net.IP) int {
	ifs, err := net.Interfaces()
	if err != nil {
		return 1500
	}
	best := 0
	for _, ifi := range ifs {
		if ifi.Flags&net.FlagUp == 0 || ifi.MTU <= 0 {
			continue
		}
		if ip != nil && !ip.IsUnspecified() {
			addrs, _ := ifi.Addrs()
			for _, a := range addrs {
				if n, ok := a.(*net.IPNet); ok && n.IP.Equal(ip) {
					return ifi.MTU
				}
			}
			continue
		}
		if ifi.Flags&net.FlagLoopback == 0 && (best == 0 || ifi.MTU < best) {
			best = ifi.MTU
		}
	}
	if best == 0 {
		return 1500
	}
	return best
}

// Addr is the listening address.
func (s *Server) Addr() net.Addr { return s.conn.LocalAddr() }

// MaxBlockSize is the largest blksize the server grants.
func (s *Server) MaxBlockSize() int { return s.maxBlock }

// Stats returns the counters.
func (s *Server) Stats() Stats {
	return Stats{Served: s.served.Load(), Refused: s.refused.Load(), Failed: s.failed.Load(), Unacknowledged: s.unacked.Load(),
		Replaced: s.replaced.Load(), Limited: s.limited.Load(), Retransmits: s.retransmits.Load(),
		Busy: s.busy.Load(), Bytes: s.bytes.Load()}
}

// Serve serves until ctx ends, then waits for the transfers to stop.
func (s *Server) Serve(ctx context.Context) error {
	if s.conn == nil {
		return errors.New("tftp: Serve before Listen")
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	stop := context.AfterFunc(ctx, func() { s.conn.Close() })
	defer stop()
	s.o.Log.Info("tftp server started", "address", s.conn.LocalAddr().String(), "root", s.o.Root.Dir(),
		"max_blksize", s.maxBlock, "max_windowsize", s.o.WindowSize, "single_port", s.o.SinglePort,
		"max_transfers", s.o.MaxTransfers, "max_transfers_per_client", s.o.MaxTransfersPerClient)
	// One byte more than any request may have, to see a longer one.
	buf := make([]byte, maxRequest+1)
	var err error
	for {
		n, peer, rerr := s.conn.ReadFromUDPAddrPort(buf)
		if rerr != nil {
			if ctx.Err() == nil {
				err = fmt.Errorf("tftp: read: %w", rerr)
			}
			break
		}
		s.dispatch(ctx, buf[:n], netip.AddrPortFrom(peer.Addr().Unmap(), peer.Port()))
	}
	cancel()
	s.conn.Close()
	s.wg.Wait()
	return err
}

// dispatch hands a packet to its client's transfer or starts one. A
// request from a client whose transfer has not been acknowledged yet is
// the same request sent again; after that it is a new request from the
// same port, and ends the old transfer. Other packets from an address
// with no transfer (a late ACK) are dropped without an answer. Every
// request counts against its address's rate.
func (s *Server) dispatch(ctx context.Context, b []byte, peer netip.AddrPort) {
	if len(b) < 2 {
		return
	}
	op := binary.BigEndian.Uint16(b)
	s.mu.Lock()
	t := s.transfers[peer]
	s.mu.Unlock()
	if op != opRRQ && op != opWRQ {
		if t != nil {
			t.deliver(b)
		}
		return
	}
	if !s.limiter.allow(peer.Addr()) {
		s.limited.Add(1)
		return
	}
	if t != nil {
		if !t.started.Load() {
			t.deliver(b)
			return
		}
		t.cancel()
	}
	s.start(ctx, b, peer)
}

var (
	errReplaced = errors.New("replaced by a newer request")
	errBusy     = errors.New("too many transfers")
)

// start answers a request: an error, or a new transfer.
func (s *Server) start(ctx context.Context, b []byte, peer netip.AddrPort) {
	req, err := parseRequest(b)
	if err != nil {
		s.refused.Add(1)
		s.o.Log.Info("tftp: request refused", "remote", peer.String(), "error", err)
		s.replyBounded(peer, errorPacket(errIllegalOp, "malformed"), len(b))
		return
	}
	if req.op == opWRQ {
		s.refused.Add(1)
		s.o.Log.Info("tftp: write request refused", "file", req.filename, "remote", peer.String())
		s.replyBounded(peer, errorPacket(errAccess, "read-only server"), len(b))
		return
	}
	tctx, cancel := context.WithCancelCause(ctx)
	tctx, cancelTimeout := context.WithTimeout(tctx, s.o.TransferTimeout)
	t := &transfer{s: s, peer: peer, req: req, reqLen: len(b), in: make(chan []byte, 16), ctx: tctx,
		cancelCause: cancel, conn: s.conn, log: s.o.Log.With("file", req.filename, "remote", peer.String())}
	t.cancel = func() { cancel(context.Canceled) }
	if err := s.admit(t); err != nil {
		cancelTimeout()
		cancel(err)
		s.refused.Add(1)
		s.busy.Add(1)
		s.o.Log.Warn("tftp: too many transfers, request refused", "file", req.filename, "remote", peer.String(),
			"max_transfers", s.o.MaxTransfers, "max_transfers_per_client", s.o.MaxTransfersPerClient)
		s.replyBounded(peer, errorPacket(errNotDefined, "server busy"), len(b))
		return
	}
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		defer s.forget(t)
		defer cancelTimeout()
		defer t.cancel()
		t.run()
	}()
}

// admit counts a new, unacknowledged transfer in, making room by ending
// the oldest unacknowledged one of its address, or of all, when a bound
// is reached. It fails when the acknowledged transfers are at their bound
// or the address has only acknowledged ones.
func (s *Server) admit(t *transfer) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	addr := t.peer.Addr()
	if s.active >= s.o.MaxTransfers {
		return errBusy
	}
	if s.perClient[addr] >= s.o.MaxTransfersPerClient {
		i := slices.IndexFunc(s.pending, func(p *transfer) bool { return p.peer.Addr() == addr })
		if i < 0 {
			return errBusy
		}
		s.replaceLocked(s.pending[i])
	}
	if len(s.pending) >= s.o.MaxPending {
		s.replaceLocked(s.pending[0])
	}
	s.transfers[t.peer] = t
	s.perClient[addr]++
	s.pending = append(s.pending, t)
	return nil
}

// replaceLocked ends an unacknowledged transfer to make room.
func (s *Server) replaceLocked(old *transfer) {
	s.removeLocked(old)
	s.replaced.Add(1)
	old.cancelCause(errReplaced)
}

// forget takes a transfer that ended out of the counts.
func (s *Server) forget(t *transfer) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.removeLocked(t)
}

// removeLocked takes a transfer out of the counts, once.
func (s *Server) removeLocked(t *transfer) {
	if t.removed {
		return
	}
	t.removed = true
	if s.transfers[t.peer] == t {
		delete(s.transfers, t.peer)
	}
	if n := s.perClient[t.peer.Addr()] - 1; n > 0 {
		s.perClient[t.peer.Addr()] = n
	} else {
		delete(s.perClient, t.peer.Addr())
	}
	if t.active {
		s.active--
	} else if i := slices.Index(s.pending, t); i >= 0 {
		s.pending = slices.Delete(s.pending, i, i+1)
	}
}

// acknowledged moves a transfer whose client acknowledged its first
// packet from the unacknowledged ones to the others; false when those are
// at their bound (or it was replaced meanwhile).
func (s *Server) acknowledged(t *transfer) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if t.removed || s.active >= s.o.MaxTransfers {
		return false
	}
	if i := slices.Index(s.pending, t); i >= 0 {
		s.pending = slices.Delete(s.pending, i, i+1)
	}
	t.active = true
	s.active++
	return true
}

// bounded reports whether a packet sent in answer to a request of reqLen
// bytes, before the client acknowledged anything, stays within
// MaxAmplification.
func (s *Server) bounded(pkt []byte, reqLen int) bool {
	return s.o.MaxAmplification < 0 || len(pkt) <= s.o.MaxAmplification*reqLen
}

// replyBounded sends an answer to a request from the listening socket,
// unless it is larger than the bound allows.
func (s *Server) replyBounded(peer netip.AddrPort, b []byte, reqLen int) {
	if !s.bounded(b, reqLen) {
		s.o.Log.Debug("tftp: answer to a short request not sent", "remote", peer.String(), "bytes", len(b), "request_bytes", reqLen)
		return
	}
	s.reply(peer, b)
}

// reply sends a packet from the listening socket.
func (s *Server) reply(peer netip.AddrPort, b []byte) {
	if _, err := s.conn.WriteToUDPAddrPort(b, peer); err != nil {
		s.o.Log.Debug("tftp: send", "remote", peer.String(), "error", err)
	}
}
