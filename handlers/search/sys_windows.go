package search

import (
	"io/fs"
	"os"
)

const (
	oDirectory = 0
	oNoFollow  = 0
)

func openIn(rootFd int, abs, rel string, flags int) (int, error) { return -1, ErrNotPorted }
func openCanonical(abs string, flags int) (int, error)           { return -1, ErrNotPorted }

func readDirents(fd int, _ []byte, fn func(name string, typ entryType)) error { return ErrNotPorted }

func closeFd(fd int) error                 { return ErrNotPorted }
func readFd(fd int, p []byte) (int, error) { return 0, ErrNotPorted }
func fdIdent(fd int) (Ident, error)        { return Ident{}, ErrNotPorted }

func lstatType(abs string) entryType {
	fi, err := os.Lstat(abs)
	switch {
	case err != nil:
		return typeOther
	case fi.Mode().IsRegular():
		return typeFile
	case fi.IsDir():
		return typeDir
	case fi.Mode()&fs.ModeSymlink != 0:
		return typeSymlink
	}
	return typeOther
}
