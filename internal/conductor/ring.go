package conductor

import (
	"context"
	"hash/fnv"
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

func (r *ring) set(hosts []string) {
	r.mu.Lock()
	r.hosts = hosts
	r.mu.Unlock()
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
	c.ring.set(hosts)
	return nil
}

// owns reports whether this conductor is responsible for a node's periodic
// work: the node is in this conductor's group and hashes to it.
func (c *Conductor) owns(nodeUUID, group string) bool {
	return group == c.o.Group && c.ring.owns(nodeUUID)
}
