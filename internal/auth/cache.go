package auth

import (
	"sync"
	"time"
)

// ttlCache is a bounded map from a 32-byte hash to a value that expires.
// When full, expired entries are dropped first, then an arbitrary one:
// the cache only saves work, so losing an entry costs one more check.
type ttlCache[V any] struct {
	mu   sync.Mutex
	max  int
	now  func() time.Time
	data map[[32]byte]ttlEntry[V]
}

type ttlEntry[V any] struct {
	v   V
	exp time.Time
}

func newTTLCache[V any](max int, now func() time.Time) *ttlCache[V] {
	return &ttlCache[V]{max: max, now: now, data: make(map[[32]byte]ttlEntry[V])}
}

func (c *ttlCache[V]) get(k [32]byte) (V, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.data[k]
	if !ok || !c.now().Before(e.exp) {
		if ok {
			delete(c.data, k)
		}
		var zero V
		return zero, false
	}
	return e.v, true
}

// put stores v for ttl; a ttl of zero or less stores nothing.
func (c *ttlCache[V]) put(k [32]byte, v V, ttl time.Duration) {
	if ttl <= 0 || c.max <= 0 {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	now := c.now()
	if _, ok := c.data[k]; !ok && len(c.data) >= c.max {
		for kk, e := range c.data {
			if !now.Before(e.exp) {
				delete(c.data, kk)
			}
		}
		for kk := range c.data {
			if len(c.data) < c.max {
				break
			}
			delete(c.data, kk)
		}
	}
	c.data[k] = ttlEntry[V]{v: v, exp: now.Add(ttl)}
}

func (c *ttlCache[V]) clear() {
	c.mu.Lock()
	defer c.mu.Unlock()
	clear(c.data)
}

func (c *ttlCache[V]) len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.data)
}
