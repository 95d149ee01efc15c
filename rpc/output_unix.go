//go:build unix

package rpc

import (
	"fmt"
	"os"
	"sync"
	"time"

	"golang.org/x/sys/unix"
)

// nonblockingFd returns fd when writes to it never block (a pipe or a
// socket in non-blocking mode, as PollableOutput makes stdout), else -1.
func nonblockingFd(fd, kind int) int {
	if fl, err := unix.FcntlInt(uintptr(fd), unix.F_GETFL, 0); err == nil && fl&unix.O_NONBLOCK != 0 &&
		(kind == kindPipe || kind == kindSocket) {
		return fd
	}
	return -1
}

// writeNonblocking is one write system call to a non-blocking fd: what it
// takes now (EAGAIN: nothing, no error).
func writeNonblocking(fd int, p []byte) (int, error) {
	for {
		n, err := unix.Write(fd, p)
		switch err {
		case unix.EINTR:
			continue
		case unix.EAGAIN:
			return 0, nil
		}
		return n, err
	}
}

// PollableOutput returns a non-blocking *os.File that writes where f does,
// when f is a pipe or a socket, so that Go's poller writes it and Run can
// give a write a deadline; otherwise f itself (a terminal, a file: no
// deadline). O_NONBLOCK belongs to an open file description, which other
// descriptors and processes may share, so it is never set on one that
// could be:
//   - a pipe is opened again through /proc/self/fd: a description of its
//     own, that nobody else holds;
//   - a socket (Node's stdio) gets it only when it is not also one of
//     hostcore's other standard descriptors (socat, inetd and 2>&1 share
//     one), on a duplicate descriptor; restore clears it when hostcore is
//     done.
//
// When none of this can be done, f is returned and writes block.
func PollableOutput(f *os.File) (out *os.File, restore func()) {
	none := func() {}
	fd := fileFd(f)
	var st unix.Stat_t
	if fd < 0 || unix.Fstat(fd, &st) != nil {
		return f, none
	}
	switch st.Mode & unix.S_IFMT {
	case unix.S_IFIFO:
		nfd, err := unix.Open(fmt.Sprintf("/proc/self/fd/%d", fd), unix.O_WRONLY|unix.O_NONBLOCK|unix.O_CLOEXEC, 0)
		if err != nil {
			return f, none
		}
		return os.NewFile(uintptr(nfd), f.Name()), none
	case unix.S_IFSOCK:
		for _, other := range []int{0, 1, 2} {
			var ost unix.Stat_t
			if other != fd && unix.Fstat(other, &ost) == nil && ost.Dev == st.Dev && ost.Ino == st.Ino {
				return f, none
			}
		}
		fl, err := unix.FcntlInt(uintptr(fd), unix.F_GETFL, 0)
		if err != nil {
			return f, none
		}
		nfd, err := unix.FcntlInt(uintptr(fd), unix.F_DUPFD_CLOEXEC, 3)
		if err != nil {
			return f, none
		}
		if fl&unix.O_NONBLOCK != 0 {
			// Non-blocking already (a parent that shares it, libuv's
			// sockets are): nothing to set, and nothing to undo.
			return os.NewFile(uintptr(nfd), f.Name()), none
		}
		if unix.SetNonblock(nfd, true) != nil {
			unix.Close(nfd)
			return f, none
		}
		return os.NewFile(uintptr(nfd), f.Name()), func() { unix.SetNonblock(nfd, false) }
	}
	return f, none
}

// watchEvery is how often WatchOutput looks at stdout.
const watchEvery = 200 * time.Millisecond

// WatchOutput calls gone once the reader of out has closed its end, even
// while nothing is written, by polling a pipe or socket for POLLERR/POLLHUP
// every watchEvery. Other kinds of file are not watched.
func WatchOutput(out *os.File, gone func()) (stop func()) {
	fi, err := out.Stat()
	if err != nil || fi.Mode()&(os.ModeNamedPipe|os.ModeSocket) == 0 {
		return func() {}
	}
	fd := fileFd(out)
	if fd < 0 {
		return func() {}
	}
	done := make(chan struct{})
	go func() {
		// A poll that does not wait, on a ticker: a goroutine blocked in
		// poll(2) would hold one of Go's Ps in the system call until the
		// runtime's monitor took it back (up to 10 ms), and with two CPUs
		// the read goroutine, blocked in read(2), holds the other: a call
		// handed to a worker would wait for a P.
		t := time.NewTicker(watchEvery)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-t.C:
			}
			fds := []unix.PollFd{{Fd: int32(fd), Events: 0}}
			n, err := unix.Poll(fds, 0)
			if err != nil && err != unix.EINTR {
				return
			}
			if n > 0 && fds[0].Revents&(unix.POLLERR|unix.POLLHUP|unix.POLLNVAL) != 0 {
				gone()
				return
			}
		}
	}()
	var once sync.Once
	return func() { once.Do(func() { close(done) }) }
}
