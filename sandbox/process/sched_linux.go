package process

import (
	"runtime"

	"golang.org/x/sys/unix"
)

// forkBatch runs fork (the reaper's ForkExec of the shell) with the
// calling thread under SCHED_BATCH, which the command inherits, with every
// process it starts: a command is a batch job (no terminal that a person
// types at, stdin /dev/null), and sched(7) gives batch tasks no wakeup
// preemption. Two of its processes on one CPU then stop trading the CPU at
// every write: in `yes | head -c 200000000` under hostcore, yes and head
// shared a vCPU and switched every 8 KiB, 23,500 times each, against
// 3,000-4,000 as batch tasks (and the flood took 10-15% less time). A
// command woken no longer preempts the user's interactive programs, nor
// hostcore: both stay normal tasks, and preempt a command as before. The
// reaper's thread is put back as it was; a policy that cannot be set
// (a seccomp filter, a kernel without it) leaves the command as it was.
func forkBatch(fork func() (int, error)) (int, error) {
	runtime.LockOSThread()
	old, err := unix.SchedGetAttr(0, 0)
	if err != nil || old.Policy != unix.SCHED_NORMAL {
		runtime.UnlockOSThread()
		return fork()
	}
	batch := *old
	batch.Policy = unix.SCHED_BATCH
	if unix.SchedSetAttr(0, &batch, 0) != nil {
		runtime.UnlockOSThread()
		return fork()
	}
	pid, ferr := fork()
	if unix.SchedSetAttr(0, old, 0) == nil {
		// Otherwise the thread stays locked, and Go ends it with the
		// goroutine rather than run others on it as a batch task.
		runtime.UnlockOSThread()
	}
	return pid, ferr
}
