// Package localfile reads the files on the conductor that a client named
// (driver_info[redfish_verify_ca], a file:// deploy image): only regular
// files, never a device, a FIFO or a socket, within a size bound, and with
// one error for every reason a path cannot be used, so that an API client
// learns nothing about the conductor's file system beyond "usable or not".
package localfile

import (
	"errors"
	"io"
	"os"
	"syscall"

	"golang.org/x/sys/unix"
)

// ErrUnusable is every failure of a path: missing, unreadable, of the
// wrong type, too large. Callers name the path and the key, not the cause.
var ErrUnusable = errors.New("is not a readable regular file")

// Kind is what a usable path names.
type Kind int

// Kinds of Stat.
const (
	Regular Kind = iota + 1
	Directory
)

// Stat says whether path (symlinks followed) is a regular file or a
// directory that this process may read, without opening it: opening a
// FIFO blocks and opening a device may act on it. Anything else, and a
// path that does not exist or cannot be read, is ErrUnusable.
func Stat(path string) (Kind, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return 0, ErrUnusable
	}
	var k Kind
	switch {
	case fi.Mode().IsRegular():
		k = Regular
	case fi.IsDir():
		k = Directory
	default:
		return 0, ErrUnusable
	}
	mode := uint32(unix.R_OK)
	if k == Directory {
		mode |= unix.X_OK
	}
	if unix.Access(path, mode) != nil {
		return 0, ErrUnusable
	}
	return k, nil
}

// Open opens path for reading when it is a regular file (symlinks
// followed) of at most max bytes. The type is checked before the open and
// again on the open file, so a path swapped for a device in between is
// refused too; O_NONBLOCK keeps a FIFO from blocking that open (reads of a
// regular file ignore it).
func Open(path string, max int64) (*os.File, error) {
	if k, err := Stat(path); err != nil || k != Regular {
		return nil, ErrUnusable
	}
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK|syscall.O_NOCTTY, 0)
	if err != nil {
		return nil, ErrUnusable
	}
	fi, err := f.Stat()
	if err != nil || !fi.Mode().IsRegular() || fi.Size() > max {
		f.Close()
		return nil, ErrUnusable
	}
	return f, nil
}

// Read returns the content of a regular file of at most max bytes; a file
// that grew past max since it was opened is refused too.
func Read(path string, max int64) ([]byte, error) {
	f, err := Open(path, max)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, max+1))
	if err != nil || int64(len(b)) > max {
		return nil, ErrUnusable
	}
	return b, nil
}

// Names lists the entries of directory path, at most max of them: a
// larger directory is refused rather than read whole.
func Names(path string, max int) ([]string, error) {
	if k, err := Stat(path); err != nil || k != Directory {
		return nil, ErrUnusable
	}
	d, err := os.Open(path)
	if err != nil {
		return nil, ErrUnusable
	}
	defer d.Close()
	names, err := d.Readdirnames(max + 1)
	if err != nil && !errors.Is(err, io.EOF) {
		return nil, ErrUnusable
	}
	if len(names) > max {
		return nil, ErrUnusable
	}
	return names, nil
}
