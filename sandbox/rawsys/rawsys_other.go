//go:build !linux

package rawsys

import "golang.org/x/sys/unix"

// Read is read(2), an ordinary call.
func Read(fd int, p []byte) (int, error) { return unix.Read(fd, p) }

// Write is write(2), an ordinary call.
func Write(fd int, p []byte) (int, error) { return unix.Write(fd, p) }

// Fstat is fstat(2), an ordinary call.
func Fstat(fd int, st *unix.Stat_t) error { return unix.Fstat(fd, st) }

// Close is close(2), an ordinary call.
func Close(fd int) error { return unix.Close(fd) }

// LocalFS reports false: outside Linux every file is called on the
// ordinary way.
func LocalFS(fd int) bool { return false }
