//go:build unix

package denylist

import (
	"os"
	"syscall"
)

// openDir opens a directory to list it, never blocking: a directory
// swapped for a FIFO after its Lstat would hold os.Open, and the call,
// for good.
func openDir(dir string) (*os.File, error) {
	return os.OpenFile(dir, os.O_RDONLY|syscall.O_DIRECTORY|syscall.O_NONBLOCK, 0)
}
