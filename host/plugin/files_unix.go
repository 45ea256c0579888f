//go:build unix

package plugin

import (
	"io/fs"
	"os"
	"syscall"
)

// readFlags open a file to read without blocking on a fifo (what was
// opened is checked through the descriptor before any read).
const readFlags = os.O_RDONLY | syscall.O_NONBLOCK

func linkCount(info fs.FileInfo) uint64 {
	if st, ok := info.Sys().(*syscall.Stat_t); ok {
		return uint64(st.Nlink)
	}
	return 1
}
