package tftp

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/netip"
	"os"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/ferrometal/ferro/internal/netboot/bootfs"
)

// transfer is one read request being served.
type transfer struct {
	s    *Server
	peer netip.AddrPort
	req  *request
	// reqLen is the request's size, which bounds what is sent before the
	// client acknowledged anything.
	reqLen int
	// in holds the client's packets (copies), bounded: more are dropped,
	// as the network would.
	in chan []byte
	// started is set once the client acknowledged anything.
	started     atomic.Bool
	ctx         context.Context
	cancel      context.CancelFunc
	cancelCause context.CancelCauseFunc
	conn        *net.UDPConn
	log         *slog.Logger
	// removed and active are the server's counts of it (under its mu).
	removed, active bool
}

func (t *transfer) deliver(b []byte) {
	select {
	case t.in <- append([]byte(nil), b...):
	default:
	}
}

func (t *transfer) send(b []byte) {
	if _, err := t.conn.WriteToUDPAddrPort(b, t.peer); err != nil {
		t.log.Debug("tftp: send", "error", err)
	}
}

// sendBounded sends an answer to the request itself (before the client
// acknowledged anything) unless it is larger than the bound allows.
func (t *transfer) sendBounded(b []byte) {
	if !t.s.bounded(b, t.reqLen) {
		t.log.Debug("tftp: answer to a short request not sent", "bytes", len(b), "request_bytes", t.reqLen)
		return
	}
	t.send(b)
}

// negotiated are the transfer's parameters after the option exchange.
type negotiated struct {
	blksize, window int
	timeout         time.Duration
	oack            []option
}

// negotiate grants the options the server knows, within its caps, and
// leaves out the others (RFC 2347: the client then does without).
func (t *transfer) negotiate(size int64) negotiated {
	n := negotiated{blksize: 512, window: 1, timeout: t.s.o.Timeout}
	// The window's cap in bytes needs the block size, whatever the order.
	if v, ok := t.req.option("blksize"); ok {
		if b, err := strconv.Atoi(v); err == nil && b >= 8 && b <= maxBlockSize {
			n.blksize = min(b, t.s.maxBlock)
		}
	}
	for _, o := range t.req.options {
		v, err := strconv.Atoi(o.value)
		if err != nil {
			continue
		}
		switch o.name {
		case "blksize":
			if v < 8 || v > maxBlockSize {
				continue
			}
			n.oack = append(n.oack, option{o.name, strconv.Itoa(n.blksize)})
		case "tsize":
			// curl refuses an OACK with tsize 0: an empty file goes without.
			if size > 0 {
				n.oack = append(n.oack, option{o.name, strconv.FormatInt(size, 10)})
			}
		case "timeout":
			// RFC 2349: granted as asked or not at all; past the cap the
			// server's own timeout applies.
			if v < 1 || v > 255 || time.Duration(v)*time.Second > t.s.o.MaxClientTimeout {
				continue
			}
			n.timeout = time.Duration(v) * time.Second
			n.oack = append(n.oack, option{o.name, o.value})
		case "windowsize":
			if v < 1 || v > maxWindowSize {
				continue
			}
			// No more unacknowledged data than WindowBytes.
			n.window = max(1, min(v, t.s.o.WindowSize, t.s.o.WindowBytes/n.blksize))
			n.oack = append(n.oack, option{o.name, strconv.Itoa(n.window)})
		}
	}
	return n
}

func optString(opts []option) string {
	var b strings.Builder
	for i, o := range opts {
		if i > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(o.name + "=" + o.value)
	}
	return b.String()
}

var (
	errClientEnded = errors.New("client sent an error")
	errGaveUp      = errors.New("no acknowledgement")
	errNoFirstACK  = errors.New("the client never acknowledged")
	errStalled     = errors.New("no progress")
)

