package process

import (
	"bytes"
	"os"
	"path/filepath"
	"strconv"
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
// finds some (a killed orphan's own children are adopted in turn), a
// bounded number of times.
func SweepAdopted() {
	if !hostSubreaper.Load() {
		return
	}
	self := os.Getpid()
	// One bound for the whole sweep: an orphan that cannot die (stuck in
	// an uninterruptible read) must not hold every later Bash call.
	deadline := time.Now().Add(adoptBound)
	for pass := 0; pass < adoptPasses && time.Now().Before(deadline); pass++ {
		started.Lock()
		var adopted []int
		for _, pid := range childrenOf(self) {
			if !started.pids[pid] {
				adopted = append(adopted, pid)
			}
		}
		started.Unlock()
		if len(adopted) == 0 {
			return
		}
		for _, pid := range adopted {
			tree := descendants(pid)
			groups := map[int]bool{}
			for _, p := range tree {
				syscall.Kill(p.pid, syscall.SIGKILL)
				if p.pgid > 1 {
					groups[p.pgid] = true
				}
			}
			if st, ok := readStat(pid); ok && st.pgid > 1 && st.pgid != syscall.Getpgrp() {
				groups[st.pgid] = true
			}
			for g := range groups {
				if g != syscall.Getpgrp() {
					syscall.Kill(-g, syscall.SIGKILL)
				}
			}
			syscall.Kill(pid, syscall.SIGKILL)
		}
		// Reap them: they are hostcore's children, and only this waits
		// for these pids (os/exec waits for the ones it started).
		for _, pid := range adopted {
			for {
				var ws syscall.WaitStatus
				got, err := syscall.Wait4(pid, &ws, syscall.WNOHANG, nil)
				if got == pid || err != nil || time.Now().After(deadline) {
					break
				}
				time.Sleep(time.Millisecond)
			}
		}
	}
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
