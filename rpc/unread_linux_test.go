package rpc

import (
	"os"
	"testing"

	"golang.org/x/sys/unix"
)

// unreadBytes sees what the reader of a pipe or of a Unix socket pair
// (Node's stdio) has not taken yet, from the writer's end.
func TestUnreadBytes(t *testing.T) {
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	defer w.Close()
	fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Close(fds[0])
	defer unix.Close(fds[1])
	f, _ := os.CreateTemp(t.TempDir(), "out")
	defer f.Close()
	for name, c := range map[string]struct {
		wfd, rfd int
	}{"pipe": {int(w.Fd()), int(r.Fd())}, "socket": {fds[0], fds[1]}, "file": {int(f.Fd()), -1}} {
		kind := outputKind(c.wfd)
		if n := unreadBytes(c.wfd, kind); n != 0 {
			t.Errorf("%s: %d unread before any write", name, n)
		}
		unix.Write(c.wfd, make([]byte, 100))
		// A socket counts its buffers' overhead too: only 0 or not 0 is
		// meant.
		if n := unreadBytes(c.wfd, kind); (n != 0) != (c.rfd >= 0) {
			t.Errorf("%s: %d unread after writing 100", name, n)
		}
		if c.rfd >= 0 {
			unix.Read(c.rfd, make([]byte, 100))
			if n := unreadBytes(c.wfd, kind); n != 0 {
				t.Errorf("%s: %d unread after the reader took everything", name, n)
			}
		}
	}
}
