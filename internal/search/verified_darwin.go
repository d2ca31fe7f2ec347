package search

import (
	"os"
	"syscall"
)

// idOf is verified_linux.go's, with Darwin's field names for the times.
func idOf(fi os.FileInfo) (fileID, bool) {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return fileID{}, false
	}
	return fileID{dev: uint64(st.Dev), ino: st.Ino, size: st.Size,
		mtime: st.Mtimespec.Nano(), ctime: st.Ctimespec.Nano()}, true
}
