package rpc

import "os"

// fileFd returns f's descriptor without Fd, which would turn off the
// deadlines of a pollable file; -1 if it has none.
func fileFd(f *os.File) int {
	fd := -1
	if rc, err := f.SyscallConn(); err == nil {
		rc.Control(func(d uintptr) { fd = int(d) })
	}
	return fd
}
