// Package ra answers IPv6 router solicitations on the netboot interface
// with a minimal router advertisement (no prefix, M=O=0, router lifetime
// 0): it tells iPXE at once that there is no IPv6 to configure, where it
// would otherwise wait about 16 seconds.
//
// An advertisement must come from the interface's link-local address,
// which a bridge gets only once a port is up. The responder therefore
// starts without one and follows the interface's addresses through
// netlink: it answers from the first usable (not tentative) link-local
// address as soon as the kernel reports it, says so once with an
// unsolicited advertisement, and stops answering if it goes away.
package ra

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"net"
	"net/netip"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mdlayher/ndp"
	"github.com/vishvananda/netlink"
	"github.com/vishvananda/netns"
	"golang.org/x/net/ipv6"
	"golang.org/x/sys/unix"
)

// allRouters is where router solicitations are sent.
var allRouters = netip.MustParseAddr("ff02::2")

var allNodes = netip.MustParseAddr("ff02::1")

// Responder is the router advertisement responder of one interface.
type Responder struct {
	log  *slog.Logger
	conn *ndp.Conn
	ifi  *net.Interface
	// ns is the network namespace Listen ran in: address subscriptions
	// and link lookups are made there, whichever thread Serve is on.
	ns netns.NsHandle
	nl *netlink.Handle

	mu sync.Mutex
	// lls are the interface's usable link-local addresses; src, the
	// smallest, is where advertisements come from (invalid: none yet).
	lls map[netip.Addr]bool
	src netip.Addr
	mac net.HardwareAddr
	// ready is closed when the responder first has an address (tests).
	ready     chan struct{}
	readyOnce sync.Once

	// Answered counts solicitations answered.
	Answered atomic.Uint64
}

// Listen opens the ICMPv6 socket on the interface and joins ff02::2. The
// interface need not have its link-local address yet. Call it in the
// interface's network namespace.
func Listen(ifname string, log *slog.Logger) (*Responder, error) {
	if log == nil {
		log = slog.Default()
	}
	ifi, err := net.InterfaceByName(ifname)
	if err != nil {
		return nil, fmt.Errorf("router advertisements: interface %s: %w", ifname, err)
	}
	ns, err := netns.Get()
	if err != nil {
		return nil, fmt.Errorf("router advertisements on %s: network namespace: %w", ifname, err)
	}
	nl, err := netlink.NewHandleAt(ns)
	if err != nil {
		ns.Close()
		return nil, fmt.Errorf("router advertisements on %s: netlink: %w", ifname, err)
	}
	r := &Responder{log: log, ifi: ifi, ns: ns, nl: nl, lls: map[netip.Addr]bool{}, mac: ifi.HardwareAddr,
		ready: make(chan struct{})}
	// Bound to the unspecified address: the link-local one may not exist
	// yet. Solicitations from other interfaces are dropped by index.
	c, _, err := ndp.Listen(ifi, ndp.Unspecified)
	if err == nil {
		r.conn = c
		err = r.setup()
	}
	if err != nil {
		r.close()
		return nil, fmt.Errorf("router advertisements on %s: %w", ifname, err)
	}
	return r, nil
}

func (r *Responder) setup() error {
	if err := r.conn.JoinGroup(allRouters); err != nil {
		return fmt.Errorf("join ff02::2: %w", err)
	}
	var f ipv6.ICMPFilter
	f.SetAll(true)
	f.Accept(ipv6.ICMPTypeRouterSolicitation)
	if err := r.conn.SetICMPFilter(&f); err != nil {
		return fmt.Errorf("ICMPv6 filter: %w", err)
	}
	return r.conn.SetControlMessage(ipv6.FlagInterface|ipv6.FlagHopLimit, true)
}

func (r *Responder) close() {
	if r.conn != nil {
		r.conn.Close()
	}
	r.nl.Close()
	r.ns.Close()
}

// Serve answers solicitations until ctx ends. Each solicitation gets at
// most one advertisement, so the work is bounded by what arrives.
func (r *Responder) Serve(ctx context.Context) error {
	defer r.close()
	var wg sync.WaitGroup
	defer wg.Wait()
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	wg.Go(func() { r.followAddresses(ctx) })
	go func() {
		<-ctx.Done()
		r.conn.Close()
	}()
	r.log.Info("router advertisement responder listening; it answers once the interface has a link-local address", "interface", r.ifi.Name)
	for {
		m, cm, from, err := r.conn.ReadFrom()
		if err != nil {
			if ctx.Err() != nil || errors.Is(err, net.ErrClosed) {
				return nil
			}
			// Malformed NDP messages are not fatal.
			r.log.Debug("router advertisements: read", "error", err)
			continue
		}
		// RFC 4861 6.1.1: a solicitation arrives with hop limit 255.
		if _, ok := m.(*ndp.RouterSolicitation); !ok || cm == nil || cm.IfIndex != r.ifi.Index || cm.HopLimit != ndp.HopLimit {
			continue
		}
		to := from
		if !to.IsLinkLocalUnicast() {
			to = allNodes // a solicitation from the unspecified address
		}
		if r.advertise(to) {
			r.Answered.Add(1)
		}
	}
}

