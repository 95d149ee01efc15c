//go:build !linux

package harden

// Self does nothing here. On macOS a process of the same user attaches to
// another (task_for_pid, ptrace) only with the debugging entitlement and
// the user's authorization, or as root, and there is no /proc to open
// descriptors through nor pidfd_getfd to copy them: PT_DENY_ATTACH would
// add nothing but trouble for the user's own debugger. Windows has
// neither ptrace nor /proc.
func Self() error { return nil }
