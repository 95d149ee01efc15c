//go:build unix

package sandbox

import (
	"io/fs"
	"os"
	"syscall"
)

// openReadFlags opens without blocking on a FIFO with no writer and without
// acquiring a controlling terminal; OpenRegular clears O_NONBLOCK afterwards.
const openReadFlags = os.O_RDONLY | syscall.O_NONBLOCK | syscall.O_NOCTTY

// identOf returns the device and inode of fi (OfTarget left false).
func identOf(fi fs.FileInfo) FileIdent {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return FileIdent{}
	}
	return FileIdent{Dev: uint64(st.Dev), Ino: uint64(st.Ino)} //nolint:unconvert // widths differ by platform
}

// setBlocking clears O_NONBLOCK on f, which was only wanted for the open.
func setBlocking(f *os.File) error {
	rc, err := f.SyscallConn()
	if err != nil {
		return err
	}
	var serr error
	if err := rc.Control(func(fd uintptr) { serr = syscall.SetNonblock(int(fd), false) }); err != nil {
		return err
	}
	return serr
}
