//go:build !linux

package rpc

// The kinds of stdout (see room_linux.go); here it is never told.
const (
	kindUnknown = iota
	kindPipe
	kindSocket
)

// outputKind and room cannot tell here: room is 0, so that nothing runs
// inline outside Linux (nothing does anyway: quick Reads need openat2).
func outputKind(fd int) (kind int, sndbuf int) { return kindUnknown, 0 }

func room(fd, kind, sndbuf int) int64 { return 0 }
