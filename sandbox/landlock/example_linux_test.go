package landlock_test

import (
	"fmt"
	"os"
	"syscall"

	"hostcore/sandbox/landlock"
)

// The reaper's way: the policy is made into a ruleset when the command
// starts, and the shell is forked from a thread restricted by it.
func ExampleRuleset_Fork() {
	p := landlock.DefaultPolicy(landlock.WorkspaceWrite, "/home/u/project", "/home/u/.local/share/hostcore/scratch/s1", os.Environ())
	rs, err := landlock.Prepare(p)
	if err != nil {
		fmt.Println("not started:", err) // never run it unsandboxed in its place
		return
	}
	defer rs.Close()
	argv := []string{"/bin/bash", "-lc", "make test"}
	attr := &syscall.ProcAttr{Dir: "/home/u/project", Files: []uintptr{0, 1, 2}, Sys: &syscall.SysProcAttr{Setsid: true}}
	pid, err := rs.Fork(func() (int, error) { return syscall.ForkExec(argv[0], argv, attr) })
	fmt.Println(pid, err)
}
