package process

import (
	"os"
	"syscall"

	"golang.org/x/sys/unix"
)

// pipeSize is the capacity asked of the pipes a flood of output crosses:
// the command's output pipes and hostcore's stdout. With the default 64 KiB
// every 64 KiB costs both ends a wake-up; 1 MiB (the unprivileged maximum,
// /proc/sys/fs/pipe-max-size) measured a fifth faster end to end.
const pipeSize = 1 << 20

// GrowPipe raises the capacity of f if it is a pipe, best effort: a user
// over their pipe-buffer quota keeps the default. The descriptor's blocking
// mode (and so its deadlines) is left as it is.
func GrowPipe(f *os.File) {
	rc, err := f.SyscallConn()
	if err != nil {
		return
	}
	rc.Control(func(fd uintptr) { unix.FcntlInt(fd, unix.F_SETPIPE_SZ, pipeSize) })
}

// setDirect turns O_DIRECT on or off for f (see spill.go).
func setDirect(f *os.File, on bool) error {
	rc, err := f.SyscallConn()
	if err != nil {
		return err
	}
	var serr error
	err = rc.Control(func(fd uintptr) {
		fl, err := unix.FcntlInt(fd, unix.F_GETFL, 0)
		if err != nil {
			serr = err
			return
		}
		if on {
			fl |= syscall.O_DIRECT
		} else {
			fl &^= syscall.O_DIRECT
		}
		_, serr = unix.FcntlInt(fd, unix.F_SETFL, fl)
	})
	if err != nil {
		return err
	}
	return serr
}

// pending returns the bytes waiting in a pipe or terminal to be read
// (FIONREAD, TIOCINQ on Linux), 0 if that cannot be told.
func pending(f *os.File) int {
	rc, err := f.SyscallConn()
	if err != nil {
		return 0
	}
	n := 0
	rc.Control(func(fd uintptr) {
		if v, err := unix.IoctlGetInt(int(fd), unix.TIOCINQ); err == nil {
			n = v
		}
	})
	return n
}
