package rpc

import (
	"os"
	"testing"

	"golang.org/x/sys/unix"
)

// outputKind tells a pipe and a Unix socket pair (Node's stdio), which
// are written without blocking, from a file, which is written as it is.
func TestOutputKind(t *testing.T) {
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
	for name, c := range map[string]struct{ fd, want int }{
		"pipe": {int(w.Fd()), kindPipe}, "socket": {fds[0], kindSocket}, "file": {int(f.Fd()), kindUnknown}, "closed": {-1, kindUnknown},
	} {
		if got := outputKind(c.fd); got != c.want {
			t.Errorf("%s: outputKind %d, want %d", name, got, c.want)
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
