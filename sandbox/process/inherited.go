//go:build linux || darwin

package process

import (
	"os"
	"strconv"

	"golang.org/x/sys/unix"
)

// KeepInheritedFromCommands marks every descriptor hostcore inherited
// above stderr close-on-exec, so that no command it runs gets them. A
// parent may hand hostcore more than its three standard streams (a Node
// sidecar's extra stdio channels or its 'ipc' channel, whatever the
// launching shell left open); exec.Cmd passes a command only what it is
// given, but a descriptor not marked close-on-exec survives every exec,
// and a command could then write into the sidecar's private channels or
// keep them open after hostcore exits. Call it at start-up, before any
// command or reaper starts; hostcore opens its own descriptors
// close-on-exec already.
func KeepInheritedFromCommands() error {
	if closeRangeCloexec() == nil {
		return nil
	}
	return markListedCloexec()
}

// markListedCloexec marks close-on-exec each descriptor above stderr that
// the system lists as open.
func markListedCloexec() error {
	dir := "/proc/self/fd"
	if _, err := os.Stat(dir); err != nil {
		dir = "/dev/fd"
	}
	names, err := readDirNames(dir)
	if err != nil {
		// Nothing lists them: every number up to the limit on open files
		// is tried (an unused one just fails).
		var lim unix.Rlimit
		if unix.Getrlimit(unix.RLIMIT_NOFILE, &lim) != nil {
			return err
		}
		for fd := 3; uint64(fd) < min(lim.Cur, 1<<20); fd++ {
			markCloexec(fd)
		}
		return nil
	}
	for _, name := range names {
		if fd, err := strconv.Atoi(name); err == nil && fd > 2 {
			markCloexec(fd)
		}
	}
	return nil
}

func markCloexec(fd int) {
	if fl, err := unix.FcntlInt(uintptr(fd), unix.F_GETFD, 0); err == nil && fl&unix.FD_CLOEXEC == 0 {
		unix.FcntlInt(uintptr(fd), unix.F_SETFD, fl|unix.FD_CLOEXEC)
	}
}

// readDirNames lists dir; the descriptor it reads through is the only
// one opened meanwhile, and it is close-on-exec.
func readDirNames(dir string) ([]string, error) {
	f, err := os.Open(dir)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return f.Readdirnames(-1)
}
