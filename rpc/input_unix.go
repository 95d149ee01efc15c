//go:build unix

package rpc

import (
	"errors"
	"io"
	"os"
	"runtime"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// Input returns the reader hostcore reads its requests from, stdin in
// both modes. f is read with a plain read(2) when it is blocking, as
// stdin comes. A read that fails with EAGAIN (another holder of the same
// open file description, a parent that kept its copy of a pipe or a
// socket, made it non-blocking under hostcore) waits in poll(2) for input
// and reads again, where f's own Read would return the error and end the
// session. While requests come back to back a read may first poll f for
// up to spin (never with spin 0, or with one CPU to run on: the poll
// would take the CPU from the client that is to write).
func Input(f *os.File, spin time.Duration) io.Reader {
	fd := fileFd(f)
	if fd < 0 {
		return f
	}
	if runtime.NumCPU() < 2 || runtime.GOMAXPROCS(0) < 2 {
		spin = 0
	}
	return &inputReader{f: f, fd: int32(fd), spin: max(spin, 0)}
}

type inputReader struct {
	f    *os.File
	fd   int32
	spin time.Duration
	// lastWait is how long the last read took to get its data. Only the
	// read goroutine reads.
	lastWait time.Duration
}

// spins says whether the next read polls first.
func (r *inputReader) spins() bool { return r.spin > 0 && r.lastWait <= 2*r.spin }

func (r *inputReader) Read(p []byte) (int, error) {
	start := time.Now()
	pfd := []unix.PollFd{{Fd: r.fd, Events: unix.POLLIN}}
	if r.spins() {
		for {
			// Ready, at its end, or an error other than EINTR: the read
			// says which.
			if n, err := unix.Poll(pfd, 0); n > 0 || (err != nil && err != unix.EINTR) {
				break
			}
			if time.Since(start) >= r.spin {
				break
			}
		}
	}
	n, err := r.f.Read(p)
	for n == 0 && errors.Is(err, syscall.EAGAIN) {
		ready, perr := unix.Poll(pfd, -1)
		if perr == unix.EINTR {
			continue
		}
		if perr != nil {
			err = perr
			break
		}
		if n, err = r.f.Read(p); ready > 0 && n == 0 && errors.Is(err, syscall.EAGAIN) {
			// Said ready, yet nothing to read: a file without poll
			// support (FUSE, CUSE) is always "ready". Not a busy loop.
			time.Sleep(time.Millisecond)
		}
	}
	r.lastWait = time.Since(start)
	return n, err
}
