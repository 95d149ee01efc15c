package search

import (
	"sync/atomic"
	"syscall"

	"golang.org/x/sys/unix"
)

// noOpenat2 is set once openat2 is found missing (kernel before 5.6) or
// filtered (seccomp); later opens go straight to the path fallback.
var noOpenat2 atomic.Bool

// openIn opens rel beneath the directory rootFd with openat2 and
// RESOLVE_BENEATH|RESOLVE_NO_SYMLINKS: the kernel refuses a symlink in any
// component, so a directory swapped for a link after it was listed cannot
// lead the walk out of the root. Without openat2 it opens abs with
// O_NOFOLLOW, which guards the last component only. rootFd < 0 means there
// is no root to resolve against.
func openIn(rootFd int, abs, rel string, flags int) (int, error) {
	flags |= syscall.O_CLOEXEC | syscall.O_NOFOLLOW
	if rootFd >= 0 && !noOpenat2.Load() {
		if rel == "" {
			rel = "."
		}
		for {
			fd, err := unix.Openat2(rootFd, rel, &unix.OpenHow{
				Flags:   uint64(flags),
				Resolve: unix.RESOLVE_BENEATH | unix.RESOLVE_NO_SYMLINKS | unix.RESOLVE_NO_MAGICLINKS,
			})
			switch err {
			case nil:
				return fd, nil
			case syscall.EINTR, syscall.EAGAIN: // EAGAIN: a concurrent rename; retry
				continue
			case syscall.ENOSYS, syscall.EPERM:
				noOpenat2.Store(true)
			default:
				return -1, err
			}
			break
		}
	}
	for {
		fd, err := syscall.Open(abs, flags, 0)
		if err != syscall.EINTR {
			return fd, err
		}
	}
}
