package deployimage

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/ferrometal/ferro/internal/driver"
	"github.com/ferrometal/ferro/internal/localfile"
)

// fetch puts the deploy image img at dest: a file:// image is hard-linked
// (copied across file systems); an http(s):// one goes through the master
// cache under <root>/master_images, so that many nodes share one download.
func (f *Fetcher) fetch(ctx context.Context, log *slog.Logger, img image, root, dest string) error {
	if img.path != "" {
		src, file, err := f.openLocal(img)
		if err != nil {
			return err
		}
		defer file.Close()
		return linkOrCopy(src, file, dest)
	}
	master, err := f.download(ctx, log, img, filepath.Join(root, MasterDir))
	if err != nil {
		return err
	}
	mf, err := os.Open(master)
	if err != nil {
		return err
	}
	defer mf.Close()
	return linkOrCopy(master, mf, dest)
}

// errLocalImage is every failure of a file:// image: it does not say
// whether the file is missing, unreadable, not a regular file, empty, too
// large or reached through a symlink leading out of the allowed
// directories, so that the node's owner learns nothing else about the
// conductor's files.
func (f *Fetcher) errLocalImage(img image) error {
	return fmt.Errorf("%w: %s is not a readable, non-empty regular file of at most %d bytes under [conductor]file_url_allowed_paths",
		driver.ErrInvalidParameter, img.display(), f.o.MaxSize)
}

// openLocal follows symlinks in a file:// image's path, checks the file it
// reaches again (the lexical check in validation cannot see a symlink
// inside an allowed directory that leads to /etc) and opens it: a regular
// file only, never a device or a FIFO, within MaxSize.
func (f *Fetcher) openLocal(img image) (string, *os.File, error) {
	src, err := filepath.EvalSymlinks(img.path)
	if err != nil {
		return "", nil, f.errLocalImage(img)
	}
	allowed := allowedDirs(f.o.AllowedPaths)
	for _, a := range allowed {
		// An allowed directory may itself be a symlink (/var/lib/ironic →
		// /srv/ironic): allow what it resolves to as well.
		if r, err := filepath.EvalSymlinks(a); err == nil && r != a {
			allowed = append(allowed, r)
		}
	}
	if filePathProblem(src, allowed) != "" {
		return "", nil, f.errLocalImage(img)
	}
	file, err := localfile.Open(src, f.o.MaxSize)
	if err != nil {
		return "", nil, f.errLocalImage(img)
	}
	if fi, err := file.Stat(); err != nil || fi.Size() == 0 {
		file.Close()
		return "", nil, f.errLocalImage(img)
	}
	return src, file, nil
}

func (f *Fetcher) checkSize(n int64) error {
	switch {
	case n == 0:
		return errors.New("image is empty")
	case n > f.o.MaxSize:
		return fmt.Errorf("image is larger than %d bytes", f.o.MaxSize)
	}
	return nil
}

// linkOrCopy makes dest the same file as src, which is open as in: a hard
// link when possible (and when the link is still the file that was opened
// and checked, not one swapped in since), else a copy of in (another file
// system, or protected_hardlinks).
func linkOrCopy(src string, in *os.File, dest string) error {
	want, err := in.Stat()
	if err != nil {
		return err
	}
	if dfi, err := os.Stat(dest); err == nil && os.SameFile(want, dfi) {
		return nil // already linked by an earlier preparation
	}
	tmp := filepath.Join(filepath.Dir(dest), "."+filepath.Base(dest)+".tmp-"+rand.Text())
	if err := os.Link(src, tmp); err == nil {
		if lfi, err := os.Lstat(tmp); err != nil || !os.SameFile(want, lfi) {
			os.Remove(tmp)
			return fmt.Errorf("%w: %s changed while it was being linked", driver.ErrInvalidParameter, src)
		}
		err := os.Rename(tmp, dest)
		// rename(2) between two links to one file does nothing and
		// succeeds, leaving tmp behind.
		os.Remove(tmp)
		return err
	}
	if _, err := in.Seek(0, io.SeekStart); err != nil {
		return err
	}
	out, err := tempFile(dest)
	if err != nil {
		return err
	}
	return finishTemp(out, dest, func(w io.Writer) error {
		_, err := io.Copy(w, io.LimitReader(in, want.Size()))
		return err
	})
}

// maxRedirects bounds the redirects of one download.
const maxRedirects = 5

// redirectPolicy follows an image server's redirects on the image URL's own
// origin (scheme, host and port) and to the hosts listed, never from https
// to http.
func redirectPolicy(hosts []string) func(*http.Request, []*http.Request) error {
	return func(req *http.Request, via []*http.Request) error {
		if len(via) >= maxRedirects {
			return fmt.Errorf("stopped after %d redirects", maxRedirects)
		}
		first := via[0].URL
		to := req.URL
		switch {
		case first.Scheme == "https" && to.Scheme != "https":
			return fmt.Errorf("refused a redirect from https to %s", to.Redacted())
		case sameOrigin(first, to):
			return nil
		}
		for _, h := range hosts {
			if strings.EqualFold(h, to.Hostname()) || strings.EqualFold(h, to.Host) {
				return nil
			}
		}
		return fmt.Errorf("refused a redirect to %s: not the image server's origin nor in [conductor]image_redirect_hosts", to.Redacted())
	}
}

