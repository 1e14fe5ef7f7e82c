package auth

import (
	"testing"
	"time"
)

func TestTTLCache_ExpiresAndStaysBounded(t *testing.T) {
	now := time.Unix(1000, 0)
	c := newTTLCache[string](3, func() time.Time { return now })
	k := func(b byte) [32]byte { return [32]byte{b} }
	c.put(k(1), "a", time.Second)
	if v, ok := c.get(k(1)); !ok || v != "a" {
		t.Fatalf("get = %q %v", v, ok)
	}
	now = now.Add(time.Second)
	if _, ok := c.get(k(1)); ok {
		t.Fatal("entry outlived its ttl")
	}
	for i := range byte(10) {
		c.put(k(i), "x", time.Minute)
	}
	if n := c.len(); n > 3 {
		t.Fatalf("cache holds %d entries, bound 3", n)
	}
	c.put(k(99), "zero", 0)
	if _, ok := c.get(k(99)); ok {
		t.Fatal("a zero ttl was cached")
	}
}
