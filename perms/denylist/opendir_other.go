//go:build !unix

package denylist

import "os"

// openDir opens a directory to list it.
func openDir(dir string) (*os.File, error) {
	return os.Open(dir)
}
