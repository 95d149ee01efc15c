package store

import (
	"errors"
	"os"

	"golang.org/x/sys/windows"
)

// journalOpenFlags: Windows has no FIFOs in the file system to block on,
// and no O_NOFOLLOW: a link at the journal's name is followed here. The
// journal is checked to be a regular file once open.
const journalOpenFlags = 0

// lockOffset is where the one locked byte lies: far past the pid the
// file holds, because a Windows byte-range lock also refuses reads, and a
// second hostcore reads the pid to name the holder.
const lockOffset = 1 << 62

// tryLock locks one byte of f without waiting; errLockHeld says another
// process has it. Windows releases it when the process ends.
func tryLock(f *os.File) error {
	ol := windows.Overlapped{Offset: lockOffset & 0xffffffff, OffsetHigh: lockOffset >> 32}
	err := windows.LockFileEx(windows.Handle(f.Fd()), windows.LOCKFILE_EXCLUSIVE_LOCK|windows.LOCKFILE_FAIL_IMMEDIATELY, 0, 1, 0, &ol)
	if errors.Is(err, windows.ERROR_LOCK_VIOLATION) {
		return errLockHeld
	}
	return err
}

// unlinked says whether the file open as the handle fd has no name left.
func unlinked(fd int) bool {
	var info windows.ByHandleFileInformation
	return windows.GetFileInformationByHandle(windows.Handle(fd), &info) == nil && info.NumberOfLinks == 0
}
