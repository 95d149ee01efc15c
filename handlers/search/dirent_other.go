//go:build unix && !linux

package search

import (
	"io/fs"
	"os"
	"syscall"
)

// readDirents lists the directory open as fd through os.File (on a
// duplicate, since closing the File closes its descriptor).
func readDirents(fd int, _ []byte, fn func(name string, typ entryType)) error {
	dup, err := syscall.Dup(fd)
	if err != nil {
		return err
	}
	f := os.NewFile(uintptr(dup), "")
	defer f.Close()
	ents, err := f.ReadDir(-1)
	for _, e := range ents {
		typ := typeSpecial
		switch t := e.Type(); {
		case t.IsRegular():
			typ = typeFile
		case t.IsDir():
			typ = typeDir
		case t&fs.ModeSymlink != 0:
			typ = typeSymlink
		}
		fn(e.Name(), typ)
	}
	return err
}
