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

// refuseTracers makes the reaper non-dumpable: a process of the same user
// can then no longer ptrace it (and freeze it, or read its memory). A
// tracer with CAP_SYS_PTRACE (root) still can; Run bounds its wait for
// that case.
func refuseTracers() {
	unix.Prctl(unix.PR_SET_DUMPABLE, 0, 0, 0, 0)
}

// descendants lists the live descendants of roots from /proc, in one scan.
func descendants(roots ...int) []proc {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return nil
	}
	children := make(map[int][]proc)
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		st, ok := readStat(pid)
		if !ok || st.state == 'X' || st.state == 'Z' && !liveThreads(pid) {
			continue
		}
		children[st.ppid] = append(children[st.ppid], proc{pid: pid, ppid: st.ppid, pgid: st.pgid})
	}
	var out []proc
	queue := append([]int(nil), roots...)
	for len(queue) > 0 {
		parent := queue[0]
		queue = queue[1:]
		for _, c := range children[parent] {
			out = append(out, c)
			queue = append(queue, c.pid)
		}
	}
	return out
}

// liveThreads says whether a process shown as a zombie still has threads
// running: its main thread exited (pthread_exit) and the others go on. It
// and its children are part of the tree, and a signal to it reaches them.
func liveThreads(pid int) bool {
	tasks, err := os.ReadDir("/proc/" + strconv.Itoa(pid) + "/task")
	return err == nil && len(tasks) > 1
}

// stat is what descendants needs of /proc/<pid>/stat.
type stat struct {
	state      byte
	ppid, pgid int
}

// readStat reads /proc/<pid>/stat.
func readStat(pid int) (stat, bool) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return stat{}, false
	}
	// "pid (comm) state ppid pgrp ..."; comm may hold spaces and parentheses.
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return stat{}, false
	}
	f := bytes.Fields(b[i+1:])
	if len(f) < 3 || len(f[0]) != 1 {
		return stat{}, false
	}
	ppid, err1 := strconv.Atoi(string(f[1]))
	pgid, err2 := strconv.Atoi(string(f[2]))
	return stat{state: f[0][0], ppid: ppid, pgid: pgid}, err1 == nil && err2 == nil
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
	st, ok := readStat(p.pid)
	if !ok || !inTree(st.ppid, tree, self) {
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
