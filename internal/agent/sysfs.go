package agent

import (
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// readString returns the trimmed content of a sysfs or procfs file, or ""
// when it cannot be read: absent attributes are the normal case in sysfs.
func readString(path string) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(b))
}

// readInt returns a sysfs integer attribute, with ok false when it is absent
// or not a number.
func readInt(path string) (int64, bool) {
	n, err := strconv.ParseInt(readString(path), 10, 64)
	return n, err == nil
}

// linkBase is the last element of a symlink's target ("virtio_net" for
// …/device/driver), or "" when path is not a link.
func linkBase(path string) string {
	target, err := os.Readlink(path)
	if err != nil {
		return ""
	}
	return filepath.Base(target)
}

// hexID strips the "0x" sysfs puts before PCI IDs, as IPA does.
func hexID(s string) string {
	return strings.TrimPrefix(strings.TrimPrefix(s, "0x"), "0X")
}

// exists reports whether path exists (following links).
func exists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}

// errNotFound says a source of data does not exist on this machine, which
// a collector treats as "nothing to report" rather than as a failure.
var errNotFound = errors.New("not present")
