package dhcp

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

	"github.com/insomniacslk/dhcp/dhcpv4"
	"github.com/insomniacslk/dhcp/dhcpv4/server4"

	"github.com/ferrometal/ferro/internal/baremetal"
	"github.com/ferrometal/ferro/internal/states"
	"github.com/ferrometal/ferro/internal/store"
)

// Store is what the server reads and writes: nodes and their ports, and
// its leases.
type Store interface {
	GetNode(ctx context.Context, ident string) (*baremetal.Node, error)
	ListNodes(ctx context.Context, f store.NodeFilter) ([]*baremetal.Node, error)
	ListPorts(ctx context.Context, f store.PortFilter) ([]*baremetal.Port, error)
	SaveLease(ctx context.Context, l *store.Lease) error
	GetLease(ctx context.Context, mac string) (*store.Lease, error)
	ListLeases(ctx context.Context) ([]*store.Lease, error)
	DeleteLease(ctx context.Context, mac string) error
}

// Events receives per-node progress (netboot.Events).
type Events interface {
	Record(ctx context.Context, nodeUUID, phase, detail string)
}

// Options configure a Server.
type Options struct {
	// Interface is the network interface to serve on; its sockets are
	// bound to it (SO_BINDTODEVICE).
	Interface string
	Params    Params
	// RangeStart and RangeEnd bound the leased addresses (not in proxy mode).
	RangeStart, RangeEnd net.IP
	// Port is the DHCP server port, 67; in proxy mode ProxyPort (4011)
	// takes PXE boot server requests too.
	Port, ProxyPort int
	Store           Store
	Events          Events
	Log             *slog.Logger
	// Workers bounds the requests handled at once; Queue the requests
	// waiting for a worker. Past both, a request is dropped and counted.
	Workers, Queue int
	// Refresh is the longest the set of answered MACs is reused when an
	// unknown MAC asks; a storm of unknown MACs costs one rebuild per Refresh.
	Refresh time.Duration
	// SweepInterval is how often leases of nodes that left inspection are released.
	SweepInterval time.Duration
	// Timeout bounds the store calls and the send of one request.
	Timeout time.Duration
	// MaxLeasesPerNode bounds the addresses the MACs of one node hold at
	// once: past it, a new MAC of the node takes the address of the
	// node's lease renewed longest ago. So no node, however many ports it
	// is given (or MACs a host on the network claims of it), takes the
	// range from the others. Unknown MACs get no lease at all.
	MaxLeasesPerNode int
	// Discovery answers the MACs no port has ([auto_discovery]enabled;
	// see Answers), with the default boot script and leases held by
	// DiscoveryLeases.
	Discovery bool
}

// DefaultMaxLeasesPerNode is Options.MaxLeasesPerNode's default.
const DefaultMaxLeasesPerNode = 8

// Stats counts what the server did with the requests it received.
type Stats struct {
	Received, Ignored, Dropped, Malformed, Offers, Acks, Naks, Errors uint64
}

// Server is the DHCPv4 (or proxyDHCP) server.
type Server struct {
	o     Options
	conns []net.PacketConn
	work  chan packet

	received, ignored, dropped, malformed, offers, acks, naks, errs atomic.Uint64

	setMu     sync.Mutex
	set       map[string]string // MAC → node UUID of active nodes
	ports     map[string]bool   // with Discovery: every port's MAC
	setBuilt  time.Time
	leaseMu   sync.Mutex
	disco     map[string]discoveryLease // MAC → address, under leaseMu
	lastStats Stats
	// seen is, in proxy mode, the address each known MAC last asked the
	// site's DHCP for (DHCPREQUEST option 50, or ciaddr): MAC → address.
	// Only MACs of active nodes are kept, so it is bounded by their ports.
	seenMu sync.Mutex
	seen   map[string]seenAddr
}

type seenAddr struct {
	ip       netip.Addr
	nodeUUID string
	at       time.Time // when the MAC asked for ip
}

type packet struct {
	conn net.PacketConn
	peer *net.UDPAddr
	req  *dhcpv4.DHCPv4
}

