package ramdisk

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"

	"github.com/ferrometal/ferro/internal/callback"
	"github.com/klauspost/compress/gzip"
	"github.com/u-root/u-root/pkg/cpio"
)

// InitramfsOptions says what goes into the initramfs.
type InitramfsOptions struct {
	// Agent is the ferro-agent binary, installed as /init.
	Agent string
	// Modules is the kernel's module tree; nil builds an initramfs
	// without modules (for a kernel with the drivers built in).
	Modules *Modules
	// ModuleNames are the modules to carry (with their dependencies);
	// nil means DefaultModules. Names the kernel lacks are an error.
	ModuleNames []string
}

// Manifest says what WriteInitramfs put in.
type Manifest struct {
	Modules []string // module files, in load order, relative to the root
	Bytes   int64    // compressed size
}

// WriteInitramfs writes a gzip'd newc cpio archive to w: /init (the agent),
// /dev/console and /dev/null (the kernel opens the console before /init
// runs, and devtmpfs is not mounted yet), the empty mount points, the
// modules and callback.ModuleList naming them in load order. Files are
// owned by root with a zero mtime, so the same inputs give the same bytes.
func WriteInitramfs(w io.Writer, o InitramfsOptions) (Manifest, error) {
	var man Manifest
	agent, err := os.ReadFile(o.Agent)
	if err != nil {
		return man, fmt.Errorf("read agent: %w", err)
	}
	var version string
	if o.Modules != nil {
		names := o.ModuleNames
		if names == nil {
			names = DefaultModules
		}
		files, err := o.Modules.Resolve(names)
		if err != nil {
			return man, fmt.Errorf("resolve modules: %w", err)
		}
		version = filepath.Base(o.Modules.Dir)
		for _, f := range files {
			man.Modules = append(man.Modules, path.Join("lib/modules", version, filepath.ToSlash(f)))
		}
	}

	cw := &countingWriter{w: w}
	zw, err := gzip.NewWriterLevel(cw, gzip.BestCompression)
	if err != nil {
		return man, fmt.Errorf("gzip: %w", err)
	}
	rw := cpio.Newc.Writer(zw)
	recs := []cpio.Record{
		cpio.Directory("dev", 0o755),
		cpio.CharDev("dev/console", 0o600, 5, 1),
		cpio.CharDev("dev/null", 0o666, 1, 3),
		cpio.Directory("proc", 0o555),
		cpio.Directory("sys", 0o555),
		cpio.Directory("run", 0o755),
		cpio.Directory("tmp", 0o1777),
		cpio.Directory("etc", 0o755),
		cpio.StaticFile("init", string(agent), 0o755),
	}
	dirs := map[string]bool{"dev": true, "proc": true, "sys": true, "run": true, "tmp": true, "etc": true}
	var list strings.Builder
	list.WriteString("# ferro ramdisk modules, in load order: path<TAB>dependencies<TAB>aliases\n")
	for _, m := range man.Modules {
		b, err := os.ReadFile(filepath.Join(o.Modules.Dir, strings.TrimPrefix(m, path.Join("lib/modules", version)+"/")))
		if err != nil {
			return man, fmt.Errorf("read module: %w", err)
		}
		recs = append(recs, parents(m, dirs)...)
		recs = append(recs, cpio.StaticFile(m, string(b), 0o644))
		name := moduleName(m)
		deps, err := o.Modules.dependsOf(name)
		if err != nil {
			return man, err
		}
		aliases, err := o.Modules.Aliases(name)
		if err != nil {
			return man, err
		}
		fmt.Fprintf(&list, "%s\t%s\t%s\n", m, strings.Join(deps, ","), strings.Join(aliases, " "))
	}
	recs = append(recs, parents(callback.ModuleList, dirs)...)
	recs = append(recs, cpio.StaticFile(callback.ModuleList, list.String(), 0o644))
	cpio.MakeAllReproducible(recs)
	if err := cpio.WriteRecords(rw, recs); err != nil {
		return man, fmt.Errorf("write cpio: %w", err)
	}
	if err := cpio.WriteTrailer(rw); err != nil {
		return man, fmt.Errorf("write cpio: %w", err)
	}
	if err := zw.Close(); err != nil {
		return man, fmt.Errorf("gzip: %w", err)
	}
	man.Bytes = cw.n
	return man, nil
}

// parents returns directory records for p's parents not yet written.
func parents(p string, done map[string]bool) []cpio.Record {
	var missing []string
	for d := path.Dir(p); d != "." && d != "/" && !done[d]; d = path.Dir(d) {
		missing = append(missing, d)
		done[d] = true
	}
	sort.Strings(missing) // a parent sorts before its children
	recs := make([]cpio.Record, 0, len(missing))
	for _, d := range missing {
		recs = append(recs, cpio.Directory(d, 0o755))
	}
	return recs
}

type countingWriter struct {
	w io.Writer
	n int64
}

func (c *countingWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n += int64(n)
	return n, err
}

// ReadInitramfs lists the paths in a gzip'd newc archive, for tests and
// `ferro ramdisk build`'s summary.
func ReadInitramfs(r io.Reader) (map[string]cpio.Record, error) {
	zr, err := gzip.NewReader(r)
	if err != nil {
		return nil, fmt.Errorf("gunzip: %w", err)
	}
	b, err := io.ReadAll(io.LimitReader(zr, 1<<30))
	if err != nil {
		return nil, fmt.Errorf("gunzip: %w", err)
	}
	recs, err := cpio.ReadAllRecords(cpio.Newc.Reader(bytes.NewReader(b)))
	if err != nil {
		return nil, fmt.Errorf("read cpio: %w", err)
	}
	out := make(map[string]cpio.Record, len(recs))
	for _, r := range recs {
		out[r.Name] = r
	}
	return out, nil
}
