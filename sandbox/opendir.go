package sandbox

import (
	"fmt"
	"os"
)

// OpenDir opens the directory a resolved path names as an os.Root of its
// own, for a tool that reads a whole tree (PluginCheck, PluginPack):
// everything read through it stays inside that directory, whatever links
// it holds. The directory must still be the one Resolve saw.
func OpenDir(res Resolved) (*os.Root, error) {
	base, err := openBase(res)
	if err != nil {
		return nil, err
	}
	defer base.Close()
	if res.Name == "." {
		// The caller keeps it: a root of its own, not the shared base.
		return base.OpenRoot(".")
	}
	dir, err := openDirRoot(base.Root, res.Name)
	if err != nil {
		return nil, notExist(err, res.Display)
	}
	fi, err := dir.Stat(".")
	var held FileIdent
	if err == nil {
		held = identOf(fi)
		held.OfTarget = true
	}
	if err != nil || res.Ident.OfTarget && held != res.Ident {
		dir.Close()
		return nil, fmt.Errorf("%w: %s is no longer the directory that was checked", ErrChanged, res.Display)
	}
	return dir, nil
}