func (t *transfer) run() {
	s := t.s
	if !s.o.SinglePort {
		c, err := net.ListenUDP("udp4", &net.UDPAddr{IP: s.conn.LocalAddr().(*net.UDPAddr).IP})
		if err != nil {
			s.failed.Add(1)
			t.log.Warn("tftp: open a transfer socket", "error", err)
			s.replyBounded(t.peer, errorPacket(errNotDefined, "server error"), t.reqLen)
			return
		}
		defer c.Close()
		t.conn = c
		go t.readOwn(c)
	}
	name := t.req.filename
	f, fi, err := s.o.Root.OpenFile(name)
	if err != nil {
		// The client sees only "file not found": which rule refused it is ours.
		s.refused.Add(1)
		t.log.Info("tftp: request refused", "error", err)
		t.sendBounded(errorPacket(errNotFound, "file not found"))
		return
	}
	file := &lazyFile{root: s.o.Root, name: name, f: f}
	defer file.release()
	node := s.o.Root.Owner(name)
	if node != "" && s.o.Access != nil {
		ok, err := s.o.Access.BootFilesAllowed(t.ctx, node, t.peer.Addr())
		if err != nil || !ok {
			s.refused.Add(1)
			t.log.Warn("tftp: a node's boot file refused to an address not leased to the node", "node", node, "error", err)
			t.sendBounded(errorPacket(errAccess, "access violation"))
			return
		}
	}
	n := t.negotiate(fi.Size())
	t.log.Debug("tftp: options negotiated", "asked", optString(t.req.options), "granted", optString(n.oack),
		"blksize", n.blksize, "windowsize", n.window, "timeout", n.timeout)
	if first := 4 + min(int64(n.blksize), fi.Size()); len(n.oack) == 0 && !s.bounded(make([]byte, first), t.reqLen) {
		// Block 1 to a request without options, many times its size, to an
		// address that may be forged: the client is asked for options.
		s.refused.Add(1)
		t.log.Info("tftp: a request without options refused: its first block would be more than max_amplification times the request",
			"request_bytes", t.reqLen, "first_block_bytes", first, "max_amplification", s.o.MaxAmplification)
		t.sendBounded(errorPacket(errNotDefined, "ask tsize or blksize"))
		return
	}
	err = t.sendFile(file, fi.Size(), n)
	// Counted out before the outcome is logged, which a test waits for.
	s.forget(t)
	switch {
	case err == nil:
		s.served.Add(1)
		s.bytes.Add(uint64(fi.Size()))
		t.log.Debug("tftp: sent", "bytes", fi.Size())
		if uuid, phase := s.o.Root.Classify(name); uuid != "" && s.o.Events != nil {
			s.o.Events.Record(context.WithoutCancel(t.ctx), uuid, phase, fmt.Sprintf("tftp %s to %s (%d bytes)", name, t.peer.Addr(), fi.Size()))
		}
	case errors.Is(err, errClientEnded):
		// OVMF asks for the size alone (tsize) and aborts: not a fault.
		s.failed.Add(1)
		t.log.Debug("tftp: transfer ended early", "error", err)
	case errors.Is(err, errBusy):
		s.refused.Add(1)
		t.log.Warn("tftp: too many transfers, acknowledged transfer refused", "max_transfers", s.o.MaxTransfers)
		t.send(errorPacket(errNotDefined, "server busy"))
	case !t.started.Load():
		// Nothing more goes to an address that never answered: it may
		// not have asked.
		s.failed.Add(1)
		s.unacked.Add(1)
		t.log.Debug("tftp: transfer never acknowledged", "error", err)
	default:
		s.failed.Add(1)
		t.log.Info("tftp: transfer failed", "error", err)
		t.send(errorPacket(errNotDefined, "transfer timed out"))
	}
}

// readOwn passes the client's packets on the transfer's own socket to
// the transfer; another sender gets error 5 (RFC 1350).
func (t *transfer) readOwn(c *net.UDPConn) {
	buf := make([]byte, maxRequest)
	for {
		n, from, err := c.ReadFromUDPAddrPort(buf)
		if err != nil {
			return
		}
		from = netip.AddrPortFrom(from.Addr().Unmap(), from.Port())
		if from != t.peer {
			if e := errorPacket(errUnknownTID, "unknown transfer id"); t.s.bounded(e, n) {
				c.WriteToUDPAddrPort(e, from)
			}
			continue
		}
		t.deliver(buf[:n])
	}
}

