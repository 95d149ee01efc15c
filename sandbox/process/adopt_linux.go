package process

import (
	"bytes"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// BecomeHostSubreaper makes hostcore the subreaper of everything it starts.
// Each command runs under its own reaper, which catches its orphans; but a
// command can kill its own reaper (kill -9 $PPID), and its orphans then
// went to init, out of reach, if they had also left the session and
// rewritten their environment (setsid, env -i). They are hostcore's
// children now, and SweepAdopted kills and reaps them.
func BecomeHostSubreaper() error {
	if err := unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0); err != nil {
		return err
	}
	hostSubreaper.Store(true)
	return nil
}

// hostSubreaper: BecomeHostSubreaper succeeded. Only then are all of this
// process's children reapers it started or orphans it adopted; a program
// that starts other children (a test binary) never sweeps them.
var hostSubreaper atomic.Bool

// SweepAdopted kills, with their trees, and reaps every child of hostcore
// that it did not start: orphans of a reaper that died. It repeats while it
// finds some (a killed orphan's own children are adopted in turn), within
// adoptPasses and adoptBound.
//
// One sweep runs at a time (a second caller skips: the running one does
// the work). Each orphan is pinned with a pidfd while it is still an
// unreaped child (its pid cannot be reused until then), signalled and
// waited for through it. One that does not die at once (an uninterruptible
// read) is waited for in the background and skipped by later sweeps, so it
// costs no later call anything.
func SweepAdopted() {
	if !hostSubreaper.Load() || !sweeping.TryLock() {
		return
	}
	defer sweeping.Unlock()
	self, own := os.Getpid(), syscall.Getpgrp()
	deadline := time.Now().Add(adoptBound)
	for pass := 0; pass < adoptPasses && time.Now().Before(deadline); pass++ {
		started.Lock()
		var pids, fds []int
		for _, pid := range childrenOf(self) {
			if started.pids[pid] != nil || reaping[pid] {
				continue
			}
			fd, err := unix.PidfdOpen(pid, 0)
			if err != nil {
				continue
			}
			pids, fds = append(pids, pid), append(fds, fd)
		}
		started.Unlock()
		if len(pids) == 0 {
			return
		}
		tree := descendants(pids...) // one scan of /proc for all of them
		groups := map[int]bool{}
		for _, p := range tree {
			signalProc(p, tree, self, syscall.SIGKILL)
			if p.pgid > 1 && p.pgid != own {
				groups[p.pgid] = true
			}
		}
		for g := range groups {
			syscall.Kill(-g, syscall.SIGKILL)
		}
		for i, fd := range fds {
			unix.PidfdSendSignal(fd, syscall.SIGKILL, nil, 0)
			var info unix.Siginfo
			if err := unix.Waitid(unix.P_PIDFD, fd, &info, unix.WEXITED|unix.WNOHANG, nil); err == nil && info.Signo != 0 {
				unix.Close(fd)
				continue
			}
			reaping[pids[i]] = true
			go reapLater(pids[i], fd)
		}
	}
}

// sweeping serializes SweepAdopted; reaping (under it) holds the orphans
// being waited for in the background.
var (
	sweeping sync.Mutex
	reaping  = map[int]bool{}
)

// reapLater waits for a killed orphan that did not die at once.
func reapLater(pid, fd int) {
	var info unix.Siginfo
	for {
		if err := unix.Waitid(unix.P_PIDFD, fd, &info, unix.WEXITED, nil); err != unix.EINTR {
			break
		}
	}
	unix.Close(fd)
	sweeping.Lock()
	delete(reaping, pid)
	sweeping.Unlock()
}

// adoptPasses and adoptBound bound SweepAdopted.
const (
	adoptPasses = 10
	adoptBound  = time.Second
)

// childrenOf lists pid's children from /proc/<pid>/task/*/children.
func childrenOf(pid int) []int {
	files, _ := filepath.Glob("/proc/" + strconv.Itoa(pid) + "/task/*/children")
	var out []int
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			continue
		}
		for _, field := range bytes.Fields(b) {
			if c, err := strconv.Atoi(string(field)); err == nil {
				out = append(out, c)
			}
		}
	}
	return out
}
