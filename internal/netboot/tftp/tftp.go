// Package tftp is the built-in read-only TFTP server over [pxe]tftp_root
// (pin/tftp): requests are confined to the root, transfers are bounded in
// number and time, and fetches of a node's boot files are reported.
package tftp

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"time"

	"github.com/pin/tftp/v3"

	"github.com/ferrometal/ferro/internal/netboot/bootfs"
)

// Options configure a Server.
type Options struct {
	Root   *bootfs.Root
	Events bootfs.Events
	Log    *slog.Logger
	// MaxTransfers bounds transfers in progress; one more is refused with
	// a TFTP error.
	MaxTransfers int
	// Timeout is the per-packet timeout; Retries how often a packet is sent.
	Timeout time.Duration
	Retries int
	// BlockSize caps the negotiated blksize (clamped to the interface MTU).
	BlockSize int
	// SinglePort serves every transfer from the listening socket (one port
	// for a firewall) instead of a new socket per transfer (faster with
	// many clients: pin/tftp serialises single-port packets).
	SinglePort bool
}

// Server serves one boot root.
type Server struct {
	o    Options
	srv  *tftp.Server
	sem  chan struct{}
	conn net.PacketConn
}

// New returns a server; Listen or Serve starts it.
func New(o Options) (*Server, error) {
	if o.Root == nil {
		return nil, errors.New("tftp: no root")
	}
	if o.Log == nil {
		o.Log = slog.Default()
	}
	if o.MaxTransfers <= 0 {
		o.MaxTransfers = 64
	}
	if o.Timeout <= 0 {
		o.Timeout = 5 * time.Second
	}
	if o.Retries <= 0 {
		o.Retries = 5
	}
	if o.BlockSize <= 0 {
		o.BlockSize = 1468
	}
	s := &Server{o: o, sem: make(chan struct{}, o.MaxTransfers)}
	s.srv = tftp.NewServer(s.read, nil) // no write handler: read-only
	s.srv.SetTimeout(o.Timeout)
	s.srv.SetRetries(o.Retries)
	s.srv.SetBlockSize(o.BlockSize)
	if o.SinglePort {
		s.srv.EnableSinglePort()
	}
	return s, nil
}

// Listen opens the UDP socket (call it in the right network namespace).
func (s *Server) Listen(addr string) error {
	c, err := net.ListenPacket("udp4", addr)
	if err != nil {
		return fmt.Errorf("tftp: listen on %s: %w", addr, err)
	}
	s.conn = c
	return nil
}

// Addr is the listening address.
func (s *Server) Addr() net.Addr { return s.conn.LocalAddr() }

// Serve serves until ctx ends.
func (s *Server) Serve(ctx context.Context) error {
	if s.conn == nil {
		return errors.New("tftp: Serve before Listen")
	}
	errc := make(chan error, 1)
	go func() { errc <- s.srv.Serve(s.conn) }()
	s.o.Log.Info("tftp server started", "address", s.conn.LocalAddr().String(), "root", s.o.Root.Dir())
	select {
	case <-ctx.Done():
		s.srv.Shutdown()
		s.conn.Close()
		<-errc
		return nil
	case err := <-errc:
		s.conn.Close()
		if err != nil {
			return fmt.Errorf("tftp: %w", err)
		}
		return nil
	}
}

// read serves one read request.
func (s *Server) read(name string, rf io.ReaderFrom) error {
	select {
	case s.sem <- struct{}{}:
		defer func() { <-s.sem }()
	default:
		s.o.Log.Warn("tftp: too many transfers, request refused", "file", name)
		return errors.New("server busy")
	}
	remote := ""
	if ot, ok := rf.(tftp.OutgoingTransfer); ok {
		a := ot.RemoteAddr()
		remote = a.String()
	}
	f, fi, err := s.o.Root.OpenFile(name)
	if err != nil {
		// The client sees only "file not found": which rule refused it is ours.
		s.o.Log.Info("tftp: request refused", "file", name, "remote", remote, "error", err)
		return errors.New("file not found")
	}
	defer f.Close()
	if ot, ok := rf.(tftp.OutgoingTransfer); ok {
		ot.SetSize(fi.Size())
	}
	n, err := rf.ReadFrom(f)
	if err != nil {
		// OVMF asks for the size alone (tsize) and aborts: not a fault.
		s.o.Log.Debug("tftp: transfer ended early", "file", name, "remote", remote, "bytes", n, "error", err)
		return nil
	}
	s.o.Log.Debug("tftp: sent", "file", name, "remote", remote, "bytes", n)
	if uuid, phase := s.o.Root.Classify(name); uuid != "" && s.o.Events != nil {
		s.o.Events.Record(context.Background(), uuid, phase, fmt.Sprintf("tftp %s to %s (%d bytes)", name, remote, n))
	}
	return nil
}
