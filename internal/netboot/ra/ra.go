// Package ra answers IPv6 router solicitations on the netboot interface
// with a minimal router advertisement (no prefix, M=O=0, router lifetime
// 0): it tells iPXE at once that there is no IPv6 to configure, where it
// would otherwise wait about 16 seconds.
package ra

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/netip"
	"sync/atomic"
	"time"

	"github.com/mdlayher/ndp"
)

// allRouters is where router solicitations are sent.
var allRouters = netip.MustParseAddr("ff02::2")

var allNodes = netip.MustParseAddr("ff02::1")

// Responder is the router advertisement responder of one interface.
type Responder struct {
	log  *slog.Logger
	conn *ndp.Conn
	ifi  *net.Interface
	// Answered counts advertisements sent.
	Answered atomic.Uint64
}

// Listen opens the ICMPv6 socket on the interface's link-local address and
// joins ff02::2. Call it in the interface's network namespace.
func Listen(ifname string, log *slog.Logger) (*Responder, error) {
	if log == nil {
		log = slog.Default()
	}
	ifi, err := net.InterfaceByName(ifname)
	if err != nil {
		return nil, fmt.Errorf("router advertisements: interface %s: %w", ifname, err)
	}
	c, _, err := ndp.Listen(ifi, ndp.LinkLocal)
	if err != nil {
		return nil, fmt.Errorf("router advertisements on %s: %w", ifname, err)
	}
	if err := c.JoinGroup(allRouters); err != nil {
		c.Close()
		return nil, fmt.Errorf("router advertisements on %s: join ff02::2: %w", ifname, err)
	}
	return &Responder{log: log, conn: c, ifi: ifi}, nil
}

// Serve answers solicitations until ctx ends. Each solicitation gets at
// most one advertisement, so the work is bounded by what arrives.
func (r *Responder) Serve(ctx context.Context) error {
	go func() {
		<-ctx.Done()
		r.conn.Close()
	}()
	ad := &ndp.RouterAdvertisement{
		CurrentHopLimit: 64,
		RouterLifetime:  0, // not a default router
		Options:         []ndp.Option{&ndp.LinkLayerAddress{Direction: ndp.Source, Addr: r.ifi.HardwareAddr}},
	}
	r.log.Info("router advertisement responder started", "interface", r.ifi.Name)
	for {
		m, _, from, err := r.conn.ReadFrom()
		if err != nil {
			if ctx.Err() != nil {
				return nil
			}
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() {
				continue
			}
			// Malformed NDP messages are not fatal.
			r.log.Debug("router advertisements: read", "error", err)
			if errors.Is(err, net.ErrClosed) {
				return nil
			}
			continue
		}
		if _, ok := m.(*ndp.RouterSolicitation); !ok {
			continue
		}
		to := from
		if !to.IsLinkLocalUnicast() {
			to = allNodes // a solicitation from the unspecified address
		}
		r.conn.SetWriteDeadline(time.Now().Add(time.Second))
		if err := r.conn.WriteTo(ad, nil, to); err != nil {
			r.log.Debug("router advertisements: send", "to", from.String(), "error", err)
			continue
		}
		r.Answered.Add(1)
	}
}
