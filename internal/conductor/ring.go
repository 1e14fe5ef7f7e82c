package conductor

import (
	"context"
	"hash/fnv"
	"slices"
	"strings"
	"sync"
)

// ring spreads nodes over the live conductors by rendezvous (highest random
// weight) hashing: a node belongs to the conductor with the highest hash of
// (conductor, node). Adding or losing a conductor moves only that
// conductor's share of nodes. Periodic tasks act only on owned nodes.
type ring struct {
	self  string
	mu    sync.RWMutex
	hosts []string
}

func newRing(self string) *ring { return &ring{self: self, hosts: []string{self}} }

// set replaces the hosts and reports whether they changed (in any order).
func (r *ring) set(hosts []string) bool {
	hosts = slices.Sorted(slices.Values(hosts))
	r.mu.Lock()
	defer r.mu.Unlock()
	changed := !slices.Equal(r.hosts, hosts)
	r.hosts = hosts
	return changed
}

// owner returns the conductor that owns a node.
func (r *ring) owner(nodeUUID string) string {
	r.mu.RLock()
	defer r.mu.RUnlock()
	var best string
	var bestScore uint64
	for _, h := range r.hosts {
		f := fnv.New64a()
		f.Write([]byte(h))
		f.Write([]byte{0})
		f.Write([]byte(nodeUUID))
		if s := f.Sum64(); best == "" || s > bestScore {
			best, bestScore = h, s
		}
	}
	return best
}

func (r *ring) hostList() []string {
	r.mu.RLock()
	defer r.mu.RUnlock()
	return slices.Clone(r.hosts)
}

func (r *ring) owns(nodeUUID string) bool { return r.owner(nodeUUID) == r.self }

// refreshRing reloads the live conductors of this conductor's group.
func (c *Conductor) refreshRing(ctx context.Context) error {
	timeout := c.o.HeartbeatTimeout
	cs, err := c.store.ListConductors(ctx, c.now().Add(-timeout))
	if err != nil {
		return err
	}
	hosts := []string{c.host}
	for _, cd := range cs {
		if cd.Hostname != c.host && cd.Group == c.o.Group && !cd.APIOnly {
			hosts = append(hosts, cd.Hostname)
		}
	}
	if c.ring.set(hosts) {
		// Which conductor owns which nodes changes here: the log says
		// when each process saw a conductor come or go.
		c.log.Info("hash ring changed", "conductors", strings.Join(c.ring.hostList(), ","))
	}
	return nil
}

// owns reports whether this conductor is responsible for a node's periodic
// work: the node is in this conductor's group and hashes to it.
func (c *Conductor) owns(nodeUUID, group string) bool {
	return group == c.o.Group && c.ring.owns(nodeUUID)
}
