package sandbox

import (
	"os"
	"strconv"

	"golang.org/x/sys/unix"
)

// unnamedTemp opens a file with no name in root's directory dir
// (O_TMPFILE): while it is written, a crash or a kill leaves nothing in
// the user's directory. nil when the filesystem cannot make one.
func unnamedTemp(root *os.Root, dir string) *os.File {
	f, err := root.OpenFile(dir, unix.O_TMPFILE|os.O_WRONLY, 0o600)
	if err != nil {
		return nil
	}
	return f
}

// nameTemp gives the unnamed file f the name name in root's directory dir,
// failing if the name exists. The link goes through /proc/self/fd, which
// needs no privilege (AT_EMPTY_PATH would).
func nameTemp(root *os.Root, dir, name string, f *os.File) error {
	d, err := root.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return unix.Linkat(unix.AT_FDCWD, "/proc/self/fd/"+strconv.Itoa(int(f.Fd())), int(d.Fd()), name, unix.AT_SYMLINK_FOLLOW)
}
