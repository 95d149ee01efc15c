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
// lead the walk out of the root. rootFd < 0 means there is no root to
// resolve against (a single-file search): abs, canonical, is opened with
// no symlink allowed in any of its components (openCanonical). Without
// openat2 it opens abs with O_NOFOLLOW, which guards the last component
// only.
func openIn(rootFd int, abs, rel string, flags int) (int, error) {
	flags |= syscall.O_CLOEXEC | syscall.O_NOFOLLOW
	if rootFd < 0 {
		return openCanonical(abs, flags)
	}
	if rel == "" {
		rel = "."
	}
	if fd, err, ok := openat2(rootFd, rel, flags, unix.RESOLVE_BENEATH); ok {
		return fd, err
	}
	return openPath(abs, flags)
}

// openCanonical opens abs, a canonical path (the search root, every link
// on it already resolved by the caller), refusing a symlink in any of
// its components: a parent directory swapped for a link to elsewhere
// after the caller resolved it (a review raced one in a loop and Grep
// searched the outside directory under the workspace's label, no card)
// fails with ELOOP instead of being followed.
func openCanonical(abs string, flags int) (int, error) {
	flags |= syscall.O_CLOEXEC
	if fd, err, ok := openat2(unix.AT_FDCWD, abs, flags, 0); ok {
		return fd, err
	}
	return openPath(abs, flags)
}

// openat2 opens path with RESOLVE_NO_SYMLINKS|RESOLVE_NO_MAGICLINKS and
// the extra resolve flags; ok is false when openat2 cannot be used.
func openat2(dirFd int, path string, flags int, resolve uint64) (int, error, bool) {
	if noOpenat2.Load() {
		return -1, nil, false
	}
	for tries := 0; ; tries++ {
		fd, err := unix.Openat2(dirFd, path, &unix.OpenHow{
			Flags:   uint64(flags),
			Resolve: resolve | unix.RESOLVE_NO_SYMLINKS | unix.RESOLVE_NO_MAGICLINKS,
		})
		switch {
		case err == nil:
			return fd, nil, true
		case err == syscall.EINTR,
			// A concurrent rename, which RESOLVE_BENEATH reports so; a
			// few tries. (Elsewhere EAGAIN is a lease held on the file,
			// which O_NONBLOCK reports: an error, not a spin.)
			err == syscall.EAGAIN && resolve&unix.RESOLVE_BENEATH != 0 && tries < 100:
			continue
		}
		switch err {
		case syscall.ENOSYS, syscall.EPERM:
			noOpenat2.Store(true)
			return -1, nil, false
		default:
			return -1, err, true
		}
	}
}

func openPath(abs string, flags int) (int, error) {
	for {
		fd, err := syscall.Open(abs, flags, 0)
		if err != syscall.EINTR {
			return fd, err
		}
	}
}
