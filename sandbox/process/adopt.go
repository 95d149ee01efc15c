//go:build linux || darwin

package process

import (
	"os/exec"
	"sync"
)

// started holds the pids of the reapers hostcore started and has not yet
// waited for. Any other child hostcore has was adopted (see
// BecomeHostSubreaper): an orphan of a reaper that died.
var started = struct {
	sync.Mutex
	pids map[int]*exec.Cmd
}{pids: map[int]*exec.Cmd{}}

// startTracked starts cmd with the registry locked, so that a sweep never
// sees the new child before it is known.
func startTracked(cmd *exec.Cmd) error {
	started.Lock()
	defer started.Unlock()
	if err := cmd.Start(); err != nil {
		return err
	}
	started.pids[cmd.Process.Pid] = cmd
	return nil
}

// waitTracked waits for a child started by startTracked.
func waitTracked(cmd *exec.Cmd) error {
	err := cmd.Wait()
	started.Lock()
	// The pid is free once Wait returned: a reaper started meanwhile may
	// have it, and stays registered.
	if started.pids[cmd.Process.Pid] == cmd {
		delete(started.pids, cmd.Process.Pid)
	}
	started.Unlock()
	return err
}