// New checks the options and fills in defaults.
func New(o Options) (*Server, error) {
	if o.Store == nil {
		return nil, errors.New("dhcp: no store")
	}
	if o.Params.ServerIP.To4() == nil {
		return nil, fmt.Errorf("dhcp: server address %v is not IPv4 ([netboot]listen_address)", o.Params.ServerIP)
	}
	o.Params.ServerIP = o.Params.ServerIP.To4()
	if !o.Params.Proxy {
		s, e := o.RangeStart.To4(), o.RangeEnd.To4()
		if s == nil || e == nil || ipNum(s) > ipNum(e) || ipNum(e)-ipNum(s) > 1<<16 {
			return nil, fmt.Errorf("dhcp: address range %v-%v is not a range of at most 65536 IPv4 addresses ([netboot]range_start, range_end)", o.RangeStart, o.RangeEnd)
		}
		o.RangeStart, o.RangeEnd = s, e
		if o.Params.LeaseTime <= 0 {
			o.Params.LeaseTime = time.Hour
		}
	}
	if o.Port == 0 {
		o.Port = dhcpv4.ServerPort
	}
	if o.Params.Proxy && o.ProxyPort == 0 {
		o.ProxyPort = 4011
	}
	if o.Log == nil {
		o.Log = slog.Default()
	}
	if o.Workers <= 0 {
		o.Workers = 16
	}
	if o.Queue <= 0 {
		o.Queue = 256
	}
	if o.Refresh <= 0 {
		o.Refresh = time.Second
	}
	if o.SweepInterval <= 0 {
		o.SweepInterval = 5 * time.Second
	}
	if o.Timeout <= 0 {
		o.Timeout = 5 * time.Second
	}
	if o.MaxLeasesPerNode <= 0 {
		o.MaxLeasesPerNode = DefaultMaxLeasesPerNode
	}
	return &Server{o: o, work: make(chan packet, o.Queue), seen: map[string]seenAddr{}}, nil
}

// Listen opens the sockets. Call it on a thread in the network namespace
// of the interface; Serve may run anywhere.
func (s *Server) Listen() error {
	ports := []int{s.o.Port}
	if s.o.Params.Proxy {
		ports = append(ports, s.o.ProxyPort)
	}
	for _, port := range ports {
		addr := &net.UDPAddr{Port: port}
		if port == s.o.ProxyPort && s.o.Params.Proxy {
			addr.IP = s.o.Params.ServerIP // PXE boot server requests are unicast
		}
		c, err := server4.NewIPv4UDPConn(s.o.Interface, addr)
		if err != nil {
			s.closeConns()
			return fmt.Errorf("dhcp: listen on %s port %d: %w", s.o.Interface, port, err)
		}
		s.conns = append(s.conns, c)
	}
	return nil
}

func (s *Server) closeConns() {
	for _, c := range s.conns {
		c.Close()
	}
	s.conns = nil
}

// Run is Listen then Serve.
func (s *Server) Run(ctx context.Context) error {
	if err := s.Listen(); err != nil {
		return err
	}
	return s.Serve(ctx)
}

