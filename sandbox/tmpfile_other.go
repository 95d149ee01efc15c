//go:build !linux

package sandbox

import (
	"errors"
	"os"
)

func unnamedTemp(root *os.Root, dir string) *os.File { return nil }

func nameTemp(root *os.Root, dir, name string, f *os.File) error {
	return errors.New("unnamed temporary files are Linux only")
}
