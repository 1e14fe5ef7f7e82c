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
	return writeFileAtomicMode(path, data, 0o644)
}

// writeFileAtomicMode is writeFileAtomic with the file's mode: 0600 for a
// boot configuration that holds a callback token, which only ferro's user
// (and its built-in TFTP and HTTP servers) may read.
func writeFileAtomicMode(path string, data []byte, mode os.FileMode) error {
	f, err := tempFile(path)
	if err != nil {
		return err
	}
	return finishTempMode(f, path, mode, func(w io.Writer) error {
		_, err := w.Write(data)
		return err
	})
}

// finishTemp fills the temporary file f, makes it 0644 and renames it onto
// path; on any error it removes f.
func finishTemp(f *os.File, path string, fill func(io.Writer) error) error {
	return finishTempMode(f, path, 0o644, fill)
}

func finishTempMode(f *os.File, path string, mode os.FileMode, fill func(io.Writer) error) error {
	err := fill(f)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Chmod(f.Name(), mode)
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

// macManifest, in the node's directory, lists the pxelinux.cfg/ entries
// made for the node, so removing them never scans the whole directory
// (which would make preparing n nodes cost n² link reads).
const macManifest = "mac-entries"

// linkMACs points <root>/pxelinux.cfg/<name> at the node's config for every
// name, with a relative link as Ironic makes them, removes the node's
// entries that are not in names (a port no longer PXE-enabled), and records
// the names in the node's manifest.
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
	var stale []string
	for _, name := range readManifest(root, uuid) {
		if !slices.Contains(names, name) {
			stale = append(stale, name)
		}
	}
	if err := removeOwnEntries(root, uuid, stale); err != nil {
		return err
	}
	return writeFileAtomic(filepath.Join(root, uuid, macManifest), []byte(strings.Join(names, "\n")+"\n"))
}

// unlinkMACs removes the named entries and every entry the node's manifest
// lists that still points into the node's directory. Missing entries are fine.
func unlinkMACs(root, uuid string, names []string) error {
	var errs []error
	for _, name := range names {
		if err := os.Remove(filepath.Join(root, macDir, name)); err != nil && !errors.Is(err, fs.ErrNotExist) {
			errs = append(errs, err)
		}
	}
	if err := removeOwnEntries(root, uuid, readManifest(root, uuid)); err != nil {
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

// readManifest returns the entry names recorded for the node, or none.
func readManifest(root, uuid string) []string {
	b, err := os.ReadFile(filepath.Join(root, uuid, macManifest))
	if err != nil {
		return nil
	}
	return strings.Fields(string(b))
}

// removeOwnEntries removes the named pxelinux.cfg/ symlinks that point into
// the node's directory; an entry another node has taken over since stays.
func removeOwnEntries(root, uuid string, names []string) error {
	dir := filepath.Join(root, macDir)
	nodeDir := filepath.Join(root, uuid)
	var errs []error
	for _, name := range names {
		if strings.ContainsAny(name, "/\\") || strings.HasPrefix(name, ".") {
			continue // not a name linkMACs writes
		}
		p := filepath.Join(dir, name)
		target, err := os.Readlink(p)
		if err != nil {
			continue // gone, or not a link
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
