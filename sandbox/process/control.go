//go:build linux || darwin

package process

import (
	"errors"
	"fmt"
	"io"
	"os"
	"syscall"

	"golang.org/x/sys/unix"

	"hostcore/sandbox/landlock"
)

// controlPair makes the control socket of a reaper: hostcore's end, non-
// blocking so that its writes take deadlines, and the reaper's end.
// Both are close-on-exec; the reaper's is passed on explicitly.
func controlPair() (hostEnd, reaperEnd *os.File, err error) {
	// Under ForkLock, as os.Pipe does, so that no exec in between
	// inherits them before they are marked close-on-exec (darwin has
	// no SOCK_CLOEXEC).
	syscall.ForkLock.RLock()
	fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM, 0)
	if err == nil {
		unix.CloseOnExec(fds[0])
		unix.CloseOnExec(fds[1])
	}
	syscall.ForkLock.RUnlock()
	if err != nil {
		return nil, nil, os.NewSyscallError("socketpair", err)
	}
	if err := unix.SetNonblock(fds[0], true); err != nil {
		unix.Close(fds[0])
		unix.Close(fds[1])
		return nil, nil, os.NewSyscallError("setnonblock", err)
	}
	return os.NewFile(uintptr(fds[0]), "control"), os.NewFile(uintptr(fds[1]), "control"), nil
}

// Markers of the first byte on the control socket.
const (
	markRuleset    = 'R' // the ruleset's descriptor comes with it
	markUnconfined = 'N'
)

// sendRuleset writes the one-byte message that carries rs's descriptor
// (or says there is none) on the control socket ctl, waiting for room
// within ctl's write deadline.
func sendRuleset(ctl *os.File, rs *landlock.Ruleset) error {
	msg, oob := []byte{markUnconfined}, []byte(nil)
	if rs != nil {
		fd, _ := rs.Handoff()
		msg, oob = []byte{markRuleset}, unix.UnixRights(fd)
	}
	rc, err := ctl.SyscallConn()
	if err != nil {
		return err
	}
	var serr error
	if err := rc.Write(func(fd uintptr) bool {
		serr = unix.Sendmsg(int(fd), msg, oob, nil, 0)
		return !errors.Is(serr, unix.EAGAIN)
	}); err != nil {
		return err
	}
	return serr
}

// receiveRuleset reads, in the reaper, the message sendRuleset wrote on
// the control socket fd: the ruleset's descriptor, -1 when the command
// runs unconfined. io.EOF: hostcore closed the socket before.
func receiveRuleset(fd int) (int, error) {
	msg, oob := make([]byte, 1), make([]byte, unix.CmsgSpace(4))
	for {
		n, oobn, _, _, err := unix.Recvmsg(fd, msg, oob, 0)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return -1, err
		}
		if n == 0 {
			return -1, io.EOF
		}
		var fds []int
		if cmsgs, err := unix.ParseSocketControlMessage(oob[:oobn]); err == nil {
			for _, c := range cmsgs {
				if got, err := unix.ParseUnixRights(&c); err == nil {
					for _, f := range got {
						unix.CloseOnExec(f) // the shell must not inherit it
					}
					fds = append(fds, got...)
				}
			}
		}
		switch {
		case msg[0] == markUnconfined && len(fds) == 0:
			return -1, nil
		case msg[0] == markRuleset && len(fds) == 1:
			return fds[0], nil
		}
		for _, f := range fds {
			unix.Close(f)
		}
		return -1, fmt.Errorf("bad ruleset message %q with %d descriptors", msg, len(fds))
	}
}
