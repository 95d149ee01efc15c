package process

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// needCgroup skips a test where no command cgroup can be had (not root,
// no cgroup2 mount): there the tree is what the scans of /proc find.
func needCgroup(t *testing.T) {
	t.Helper()
	probe := newCommandCgroup(newRunMark())
	if probe == nil {
		t.Skip("no cgroup v2 to be had here (not root, or no cgroup2 mount)")
	}
	probe.remove()
}

// TestCommandRunsInACgroupOfItsOwn: where a cgroup can be had, the shell
// and what it starts in a new session are born in the command's cgroup,
// which is gone once the call has ended.
func TestCommandRunsInACgroupOfItsOwn(t *testing.T) {
	t.Parallel()
	needCgroup(t)
	// A mark inherited from the environment (hostcore run by a command of
	// another) named the cgroup: two such runs shared one, or the second
	// had none (a review of this change).
	s := bash("grep '^0::' /proc/self/cgroup; setsid sh -c \"grep '^0::' /proc/self/cgroup\"; wait")
	s.Env = append(os.Environ(), runMarkVar+"=outer")
	res := run(t, s)
	lines := strings.Fields(res.Stdout.Text())
	if len(lines) != 2 || lines[0] != lines[1] || !strings.Contains(lines[0], "/"+cgroupPrefix) || strings.Contains(lines[0], "outer") {
		t.Fatalf("cgroups: %q", res.Stdout.Text())
	}
	mnt, root := cgroup2Mount()
	dir := filepath.Join(mnt, strings.TrimPrefix(strings.TrimPrefix(lines[0], "0::"), root))
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Fatalf("the command's cgroup %s is left behind: %v", dir, err)
	}
}

// TestKillsSetsidHoppersThroughTheCgroup: a process that forks, lets its
// parent exit and calls setsid on every hop is in a new session and group
// each time, so neither the scans of /proc nor the group kills can keep
// up with it: a review left 30 such hoppers running for 40 minutes after
// hostcore's exit. Where the command gets a cgroup of its own,
// cgroup.kill ends them all.
func TestKillsSetsidHoppersThroughTheCgroup(t *testing.T) {
	t.Parallel()
	needCgroup(t)
	py := "/usr/bin/python3" // not a version manager's shim, slow to start
	if _, err := os.Stat(py); err != nil {
		if py, err = exec.LookPath("python3"); err != nil {
			t.Skip("python3 not installed")
		}
	}
	trail := filepath.Join(t.TempDir(), "trail")
	// The review's hopper: fork, the parent exits, the child calls setsid
	// and forks again; TERM and HUP ignored. Thirty of them.
	script := filepath.Join(t.TempDir(), "hop.py")
	os.WriteFile(script, []byte(`import os, sys, signal
signal.signal(signal.SIGTERM, signal.SIG_IGN)
signal.signal(signal.SIGHUP, signal.SIG_IGN)
f = os.open(sys.argv[1], os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
while True:
    os.write(f, b"x")
    if os.fork() > 0:
        os._exit(0)
    os.setsid()
    if os.fork() > 0:
        os._exit(0)
`), 0o644)
	s := bash("for i in $(seq 30); do " + py + " " + script + " " + trail + " </dev/null >/dev/null 2>&1 & done; for i in $(seq 100); do [ -s " + trail + " ] && break; sleep 0.05; done; sleep 0.2; echo started")
	s.Grace = 200 * time.Millisecond
	assertHoppersGone(t, trail, run(t, s))
	if dir := cgroupDirFor("x"); dir != "" {
		left, _ := filepath.Glob(filepath.Join(filepath.Dir(dir), cgroupPrefix+"*"))
		for _, d := range left { // other tests' commands may be running
			for _, pid := range readPids(filepath.Join(d, "cgroup.procs")) {
				if b, _ := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid)); bytes.Contains(b, []byte(trail)) {
					t.Errorf("cgroup %s still holds hopper %d", d, pid)
				}
			}
		}
	}
}