// Serve answers requests until ctx ends, then closes the sockets.
func (s *Server) Serve(ctx context.Context) error {
	if len(s.conns) == 0 {
		return errors.New("dhcp: Serve before Listen")
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var wg sync.WaitGroup
	for range s.o.Workers {
		wg.Go(func() {
			for p := range s.work {
				s.handle(ctx, p)
			}
		})
	}
	errc := make(chan error, len(s.conns))
	var readers sync.WaitGroup
	for _, c := range s.conns {
		readers.Go(func() { errc <- s.read(ctx, c) })
	}
	wg.Go(func() { s.sweepLoop(ctx) })
	s.o.Log.Info("dhcp server started", "interface", s.o.Interface, "server_ip", s.o.Params.ServerIP.String(),
		"proxy", s.o.Params.Proxy)
	var err error
	select {
	case <-ctx.Done():
	case err = <-errc:
	}
	cancel()
	s.closeConns()
	readers.Wait()
	close(s.work)
	wg.Wait()
	s.logStats()
	return err
}

// read receives packets on c. The filter runs here, before any parsing
// beyond the fixed header: an unknown MAC costs a map lookup.
func (s *Server) read(ctx context.Context, c net.PacketConn) error {
	buf := make([]byte, 1500)
	for {
		n, peer, err := c.ReadFrom(buf)
		if err != nil {
			if ctx.Err() != nil {
				return nil
			}
			return fmt.Errorf("dhcp: read: %w", err)
		}
		s.received.Add(1)
		// op BOOTREQUEST, htype Ethernet, hlen 6, and the magic cookie.
		if n < 240 || buf[0] != 1 || buf[1] != 1 || buf[2] != 6 || binary.BigEndian.Uint32(buf[236:240]) != 0x63825363 {
			s.malformed.Add(1)
			continue
		}
		mac := net.HardwareAddr(buf[28:34]).String()
		if _, ok := s.known(ctx, mac); !ok {
			s.ignored.Add(1)
			continue
		}
		req, err := dhcpv4.FromBytes(buf[:n])
		if err != nil {
			s.malformed.Add(1)
			continue
		}
		up, _ := peer.(*net.UDPAddr)
		select {
		case s.work <- packet{conn: c, peer: up, req: req}:
		default:
			s.dropped.Add(1)
		}
	}
}

// known reports whether mac is answered (Answers) and the UUID of its
// node ("" for a MAC no port has, answered for discovery), rebuilding
// the sets when they are older than Refresh.
func (s *Server) known(ctx context.Context, mac string) (string, bool) {
	s.setMu.Lock()
	uuid, ok := s.set[mac]
	isPort := ok || s.ports[mac]
	stale := time.Since(s.setBuilt) >= s.o.Refresh
	s.setMu.Unlock()
	if !ok && stale {
		set, err := s.rebuild(ctx)
		if err != nil {
			s.o.Log.Warn("dhcp: list the nodes being inspected", "error", err)
			return "", false
		}
		s.setMu.Lock()
		uuid, ok = set[mac]
		isPort = ok || s.ports[mac]
		s.setMu.Unlock()
	}
	// The set holds the MACs Answers admits (rebuild); the node is read
	// again, and Answers asked again, when the request is handled.
	return uuid, ok || Answers(nil, isPort, s.o.Discovery)
}

// rebuild lists the ports of active nodes.
func (s *Server) rebuild(ctx context.Context) (map[string]string, error) {
	ctx, cancel := context.WithTimeout(ctx, s.o.Timeout)
	defer cancel()
	nodes, err := s.o.Store.ListNodes(ctx, store.NodeFilter{ProvisionState: []string{states.Inspecting, states.InspectWait}})
	if err != nil {
		return nil, err
	}
	set := map[string]string{}
	var ports map[string]bool
	if s.o.Discovery {
		all, err := s.o.Store.ListPorts(ctx, store.PortFilter{})
		if err != nil {
			return nil, err
		}
		ports = make(map[string]bool, len(all))
		for _, p := range all {
			if hw, err := net.ParseMAC(p.Address); err == nil {
				ports[hw.String()] = true
			}
		}
	}
	for _, n := range nodes {
		if !Answers(n, true, s.o.Discovery) {
			continue
		}
		ports, err := s.o.Store.ListPorts(ctx, store.PortFilter{NodeUUID: n.UUID})
		if err != nil {
			return nil, err
		}
		for _, p := range ports {
			if hw, err := net.ParseMAC(p.Address); err == nil {
				set[hw.String()] = n.UUID
			}
		}
	}
	s.setMu.Lock()
	s.set, s.ports, s.setBuilt = set, ports, time.Now()
	s.setMu.Unlock()
	s.seenMu.Lock()
	for mac, a := range s.seen {
		if set[mac] != a.nodeUUID {
			delete(s.seen, mac)
		}
	}
	s.seenMu.Unlock()
	return set, nil
}

// learn remembers, in proxy mode, the address a node's MAC asks the
// site's DHCP for (a DHCPREQUEST's requested address, option 50) or
// already has (ciaddr, as in a renewal or a request to port 4011).
func (s *Server) learn(mac, nodeUUID string, req *dhcpv4.DHCPv4) {
	ip := req.ClientIPAddr.To4()
	if req.MessageType() == dhcpv4.MessageTypeRequest {
		if r := req.RequestedIPAddress().To4(); r != nil && !r.IsUnspecified() {
			ip = r
		}
	}
	if ip == nil || ip.IsUnspecified() {
		return
	}
	a, _ := netip.AddrFromSlice(ip)
	s.seenMu.Lock()
	s.seen[mac] = seenAddr{ip: a, nodeUUID: nodeUUID, at: time.Now()}
	s.seenMu.Unlock()
}

// BootFilesAllowed reports whether client may read the node's own boot
// files (bootfs.Access): only while the node is being inspected (Active:
// inspect wait, or inspecting once ferro powered it on for a managed
// inspection), and only to an address leased to one of the node's MACs —
// in proxy mode, one of them asked the site's DHCP for — during this
// inspection: a lease (or request) older than the inspection's start, or
// expired, does not count. The boot config holds the inspection's token,
// so neither a node that is not waiting for its ramdisk nor a client of a
// previous inspection gets it.
func (s *Server) BootFilesAllowed(ctx context.Context, nodeUUID string, client netip.Addr) (bool, error) {
	client = client.Unmap()
	ctx, cancel := context.WithTimeout(ctx, s.o.Timeout)
	defer cancel()
	n, err := s.o.Store.GetNode(ctx, nodeUUID)
	if errors.Is(err, store.ErrNotFound) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("read node: %w", err)
	}
	if !Active(n) {
		s.o.Log.Info("boot files refused: the node is not being inspected", "node", nodeUUID,
			"client", client, "provision_state", n.ProvisionState)
		return false, nil
	}
	var since time.Time // the inspection's start
	if n.InspectionStartedAt != nil {
		since = *n.InspectionStartedAt
	}
	if s.o.Params.Proxy {
		s.seenMu.Lock()
		defer s.seenMu.Unlock()
		for _, a := range s.seen {
			if a.nodeUUID == nodeUUID && a.ip == client && !a.at.Before(since) {
				return true, nil
			}
		}
		return false, nil
	}
	all, err := s.o.Store.ListLeases(ctx)
	if err != nil {
		return false, fmt.Errorf("list leases: %w", err)
	}
	now := time.Now()
	for _, l := range all {
		if l.NodeUUID != nodeUUID || l.IP != client.String() {
			continue
		}
		if l.ExpiresAt.Before(now) || l.UpdatedAt.Before(since) {
			s.o.Log.Info("boot files refused: the client's lease is not of this inspection", "node", nodeUUID,
				"client", client, "lease_updated_at", l.UpdatedAt, "inspection_started_at", since, "lease_expires_at", l.ExpiresAt)
			return false, nil
		}
		return true, nil
	}
	return false, nil
}

