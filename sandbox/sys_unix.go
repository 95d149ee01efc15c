//go:build unix

package sandbox

import (
	"io/fs"
	"os"
	"syscall"
)

// openReadFlags opens without blocking on a FIFO with no writer and without
// acquiring a controlling terminal. O_NONBLOCK stays on: it changes nothing
// for files of stored data, and makes a "regular" file whose reads wait
// for events (/proc/kmsg, a trace pipe) fail at once (ReadErr).
const openReadFlags = os.O_RDONLY | syscall.O_NONBLOCK | syscall.O_NOCTTY

// identOf returns the device and inode of fi (OfTarget left false).
func identOf(fi fs.FileInfo) FileIdent {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return FileIdent{}
	}
	return FileIdent{Dev: uint64(st.Dev), Ino: uint64(st.Ino)} //nolint:unconvert // widths differ by platform
}