// advertise sends one advertisement from the link-local address, if the
// interface has one, and reports whether it did.
func (r *Responder) advertise(to netip.Addr) bool {
	r.mu.Lock()
	src, mac := r.src, r.mac
	r.mu.Unlock()
	if !src.IsValid() {
		r.log.Debug("router advertisements: solicitation not answered: no link-local address yet", "interface", r.ifi.Name)
		return false
	}
	ad := &ndp.RouterAdvertisement{
		CurrentHopLimit: 64,
		RouterLifetime:  0, // not a default router
	}
	if len(mac) > 0 {
		ad.Options = []ndp.Option{&ndp.LinkLayerAddress{Direction: ndp.Source, Addr: mac}}
	}
	cm := &ipv6.ControlMessage{HopLimit: ndp.HopLimit, Src: src.WithZone("").AsSlice(), IfIndex: r.ifi.Index}
	r.conn.SetWriteDeadline(time.Now().Add(time.Second))
	if err := r.conn.WriteTo(ad, cm, to); err != nil {
		r.log.Debug("router advertisements: send", "to", to.String(), "error", err)
		return false
	}
	return true
}

// followAddresses keeps the link-local addresses up to date from the
// kernel's address events (a listing first), until ctx ends. Should the
// subscription fail (its socket overflowed), it subscribes again, which
// lists the addresses afresh.
func (r *Responder) followAddresses(ctx context.Context) {
	for ctx.Err() == nil {
		updates := make(chan netlink.AddrUpdate, 64)
		err := netlink.AddrSubscribeWithOptions(updates, ctx.Done(), netlink.AddrSubscribeOptions{
			Namespace: &r.ns, ListExisting: true,
			ErrorCallback: func(err error) {
				if ctx.Err() == nil { // else the socket was closed on purpose
					r.log.Debug("router advertisements: address events", "error", err)
				}
			},
		})
		if err != nil {
			r.log.Warn("router advertisements: cannot follow the interface's addresses", "interface", r.ifi.Name, "error", err)
			select {
			case <-ctx.Done():
			case <-time.After(5 * time.Second):
			}
			continue
		}
		r.mu.Lock()
		clear(r.lls) // the listing that follows says what there is
		r.mu.Unlock()
		for u := range updates {
			r.addressChanged(u)
		}
	}
}

// addressChanged applies one address event.
func (r *Responder) addressChanged(u netlink.AddrUpdate) {
	a, ok := netip.AddrFromSlice(u.LinkAddress.IP)
	if !ok || u.LinkIndex != r.ifi.Index || !a.Is6() || !a.IsLinkLocalUnicast() {
		return
	}
	usable := u.NewAddr && u.Flags&(unix.IFA_F_TENTATIVE|unix.IFA_F_DADFAILED) == 0
	r.mu.Lock()
	was := r.src
	if usable {
		r.lls[a] = true
	} else {
		delete(r.lls, a)
	}
	r.src = netip.Addr{}
	if len(r.lls) > 0 {
		r.src = slices.MinFunc(slices.Collect(maps.Keys(r.lls)), netip.Addr.Compare)
	}
	now := r.src
	r.mu.Unlock()
	switch {
	case now == was:
	case now.IsValid():
		// A bridge takes its MAC from its ports: read it again.
		if l, err := r.nl.LinkByIndex(r.ifi.Index); err == nil && len(l.Attrs().HardwareAddr) > 0 {
			r.mu.Lock()
			r.mac = l.Attrs().HardwareAddr
			r.mu.Unlock()
		}
		r.log.Info("router advertisement responder started", "interface", r.ifi.Name, "address", now.String())
		r.readyOnce.Do(func() { close(r.ready) })
		// Whoever solicited before the address existed hears it now.
		r.advertise(allNodes)
	default:
		r.log.Info("router advertisements: the interface's link-local address went away; waiting", "interface", r.ifi.Name)
	}
}

// Ready is closed once the responder has a link-local address to answer from.
func (r *Responder) Ready() <-chan struct{} { return r.ready }