// handle answers one request of a known MAC, reading the node afresh.
func (s *Server) handle(ctx context.Context, p packet) {
	ctx, cancel := context.WithTimeout(ctx, s.o.Timeout)
	defer cancel()
	mac := p.req.ClientHWAddr.String()
	uuid, answered := s.known(ctx, mac)
	if !answered {
		s.ignored.Add(1)
		return
	}
	log := s.o.Log.With("node", uuid, "mac", mac, "xid", p.req.TransactionID.String())
	// A MAC no port has (discovery) boots the default script as an
	// unknown machine: no node, leases held by DiscoveryLeases.
	var n *baremetal.Node
	holder := DiscoveryLeases
	if uuid != "" {
		var err error
		n, err = s.o.Store.GetNode(ctx, uuid)
		if err != nil || !Answers(n, true, s.o.Discovery) {
			s.ignored.Add(1)
			return
		}
		holder = n.UUID
		if s.o.Params.Proxy {
			s.learn(mac, n.UUID, p.req)
		}
	}
	var yiaddr net.IP
	var err error
	if !s.o.Params.Proxy && needsAddress(p.req.MessageType()) {
		if yiaddr, err = s.lease(ctx, mac, holder); err != nil {
			s.errs.Add(1)
			log.Error("dhcp: no address to lease", "error", err)
			return
		}
	}
	reply, err := Reply(p.req, n, yiaddr, s.o.Params)
	if err != nil {
		s.ignored.Add(1)
		log.Warn("dhcp: request not answered", "error", err)
		return
	}
	if reply == nil {
		return
	}
	dst := &net.UDPAddr{IP: net.IPv4bcast, Port: dhcpv4.ClientPort}
	switch {
	case !p.req.GatewayIPAddr.IsUnspecified():
		dst = &net.UDPAddr{IP: p.req.GatewayIPAddr, Port: dhcpv4.ServerPort}
	case p.peer != nil && !p.peer.IP.IsUnspecified() && p.peer.Port != dhcpv4.ClientPort:
		dst = p.peer // a PXE client asking the boot server on 4011 from its own port
	case !p.req.ClientIPAddr.IsUnspecified() && reply.MessageType() != dhcpv4.MessageTypeNak:
		dst = &net.UDPAddr{IP: p.req.ClientIPAddr, Port: dhcpv4.ClientPort}
	}
	p.conn.SetWriteDeadline(time.Now().Add(s.o.Timeout))
	if _, err := p.conn.WriteTo(reply.ToBytes(), dst); err != nil {
		s.errs.Add(1)
		log.Warn("dhcp: send reply", "error", err)
		return
	}
	file := reply.BootFileNameOption()
	switch reply.MessageType() {
	case dhcpv4.MessageTypeOffer:
		s.offers.Add(1)
		if file != "" && s.o.Events != nil && n != nil {
			s.o.Events.Record(ctx, n.UUID, PhaseDHCPOffer, fmt.Sprintf("offered %s to %s, boot file %s", addrOrProxy(yiaddr), mac, file))
		}
	case dhcpv4.MessageTypeAck:
		s.acks.Add(1)
	case dhcpv4.MessageTypeNak:
		s.naks.Add(1)
	}
	log.Debug("dhcp: replied", "type", reply.MessageType().String(), "yiaddr", addrOrProxy(yiaddr), "file", file)
}

