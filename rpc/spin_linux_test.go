package rpc

import (
	"io"
	"os"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// A blocking stdin made non-blocking by another holder of its open file
// description (a parent that kept its copy) makes a read fail with EAGAIN
// while no line waits: the read waits for one instead, spinning or not.
func TestSpinningInputWaitsOutEAGAIN(t *testing.T) {
	for _, spin := range []time.Duration{InputSpin, 0} {
		var fds [2]int
		if err := unix.Pipe2(fds[:], unix.O_CLOEXEC); err != nil {
			t.Fatal(err)
		}
		r := os.NewFile(uintptr(fds[0]), "stdin") // blocking: read(2) directly
		w := os.NewFile(uintptr(fds[1]), "client")
		in := SpinningInput(r, spin)
		unix.SetNonblock(fds[0], true)
		go func() {
			time.Sleep(50 * time.Millisecond)
			w.Write([]byte("line\n"))
		}()
		buf := make([]byte, 64)
		n, err := in.Read(buf)
		if err != nil || string(buf[:n]) != "line\n" {
			t.Errorf("spin %v: read %q, %v", spin, buf[:n], err)
		}
		w.Close()
		if n, err := in.Read(buf); n != 0 || err != io.EOF {
			t.Errorf("spin %v: at the end: %d, %v", spin, n, err)
		}
		r.Close()
	}
}
