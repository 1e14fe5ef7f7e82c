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
	"strconv"
	"strings"
	"sync/atomic"
	"time"
)

// transfer is one read request being served.
type transfer struct {
	s    *Server
	peer netip.AddrPort
	req  *request
	// in holds the client's packets (copies), bounded: more are dropped,
	// as the network would.
	in chan []byte
	// started is set once the client acknowledged anything.
	started atomic.Bool
	ctx     context.Context
	cancel  context.CancelFunc
	conn    *net.UDPConn
	log     *slog.Logger
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
			n.blksize = min(v, t.s.maxBlock)
			n.oack = append(n.oack, option{o.name, strconv.Itoa(n.blksize)})
		case "tsize":
			// curl refuses an OACK with tsize 0: an empty file goes without.
			if size > 0 {
				n.oack = append(n.oack, option{o.name, strconv.FormatInt(size, 10)})
			}
		case "timeout":
			if v < 1 || v > 255 {
				continue
			}
			n.timeout = time.Duration(v) * time.Second
			n.oack = append(n.oack, option{o.name, o.value})
		case "windowsize":
			if v < 1 || v > maxWindowSize {
				continue
			}
			n.window = min(v, t.s.o.WindowSize)
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
)

func (t *transfer) run() {
	s := t.s
	if !s.o.SinglePort {
		c, err := net.ListenUDP("udp4", &net.UDPAddr{IP: s.conn.LocalAddr().(*net.UDPAddr).IP})
		if err != nil {
			s.failed.Add(1)
			t.log.Warn("tftp: open a transfer socket", "error", err)
			s.reply(t.peer, errorPacket(errNotDefined, "server error"))
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
		t.send(errorPacket(errNotFound, "file not found"))
		return
	}
	defer f.Close()
	node := s.o.Root.Owner(name)
	if node != "" && s.o.Access != nil {
		ok, err := s.o.Access.BootFilesAllowed(t.ctx, node, t.peer.Addr())
		if err != nil || !ok {
			s.refused.Add(1)
			t.log.Warn("tftp: a node's boot file refused to an address not leased to the node", "node", node, "error", err)
			t.send(errorPacket(errAccess, "access violation"))
			return
		}
	}
	n := t.negotiate(fi.Size())
	t.log.Debug("tftp: options negotiated", "asked", optString(t.req.options), "granted", optString(n.oack),
		"blksize", n.blksize, "windowsize", n.window, "timeout", n.timeout)
	err = t.sendFile(f, fi.Size(), n)
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
			c.WriteToUDPAddrPort(errorPacket(errUnknownTID, "unknown transfer id"), from)
			continue
		}
		t.deliver(buf[:n])
	}
}

// sendFile sends the OACK (if any option was granted) and the blocks,
// a window at a time (RFC 7440; window 1 is RFC 1350's lock step). Block
// numbers wrap from 65535 to 0. A window is sent again from the first
// block not acknowledged when no ACK comes within the timeout, doubled
// on each retry up to 4×, at most Retries times in a row. Only the
// window's buffer is held: blocks are read from the file as they are
// sent.
func (t *transfer) sendFile(f io.ReaderAt, size int64, n negotiated) error {
	blk := int64(n.blksize)
	last := size/blk + 1 // the last block is shorter than blksize, maybe empty
	base := int64(1)     // the first block not acknowledged; 0 is the OACK
	var oack []byte
	if len(n.oack) > 0 {
		base, oack = 0, oackPacket(n.oack)
	}
	pkt := make([]byte, 4+n.blksize)
	binary.BigEndian.PutUint16(pkt, opDATA)
	timer := time.NewTimer(time.Hour)
	defer timer.Stop()
	tries := 0
	for base <= last {
		end := min(base+int64(n.window)-1, last)
		if base == 0 {
			end = 0
			t.send(oack)
		} else {
			for k := base; k <= end; k++ {
				m, err := f.ReadAt(pkt[4:], (k-1)*blk)
				if err != nil && !errors.Is(err, io.EOF) {
					return fmt.Errorf("read block %d: %w", k, err)
				}
				binary.BigEndian.PutUint16(pkt[2:], uint16(k))
				t.send(pkt[:4+m])
			}
		}
		timer.Reset(n.timeout << min(tries, 2))
	wait:
		for {
			select {
			case <-t.ctx.Done():
				if errors.Is(t.ctx.Err(), context.DeadlineExceeded) {
					return fmt.Errorf("transfer timeout after block %d of %d", base-1, last)
				}
				return t.ctx.Err()
			case <-timer.C:
				tries++
				if tries > t.s.o.Retries {
					return fmt.Errorf("%w for block %d after %d tries", errGaveUp, base, tries)
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
					// The block this ACK names, among base-1 … end.
					lo := max(base-1, 0)
					a := lo + int64(binary.BigEndian.Uint16(b[2:])-uint16(lo))
					if a > end {
						continue // older than the window: a late duplicate
					}
					if a == base-1 && base > 0 {
						// The client has nothing past base-1. In lock step
						// that is a duplicate to ignore (the Sorcerer's
						// Apprentice); with a window it asks from base.
						if n.window == 1 {
							continue
						}
					} else {
						t.started.Store(true)
						base, tries = a+1, 0
					}
					break wait
				case opERROR:
					code := binary.BigEndian.Uint16(b[2:])
					msg := strings.TrimRight(string(b[4:]), "\x00")
					return fmt.Errorf("%w: code %d %q at block %d", errClientEnded, code, msg, base)
				case opRRQ:
					if !t.started.Load() {
						break wait // the request sent again: so is the first packet
					}
				}
			}
		}
		timer.Stop()
	}
	return nil
}