// PhaseDHCPOffer is bootfs.PhaseDHCPOffer.
const PhaseDHCPOffer = "dhcp_offer_sent"

func addrOrProxy(ip net.IP) string {
	if ip == nil {
		return "proxyDHCP options"
	}
	return ip.String()
}

func needsAddress(t dhcpv4.MessageType) bool {
	return t == dhcpv4.MessageTypeDiscover || t == dhcpv4.MessageTypeRequest
}

// lease returns the MAC's address, renewing its lease, or a free one.
func (s *Server) lease(ctx context.Context, mac, nodeUUID string) (net.IP, error) {
	s.leaseMu.Lock()
	defer s.leaseMu.Unlock()
	now := time.Now()
	exp := now.Add(s.o.Params.LeaseTime)
	if nodeUUID == DiscoveryLeases {
		return s.discoveryLease(ctx, mac, now, exp)
	}
	if l, err := s.o.Store.GetLease(ctx, mac); err == nil {
		if ip := net.ParseIP(l.IP).To4(); ip != nil && s.inRange(ip) {
			l.NodeUUID, l.ExpiresAt = nodeUUID, exp
			if err := s.o.Store.SaveLease(ctx, l); err != nil {
				return nil, fmt.Errorf("renew lease of %s: %w", mac, err)
			}
			return ip, nil
		}
	} else if !errors.Is(err, store.ErrNotFound) {
		return nil, fmt.Errorf("read lease of %s: %w", mac, err)
	}
	all, err := s.o.Store.ListLeases(ctx)
	if err != nil {
		return nil, fmt.Errorf("list leases: %w", err)
	}
	taken := make(map[uint32]*store.Lease, len(all))
	var own []*store.Lease // the node's live leases
	for _, l := range all {
		if ip := net.ParseIP(l.IP).To4(); ip != nil {
			taken[ipNum(ip)] = l
			if l.NodeUUID == nodeUUID && l.ExpiresAt.After(now) && s.inRange(ip) {
				own = append(own, l)
			}
		}
	}
	if len(own) >= s.o.MaxLeasesPerNode {
		// The node's quota is full: its lease renewed longest ago moves to
		// this MAC. The other nodes' leases are never touched.
		old := slices.MinFunc(own, func(a, b *store.Lease) int { return a.ExpiresAt.Compare(b.ExpiresAt) })
		if err := s.o.Store.DeleteLease(ctx, old.MAC); err != nil && !errors.Is(err, store.ErrNotFound) {
			return nil, fmt.Errorf("release lease of %s: %w", old.MAC, err)
		}
		s.o.Log.Info("dhcp: node at its lease bound; its oldest lease moves to a new MAC", "node", nodeUUID,
			"from", old.MAC, "to", mac, "ip", old.IP, "max_leases_per_node", s.o.MaxLeasesPerNode)
		if err := s.o.Store.SaveLease(ctx, &store.Lease{MAC: mac, IP: old.IP, NodeUUID: nodeUUID, ExpiresAt: exp}); err != nil {
			return nil, fmt.Errorf("save lease of %s: %w", mac, err)
		}
		return net.ParseIP(old.IP).To4(), nil
	}
	reserved := s.discoveryIPs()
	reserved[ipNum(s.o.Params.ServerIP)] = true
	if r := s.o.Params.Router.To4(); r != nil {
		reserved[ipNum(r)] = true
	}
	for i := ipNum(s.o.RangeStart); i <= ipNum(s.o.RangeEnd); i++ {
		if reserved[i] {
			continue
		}
		if l, ok := taken[i]; ok {
			if l.ExpiresAt.After(now) {
				continue
			}
			if err := s.o.Store.DeleteLease(ctx, l.MAC); err != nil && !errors.Is(err, store.ErrNotFound) {
				continue
			}
		}
		ip := numIP(i)
		err := s.o.Store.SaveLease(ctx, &store.Lease{MAC: mac, IP: ip.String(), NodeUUID: nodeUUID, ExpiresAt: exp})
		if errors.Is(err, store.ErrConflict) {
			continue // another ferro process took it
		}
		if err != nil {
			return nil, fmt.Errorf("save lease of %s: %w", mac, err)
		}
		return ip, nil
	}
	return nil, fmt.Errorf("address range %v-%v is full", s.o.RangeStart, s.o.RangeEnd)
}

