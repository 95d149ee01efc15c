package rpc

import (
	"math"

	"golang.org/x/sys/unix"
)

// outputKind tells how room learns what fd can take without blocking:
// a pipe (its size, less what waits in it: TIOCINQ counts a pipe's
// contents from either end), a socket (its send buffer, less what this
// end has sent and its reader not yet taken, TIOCOUTQ: Node's child
// processes get Unix socket pairs), or anything else (a file, a
// terminal), which is taken as never backing up.
func outputKind(fd int) (kind int, sndbuf int) {
	var st unix.Stat_t
	if unix.Fstat(fd, &st) != nil {
		return kindUnknown, 0
	}
	switch st.Mode & unix.S_IFMT {
	case unix.S_IFIFO:
		return kindPipe, 0
	case unix.S_IFSOCK:
		n, err := unix.GetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_SNDBUF)
		if err != nil {
			return kindUnknown, 0
		}
		return kindSocket, n
	}
	return kindOther, 0
}

const (
	kindUnknown = iota
	kindPipe
	kindSocket
	kindOther
)

// room is how many bytes a write to fd takes now without blocking, as
// far as the kernel says; 0 when it cannot tell.
func room(fd, kind, sndbuf int) int64 {
	switch kind {
	case kindOther:
		return math.MaxInt64
	case kindPipe:
		size, err := unix.FcntlInt(uintptr(fd), unix.F_GETPIPE_SZ, 0)
		if err != nil {
			return 0
		}
		waiting, err := unix.IoctlGetInt(fd, unix.TIOCINQ)
		if err != nil {
			return 0
		}
		return int64(max(size-waiting, 0))
	case kindSocket:
		queued, err := unix.IoctlGetInt(fd, unix.TIOCOUTQ)
		if err != nil {
			return 0
		}
		// The queue counts the buffers' overhead too, and a write is cut
		// into buffers that each carry some: half of what is left, to be
		// sure.
		return int64(max(sndbuf-queued, 0) / 2)
	}
	return 0
}
