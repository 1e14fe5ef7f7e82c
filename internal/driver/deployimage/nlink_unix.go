//go:build unix

package deployimage

import (
	"io/fs"
	"syscall"
)

// linkCount is the number of hard links to a file; the image cache uses it
// to tell master images still linked into a node directory.
func linkCount(fi fs.FileInfo) uint64 {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return uint64(st.Nlink)
	}
	return 2
}
