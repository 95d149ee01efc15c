package rpc

import "golang.org/x/sys/unix"

// outputKind says how unreadBytes learns what waits in fd: from the pipe
// (TIOCINQ, FIONREAD, counts a pipe's contents from either end) or from
// this end of a socket (TIOCOUTQ: on a Unix socket, bytes are charged to
// the writer until the reader has taken them; Node's child processes get
// socket pairs). Anything else (a file, a terminal) is never backed up: 0.
func outputKind(fd int) uint {
	var st unix.Stat_t
	if unix.Fstat(fd, &st) != nil {
		return 0
	}
	switch st.Mode & unix.S_IFMT {
	case unix.S_IFIFO:
		return unix.TIOCINQ
	case unix.S_IFSOCK:
		return unix.TIOCOUTQ
	}
	return 0
}

// unreadBytes is what we wrote to fd that its reader has not taken yet
// (kind from outputKind; for a socket, with its buffers' overhead: only
// zero or not means anything), -1 when it cannot be told.
func unreadBytes(fd int, kind uint) int {
	if kind == 0 {
		return 0
	}
	n, err := unix.IoctlGetInt(fd, kind)
	if err != nil {
		return -1
	}
	return n
}
