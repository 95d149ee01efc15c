package process

import (
	"syscall"

	"golang.org/x/sys/unix"
)

// becomeSubreaper is a no-op where the kernel has no child subreaper: there
// a descendant that double-forks out of the tree reparents to init and is
// only caught if it stayed in the shell's session (see Run's backstop).
func becomeSubreaper() error { return nil }

// descendants lists the live descendants of root from the kernel's process
// table (sysctl, not ps: a ps child would race reapAll for its exit status).
func descendants(root int) []proc {
	all, err := unix.SysctlKinfoProcSlice("kern.proc.all")
	if err != nil {
		return nil
	}
	children := make(map[int][]int)
	for _, k := range all {
		if k.Proc.P_stat == 5 { // SZOMB
			continue
		}
		children[int(k.Eproc.Ppid)] = append(children[int(k.Eproc.Ppid)], int(k.Proc.P_pid))
	}
	var procs []proc
	queue := []int{root}
	for len(queue) > 0 {
		parent := queue[0]
		queue = queue[1:]
		for _, c := range children[parent] {
			procs = append(procs, proc{pid: c, ppid: parent})
			queue = append(queue, c)
		}
	}
	return procs
}

func signalProc(p proc, _ []proc, _ int, sig syscall.Signal) {
	syscall.Kill(p.pid, sig)
}

// killMarked is a no-op here: there is no /proc to find a process's
// environment in. Orphans of a killed reaper stay with init (see Run).
func killMarked(string) {}

// refuseTracers is a no-op here.
func refuseTracers() {}
