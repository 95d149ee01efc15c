//go:build !linux

package store

import "syscall"

// unlinked says whether the file open as fd has no name left.
func unlinked(fd int) bool {
	var st syscall.Stat_t
	return syscall.Fstat(fd, &st) == nil && st.Nlink == 0
}
