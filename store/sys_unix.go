//go:build unix

package store

import (
	"errors"
	"os"
	"syscall"
)

// journalOpenFlags open the journal not through a link, and without
// blocking on a FIFO standing there (a read of one held open for writing
// by us would wait for ever).
const journalOpenFlags = syscall.O_NOFOLLOW | syscall.O_NONBLOCK

// tryLock takes f's flock without waiting; errLockHeld says another
// process has it. The kernel drops it when the process ends, however it
// ends.
func tryLock(f *os.File) error {
	err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
	if errors.Is(err, syscall.EWOULDBLOCK) {
		return errLockHeld
	}
	return err
}

// fstatUnlinked is unlinked by fstat: where statx is not to be had.
func fstatUnlinked(fd int) bool {
	var st syscall.Stat_t
	return syscall.Fstat(fd, &st) == nil && st.Nlink == 0
}
