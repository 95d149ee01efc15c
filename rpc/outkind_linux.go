package rpc

import "golang.org/x/sys/unix"

// outputKind tells what stdout's fd is: a pipe or a socket (Node's child
// processes get Unix socket pairs) can be written without blocking
// (nonblockingFd); anything else (a file, a terminal) is written as it
// is.
func outputKind(fd int) int {
	var st unix.Stat_t
	if unix.Fstat(fd, &st) != nil {
		return kindUnknown
	}
	switch st.Mode & unix.S_IFMT {
	case unix.S_IFIFO:
		return kindPipe
	case unix.S_IFSOCK:
		return kindSocket
	}
	return kindUnknown
}

const (
	kindUnknown = iota
	kindPipe
	kindSocket
)