// sendFile sends the OACK (if any option was granted) and the blocks,
// a window at a time (RFC 7440; window 1 is RFC 1350's lock step). Block
// numbers wrap from 65535 to 0.
//
// Until the client acknowledges the first packet, that packet alone is
// sent: again every quarter of FirstACKTimeout and whenever the client
// repeats its request, but never more bytes in all than MaxAmplification
// times the bytes of the requests received; the transfer ends at
// FirstACKTimeout. After that, when no ACK comes within the timeout
// (doubled on each retry up to 4×, at most Retries times in a row), the
// first block not acknowledged is sent again, alone until an ACK moves the
// transfer on (a client that lost a whole window acknowledges what it has
// once its own timer fires), and the transfer ends when no ACK has moved
// it on for StallTimeout. Only the window's
// buffer is held: blocks are read from the file as they are sent.
func (t *transfer) sendFile(f *lazyFile, size int64, n negotiated) error {
	blk := int64(n.blksize)
	last := size/blk + 1 // the last block is shorter than blksize, maybe empty
	base := int64(1)     // the first block not acknowledged; 0 is the OACK
	var oack []byte
	if len(n.oack) > 0 {
		base, oack = 0, oackPacket(n.oack)
	}
	var pkt []byte // the block buffer, once a block is sent
	timer := time.NewTimer(time.Hour)
	defer timer.Stop()
	// What may still be sent before the first ACK.
	amp := t.s.o.MaxAmplification
	credit := amp * t.reqLen
	send := func(b []byte) {
		if t.started.Load() || amp < 0 {
			t.send(b)
			return
		}
		if len(b) > credit {
			t.log.Debug("tftp: first packet not sent again: the requests received do not allow more", "bytes", len(b), "left", credit)
			return
		}
		credit -= len(b)
		t.send(b)
	}
	firstACK := time.Now().Add(t.s.o.FirstACKTimeout)
	var stall time.Time // set by each ACK that moves the transfer on
	tries := 0
	// hi is the highest block sent; an ACK may name any up to it.
	hi := base
	for base <= last {
		end := min(base+int64(n.window)-1, last)
		if !t.started.Load() || tries > 0 {
			// The first packet alone; and after a timeout, the first block
			// not acknowledged alone, until an ACK moves the transfer on:
			// a client that went away (or never was) gets no more windows.
			end = base
		}
		hi = max(hi, end)
		if base == 0 {
			send(oack)
		} else {
			if pkt == nil {
				pkt = make([]byte, 4+n.blksize)
				binary.BigEndian.PutUint16(pkt, opDATA)
			}
			for k := base; k <= end; k++ {
				m, err := f.ReadAt(pkt[4:], (k-1)*blk)
				if err != nil && !errors.Is(err, io.EOF) {
					return fmt.Errorf("read block %d: %w", k, err)
				}
				binary.BigEndian.PutUint16(pkt[2:], uint16(k))
				send(pkt[:4+m])
			}
		}
		if t.started.Load() {
			timer.Reset(min(n.timeout<<min(tries, 2), time.Until(stall)))
		} else {
			// An unacknowledged transfer holds no descriptor: there may be
			// many (MaxPending).
			f.release()
			timer.Reset(min(t.s.o.FirstACKTimeout/4, time.Until(firstACK)))
		}
	wait:
		for {
			select {
			case <-t.ctx.Done():
				if errors.Is(t.ctx.Err(), context.DeadlineExceeded) {
					return fmt.Errorf("transfer timeout after block %d of %d", base-1, last)
				}
				return context.Cause(t.ctx)
			case <-timer.C:
				if !t.started.Load() {
					if !time.Now().Before(firstACK) {
						return fmt.Errorf("%w within %s", errNoFirstACK, t.s.o.FirstACKTimeout)
					}
				} else {
					if !time.Now().Before(stall) {
						return fmt.Errorf("%w for %s at block %d", errStalled, t.s.o.StallTimeout, base)
					}
					tries++
					if tries > t.s.o.Retries {
						return fmt.Errorf("%w for block %d after %d tries", errGaveUp, base, tries)
					}
				}
				t.s.retransmits.Add(1)
				t.log.Debug("tftp: retransmit", "block", base, "try", tries)
				break wait
			case b := <-t.in:
				if len(b) < 4 {
					continue
				}
				switch binary.BigEndian.Uint16(b) {
				case opACK:
					// The block this ACK names, among base-1 … hi.
					lo := max(base-1, 0)
					a := lo + int64(binary.BigEndian.Uint16(b[2:])-uint16(lo))
					if a > hi {
						continue // older than the window: a late duplicate
					}
					if a == base-1 && base > 0 {
						// The client has nothing past base-1. In lock step
						// that is a duplicate to ignore (the Sorcerer's
						// Apprentice); with a window it asks from base.
						if n.window == 1 || !t.started.Load() {
							continue
						}
					} else {
						if !t.started.Load() {
							if !t.s.acknowledged(t) {
								return errBusy
							}
							t.started.Store(true)
						}
						base, tries = a+1, 0
						stall = time.Now().Add(t.s.o.StallTimeout)
					}
					break wait
				case opERROR:
					code := binary.BigEndian.Uint16(b[2:])
					msg := strings.TrimRight(string(b[4:]), "\x00")
					return fmt.Errorf("%w: code %d %q at block %d", errClientEnded, code, msg, base)
				case opRRQ:
					if !t.started.Load() {
						// The request sent again: so is the first packet.
						credit += max(amp, 0) * len(b)
						break wait
					}
				}
			}
		}
		timer.Stop()
	}
	return nil
}

// lazyFile is a transfer's file, closed while the transfer waits for its
// first ACK and opened again on the next read.
type lazyFile struct {
	root *bootfs.Root
	name string
	f    *os.File
}

func (l *lazyFile) ReadAt(b []byte, off int64) (int, error) {
	if l.f == nil {
		f, _, err := l.root.OpenFile(l.name)
		if err != nil {
			return 0, fmt.Errorf("open %s again: %w", l.name, err)
		}
		l.f = f
	}
	return l.f.ReadAt(b, off)
}

func (l *lazyFile) release() {
	if l.f != nil {
		l.f.Close()
		l.f = nil
	}
}
