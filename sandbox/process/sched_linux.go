package process

import (
	"runtime"

	"golang.org/x/sys/unix"
)

// forkBatch runs fork (the reaper's ForkExec of the shell) with the
// calling thread under SCHED_BATCH, which the command inherits, with every
// process it starts (Spec.Batch, hostcore's --batch-commands). sched(7)
// gives batch tasks no wakeup preemption: a command woken waits for the
// tick rather than take the CPU from a normal task (the user's
// interactive programs, hostcore), and two processes of one pipeline on
// one CPU stop trading it at every write. Measured in `yes | head -c
// 200000000` under hostcore: yes and head shared a vCPU and switched
// every 8 KiB, 23,500 times each, against 3,000-4,000 as batch tasks.
// It is a courtesy, not a bound: a command may set itself back (chrt),
// and its share of the CPU is its nice value's, as before.
//
// Only the policy is set, the nice value kept; then the thread is put
// back to a normal task. A policy that cannot be set (a seccomp filter)
// leaves the command as it was. If putting it back fails, the thread
// stays locked to this goroutine (the reaper's main one), which then
// runs the rest of the reaper as a batch task: no other goroutine does.
func forkBatch(fork func() (int, error)) (int, error) {
	runtime.LockOSThread()
	old, err := unix.SchedGetAttr(0, 0)
	if err != nil || old.Policy != unix.SCHED_NORMAL {
		runtime.UnlockOSThread()
		return fork()
	}
	// Fresh attributes, not old's: on Linux 6.12 and later old holds the
	// default time slice in Runtime, and writing it back would mark the
	// slice as chosen.
	if unix.SchedSetAttr(0, &unix.SchedAttr{Policy: unix.SCHED_BATCH, Nice: old.Nice}, 0) != nil {
		runtime.UnlockOSThread()
		return fork()
	}
	pid, ferr := fork()
	normal := &unix.SchedAttr{Policy: unix.SCHED_NORMAL, Nice: old.Nice, Flags: old.Flags & unix.SCHED_FLAG_RESET_ON_FORK}
	if unix.SchedSetAttr(0, normal, 0) == nil {
		runtime.UnlockOSThread()
	}
	return pid, ferr
}
