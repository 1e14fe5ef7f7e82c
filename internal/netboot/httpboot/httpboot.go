// Package httpboot serves [deploy]http_root to iPXE: GET and HEAD of
// regular files inside the root only, with range requests, a node's own
// files only to the addresses Access allows, and reports fetches of a
// node's boot files.
package httpboot

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"net/netip"
	"strings"
	"sync/atomic"

	"github.com/ferrometal/ferro/internal/netboot/bootfs"
)

// Handler serves a boot root under Prefix ("/httpboot/").
type Handler struct {
	Root   *bootfs.Root
	Prefix string
	Events bootfs.Events
	// Access decides whether a client may read a node's own files
	// (bootfs.Root.Owner); nil lets every client read them.
	Access bootfs.Access
	Log    *slog.Logger

	served, refused, bytes atomic.Uint64
}

// Stats count the files served (and their bytes) and the requests refused.
type Stats struct{ Served, Refused, Bytes uint64 }

// Stats returns the counts so far.
func (h *Handler) Stats() Stats {
	return Stats{Served: h.served.Load(), Refused: h.refused.Load(), Bytes: h.bytes.Load()}
}

type statusWriter struct {
	http.ResponseWriter
	status int
	bytes  int64
}

func (w *statusWriter) WriteHeader(code int) {
	w.status = code
	w.ResponseWriter.WriteHeader(code)
}

func (w *statusWriter) Write(b []byte) (int, error) {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	n, err := w.ResponseWriter.Write(b)
	w.bytes += int64(n)
	return n, err
}

func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		w.Header().Set("Allow", "GET, HEAD")
		http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
		return
	}
	name, ok := strings.CutPrefix(r.URL.Path, h.Prefix)
	if !ok {
		http.NotFound(w, r)
		return
	}
	log := h.Log
	if log == nil {
		log = slog.Default()
	}
	f, fi, err := h.Root.OpenFile(name)
	if err != nil {
		log.Info("http boot: request refused", "path", r.URL.Path, "remote", r.RemoteAddr, "error", err)
		h.refused.Add(1)
		http.NotFound(w, r)
		return
	}
	defer f.Close()
	if node := h.Root.Owner(name); node != "" && h.Access != nil {
		client, err := clientAddr(r.RemoteAddr)
		ok := false
		if err == nil {
			ok, err = h.Access.BootFilesAllowed(r.Context(), node, client)
		}
		if err != nil || !ok {
			log.Warn("http boot: a node's boot file refused to an address not leased to the node",
				"path", r.URL.Path, "remote", r.RemoteAddr, "node", node, "error", err)
			h.refused.Add(1)
			http.Error(w, "forbidden", http.StatusForbidden)
			return
		}
	}
	sw := &statusWriter{ResponseWriter: w}
	http.ServeContent(sw, r, fi.Name(), fi.ModTime(), f)
	if r.Method != http.MethodGet || (sw.status != http.StatusOK && sw.status != http.StatusPartialContent) {
		return
	}
	h.served.Add(1)
	h.bytes.Add(uint64(sw.bytes))
	if uuid, phase := h.Root.Classify(name); uuid != "" && h.Events != nil {
		h.Events.Record(context.WithoutCancel(r.Context()), uuid, phase,
			fmt.Sprintf("http %s to %s (%d bytes)", name, r.RemoteAddr, sw.bytes))
	}
}

// clientAddr is the address of a request's RemoteAddr ("ip:port").
func clientAddr(remote string) (netip.Addr, error) {
	ap, err := netip.ParseAddrPort(remote)
	if err != nil {
		return netip.Addr{}, fmt.Errorf("client address %q: %w", remote, err)
	}
	return ap.Addr().Unmap(), nil
}
