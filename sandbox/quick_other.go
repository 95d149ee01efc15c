//go:build !linux

package sandbox

import (
	"errors"
	"io/fs"
)

// QuickOpen is Linux only (openat2); elsewhere every open takes Resolve and
// OpenRegular.
func (r Roots) QuickOpen(p string) (*File, Resolved, fs.FileInfo, bool) {
	return nil, Resolved{}, nil, false
}

// LocalFS: without a way to tell, no file system counts as local.
func LocalFS(dir string) bool { return false }

func readFd(fd int, p []byte) (int, error) { return 0, errors.ErrUnsupported }
func closeFd(fd int) error                 { return errors.ErrUnsupported }