// Release deletes the leases of a node.
func (s *Server) Release(ctx context.Context, nodeUUID string) error {
	released, err := ReleaseNode(ctx, s.o.Store, nodeUUID)
	for _, l := range released {
		s.o.Log.Info("dhcp: lease released", "node", l.NodeUUID, "mac", l.MAC, "ip", l.IP)
	}
	return err
}

// LeaseStore is the part of the store that holds the leases.
type LeaseStore interface {
	ListLeases(ctx context.Context) ([]*store.Lease, error)
	DeleteLease(ctx context.Context, mac string) error
}

// ReleaseNode deletes the leases of a node from st and returns those it
// deleted. The leases live only in the store, so any process sharing it
// (the conductor tearing an inspection down) can release them at once;
// a running Server's sweep does the same later for every node that left
// inspection.
func ReleaseNode(ctx context.Context, st LeaseStore, nodeUUID string) ([]*store.Lease, error) {
	all, err := st.ListLeases(ctx)
	if err != nil {
		return nil, fmt.Errorf("release leases of node %s: %w", nodeUUID, err)
	}
	var released []*store.Lease
	var errs []error
	for _, l := range all {
		if l.NodeUUID != nodeUUID {
			continue
		}
		if err := st.DeleteLease(ctx, l.MAC); err != nil && !errors.Is(err, store.ErrNotFound) {
			errs = append(errs, fmt.Errorf("release lease of %s: %w", l.MAC, err))
			continue
		}
		released = append(released, l)
	}
	return released, errors.Join(errs...)
}

// sweepLoop releases the leases of nodes that left inspection, and logs
// the counters when they changed.
func (s *Server) sweepLoop(ctx context.Context) {
	t := time.NewTicker(s.o.SweepInterval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		if err := s.Sweep(ctx); err != nil {
			s.o.Log.Warn("dhcp: sweep leases", "error", err)
		}
		s.logStats()
	}
}

// Sweep releases every lease whose node is no longer active.
func (s *Server) Sweep(ctx context.Context) error {
	set, err := s.rebuild(ctx)
	if err != nil {
		return err
	}
	active := map[string]bool{}
	for _, uuid := range set {
		active[uuid] = true
	}
	ctx, cancel := context.WithTimeout(ctx, s.o.Timeout)
	defer cancel()
	all, err := s.o.Store.ListLeases(ctx)
	if err != nil {
		return err
	}
	var errs []error
	for _, l := range all {
		if active[l.NodeUUID] {
			continue
		}
		if err := s.o.Store.DeleteLease(ctx, l.MAC); err != nil && !errors.Is(err, store.ErrNotFound) {
			errs = append(errs, err)
			continue
		}
		s.o.Log.Info("dhcp: lease released", "node", l.NodeUUID, "mac", l.MAC, "ip", l.IP)
	}
	return errors.Join(errs...)
}

// Stats returns the counters.
func (s *Server) Stats() Stats {
	return Stats{Received: s.received.Load(), Ignored: s.ignored.Load(), Dropped: s.dropped.Load(),
		Malformed: s.malformed.Load(), Offers: s.offers.Load(), Acks: s.acks.Load(), Naks: s.naks.Load(), Errors: s.errs.Load()}
}

func (s *Server) logStats() {
	st := s.Stats()
	if st == s.lastStats {
		return
	}
	s.lastStats = st
	s.o.Log.Info("dhcp: requests", "received", st.Received, "ignored", st.Ignored, "dropped", st.Dropped,
		"malformed", st.Malformed, "offers", st.Offers, "acks", st.Acks, "naks", st.Naks, "errors", st.Errors)
}

func (s *Server) inRange(ip net.IP) bool {
	n := ipNum(ip)
	return n >= ipNum(s.o.RangeStart) && n <= ipNum(s.o.RangeEnd)
}

func ipNum(ip net.IP) uint32 { return binary.BigEndian.Uint32(ip.To4()) }

func numIP(n uint32) net.IP {
	ip := make(net.IP, 4)
	binary.BigEndian.PutUint32(ip, n)
	return ip
}