// sameOrigin compares scheme, host and port, the default ports made explicit.
func sameOrigin(a, b *url.URL) bool {
	port := func(u *url.URL) string {
		if p := u.Port(); p != "" {
			return p
		}
		if strings.EqualFold(u.Scheme, "https") {
			return "443"
		}
		return "80"
	}
	return strings.EqualFold(a.Scheme, b.Scheme) && strings.EqualFold(a.Hostname(), b.Hostname()) && port(a) == port(b)
}

// lockFor returns the lock that serialises downloads into one cache entry.
func (f *Fetcher) lockFor(key string) *sync.Mutex {
	f.mu.Lock()
	defer f.mu.Unlock()
	m, ok := f.fetching[key]
	if !ok {
		m = &sync.Mutex{}
		f.fetching[key] = m
	}
	return m
}

// download brings the master copy of an http(s) image up to date and
// returns its path. The copy is revalidated with If-Modified-Since on every
// call, so a new image on the server is picked up by the next preparation.
func (f *Fetcher) download(ctx context.Context, log *slog.Logger, img image, dir string) (string, error) {
	if err := mkdirs(dir); err != nil {
		return "", err
	}
	sum := sha256.Sum256([]byte(img.href))
	key := hex.EncodeToString(sum[:])
	master := filepath.Join(dir, key)
	lock := f.lockFor(key)
	lock.Lock()
	defer lock.Unlock()

	ctx, cancel := context.WithTimeout(ctx, f.o.DownloadTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, img.href, nil)
	if err != nil {
		return "", err
	}
	cached, statErr := os.Stat(master)
	if statErr == nil {
		req.Header.Set("If-Modified-Since", cached.ModTime().UTC().Format(http.TimeFormat))
	}
	resp, err := f.o.HTTPClient.Do(req)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	switch {
	case resp.StatusCode == http.StatusNotModified && statErr == nil:
		return master, nil
	case resp.StatusCode != http.StatusOK:
		return "", fmt.Errorf("download %s: HTTP %d %s", img.display(), resp.StatusCode, http.StatusText(resp.StatusCode))
	}
	if resp.ContentLength > f.o.MaxSize {
		return "", fmt.Errorf("download %s: %d bytes is larger than %d", img.display(), resp.ContentLength, f.o.MaxSize)
	}
	tmp, err := tempFile(master)
	if err != nil {
		return "", err
	}
	err = finishTemp(tmp, master, func(w io.Writer) error {
		n, err := io.Copy(w, io.LimitReader(resp.Body, f.o.MaxSize+1))
		if err != nil {
			return err
		}
		if resp.ContentLength >= 0 && n != resp.ContentLength {
			return fmt.Errorf("got %d bytes of %d", n, resp.ContentLength)
		}
		return f.checkSize(n)
	})
	if err != nil {
		return "", fmt.Errorf("download %s: %w", img.display(), err)
	}
	// Keep the server's date, so that the next If-Modified-Since asks
	// about the version we have.
	if lm, err := http.ParseTime(resp.Header.Get("Last-Modified")); err == nil {
		_ = os.Chtimes(master, time.Now(), lm)
	}
	log.InfoContext(ctx, "deploy image downloaded", "image", img.display())
	if limit := f.o.CacheSize; limit > 0 {
		if err := evict(dir, limit, key); err != nil {
			log.WarnContext(ctx, "cannot clean the image cache", "dir", dir, "error", err)
		}
	}
	return master, nil
}

// evict removes master images that no node links to any more, oldest first,
// until the cache holds at most limit bytes ([pxe]image_cache_size).
// keep is never removed.
func evict(dir string, limit int64, keep string) error {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return err
	}
	type entry struct {
		name  string
		size  int64
		mtime time.Time
		inUse bool
	}
	var all []entry
	var total int64
	for _, e := range entries {
		if !e.Type().IsRegular() || strings.HasPrefix(e.Name(), ".") {
			continue
		}
		fi, err := e.Info()
		if err != nil {
			continue
		}
		total += fi.Size()
		all = append(all, entry{e.Name(), fi.Size(), fi.ModTime(), linkCount(fi) > 1 || e.Name() == keep})
	}
	sort.Slice(all, func(i, j int) bool { return all[i].mtime.Before(all[j].mtime) })
	var errs []error
	for _, e := range all {
		if total <= limit {
			break
		}
		if e.inUse {
			continue
		}
		if err := os.Remove(filepath.Join(dir, e.name)); err != nil && !errors.Is(err, fs.ErrNotExist) {
			errs = append(errs, err)
			continue
		}
		total -= e.size
	}
	return errors.Join(errs...)
}

// mkdirs creates dir and its parents with mode 0755, whatever the umask.
func mkdirs(dir string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	return os.Chmod(dir, 0o755)
}

// tempFile creates a file next to path, to be renamed onto it. Temporary
// names start with a dot so that sweeps and the cache eviction skip them.
func tempFile(path string) (*os.File, error) {
	return os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp-*")
}

// finishTemp fills the temporary file f, makes it 0644 and renames it onto
// path, so that a TFTP or HTTP client never reads half an image; on any
// error it removes f.
func finishTemp(f *os.File, path string, fill func(io.Writer) error) error {
	err := fill(f)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Chmod(f.Name(), 0o644)
	}
	if err == nil {
		err = os.Rename(f.Name(), path)
	}
	if err != nil {
		os.Remove(f.Name())
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}
