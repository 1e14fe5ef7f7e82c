// Package tftp is the built-in read-only TFTP server over [pxe]tftp_root:
// RFC 1350 read requests with the option extension (RFC 2347) and the
// blksize (RFC 2348), tsize and timeout (RFC 2349) and windowsize
// (RFC 7440) options. Requests are confined to the root (bootfs), a
// node's own files are served only to the addresses Access allows,
// transfers are bounded in number, memory (one packet buffer each) and
// time, and fetches of a node's boot files are reported.
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
	// MaxTransfers bounds transfers in progress; one more is refused with
	// a TFTP error.
	MaxTransfers int
	// Timeout is the per-packet timeout unless the client asks another
	// (option timeout); it doubles on each retransmission, twice at most.
	// Retries is how often a window is sent again before giving up.
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
}

// Defaults of Options.
const (
	DefaultMaxTransfers    = 64
	DefaultTimeout         = 5 * time.Second
	DefaultRetries         = 5
	DefaultTransferTimeout = 10 * time.Minute
	DefaultBlockSize       = 1468
	DefaultWindowSize      = 16
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
	// client's, busy, write); Failed ended early (client error, no answer,
	// transfer timeout). Retransmits counts windows sent again. Busy are
	// the refusals for MaxTransfers, Bytes the size of the files served.
	Served, Refused, Failed, Retransmits, Busy, Bytes uint64
}

// Server serves one boot root.
type Server struct {
	o        Options
	conn     *net.UDPConn
	maxBlock int

	mu        sync.Mutex
	transfers map[netip.AddrPort]*transfer
	sem       chan struct{}
	wg        sync.WaitGroup

	served, refused, failed, retransmits, busy, bytes atomic.Uint64
}

// New returns a server; Listen then Serve starts it.
func New(o Options) (*Server, error) {
	if o.Root == nil {
		return nil, errors.New("tftp: no root")
	}
	if o.Log == nil {
		o.Log = slog.Default()
	}
	if o.MaxTransfers <= 0 {
		o.MaxTransfers = DefaultMaxTransfers
	}
	if o.Timeout <= 0 {
		o.Timeout = DefaultTimeout
	}
	if o.Retries <= 0 {
		o.Retries = DefaultRetries
	}
	if o.TransferTimeout <= 0 {
		o.TransferTimeout = DefaultTransferTimeout
	}
	if o.BlockSize <= 0 {
		o.BlockSize = DefaultBlockSize
	}
	o.BlockSize = min(max(o.BlockSize, 8), maxBlockSize)
	if o.WindowSize <= 0 {
		o.WindowSize = DefaultWindowSize
	}
	// A window past half the block number space would make ACKs ambiguous.
	o.WindowSize = min(o.WindowSize, maxServerWindow)
	return &Server{o: o, sem: make(chan struct{}, o.MaxTransfers), transfers: map[netip.AddrPort]*transfer{},
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
	return Stats{Served: s.served.Load(), Refused: s.refused.Load(), Failed: s.failed.Load(), Retransmits: s.retransmits.Load(),
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
		"max_blksize", s.maxBlock, "max_windowsize", s.o.WindowSize, "single_port", s.o.SinglePort)
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
// with no transfer (a late ACK) are dropped without an answer.
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
	if t != nil {
		if !t.started.Load() {
			t.deliver(b)
			return
		}
		t.cancel()
	}
	s.start(ctx, b, peer)
}

// start answers a request: an error, or a new transfer.
func (s *Server) start(ctx context.Context, b []byte, peer netip.AddrPort) {
	req, err := parseRequest(b)
	if err != nil {
		s.refused.Add(1)
		s.o.Log.Info("tftp: request refused", "remote", peer.String(), "error", err)
		s.reply(peer, errorPacket(errIllegalOp, "malformed request"))
		return
	}
	if req.op == opWRQ {
		s.refused.Add(1)
		s.o.Log.Info("tftp: write request refused", "file", req.filename, "remote", peer.String())
		s.reply(peer, errorPacket(errAccess, "read-only server"))
		return
	}
	select {
	case s.sem <- struct{}{}:
	default:
		s.refused.Add(1)
		s.busy.Add(1)
		s.o.Log.Warn("tftp: too many transfers, request refused", "file", req.filename, "remote", peer.String(),
			"max_transfers", s.o.MaxTransfers)
		s.reply(peer, errorPacket(errNotDefined, "server busy"))
		return
	}
	tctx, cancel := context.WithTimeout(ctx, s.o.TransferTimeout)
	t := &transfer{s: s, peer: peer, req: req, in: make(chan []byte, 16), ctx: tctx, cancel: cancel, conn: s.conn,
		log: s.o.Log.With("file", req.filename, "remote", peer.String())}
	s.mu.Lock()
	s.transfers[peer] = t
	s.mu.Unlock()
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		defer func() { <-s.sem }()
		defer func() {
			s.mu.Lock()
			if s.transfers[peer] == t {
				delete(s.transfers, peer)
			}
			s.mu.Unlock()
		}()
		defer cancel()
		t.run()
	}()
}

// reply sends a packet from the listening socket.
func (s *Server) reply(peer netip.AddrPort, b []byte) {
	if _, err := s.conn.WriteToUDPAddrPort(b, peer); err != nil {
		s.o.Log.Debug("tftp: send", "remote", peer.String(), "error", err)
	}
}
