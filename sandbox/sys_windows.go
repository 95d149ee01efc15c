package sandbox

import (
	"io/fs"
	"os"
)

const openReadFlags = os.O_RDONLY

// identOf has no device and inode to give here.
func identOf(fi fs.FileInfo) FileIdent { return FileIdent{} }

func openDirRoot(root *os.Root, dir string) (*os.Root, error) { return nil, ErrNotPorted }
