package harden

import (
	"fmt"

	"golang.org/x/sys/unix"
)

// Self makes this process non-dumpable (PR_SET_DUMPABLE 0): processes of
// the same user can no longer ptrace it, open its /proc/<pid>/fd, mem or
// environ, nor copy its descriptors with pidfd_getfd. Its own /proc/self
// stays open to it. The flag covers every thread, those the runtime has
// already started included.
func Self() error {
	if err := unix.Prctl(unix.PR_SET_DUMPABLE, 0, 0, 0, 0); err != nil {
		return fmt.Errorf("making hostcore non-dumpable: %w", err)
	}
	return nil
}
