//go:build !linux

package process

import (
	"errors"
	"os"
)

// GrowPipe leaves the pipe as it is: only Linux can resize one.
func GrowPipe(f *os.File) {}

// setDirect reports that direct I/O is not used here: the spill file is
// written through the cache.
func setDirect(f *os.File, on bool) error {
	if on {
		return errors.ErrUnsupported
	}
	return nil
}

// pending cannot tell the bytes waiting in a pipe here: none are assumed.
func pending(f *os.File) int { return 0 }
