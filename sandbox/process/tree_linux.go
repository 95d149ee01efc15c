package process

import (
	"bytes"
	"os"
	"strconv"
	"syscall"

	"golang.org/x/sys/unix"
)

// becomeSubreaper makes orphans of the command's tree (double forks, setsid,
// nohup) the reaper's children instead of init's, so none gets away.
func becomeSubreaper() error {
	return unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)
}

// descendants lists the live descendants of root from /proc.
func descendants(root int) []proc {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return nil
	}
	children := make(map[int][]int)
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if ppid, state, ok := readStat(pid); ok && state != 'Z' && state != 'X' {
			children[ppid] = append(children[ppid], pid)
		}
	}
	var out []proc
	queue := []int{root}
	for len(queue) > 0 {
		parent := queue[0]
		queue = queue[1:]
		for _, c := range children[parent] {
			out = append(out, proc{pid: c, ppid: parent})
			queue = append(queue, c)
		}
	}
	return out
}

// readStat returns the parent pid and state of pid from /proc/<pid>/stat.
func readStat(pid int) (ppid int, state byte, ok bool) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0, 0, false
	}
	// "pid (comm) state ppid ..."; comm may hold spaces and parentheses.
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return 0, 0, false
	}
	f := bytes.Fields(b[i+1:])
	if len(f) < 2 || len(f[0]) != 1 {
		return 0, 0, false
	}
	ppid, err = strconv.Atoi(string(f[1]))
	return ppid, f[0][0], err == nil
}

// signalProc signals p through a pidfd, after checking that the process the
// pidfd pins still has its parent in the tree: a pid that died and was
// reused by a stranger since the scan is left alone.
func signalProc(p proc, tree []proc, self int, sig syscall.Signal) {
	fd, err := unix.PidfdOpen(p.pid, 0)
	if err == unix.ENOSYS {
		syscall.Kill(p.pid, sig) // kernel before 5.3
		return
	}
	if err != nil {
		return
	}
	defer unix.Close(fd)
	ppid, _, ok := readStat(p.pid)
	if !ok || !inTree(ppid, tree, self) {
		return
	}
	unix.PidfdSendSignal(fd, sig, nil, 0)
}

func inTree(pid int, tree []proc, self int) bool {
	if pid == self {
		return true
	}
	for _, p := range tree {
		if p.pid == pid {
			return true
		}
	}
	return false
}

// killMarked kills every process whose environment holds mark (a
// "NAME=value" of newRunMark): the command's processes that nobody can
// reach through the process tree any more, because the reaper they were
// handed to was killed. A process that rewrote its environment (exec with
// a new one) is not found; this is the backstop, the reaper is the rule.
// Passes repeat while they find something, so that children forked during
// a pass are found by the next.
func killMarked(mark string) {
	needle := append([]byte(mark), 0)
	self := os.Getpid()
	for range markPasses {
		entries, err := os.ReadDir("/proc")
		if err != nil {
			return
		}
		found := false
		for _, e := range entries {
			pid, err := strconv.Atoi(e.Name())
			if err != nil || pid == self {
				continue
			}
			env, err := os.ReadFile("/proc/" + e.Name() + "/environ")
			if err != nil || !bytes.HasPrefix(env, needle) && !bytes.Contains(env, append([]byte{0}, needle...)) {
				continue
			}
			syscall.Kill(pid, syscall.SIGKILL)
			found = true
		}
		if !found {
			return
		}
	}
}

// markPasses bounds killMarked: a fork bomb could outrun any number.
const markPasses = 20
