//go:build unix

package plugin

import (
	"io/fs"
	"os"
	"syscall"
)

// openNoFollow opens a file read-only without following a final symlink
// and without blocking on a fifo swapped in after the checks.
func openNoFollow(name string) (*os.File, error) {
	return os.OpenFile(name, os.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_NONBLOCK, 0)
}

func linkCount(info fs.FileInfo) uint64 {
	if st, ok := info.Sys().(*syscall.Stat_t); ok {
		return uint64(st.Nlink)
	}
	return 1
}
