package agent

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"sync"
	"time"

	"github.com/ferrometal/ferro/internal/inventory"
	"github.com/mdlayher/packet"
)

// lldpMulticast is the nearest-bridge group address LLDP is sent to.
var lldpMulticast = net.HardwareAddr{0x01, 0x80, 0xc2, 0x00, 0x00, 0x0e}

// CaptureLLDP listens on each named interface for up to timeout and returns
// the TLVs of the first LLDP frame heard on each, by interface name. An
// interface that hears nothing is absent from the map; one that cannot be
// listened on is logged and reported in the joined error, the others still
// captured. It returns early once every interface has a frame.
func CaptureLLDP(ctx context.Context, log *slog.Logger, names []string, timeout time.Duration) (map[string][]inventory.TLV, error) {
	return NewLLDPListener(ctx, log, timeout).Results(names)
}

// LLDPListener captures on interfaces as they appear: each listens from
// its Start for the timeout, so the wait for a frame overlaps the loading
// of the other drivers and the rest of the collection.
type LLDPListener struct {
	ctx     context.Context
	log     *slog.Logger
	timeout time.Duration
	mu      sync.Mutex
	started map[string]chan lldpOne
}

type lldpOne struct {
	tlvs []inventory.TLV
	err  error
}

// NewLLDPListener returns a listener whose captures stop at ctx's end or
// after timeout each.
func NewLLDPListener(ctx context.Context, log *slog.Logger, timeout time.Duration) *LLDPListener {
	return &LLDPListener{ctx: ctx, log: log, timeout: timeout, started: map[string]chan lldpOne{}}
}

// Start begins the capture on an interface; a second Start is a no-op.
func (l *LLDPListener) Start(name string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if _, ok := l.started[name]; ok {
		return
	}
	done := make(chan lldpOne, 1)
	l.started[name] = done
	go func() {
		ctx, cancel := context.WithTimeout(l.ctx, l.timeout)
		defer cancel()
		tlvs, err := captureOne(ctx, name)
		if tlvs != nil {
			l.log.Debug("lldp frame", "interface", name, "tlvs", len(tlvs))
		}
		done <- lldpOne{tlvs, err}
	}()
}

// Results starts the named interfaces' captures not started yet and waits
// for all of them (CaptureLLDP's result). Call it once.
func (l *LLDPListener) Results(names []string) (map[string][]inventory.TLV, error) {
	for _, n := range names {
		l.Start(n)
	}
	out := map[string][]inventory.TLV{}
	var errs []error
	for _, n := range names {
		l.mu.Lock()
		done := l.started[n]
		l.mu.Unlock()
		r := <-done
		switch {
		case r.err != nil:
			errs = append(errs, r.err)
		case r.tlvs != nil:
			out[n] = r.tlvs
		}
	}
	return out, errors.Join(errs...)
}

func captureOne(ctx context.Context, name string) ([]inventory.TLV, error) {
	ifi, err := net.InterfaceByName(name)
	if err != nil {
		return nil, fmt.Errorf("lldp on %s: %w", name, err)
	}
	c, err := packet.Listen(ifi, packet.Raw, EtherTypeLLDP, nil)
	if err != nil {
		return nil, fmt.Errorf("lldp on %s: listen: %w", name, err)
	}
	defer c.Close()
	// Switches send to a link-local group NICs filter out. Join it, and
	// also listen promiscuously, as IPA does: a NIC whose multicast filter
	// lags or drops the group still hears the frame. Both are the
	// socket's memberships, undone when it closes; the socket is bound
	// to the LLDP EtherType, so promiscuity adds no reads here.
	joinErr := c.JoinGroup(lldpMulticast)
	if err := c.SetPromiscuous(true); err != nil && joinErr != nil {
		return nil, fmt.Errorf("lldp on %s: join %s: %w; promiscuous: %w", name, lldpMulticast, joinErr, err)
	}
	stop := context.AfterFunc(ctx, func() { c.SetReadDeadline(time.Now()) })
	defer stop()
	if dl, ok := ctx.Deadline(); ok {
		c.SetReadDeadline(dl)
	}
	buf := make([]byte, 1600)
	for {
		n, _, err := c.ReadFrom(buf)
		if err != nil {
			if errors.Is(err, os.ErrDeadlineExceeded) || ctx.Err() != nil {
				return nil, nil // nothing heard in time
			}
			return nil, fmt.Errorf("lldp on %s: read: %w", name, err)
		}
		if tlvs, err := ParseLLDPFrame(buf[:n]); err == nil {
			return tlvs, nil
		}
		// a malformed frame: keep listening for a good one
	}
}
