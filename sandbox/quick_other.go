//go:build !linux

package sandbox

import (
	"errors"
	"io/fs"
)

// QuickOpen is Linux only (openat2); elsewhere every open takes Resolve and
// OpenRegular.
func (r Roots) QuickOpen(d *QuickDir, p string) (*File, Resolved, fs.FileInfo, bool) {
	return nil, Resolved{}, nil, false
}

// QuickDir holds nothing where QuickOpen opens nothing.
type QuickDir struct{}

// Close does nothing.
func (d *QuickDir) Close() {}

func readFd(fd int, p []byte) (int, error) { return 0, errors.ErrUnsupported }
func closeFd(fd int) error                 { return errors.ErrUnsupported }
