package process

import (
	"testing"

	"golang.org/x/sys/unix"
)

// A command runs as a batch task, with what it starts; its reaper, like
// hostcore, stays a normal task (see forkBatch). Field 41 of
// /proc/PID/stat is the policy: 0 normal, 3 batch.
func TestCommandRunsAsABatchTask(t *testing.T) {
	t.Parallel()
	if a, err := unix.SchedGetAttr(0, 0); err != nil || a.Policy != unix.SCHED_NORMAL {
		t.Skipf("the tests do not run as normal tasks here (%v): nothing to compare with", err)
	}
	for _, tty := range []bool{false, true} {
		s := bash(`for p in $$ $PPID; do set -- $(cat /proc/$p/stat); printf '%s ' "${41}"; done; sh -c 'set -- $(cat /proc/$$/stat); printf "%s" "${41}"'`)
		s.TTY = tty
		if got, want := run(t, s).Stdout.Head, "3 0 3"; got != want {
			t.Errorf("tty %v: policies of the shell, its reaper and the shell's child: %q, want %q", tty, got, want)
		}
	}
	if a, err := unix.SchedGetAttr(0, 0); err != nil || a.Policy != unix.SCHED_NORMAL {
		t.Errorf("this process's policy after the commands: %+v, %v", a, err)
	}
}
