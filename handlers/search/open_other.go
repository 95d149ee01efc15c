//go:build !linux

package search

import "syscall"

// openIn opens abs without following a final symlink; only Linux has
// openat2 to refuse links in every component.
func openIn(rootFd int, abs, rel string, flags int) (int, error) {
	return syscall.Open(abs, flags|syscall.O_CLOEXEC|syscall.O_NOFOLLOW, 0)
}
