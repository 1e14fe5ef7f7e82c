// Package httpboot serves [deploy]http_root to iPXE: GET and HEAD of
// regular files inside the root only, with range requests, and reports
// fetches of a node's boot files.
package httpboot

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"strings"

	"github.com/ferrometal/ferro/internal/netboot/bootfs"
)

// Handler serves a boot root under Prefix ("/httpboot/").
type Handler struct {
	Root   *bootfs.Root
	Prefix string
	Events bootfs.Events
	Log    *slog.Logger
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
		http.NotFound(w, r)
		return
	}
	defer f.Close()
	sw := &statusWriter{ResponseWriter: w}
	http.ServeContent(sw, r, fi.Name(), fi.ModTime(), f)
	if r.Method != http.MethodGet || (sw.status != http.StatusOK && sw.status != http.StatusPartialContent) {
		return
	}
	if uuid, phase := h.Root.Classify(name); uuid != "" && h.Events != nil {
		h.Events.Record(context.WithoutCancel(r.Context()), uuid, phase,
			fmt.Sprintf("http %s to %s (%d bytes)", name, r.RemoteAddr, sw.bytes))
	}
}
