//go:build !linux

package process

import "syscall"

// commandCgroup exists on Linux only (see cgroup_linux.go); elsewhere the
// tree is what the scans find.
type commandCgroup struct{}

func newCommandCgroup(string) *commandCgroup       { return nil }
func (*commandCgroup) attach(*syscall.SysProcAttr) {}
func (*commandCgroup) pids() []int                 { return nil }
func (*commandCgroup) signal(int, syscall.Signal)  {}
func (*commandCgroup) detach(*syscall.SysProcAttr) {}
func (*commandCgroup) kill()                       {}
func (*commandCgroup) remove()                     {}
func killCgroupOf(string)                          {}
