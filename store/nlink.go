package store

import "syscall"

// fstatUnlinked says whether the file open as fd has no name left, by
// fstat (see unlinked).
func fstatUnlinked(fd int) bool {
	var st syscall.Stat_t
	return syscall.Fstat(fd, &st) == nil && st.Nlink == 0
}
