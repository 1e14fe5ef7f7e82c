package sql

import (
	"sync"
	"time"
	"unsafe"

	"github.com/ferrometal/ferro/internal/baremetal"
)

// The node list (ListNodes with KeepJSON) reads the same unchanged rows
// over and over. keptNodes keeps the nodes it decoded from them, keyed by
// the row's content: the body's text, the reservation and created_at, all
// read in the same query as ever. A row that differs in one byte is
// another key, so a write by any process — this one or another on the
// same PostgreSQL — is seen by the next list that reads the row; nothing
// is invalidated, stale entries only age out. A node found here is the
// same *baremetal.Node for every list that reads the row unchanged, with
// its Memo, where the API keeps the node's rendered views: such nodes are
// for rendering only (the store refuses to write one) and no reader
// changes them.
//
// The cache is bounded by an estimate of the memory it holds: per node
// nodeCacheCost times its body's length. Two generations: entries go into
// the current one; when it holds half the bound, it becomes the previous
// one and the previous one is dropped; a hit in the previous generation
// moves the entry to the current one. What was read in the last half of
// the bound is kept, whatever was read before is let go.
type keptNodes struct {
	mu        sync.Mutex
	cur, prev map[string]*keptNode
	used      int // the estimated bytes of cur
	half      int // half the bound, in estimated bytes
}

// keptNode is a node decoded from a row and the row's other columns.
type keptNode struct {
	reservation string
	reserved    bool
	createdAt   time.Time
	node        *baremetal.Node
}

// nodeCacheCost is what a cached node costs, in multiples of its body's
// length: its body (kept, as the node's strings point into it), the node
// decoded from it and a rendered view (about twice the body). Measured:
// 8.5 KB held per node of bench_test.go's nodeBody (1.45 KB) with one
// view; a second kind of request adds its view, about 2.2 times the body.
const nodeCacheCost = 6

// DefaultNodeCacheBytes bounds the node list's cache (WithNodeCache):
// 32 MiB is about 3,800 nodes of 1.45 KB, lists of 500 and 1,000 again
// and again; a site that pages through more, detailed, sizes it up.
const DefaultNodeCacheBytes = 32 << 20

// WithNodeCache bounds the memory the node list's cache of decoded nodes
// may hold, in bytes (estimated); 0 turns it off.
func WithNodeCache(bytes int) Option { return func(o *options) { o.nodeCacheBytes = max(bytes, 0) } }

func newKeptNodes(bound int) *keptNodes {
	if bound <= 0 {
		return nil
	}
	return &keptNodes{cur: map[string]*keptNode{}, half: bound / 2}
}

// get is the node decoded from r, if kept.
func (c *keptNodes) get(r *bodyRow) *baremetal.Node {
	key := unsafe.String(unsafe.SliceData(r.body), len(r.body))
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.cur[key]
	if !ok {
		if e, ok = c.prev[key]; !ok {
			return nil
		}
		if !e.matches(r) {
			return nil
		}
		delete(c.prev, key)
		c.insert(key, e)
	}
	if !e.matches(r) {
		return nil
	}
	return e.node
}

func (e *keptNode) matches(r *bodyRow) bool {
	return e.reserved == r.reservation.Valid && e.reservation == r.reservation.String && e.createdAt.Equal(r.createdAt)
}

// put keeps n, decoded from r.
func (c *keptNodes) put(r *bodyRow, n *baremetal.Node) {
	// The key must be memory nobody writes: the body a SQLite driver
	// returned as a string is, a driver's []byte was copied (textBytes).
	key := unsafe.String(unsafe.SliceData(r.body), len(r.body))
	e := &keptNode{reservation: r.reservation.String, reserved: r.reservation.Valid, createdAt: r.createdAt, node: n}
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, ok := c.cur[key]; ok {
		c.used -= nodeCacheCost * len(key)
	}
	delete(c.prev, key)
	c.insert(key, e)
}

// insert adds e to the current generation, starting a new one when it
// is full. Called with mu held.
func (c *keptNodes) insert(key string, e *keptNode) {
	cost := nodeCacheCost * len(key)
	if c.used+cost > c.half {
		c.prev, c.cur, c.used = c.cur, make(map[string]*keptNode, len(c.cur)), 0
	}
	c.cur[key] = e
	c.used += cost
}
