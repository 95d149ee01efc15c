package rpc

import (
	"errors"
	"io"
	"os"
	"runtime"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// A blocking stdin made non-blocking by another holder of its open file
// description (a parent that kept its copy) makes a read fail with EAGAIN
// while no line waits: the read waits for one instead, spinning or not,
// asleep in poll (a read that waits 200 ms uses next to no CPU).
func TestSpinningInputWaitsOutEAGAIN(t *testing.T) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	for _, spin := range []time.Duration{InputSpin, 0} {
		var fds [2]int
		if err := unix.Pipe2(fds[:], unix.O_CLOEXEC); err != nil {
			t.Fatal(err)
		}
		r := os.NewFile(uintptr(fds[0]), "stdin") // blocking: read(2) directly
		w := os.NewFile(uintptr(fds[1]), "client")
		in := SpinningInput(r, spin).(*spinningInput)
		unix.SetNonblock(fds[0], true)
		if n, err := r.Read(make([]byte, 1)); n != 0 || !errors.Is(err, syscall.EAGAIN) {
			t.Fatalf("the pipe's own read: %d, %v; want EAGAIN", n, err)
		}
		go func() {
			time.Sleep(200 * time.Millisecond)
			w.Write([]byte("line\n"))
		}()
		buf := make([]byte, 64)
		cpu := threadCPU(t)
		n, err := in.Read(buf)
		used := threadCPU(t) - cpu
		if err != nil || string(buf[:n]) != "line\n" {
			t.Errorf("spin %v: read %q, %v", spin, buf[:n], err)
		}
		if in.lastWait < 150*time.Millisecond {
			t.Errorf("spin %v: the read returned after %v, before the line was written", spin, in.lastWait)
		}
		if used > 50*time.Millisecond {
			t.Errorf("spin %v: a read that waited %v used %v of CPU: not asleep", spin, in.lastWait, used)
		}
		w.Close()
		if n, err := in.Read(buf); n != 0 || err != io.EOF {
			t.Errorf("spin %v: at the end: %d, %v", spin, n, err)
		}
		r.Close()
	}
}
