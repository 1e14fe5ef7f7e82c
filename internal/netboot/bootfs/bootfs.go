// Package bootfs is what the built-in TFTP and HTTP boot servers share: a
// read-only view of a boot root that no request name can leave, and the
// mapping from a served file to the node and inspection phase it shows.
package bootfs

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"net/netip"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"strings"
)

// Phases a netboot service reports to its Events.
const (
	PhaseDHCPOffer  = "dhcp_offer_sent"
	PhaseBootScript = "boot_script_fetched"
	PhaseKernel     = "kernel_fetched"
	PhaseInitramfs  = "initramfs_fetched"
)

// Events receives per-node netboot progress; netboot.Events is the same
// interface.
type Events interface {
	Record(ctx context.Context, nodeUUID, phase, detail string)
}

// ErrRefused is a request name that is not a plain relative path inside
// the root.
var ErrRefused = errors.New("path refused")

// Clean turns a request name into a slash-separated path relative to the
// root. A leading slash is dropped (PXE ROMs send both forms); "..",
// backslashes, NUL and control characters are refused, not resolved.
func Clean(name string) (string, error) {
	if name == "" || len(name) > 1024 {
		return "", fmt.Errorf("%w: empty or too long", ErrRefused)
	}
	for i := 0; i < len(name); i++ {
		if c := name[i]; c < ' ' || c == 0x7f || c == '\\' {
			return "", fmt.Errorf("%w: %q has a control character or backslash", ErrRefused, name)
		}
	}
	rel := strings.TrimLeft(name, "/")
	for _, elem := range strings.Split(rel, "/") {
		if elem == ".." {
			return "", fmt.Errorf("%w: %q has a .. element", ErrRefused, name)
		}
	}
	rel = path.Clean(rel)
	if rel == "." || !fs.ValidPath(rel) {
		return "", fmt.Errorf("%w: %q is not a file path", ErrRefused, name)
	}
	return rel, nil
}

// Root is a boot root opened for reading. Symbolic links are followed only
// while they stay inside the root (os.Root).
type Root struct {
	dir  string
	root *os.Root
}

// Open opens dir as a boot root.
func Open(dir string) (*Root, error) {
	r, err := os.OpenRoot(dir)
	if err != nil {
		return nil, fmt.Errorf("open boot root %s: %w", dir, err)
	}
	return &Root{dir: dir, root: r}, nil
}

// Close releases the root.
func (r *Root) Close() error { return r.root.Close() }

// Dir is the root's directory.
func (r *Root) Dir() string { return r.dir }

// OpenFile opens the regular file that a request names, with its size.
func (r *Root) OpenFile(name string) (*os.File, fs.FileInfo, error) {
	rel, err := Clean(name)
	if err != nil {
		return nil, nil, err
	}
	f, err := r.root.Open(rel)
	if err != nil {
		return nil, nil, err
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, nil, err
	}
	if !fi.Mode().IsRegular() {
		f.Close()
		return nil, nil, fmt.Errorf("%w: %s is not a regular file", ErrRefused, rel)
	}
	return f, fi, nil
}

var uuidRE = regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$`)

// Classify says which node and phase fetching name shows, as the pxe and
// ipxe boot interfaces lay files out (internal/driver/pxe): <uuid>/config
// and pxelinux.cfg/<mac> (a link to it) are the boot script,
// <uuid>/deploy_kernel the kernel, <uuid>/deploy_ramdisk the initramfs.
// Other files (boot loaders, boot.ipxe) belong to no node: "" "".
func (r *Root) Classify(name string) (nodeUUID, phase string) {
	rel, err := Clean(name)
	if err != nil {
		return "", ""
	}
	dir, file := path.Split(rel)
	dir = strings.TrimSuffix(dir, "/")
	if dir == "pxelinux.cfg" {
		target, err := r.root.Readlink(rel)
		if err != nil {
			return "", ""
		}
		target = filepath.ToSlash(target)
		tdir, tfile := path.Split(path.Clean(path.Join("pxelinux.cfg", target)))
		if tfile != "config" {
			return "", ""
		}
		dir, file = strings.TrimSuffix(tdir, "/"), tfile
	}
	if !uuidRE.MatchString(dir) {
		return "", ""
	}
	switch file {
	case "config":
		return dir, PhaseBootScript
	case "deploy_kernel":
		return dir, PhaseKernel
	case "deploy_ramdisk":
		return dir, PhaseInitramfs
	}
	return "", ""
}

// Access decides whether a client address may read a node's own boot
// files: those Owner names a node for, which may hold its per-inspection
// token. The built-in DHCP server implements it from its leases.
type Access interface {
	BootFilesAllowed(ctx context.Context, nodeUUID string, client netip.Addr) (bool, error)
}

// Owner is the node whose own file name is: anything in <uuid>/, also
// when reached through symbolic links (pxelinux.cfg/01-<mac> links to
// ../<uuid>/config). Shared files (boot loaders, boot.ipxe,
// master_images/, vmedia/) have none: "".
func (r *Root) Owner(name string) string {
	rel, err := Clean(name)
	if err != nil {
		return ""
	}
	rel = r.resolve(rel)
	dir, _, ok := strings.Cut(rel, "/")
	if !ok || !uuidRE.MatchString(dir) {
		return ""
	}
	return dir
}

// resolve follows the symbolic links in rel's components, 16 at most, and
// returns the path they lead to inside the root (or where it stopped: a
// link out of the root, a missing file).
func (r *Root) resolve(rel string) string {
	elems := strings.Split(rel, "/")
	for hops, i := 0, 0; i < len(elems) && hops < 16; i++ {
		prefix := path.Join(elems[:i+1]...)
		target, err := r.root.Readlink(prefix)
		if err != nil {
			continue // not a link (or missing): keep going
		}
		hops++
		target = filepath.ToSlash(target)
		if path.IsAbs(target) {
			return prefix
		}
		next := path.Clean(path.Join(path.Dir(prefix), target))
		if next == ".." || strings.HasPrefix(next, "../") {
			return prefix
		}
		elems = append(strings.Split(next, "/"), elems[i+1:]...)
		i = -1
	}
	return path.Join(elems...)
}
