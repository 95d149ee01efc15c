//go:build unix

package search

import "syscall"

// The walk works on raw descriptors (openat2, getdents, read into its own
// buffers); these are the few calls it makes on them.

const (
	oDirectory = syscall.O_DIRECTORY
	oNoFollow  = syscall.O_NOFOLLOW
)

func closeFd(fd int) error { return syscall.Close(fd) }

func readFd(fd int, p []byte) (int, error) { return syscall.Read(fd, p) }

// fdIdent is the device and inode of the file open as fd.
func fdIdent(fd int) (Ident, error) {
	var st syscall.Stat_t
	if err := syscall.Fstat(fd, &st); err != nil {
		return Ident{}, err
	}
	return Ident{Dev: uint64(st.Dev), Ino: uint64(st.Ino)}, nil //nolint:unconvert // widths differ by platform
}

func lstatType(abs string) entryType {
	var s syscall.Stat_t
	if syscall.Lstat(abs, &s) != nil {
		return typeOther
	}
	switch s.Mode & syscall.S_IFMT {
	case syscall.S_IFREG:
		return typeFile
	case syscall.S_IFDIR:
		return typeDir
	case syscall.S_IFLNK:
		return typeSymlink
	}
	return typeOther
}
