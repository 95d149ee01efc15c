//go:build unix && !linux

package search

import "syscall"

// openIn opens abs without following a final symlink; only Linux has
// openat2 to refuse links in every component.
func openIn(rootFd int, abs, rel string, flags int) (int, error) {
	return syscall.Open(abs, flags|syscall.O_CLOEXEC|syscall.O_NOFOLLOW, 0)
}

// openCanonical opens abs, following links: only Linux has openat2 to
// refuse them in every component (see open_linux.go). The caller checks
// that what it opened is what it resolved.
func openCanonical(abs string, flags int) (int, error) {
	return syscall.Open(abs, flags|syscall.O_CLOEXEC, 0)
}
