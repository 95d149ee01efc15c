package rpc

import (
	"math"
	"os"
	"testing"

	"golang.org/x/sys/unix"
)

// room sees what a write to a pipe or a Unix socket pair (Node's stdio)
// can take without blocking: less once the reader leaves bytes unread,
// all of it again once it takes them; a file never backs up.
func TestRoom(t *testing.T) {
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

	kind, buf := outputKind(int(f.Fd()))
	if got := room(int(f.Fd()), kind, buf); got != math.MaxInt64 {
		t.Errorf("file: room %d", got)
	}
	for name, c := range map[string]struct{ wfd, rfd int }{"pipe": {int(w.Fd()), int(r.Fd())}, "socket": {fds[0], fds[1]}} {
		kind, buf := outputKind(c.wfd)
		empty := room(c.wfd, kind, buf)
		if empty < 16<<10 {
			t.Errorf("%s: room %d when empty", name, empty)
		}
		unix.Write(c.wfd, make([]byte, 4096))
		if got := room(c.wfd, kind, buf); got > empty-2048 {
			t.Errorf("%s: room %d after 4096 bytes left unread (%d empty)", name, got, empty)
		}
		unix.Read(c.rfd, make([]byte, 4096))
		if got := room(c.wfd, kind, buf); got != empty {
			t.Errorf("%s: room %d once read, %d empty", name, got, empty)
		}
	}
}

// A socket that was non-blocking already (a parent that shares it: libuv
// makes its sockets so) is left non-blocking when hostcore is done with
// it; one that was blocking is blocking again.
func TestPollableLeavesTheSocketAsItFoundIt(t *testing.T) {
	for _, was := range []bool{true, false} {
		fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
		if err != nil {
			t.Fatal(err)
		}
		unix.SetNonblock(fds[0], was)
		f := os.NewFile(uintptr(fds[0]), "stdout")
		out, restore := PollableOutput(f)
		if out == f {
			t.Fatalf("non-blocking %v: not made pollable", was)
		}
		restore()
		fl, _ := unix.FcntlInt(uintptr(fds[0]), unix.F_GETFL, 0)
		if got := fl&unix.O_NONBLOCK != 0; got != was {
			t.Errorf("non-blocking before: %v, after hostcore: %v", was, got)
		}
		out.Close()
		f.Close()
		unix.Close(fds[1])
	}
}
