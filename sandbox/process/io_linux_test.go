package process

import (
	"bytes"
	"os"
	"testing"

	"golang.org/x/sys/unix"
)

// TestPumpGrowsOnlyFullPipes: a pipe is grown to pipeSize once a read finds
// it full, and a command that prints little leaves its pipes as they are
// (each grown pipe spends the user's pipe-buffer quota).
func TestPumpGrowsOnlyFullPipes(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		n    int
		grow bool
	}{{100, false}, {8 << 20, true}} {
		r, w, err := os.Pipe()
		if err != nil {
			t.Fatal(err)
		}
		before := pipeCapacity(t, r)
		go func() {
			w.Write(bytes.Repeat([]byte("x"), c.n))
			w.Close()
		}()
		capt := newCapture("stdout", 16, 16, "")
		pump(r, capt, func(string, int, [][]byte) {})
		got := pipeCapacity(t, r)
		r.Close()
		if capt.win.total != int64(c.n) {
			t.Errorf("%d bytes: pumped %d", c.n, capt.win.total)
		}
		if grew := got > before; grew != c.grow {
			t.Errorf("%d bytes: pipe capacity %d -> %d, want grown=%v", c.n, before, got, c.grow)
		}
	}
}

func pipeCapacity(t *testing.T, f *os.File) int {
	rc, err := f.SyscallConn()
	if err != nil {
		t.Fatal(err)
	}
	var n int
	var ferr error
	rc.Control(func(fd uintptr) { n, ferr = unix.FcntlInt(fd, unix.F_GETPIPE_SZ, 0) })
	if ferr != nil {
		t.Fatal(ferr)
	}
	return n
}
