package process

import (
	"math"

	"golang.org/x/sys/unix"
)

// closeRangeCloexec marks descriptors 3 and up close-on-exec in one call
// (Linux 5.11 and later).
func closeRangeCloexec() error {
	return unix.CloseRange(3, math.MaxUint32, unix.CLOSE_RANGE_CLOEXEC)
}
