// Package freeport hands out TCP ports on 127.0.0.1 for servers a test or
// a bench starts. A port found by listening on :0 and closing is offered
// again by the kernel soon after (two calls in a row can get the same
// one), so this process never hands out the same port twice.
package freeport

import (
	"errors"
	"net"
	"sync"
)

var given = struct {
	mu    sync.Mutex
	ports map[int]bool
}{ports: map[int]bool{}}

// Next returns a port that was free a moment ago and that this process has
// not handed out before.
func Next() (int, error) {
	given.mu.Lock()
	defer given.mu.Unlock()
	for range 100 {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return 0, err
		}
		port := l.Addr().(*net.TCPAddr).Port
		l.Close()
		if !given.ports[port] {
			given.ports[port] = true
			return port, nil
		}
	}
	return 0, errors.New("every port offered was already handed out")
}
