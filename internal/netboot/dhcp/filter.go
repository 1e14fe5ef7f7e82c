package dhcp

import (
	"context"
	"fmt"
	"net"
	"time"

	"github.com/ferrometal/ferro/internal/baremetal"
)

// DiscoveryLeases stands for the holder of the MACs no port has, answered
// while discovery is on: they share one node's lease bound
// (MaxLeasesPerNode), so a flood of made-up MACs cannot take the range.
const DiscoveryLeases = "discovery"

// Answers is the PXE filter of the built-in DHCP: who is answered. A MAC
// that is a port of node n is answered while n boots a ramdisk now
// (Active: a managed inspection, or any node in inspect wait — the
// unmanaged path); a MAC no port has (n nil, isPort false) only while
// discovery is on ([auto_discovery]enabled), so that an unknown machine
// boots into the ramdisk whose report enrolls it. A port of a node that
// does not boot now is never answered.
func Answers(n *baremetal.Node, isPort, discovery bool) bool {
	if !isPort {
		return discovery
	}
	return Active(n)
}

// discoveryLease is an address given to a MAC no port has.
type discoveryLease struct {
	ip      uint32
	expires time.Time
}

// discoveryLease returns the address of a MAC no port has (discovery).
// Such leases live in memory only, since the store's belong to nodes; at
// most MaxLeasesPerNode at once, the one renewed longest ago moving to a
// new MAC, so that made-up MACs cannot take the range. Called with
// leaseMu held.
func (s *Server) discoveryLease(ctx context.Context, mac string, now, exp time.Time) (net.IP, error) {
	if s.disco == nil {
		s.disco = map[string]discoveryLease{}
	}
	if l, ok := s.disco[mac]; ok {
		l.expires = exp
		s.disco[mac] = l
		return numIP(l.ip), nil
	}
	live := 0
	oldest := ""
	for m, l := range s.disco {
		if l.expires.Before(now) {
			delete(s.disco, m)
			continue
		}
		live++
		if oldest == "" || l.expires.Before(s.disco[oldest].expires) {
			oldest = m
		}
	}
	if live >= s.o.MaxLeasesPerNode {
		l := s.disco[oldest]
		delete(s.disco, oldest)
		s.disco[mac] = discoveryLease{ip: l.ip, expires: exp}
		return numIP(l.ip), nil
	}
	all, err := s.o.Store.ListLeases(ctx)
	if err != nil {
		return nil, fmt.Errorf("list leases: %w", err)
	}
	taken := s.discoveryIPs()
	for _, l := range all {
		if ip := net.ParseIP(l.IP).To4(); ip != nil && l.ExpiresAt.After(now) {
			taken[ipNum(ip)] = true
		}
	}
	taken[ipNum(s.o.Params.ServerIP)] = true
	if r := s.o.Params.Router.To4(); r != nil {
		taken[ipNum(r)] = true
	}
	for i := ipNum(s.o.RangeStart); i <= ipNum(s.o.RangeEnd); i++ {
		if !taken[i] {
			s.disco[mac] = discoveryLease{ip: i, expires: exp}
			return numIP(i), nil
		}
	}
	return nil, fmt.Errorf("address range %v-%v is full", s.o.RangeStart, s.o.RangeEnd)
}

// discoveryIPs are the addresses discovery holds, which node leases must
// not take. Called with leaseMu held.
func (s *Server) discoveryIPs() map[uint32]bool {
	out := make(map[uint32]bool, len(s.disco))
	for _, l := range s.disco {
		out[l.ip] = true
	}
	return out
}
