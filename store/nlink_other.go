//go:build unix && !linux

package store

// unlinked says whether the file open as fd has no name left.
func unlinked(fd int) bool { return fstatUnlinked(fd) }
