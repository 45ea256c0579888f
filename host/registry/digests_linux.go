package registry

import (
	"os"
	"syscall"
)

// fileIDOf returns the identity of the file fi describes, false when the
// platform does not say (then the file is always read).
func fileIDOf(fi os.FileInfo) (fileID, bool) {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return fileID{}, false
	}
	return fileID{
		Dev: st.Dev, Ino: st.Ino, Size: st.Size,
		Mtime: st.Mtim.Nano(), Ctime: st.Ctim.Nano(),
	}, true
}
