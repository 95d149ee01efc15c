//go:build unix

package sandbox

import (
	"fmt"
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

// linked says whether fi, from a descriptor held open, is still linked
// into the tree: a directory removed while held has no links left.
func linked(fi fs.FileInfo) bool {
	st, ok := fi.Sys().(*syscall.Stat_t)
	return ok && st.Nlink > 0
}

// openDirRoot opens dir (beneath root, or an absolute path when root is
// nil) as an os.Root without ever blocking on what is there. os.OpenRoot
// and Root.OpenRoot open their last component without O_DIRECTORY or
// O_NONBLOCK, so a FIFO there blocked the call until something wrote to
// it: a Read of "fifo/x" with a FIFO at fifo was never answered, and a
// review that swapped a directory for a FIFO in a loop wedged a Write
// (and every later mutation of its session) between a check and the
// open. So dir is opened as a directory, never blocking, and the Root
// is made from the descriptor held (through /proc/self/fd), whatever
// dir names by then. Without /proc, dir is opened again by name after
// that check; a FIFO swapped in between the two still blocks.
func openDirRoot(root *os.Root, dir string) (*os.Root, error) {
	const flags = os.O_RDONLY | syscall.O_DIRECTORY | syscall.O_NONBLOCK
	var fd int
	if root == nil {
		// A bare descriptor: an *os.File would try the poller (which
		// refuses directories) and be made blocking again by Fd, five
		// system calls at every file operation for nothing.
		var err error
		if fd, err = syscall.Open(dir, flags|syscall.O_CLOEXEC, 0); err != nil {
			return nil, &fs.PathError{Op: "open", Path: dir, Err: err}
		}
		defer syscall.Close(fd)
	} else {
		f, err := root.OpenFile(dir, flags, 0)
		if err != nil {
			return nil, err
		}
		defer f.Close()
		fd = int(f.Fd())
	}
	if r, err := os.OpenRoot(fmt.Sprintf("/proc/self/fd/%d", fd)); err == nil {
		return r, nil
	}
	if root == nil {
		return os.OpenRoot(dir)
	}
	return root.OpenRoot(dir)
}
