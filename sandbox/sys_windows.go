package sandbox

import (
	"errors"
	"io/fs"
	"os"
)

// ErrNotPorted answers every file operation here: containment rests on
// directory descriptors held open and on device and inode numbers, and
// neither is ported to Windows yet. Failing is the safe answer; a file
// tool that read or wrote without those checks could be led outside the
// workspace.
var ErrNotPorted = errors.New("file operations are not supported on this platform yet")

const openReadFlags = os.O_RDONLY

// identOf has no device and inode to give here.
func identOf(fi fs.FileInfo) FileIdent { return FileIdent{} }

func openDirRoot(root *os.Root, dir string) (*os.Root, error) { return nil, ErrNotPorted }
