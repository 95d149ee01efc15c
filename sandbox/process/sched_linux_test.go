package process

import (
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

// policies prints the policy (field 41 of /proc/PID/stat: 0 normal, 3
// batch) of the shell, of a child of the shell, and of every thread of
// its reaper.
const policies = `pol() { set -- $(cat $1); printf '%s ' "${41}"; }; pol /proc/$$/stat; sh -c 'set -- $(cat /proc/$$/stat); printf "%s " "${41}"'; for t in /proc/$PPID/task/*/stat; do pol $t; done`

// With Spec.Batch a command runs as a batch task, with what it starts,
// and every thread of its reaper is a normal task again; without, the
// command runs as a normal task (see forkBatch).
func TestCommandRunsAsABatchTaskWhenAsked(t *testing.T) {
	t.Parallel()
	if a, err := unix.SchedGetAttr(0, 0); err != nil || a.Policy != unix.SCHED_NORMAL {
		t.Skipf("the tests do not run as normal tasks here (%v): nothing to compare with", err)
	}
	for _, tty := range []bool{false, true} {
		for _, batch := range []bool{false, true} {
			s := bash(policies)
			s.TTY, s.Batch = tty, batch
			got := run(t, s).Stdout.Head
			fields := strings.Fields(got)
			want := "0"
			if batch {
				want = "3"
			}
			if len(fields) < 3 || fields[0] != want || fields[1] != want {
				t.Errorf("tty %v batch %v: policies of the shell, its child and the reaper's threads: %q", tty, batch, got)
				continue
			}
			for _, f := range fields[2:] {
				if f != "0" {
					t.Errorf("tty %v batch %v: a reaper thread is not a normal task: %q", tty, batch, got)
				}
			}
		}
	}
}
