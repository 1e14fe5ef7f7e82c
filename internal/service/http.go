package service

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
)

// HTTPServer is an http.Server on a listener bound at start-up (so that a
// busy port refused the start), as a part of a Group.
type HTTPServer struct {
	Server   *http.Server
	Listener net.Listener
}

// Run serves until ctx ends, then shuts the server down: it stops
// accepting, lets the requests in flight finish until DrainContext's
// deadline, then closes what is left. A failure to serve is returned.
func (h HTTPServer) Run(ctx context.Context) error {
	addr := h.Listener.Addr().String()
	served := make(chan error, 1)
	go func() { served <- h.Server.Serve(h.Listener) }()
	select {
	case err := <-served:
		if errors.Is(err, http.ErrServerClosed) {
			return nil
		}
		return fmt.Errorf("http server on %s: %w", addr, err)
	case <-ctx.Done():
	}
	dctx, cancel := DrainContext(ctx)
	defer cancel()
	err := h.Server.Shutdown(dctx)
	if err != nil {
		h.Server.Close()
		err = fmt.Errorf("stop http server %s: %w", addr, err)
	}
	<-served
	return err
}
