package pxe

import (
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// mkdirs creates dir and its parents with mode 0755, whatever the umask.
func mkdirs(dir string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	return os.Chmod(dir, 0o755)
}

// tempFile creates a file next to path, to be renamed onto it. Temporary names start with a dot so that sweeps skip them.
func tempFile(path string) (*os.File, error) {
	return os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp-*")
}

// writeFileAtomic writes data to path with mode 0644 through a temporary
// file and a rename, so that a TFTP or HTTP client never reads half a file.
// No fsync: every file here is rewritten by the next PrepareRamdisk.
func writeFileAtomic(path string, data []byte) error {
	f, err := tempFile(path)
	if err != nil {
		return err
	}
	return finishTemp(f, path, func(w io.Writer) error {
		_, err := w.Write(data)
		return err
	})
}

// finishTemp fills the temporary file f, makes it 0644 and renames it onto
// path; on any error it removes f.
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

// symlinkAtomic makes path a symlink to target, replacing what was there.
func symlinkAtomic(target, path string) error {
	tmp := filepath.Join(filepath.Dir(path), "."+filepath.Base(path)+".tmp-"+rand.Text())
	if err := os.Symlink(target, tmp); err != nil {
		return fmt.Errorf("link %s: %w", path, err)
	}
	if err := os.Rename(tmp, path); err != nil {
		os.Remove(tmp)
		return fmt.Errorf("link %s: %w", path, err)
	}
	return nil
}

// linkMACs points <root>/pxelinux.cfg/<name> at the node's config for every
// name, with a relative link as Ironic makes them, and removes the node's
// entries that are not in names (a port no longer PXE-enabled).
func linkMACs(root, uuid string, names []string) error {
	dir := filepath.Join(root, macDir)
	if err := mkdirs(dir); err != nil {
		return err
	}
	target := filepath.Join("..", uuid, configName)
	for _, name := range names {
		if err := symlinkAtomic(target, filepath.Join(dir, name)); err != nil {
			return err
		}
	}
	return sweepMACs(root, uuid, func(name string) bool { return !slices.Contains(names, name) })
}

// unlinkMACs removes the named entries and every entry that points into the
// node's directory. Missing entries are fine.
func unlinkMACs(root, uuid string, names []string) error {
	var errs []error
	for _, name := range names {
		if err := os.Remove(filepath.Join(root, macDir, name)); err != nil && !errors.Is(err, fs.ErrNotExist) {
			errs = append(errs, err)
		}
	}
	if err := sweepMACs(root, uuid, func(string) bool { return true }); err != nil {
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

// sweepMACs removes the symlinks in pxelinux.cfg/ that point into the
// node's directory and for which remove(name) is true.
func sweepMACs(root, uuid string, remove func(name string) bool) error {
	dir := filepath.Join(root, macDir)
	entries, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	nodeDir := filepath.Join(root, uuid)
	var errs []error
	for _, e := range entries {
		if e.Type()&fs.ModeSymlink == 0 || strings.HasPrefix(e.Name(), ".") || !remove(e.Name()) {
			continue
		}
		p := filepath.Join(dir, e.Name())
		target, err := os.Readlink(p)
		if err != nil {
			continue // gone meanwhile
		}
		if !filepath.IsAbs(target) {
			target = filepath.Join(dir, target)
		}
		if filepath.Dir(filepath.Clean(target)) != nodeDir {
			continue
		}
		if err := os.Remove(p); err != nil && !errors.Is(err, fs.ErrNotExist) {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}
