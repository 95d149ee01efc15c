//go:build linux || darwin

package process

import (
	"os"
	"testing"

	"golang.org/x/sys/unix"
)

// Both ways of marking (close_range and the listing) leave no descriptor
// above stderr inheritable, and leave stdin, stdout and stderr alone.
func TestInheritedDescriptorsAreMarkedCloseOnExec(t *testing.T) {
	for name, mark := range map[string]func() error{"close_range": closeRangeCloexec, "listing": markListedCloexec} {
		t.Run(name, func(t *testing.T) {
			fd, err := unix.Open(os.DevNull, unix.O_RDONLY, 0) // not close-on-exec, as an inherited one
			if err != nil {
				t.Fatal(err)
			}
			defer unix.Close(fd)
			before, _ := unix.FcntlInt(0, unix.F_GETFD, 0)
			if err := mark(); err != nil {
				t.Skipf("%s: %v", name, err)
			}
			if fl, err := unix.FcntlInt(uintptr(fd), unix.F_GETFD, 0); err != nil || fl&unix.FD_CLOEXEC == 0 {
				t.Fatalf("descriptor %d not close-on-exec: %#x %v", fd, fl, err)
			}
			if after, _ := unix.FcntlInt(0, unix.F_GETFD, 0); after != before {
				t.Fatalf("stdin's flags changed: %#x -> %#x", before, after)
			}
		})
	}
}
