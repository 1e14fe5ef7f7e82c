package tftp

import (
	"net/netip"
	"time"
)

// maxClients bounds the client addresses whose request rate is followed;
// past it the ones idle longest are forgotten (they start again with a
// full bucket, which costs at most one burst each).
const maxClients = 4096

// bucket is one client address's token bucket of requests.
type bucket struct {
	tokens float64
	last   time.Time
}

// rateLimiter allows each client address rate requests a second with
// bursts of burst. A hand-written token bucket keyed by address: the
// standard one (golang.org/x/time/rate) is a limiter per key anyway, and
// the table around it is what bounds memory here. Not safe for concurrent
// use: the server's read loop is its only caller.
type rateLimiter struct {
	rate, burst float64
	now         func() time.Time
	clients     map[netip.Addr]*bucket
}

func newRateLimiter(rate float64, burst int, now func() time.Time) *rateLimiter {
	return &rateLimiter{rate: rate, burst: float64(burst), now: now, clients: map[netip.Addr]*bucket{}}
}

// allow takes a token from addr's bucket and reports whether there was one.
func (l *rateLimiter) allow(addr netip.Addr) bool {
	now := l.now()
	b, ok := l.clients[addr]
	if !ok {
		if len(l.clients) >= maxClients {
			l.forget(now)
		}
		b = &bucket{tokens: l.burst, last: now}
		l.clients[addr] = b
	}
	b.tokens = min(l.burst, b.tokens+now.Sub(b.last).Seconds()*l.rate)
	b.last = now
	if b.tokens < 1 {
		return false
	}
	b.tokens--
	return true
}

// forget drops the buckets that are full again (their clients have been
// idle for a burst's worth of time), else the older half.
func (l *rateLimiter) forget(now time.Time) {
	full := time.Duration(l.burst / l.rate * float64(time.Second))
	for a, b := range l.clients {
		if now.Sub(b.last) >= full {
			delete(l.clients, a)
		}
	}
	if len(l.clients) < maxClients {
		return
	}
	var sum time.Duration
	for _, b := range l.clients {
		sum += now.Sub(b.last)
	}
	mean := sum / time.Duration(len(l.clients))
	for a, b := range l.clients {
		if now.Sub(b.last) >= mean {
			delete(l.clients, a)
		}
	}
}
